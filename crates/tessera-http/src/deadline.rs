//! The request-body deadline: a body not received in time is an error the
//! endpoint answers with 408, and its connection is freed.

use std::time::Duration;

/// The request body did not arrive within the deadline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("the request body was not received within {} s", .0.as_secs_f64())]
pub struct BodyReadTimeout(pub Duration);

#[cfg(feature = "server")]
pub use timed::{DeadlineBody, DeadlineError};

#[cfg(feature = "server")]
mod timed {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll};
    use std::time::Duration;

    use bytes::Bytes;
    use http_body::{Body, Frame, SizeHint};

    use super::BodyReadTimeout;

    /// Why a [`DeadlineBody`] ended early.
    #[derive(Debug, thiserror::Error)]
    pub enum DeadlineError<E> {
        /// The deadline passed.
        #[error("{0}")]
        Timeout(#[source] BodyReadTimeout),
        /// The body itself failed.
        #[error(transparent)]
        Body(E),
    }

    /// A request body that must arrive within a deadline (what [`serve`](crate::serve) hands services).
    pub struct DeadlineBody<B> {
        inner: B,
        after: Duration,
        deadline: Pin<Box<tokio::time::Sleep>>,
        /// Where the connection learns of the body's progress.
        progress: Option<crate::connections::BodyOnSlot>,
    }

    impl<B> DeadlineBody<B> {
        /// `inner`, which must be received within `after` from now.
        pub fn new(inner: B, after: Duration) -> Self {
            Self {
                inner,
                after,
                deadline: Box::pin(tokio::time::sleep(after)),
                progress: None,
            }
        }

        /// Reports the body's progress to its connection's slot.
        pub(crate) fn reporting_to(mut self, progress: crate::connections::BodyOnSlot) -> Self {
            self.progress = Some(progress);
            self
        }

        fn report(&mut self, bytes: usize, ended: bool) {
            if let Some(progress) = &mut self.progress {
                progress.progressed(bytes);
                if ended {
                    progress.done();
                }
            }
        }
    }

    impl<B> Body for DeadlineBody<B>
    where
        B: Body<Data = Bytes> + Unpin,
    {
        type Data = Bytes;
        type Error = DeadlineError<B::Error>;

        fn poll_frame(
            self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Self::Error>>> {
            let this = self.get_mut();
            if let Poll::Ready(frame) = Pin::new(&mut this.inner).poll_frame(cx) {
                let bytes = match &frame {
                    Some(Ok(f)) => f.data_ref().map_or(0, Bytes::len),
                    _ => 0,
                };
                let ended = !matches!(frame, Some(Ok(_))) || this.inner.is_end_stream();
                this.report(bytes, ended);
                return Poll::Ready(frame.map(|f| f.map_err(DeadlineError::Body)));
            }
            match this.deadline.as_mut().poll(cx) {
                Poll::Ready(()) => {
                    this.report(0, true);
                    Poll::Ready(Some(Err(DeadlineError::Timeout(BodyReadTimeout(
                        this.after,
                    )))))
                }
                Poll::Pending => Poll::Pending,
            }
        }

        fn is_end_stream(&self) -> bool {
            self.inner.is_end_stream()
        }

        fn size_hint(&self) -> SizeHint {
            self.inner.size_hint()
        }
    }
}

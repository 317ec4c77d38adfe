//! The write deadline: a connection whose peer stops taking bytes (it reads
//! nothing, so the socket's send buffer stays full) is closed once a write has
//! waited this long, instead of holding its slot and its queued answer for as
//! long as the peer likes. Bytes accepted by the socket are progress; a
//! connection with nothing to write is never timed out by it.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};

pin_project_lite::pin_project! {
    /// `inner`, whose writes fail once one has waited `after` (the timer,
    /// `waiting`, is armed while a write waits).
    pub(crate) struct WriteDeadline<IO> {
        #[pin]
        inner: IO,
        after: Duration,
        waiting: Option<Pin<Box<tokio::time::Sleep>>>,
    }
}

impl<IO> WriteDeadline<IO> {
    pub(crate) fn new(inner: IO, after: Duration) -> Self {
        Self {
            inner,
            after,
            waiting: None,
        }
    }
}

/// What a write that waited too long fails with.
fn timed_out(after: Duration) -> io::Error {
    io::Error::new(
        io::ErrorKind::TimedOut,
        format!(
            "the peer took no bytes for {} s: closing",
            after.as_secs_f64()
        ),
    )
}

impl<IO: AsyncWrite> WriteDeadline<IO> {
    /// Runs one write-side poll under the deadline.
    fn guarded<T>(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        poll: impl FnOnce(Pin<&mut IO>, &mut Context<'_>) -> Poll<io::Result<T>>,
    ) -> Poll<io::Result<T>> {
        let this = self.project();
        match poll(this.inner, cx) {
            Poll::Ready(done) => {
                *this.waiting = None;
                Poll::Ready(done)
            }
            Poll::Pending => {
                let after = *this.after;
                let waiting = this
                    .waiting
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(after)));
                match waiting.as_mut().poll(cx) {
                    Poll::Ready(()) => Poll::Ready(Err(timed_out(after))),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    }
}

impl<IO: AsyncRead> AsyncRead for WriteDeadline<IO> {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        self.project().inner.poll_read(cx, buf)
    }
}

impl<IO: AsyncWrite> AsyncWrite for WriteDeadline<IO> {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.guarded(cx, |io, cx| io.poll_write(cx, buf))
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        self.guarded(cx, |io, cx| io.poll_write_vectored(cx, bufs))
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.guarded(cx, AsyncWrite::poll_flush)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        self.guarded(cx, AsyncWrite::poll_shutdown)
    }
}

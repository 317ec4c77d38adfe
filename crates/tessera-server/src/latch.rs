//! A flag that is set once and wakes everyone waiting for it, with no async
//! runtime (on `event-listener`): the end of subscriptions, a cancelled task,
//! a lost change bus.

use std::sync::atomic::{AtomicBool, Ordering};

use event_listener::Event;

/// Set once; [`Latch::wait`] completes from then on.
#[derive(Debug, Default)]
pub(crate) struct Latch {
    set: AtomicBool,
    event: Event,
}

impl Latch {
    /// Sets the flag and wakes every waiter.
    pub(crate) fn set(&self) {
        self.set.store(true, Ordering::SeqCst);
        self.event.notify(usize::MAX);
    }

    /// Whether the flag is set.
    pub(crate) fn is_set(&self) -> bool {
        self.set.load(Ordering::SeqCst)
    }

    /// Completes once the flag is set (at once if it is).
    pub(crate) async fn wait(&self) {
        loop {
            if self.is_set() {
                return;
            }
            // Listening before the second look: a `set` in between still wakes us.
            let listener = self.event.listen();
            if self.is_set() {
                return;
            }
            listener.await;
        }
    }
}

/// Completes when either future does (no runtime needed).
pub(crate) async fn first_of<A: std::future::Future, B: std::future::Future>(a: A, b: B) {
    let _ = before(a, b).await;
}

/// `work`'s output, or `None` when `deadline` completes first (no runtime
/// needed; `work` is polled first, so work that is ready wins).
pub(crate) async fn before<T, W, D>(work: W, deadline: D) -> Option<T>
where
    W: std::future::Future<Output = T>,
    D: std::future::Future,
{
    let (mut work, mut deadline) = (std::pin::pin!(work), std::pin::pin!(deadline));
    std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(out) = work.as_mut().poll(cx) {
            std::task::Poll::Ready(Some(out))
        } else if deadline.as_mut().poll(cx).is_ready() {
            std::task::Poll::Ready(None)
        } else {
            std::task::Poll::Pending
        }
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    #[test]
    fn a_waiter_wakes_when_the_latch_is_set() {
        let latch = Arc::new(Latch::default());
        let setter = Arc::clone(&latch);
        let waiter =
            std::thread::spawn(move || futures_lite_block_on(async move { latch.wait().await }));
        std::thread::sleep(std::time::Duration::from_millis(20));
        setter.set();
        waiter.join().unwrap();
        // Set already: completes at once.
        futures_lite_block_on(setter.wait());
    }

    /// Polls `f` on this thread until it completes, parking between polls.
    fn futures_lite_block_on<F: std::future::Future>(f: F) -> F::Output {
        use std::task::{Context, Poll, Wake, Waker};
        struct Unpark(std::thread::Thread);
        impl Wake for Unpark {
            fn wake(self: Arc<Self>) {
                self.0.unpark();
            }
        }
        let waker = Waker::from(Arc::new(Unpark(std::thread::current())));
        let mut cx = Context::from_waker(&waker);
        let mut f = std::pin::pin!(f);
        loop {
            match f.as_mut().poll(&mut cx) {
                Poll::Ready(out) => return out,
                Poll::Pending => std::thread::park(),
            }
        }
    }
}

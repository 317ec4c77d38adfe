//! Shared by the counter benches: driving a future that never waits on I/O.

/// Polls `f` to completion with a no-op waker (the handlers never wait on I/O).
pub fn block<T>(f: impl std::future::Future<Output = T>) -> T {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

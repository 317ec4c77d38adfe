//! Shared by the counter benches: the binary's allocator, and driving a
//! future that never waits on I/O.

/// The same allocator as the `counter` binary, so the benches measure what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

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

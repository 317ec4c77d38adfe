//! Where a task's handler goes on after its request has answered, on a
//! Worker: the request's `waitUntil`.

use std::sync::Arc;
use std::time::Duration;

use tessera_server::{BoxFuture, TaskRuntime};
use worker::Context;
use worker::send::SendFuture;

/// The [`TaskRuntime`] of one `fetch` event: background work is kept alive
/// by the event's `ctx.waitUntil`, sleeps are the Workers timer.
///
/// Cloudflare ends what `waitUntil` keeps 30 s after the response is sent,
/// so a task's runner lives at most that long: a task still working, or
/// waiting for answers, after that ends `failed` once its runner's lease
/// runs out, saying the instance running it stopped. Tasks that wait on
/// people for longer belong on a native server.
#[derive(Clone)]
pub struct WorkerTasks {
    ctx: Arc<Context>,
}

impl WorkerTasks {
    /// The runtime of the event `ctx` belongs to.
    pub fn new(ctx: Context) -> Self {
        Self { ctx: Arc::new(ctx) }
    }
}

impl TaskRuntime for WorkerTasks {
    fn spawn(&self, work: BoxFuture<'static, ()>) {
        self.ctx.wait_until(work);
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        // The Workers runtime is single-threaded; its timer is not `Send`.
        Box::pin(SendFuture::new(worker::Delay::from(duration)))
    }
}

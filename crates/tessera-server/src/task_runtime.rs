//! Where a task's handler goes on after its request has answered: the
//! transport's runtime, handed over with each request's facts. The server
//! itself runs nothing in the background and needs no async runtime.

use std::time::Duration;

use crate::BoxFuture;

/// Spawns background work and sleeps, for the tasks extension. The HTTP
/// and stdio transports give tokio's (`tessera-tokio`); a transport that
/// gives none serves no tasks (a call that would start one gets -32603
/// saying so).
pub trait TaskRuntime: Send + Sync + 'static {
    /// Runs `work` to its end in the background.
    fn spawn(&self, work: BoxFuture<'static, ()>);

    /// Completes after `duration`.
    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()>;
}

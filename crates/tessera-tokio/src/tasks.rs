//! Tasks on tokio.

use std::time::Duration;

use tessera_server::{BoxFuture, TaskRuntime};

/// Runs tasks on the tokio runtime the request is served on.
///
/// ```
/// use std::sync::Arc;
/// use tessera_server::RequestFacts;
///
/// let facts = RequestFacts::modern().with_task_runtime(Arc::new(tessera_tokio::TokioTasks));
/// assert!(facts.tasks.is_some());
/// ```
#[derive(Debug, Clone, Copy, Default)]
pub struct TokioTasks;

impl TaskRuntime for TokioTasks {
    fn spawn(&self, work: BoxFuture<'static, ()>) {
        match tokio::runtime::Handle::try_current() {
            Ok(runtime) => {
                runtime.spawn(work);
            }
            Err(_) => {
                tracing::error!("a task was started outside a tokio runtime; it does not run")
            }
        }
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

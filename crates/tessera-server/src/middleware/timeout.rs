//! [`Timeout`]: a request that takes too long is ended with an error.

use std::time::Duration;

use super::{McpRequest, Middleware, Next, Served};
use crate::{BoxFuture, ServerError};

/// Ends a request that has not answered within its limit, with -32603
/// naming what did not finish and the limit ("tools/call slow-report did
/// not finish within 30 s"); the handler is dropped there, as a cancelled
/// request's is. Each round of a multi round-trip call is timed on its own
/// (the user's think time between rounds is not the server's), and a tool
/// that went on as a task is timed only until it answered with the task.
///
/// The clock is the transport's runtime (the task runtime of the request's
/// [`RequestFacts`](crate::RequestFacts)): HTTP and stdio have one; where a
/// transport has none (Workers, Lambda, which limit a request's time
/// themselves) requests run untimed.
///
/// ```
/// use std::time::Duration;
/// use tessera_server::middleware::{Timeout, for_methods};
/// # use tessera_server::{Context, McpServer, ToolDef};
///
/// let server = McpServer::builder("demo", "1.0.0")
///     .middleware(for_methods(["tools/call"], Timeout::new(Duration::from_secs(30))))
///     .tool(ToolDef::new("report", |_: Context, _: ()| async { "done" }))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Timeout {
    limit: Duration,
}

impl Timeout {
    /// Requests answer within `limit`.
    pub fn new(limit: Duration) -> Self {
        Self { limit }
    }
}

impl Middleware for Timeout {
    fn handle<'a>(
        &'a self,
        request: &'a McpRequest,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Served, ServerError>> {
        let Some(runtime) = request.runtime.0.clone() else {
            return next.run();
        };
        Box::pin(async move {
            match crate::latch::before(next.run(), runtime.sleep(self.limit)).await {
                Some(result) => result,
                None => {
                    let what = match &request.target {
                        Some(target) => format!("{} {}", request.method, target.escape_debug()),
                        None => request.method.clone(),
                    };
                    tracing::warn!(request = %what, limit = ?self.limit, "request timed out");
                    Err(ServerError::Internal {
                        message: format!("{what} did not finish within {}", human(self.limit)),
                    })
                }
            }
        })
    }
}

/// `30 s`, `1.5 s`, `250 ms`.
fn human(limit: Duration) -> String {
    if limit < Duration::from_secs(1) {
        format!("{} ms", limit.as_millis())
    } else {
        format!("{} s", limit.as_secs_f64())
    }
}

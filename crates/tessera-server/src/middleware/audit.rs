//! [`Audit`]: one record per request — who, what, how it ended, how long —
//! including a request its client abandoned.

use std::sync::Arc;
use std::time::Duration;

use tessera_protocol::clock::Instant;

use super::{McpRequest, Middleware, Next, Outcome, Served};
use crate::{BoxFuture, ServerError};

/// What an [`Audit`] layer records of one request.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct AuditRecord {
    /// The method.
    pub method: String,
    /// The tool or prompt name, resource URI or task id it named.
    pub target: Option<String>,
    /// The caller's principal; `None` for an anonymous caller.
    pub principal: Option<String>,
    /// Whom per-caller limits count against (principal, else address).
    pub caller: Option<String>,
    /// How it ended.
    pub outcome: Outcome,
    /// The JSON-RPC error code, when it ended with one.
    pub error_code: Option<i32>,
    /// How long the server took (this round, for a multi round-trip call).
    pub duration: Duration,
}

/// Records every request it sees with a sink of the server's own, or as a
/// log event ([`Audit::to_log`]: target `tessera::audit`, level info, one
/// event per request with the record's fields). Put it first, so it sees
/// what the other layers refused too. Arguments are not recorded: they may
/// hold what the user typed.
///
/// ```
/// use std::sync::{Arc, Mutex};
/// use tessera_server::middleware::{Audit, AuditRecord};
/// # use tessera_server::{Context, McpServer, ToolDef};
///
/// let records = Arc::new(Mutex::new(Vec::<AuditRecord>::new()));
/// let into = Arc::clone(&records);
/// let server = McpServer::builder("demo", "1.0.0")
///     .middleware(Audit::new(move |r: &AuditRecord| into.lock().unwrap().push(r.clone())))
///     .tool(ToolDef::new("hello", |_: Context, _: ()| async { "Hello!" }))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
#[derive(Clone)]
pub struct Audit {
    sink: Arc<dyn Fn(&AuditRecord) + Send + Sync>,
}

impl Audit {
    /// Hands each record to `sink` (keep it quick: it runs in the request).
    pub fn new(sink: impl Fn(&AuditRecord) + Send + Sync + 'static) -> Self {
        Self {
            sink: Arc::new(sink),
        }
    }

    /// Logs each record as a `tracing` event of target `tessera::audit`.
    pub fn to_log() -> Self {
        Self::new(|r: &AuditRecord| {
            tracing::info!(
                target: "tessera::audit",
                method = %r.method.escape_debug(),
                target_name = r.target.as_deref().map(str::escape_debug).map(tracing::field::display),
                principal = r.principal.as_deref(),
                caller = r.caller.as_deref(),
                outcome = r.outcome.as_str(),
                error_code = r.error_code,
                duration_ms = u64::try_from(r.duration.as_millis()).unwrap_or(u64::MAX),
                "request"
            );
        })
    }
}

impl std::fmt::Debug for Audit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Audit").finish_non_exhaustive()
    }
}

impl Middleware for Audit {
    fn handle<'a>(
        &'a self,
        request: &'a McpRequest,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Served, ServerError>> {
        Box::pin(async move {
            // Written when the request's future ends, however it ends: a
            // request whose client went away is dropped mid-await, and the
            // guard records it as abandoned.
            let mut record = Recorded {
                audit: self,
                request,
                started: Instant::now(),
                ended: None,
            };
            let result = next.run().await;
            record.ended = Some((
                Outcome::of(&result),
                result.as_ref().err().map(ServerError::code),
            ));
            result
        })
    }
}

/// Writes one request's record when dropped.
struct Recorded<'a> {
    audit: &'a Audit,
    request: &'a McpRequest,
    started: Instant,
    /// How it ended; `None` while it has not (dropped then: abandoned).
    ended: Option<(Outcome, Option<i32>)>,
}

impl Drop for Recorded<'_> {
    fn drop(&mut self) {
        let (outcome, error_code) = self.ended.unwrap_or((Outcome::Abandoned, None));
        (self.audit.sink)(&AuditRecord {
            method: self.request.method.clone(),
            target: self.request.target.clone(),
            principal: self.request.principal.clone(),
            caller: self.request.caller.clone(),
            outcome,
            error_code,
            duration: self.started.elapsed(),
        });
    }
}

//! The per-request log line, as a record a writer formats off the request path.

use std::time::Duration;

use tessera_protocol::clock::SystemTime;

/// One finished request, for the access log. Text fields are already escaped.
#[derive(Debug, Clone)]
pub struct AccessRecord {
    /// The JSON-RPC method.
    pub method: String,
    /// The tool, prompt or resource named, if any.
    pub target: String,
    /// The request id, as JSON.
    pub id: String,
    /// The HTTP status.
    pub status: u16,
    /// `complete`, `input_required` or `error`.
    pub outcome: &'static str,
    /// The JSON-RPC error code, for errors.
    pub code: Option<i32>,
    /// Time from dispatch to answer.
    pub latency: Duration,
    /// When it finished.
    pub at: SystemTime,
}

/// Receives each finished request; must not block (queue it, drop it when full).
pub trait AccessLog: Send + Sync {
    /// Takes one record.
    fn record(&self, record: AccessRecord);
}

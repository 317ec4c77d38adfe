//! What one stdio connection may consume.

use std::time::Duration;

/// Limits of a stdio connection.
#[derive(Debug, Clone)]
pub struct StdioOptions {
    /// Longest line (one message) read, in bytes (default 1 MiB, as the HTTP body limit).
    pub max_line_bytes: usize,
    /// What one message may cost to read (default: the intake's, as over HTTP).
    pub intake: tessera_server::intake::Limits,
    /// Requests served at once; one more is answered "busy" (default 64).
    pub max_in_flight: usize,
    /// How long requests still running at end of input may finish (default 5 s).
    pub shutdown_grace: Duration,
    /// Most rounds the era bridge runs for one initialize-era call (default 16).
    pub max_bridge_rounds: usize,
    /// How long the era bridge waits for the client to answer one pushed
    /// question (a person reading a form; default 30 minutes).
    pub question_timeout: Duration,
}

impl Default for StdioOptions {
    fn default() -> Self {
        Self {
            max_line_bytes: 1024 * 1024,
            intake: tessera_server::intake::Limits::default(),
            max_in_flight: 64,
            shutdown_grace: Duration::from_secs(5),
            max_bridge_rounds: 16,
            question_timeout: Duration::from_secs(30 * 60),
        }
    }
}

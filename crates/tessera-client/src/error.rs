//! What can go wrong on the client side.

use tessera_protocol::ErrorObject;

/// A failed client operation.
#[derive(Debug)]
pub enum ClientError {
    /// The request could not be sent or the response not read.
    Transport(String),
    /// The server answered with a JSON-RPC error.
    Rpc {
        /// HTTP status of the answer.
        status: u16,
        /// The error.
        error: ErrorObject,
    },
    /// The server's answer is not valid MCP (with the reason).
    Protocol(String),
    /// The server speaks only the initialize era (or no version we know).
    UnsupportedServer(String),
    /// An input request nobody here can answer; never answered with a made-up decline.
    Unanswerable {
        /// The input request's key.
        key: String,
        /// Its method.
        method: String,
    },
    /// The elicitor failed or gave up (e.g. no terminal to ask on).
    Elicitation(String),
    /// The server kept asking past the round limit.
    TooManyRounds(usize),
    /// The client was configured wrongly.
    Config(String),
}

impl std::fmt::Display for ClientError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Transport(e) => write!(f, "transport error: {e}"),
            Self::Rpc { status, error } => write!(
                f,
                "server error {} (HTTP {status}): {}",
                error.code, error.message
            ),
            Self::Protocol(e) => write!(f, "protocol error: {e}"),
            Self::UnsupportedServer(e) => write!(f, "unsupported server: {e}"),
            Self::Unanswerable { key, method } => write!(
                f,
                "the server asked for input '{key}' ({method}), which this client cannot answer"
            ),
            Self::Elicitation(e) => write!(f, "elicitation failed: {e}"),
            Self::TooManyRounds(n) => {
                write!(f, "the server still asked for input after {n} rounds")
            }
            Self::Config(e) => write!(f, "configuration error: {e}"),
        }
    }
}

impl std::error::Error for ClientError {}

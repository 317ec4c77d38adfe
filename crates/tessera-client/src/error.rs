//! What can go wrong on the client side.

use tessera_protocol::ErrorObject;

/// A failed client operation.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The request could not be sent or the response not read.
    #[error("transport error: {0}")]
    Transport(#[source] reqwest::Error),
    /// The server process could not be started, written to or read from (stdio).
    #[error("server process: {0}")]
    Process(String),
    /// The server answered with a JSON-RPC error.
    #[error("server error {}{}: {}", .error.code, http_status(*.status), .error.message)]
    Rpc {
        /// HTTP status of the answer (0 over stdio).
        status: u16,
        /// The error.
        #[source]
        error: ErrorObject,
    },
    /// The server's answer is not valid MCP (with the reason).
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The server answered an HTTP error status without a JSON-RPC error.
    #[error("HTTP {status} without a JSON-RPC error: {body} (a non-MCP server, or the wrong URL?)")]
    HttpStatus {
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The server speaks no version this client knows.
    #[error("unsupported server: {0}")]
    UnsupportedServer(String),
    /// An input request nobody here can answer; never answered with a made-up decline.
    #[error("the server asked for input '{key}' ({method}), which this client cannot answer")]
    Unanswerable {
        /// The input request's key.
        key: String,
        /// Its method.
        method: String,
    },
    /// The server asked again for input it had been given a scripted answer
    /// to: the answer was not accepted, and sending it again would not change that.
    #[error("the server did not accept the scripted answer to input request '{key}': {reason}")]
    AnswerRejected {
        /// The input request's key.
        key: String,
        /// Why, as the server said it (or the question asked again).
        reason: String,
    },
    /// A skill's file is not what its entry promised (size, digest,
    /// frontmatter, or not listed at all): its content is not used.
    #[error("skill refused: {0}")]
    SkillRefused(String),
    /// The elicitor failed or gave up (e.g. no terminal to ask on).
    #[error("elicitation failed: {0}")]
    Elicitation(String),
    /// The server kept asking past the round limit.
    #[error("the server still asked for input after {rounds} rounds{}", describe_asked(.asked))]
    TooManyRounds {
        /// The round limit.
        rounds: usize,
        /// What the last round asked: each key, with its question's message
        /// when it has one (a question asked again says there why).
        asked: Vec<(String, Option<String>)>,
    },
    /// The server did not answer within the client's timeout (for a call
    /// that may push questions, time spent answering them not counted).
    #[error("the server did not answer within {limit:?}")]
    TimedOut {
        /// The limit.
        limit: std::time::Duration,
    },
    /// Signing in failed or was refused (OAuth).
    #[error("authorization: {0}")]
    Auth(String),
    /// The server demands authorization and this client has no way to sign in.
    #[error("the server requires authorization (HTTP {status}): {challenge}")]
    Unauthorized {
        /// 401 or 403.
        status: u16,
        /// The `WWW-Authenticate` header.
        challenge: String,
    },
    /// The task a tool call went on as was cancelled.
    #[error("task {task} was cancelled{}", .message.as_deref().map(|m| format!(": {m}")).unwrap_or_default())]
    TaskCancelled {
        /// The task.
        task: String,
        /// What the server said.
        message: Option<String>,
    },
    /// The task a tool call went on as did not finish within the client's
    /// bounds ([`McpClientBuilder::task_wait`](crate::McpClientBuilder::task_wait),
    /// [`max_rounds`](crate::McpClientBuilder::max_rounds)); it was cancelled.
    #[error("task {task} {why}; it was cancelled")]
    TaskUnfinished {
        /// The task.
        task: String,
        /// Which bound it passed.
        why: String,
    },
    /// A tool's result does not match the `outputSchema` it was listed with.
    #[error("tool {tool} returned a result that does not match its outputSchema: {problem}")]
    StructuredContent {
        /// The tool.
        tool: String,
        /// Where and how it fails the schema.
        problem: String,
    },
    /// The client was configured wrongly.
    #[error("configuration error: {0}")]
    Config(String),
}

fn http_status(status: u16) -> String {
    if status == 0 {
        String::new()
    } else {
        format!(" (HTTP {status})")
    }
}

/// `: key ("message"), key` for the questions of the last round.
fn describe_asked(asked: &[(String, Option<String>)]) -> String {
    if asked.is_empty() {
        return String::new();
    }
    let each: Vec<String> = asked
        .iter()
        .map(|(key, message)| match message {
            Some(m) => format!("{key:?} ({m:?})"),
            None => format!("{key:?}"),
        })
        .collect();
    format!("; last asked {}", each.join(", "))
}

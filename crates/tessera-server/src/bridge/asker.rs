//! How the era bridge puts a question to the client: the transport's part.

use std::time::Duration;

use serde_json::Value;
use tessera_protocol::ErrorObject;

use crate::BoxFuture;

/// Sends one server-to-client request (`elicitation/create`,
/// `sampling/createMessage`, `roots/list`) and waits for its response. Over
/// stdio the request goes down the pipe; over Streamable HTTP it is an event
/// on the call's stream and the answer comes in a later POST.
///
/// The transport owns the waiting: how long a person may take, and telling
/// the client (`notifications/cancelled`) when a question it asked is
/// dropped unanswered.
pub trait Asker: Send + Sync {
    /// Asks `method` with `params` and waits for the client's result.
    fn ask<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, PeerFailure>>;
}

/// Why a pushed request got no result.
#[derive(Debug)]
pub enum PeerFailure {
    /// The client answered with a JSON-RPC error.
    Error(ErrorObject),
    /// The client went away (its connection or stream ended) before it answered.
    Closed,
    /// The client did not answer in time.
    TimedOut(Duration),
    /// The question could not be asked (the handler's input request is
    /// malformed, or the session has as many questions open as it may).
    Malformed(String),
}

impl PeerFailure {
    /// The failure as traces name it (`error.type`): the client's JSON-RPC
    /// error code, or `closed`, `timeout`, `malformed`.
    pub fn error_type(&self) -> String {
        match self {
            Self::Error(e) => e.code.to_string(),
            Self::Closed => "closed".into(),
            Self::TimedOut(_) => "timeout".into(),
            Self::Malformed(_) => "malformed".into(),
        }
    }
}

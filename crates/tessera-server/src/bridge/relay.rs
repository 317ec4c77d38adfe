//! Answers that reach another instance than the one holding the question.
//!
//! A session id is sealed, so any instance serves any request of an
//! initialize-era session; only a pushed question's answer must reach the
//! instance whose call waits for it. With a relay, every question id names
//! its holder ([`AnswerRelay::instance`]), and an instance that receives an
//! answer for another forwards it there. `tessera-redis` relays over Redis
//! pub/sub.

use std::sync::Arc;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::BoxFuture;

/// An answer on its way to the instance holding its question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RelayedAnswer {
    /// The session's key ([`OpenedSession::key`](super::OpenedSession::key)):
    /// the holder delivers the answer only to a question of this session.
    pub session: String,
    /// The client's JSON-RPC response, as it was posted.
    pub response: Value,
}

/// Where forwarded answers are handed to this instance's waiting calls.
pub type AnswerSink = Arc<dyn Fn(RelayedAnswer) + Send + Sync>;

/// Why an answer could not be forwarded.
#[derive(Debug, thiserror::Error)]
#[error("the answer could not be forwarded: {0}")]
pub struct RelayError(pub String);

/// Carries answers between the instances of one deployment.
pub trait AnswerRelay: Send + Sync + 'static {
    /// This instance's name on the relay: part of every question id it asks
    /// (letters, digits and `-` only).
    fn instance(&self) -> &str;

    /// Sends `answer` to the instance named `holder`: `Ok(true)` once it
    /// was handed over, `Ok(false)` when no instance by that name listens
    /// (it stopped, or never was).
    fn forward(
        &self,
        holder: &str,
        answer: RelayedAnswer,
    ) -> BoxFuture<'_, Result<bool, RelayError>>;

    /// Where answers forwarded to this instance go (set once, when the
    /// endpoint starts).
    fn receive(&self, sink: AnswerSink);
}

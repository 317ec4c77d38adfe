//! Requests the server sends the client (the era bridge's questions), waiting for their responses.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tessera_protocol::{CANCELLED_NOTIFICATION, ErrorObject, JsonRpcResponse, RequestId};
use tessera_server::BoxFuture;
use tessera_server::bridge::{Asker, PeerFailure};
use tokio::sync::oneshot;

use crate::outbox::Outbox;

/// Where a question's answer goes.
type Answer = oneshot::Sender<Result<Value, ErrorObject>>;

/// The server-to-client requests in flight, by id; `None` once the input ended.
type Waiting = Option<HashMap<RequestId, Answer>>;

/// The server-to-client requests in flight, by id.
#[derive(Default)]
pub(crate) struct PeerRequests {
    next_id: AtomicI64,
    waiting: Mutex<Waiting>,
}

impl PeerRequests {
    pub(crate) fn new() -> Self {
        Self {
            next_id: AtomicI64::new(1),
            waiting: Mutex::new(Some(HashMap::new())),
        }
    }

    fn waiting(&self) -> std::sync::MutexGuard<'_, Waiting> {
        self.waiting
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Sends `method` with `params` to the client and waits for its response,
    /// at most `patience`. A question given up (timed out, or its call
    /// cancelled) is withdrawn with `notifications/cancelled`.
    pub(crate) async fn ask(
        &self,
        outbox: &Outbox,
        method: &str,
        params: Value,
        patience: Duration,
    ) -> Result<Value, PeerFailure> {
        let id = RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        match self.waiting().as_mut() {
            Some(waiting) => waiting.insert(id.clone(), tx),
            None => return Err(PeerFailure::Closed),
        };
        let withdraw = Withdraw {
            peer: self,
            outbox,
            id: &id,
        };
        outbox
            .send_value(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = tokio::time::timeout(patience, rx).await;
        drop(withdraw);
        match answer {
            Ok(Ok(Ok(result))) => Ok(result),
            Ok(Ok(Err(error))) => Err(PeerFailure::Error(error)),
            Ok(Err(_)) => Err(PeerFailure::Closed),
            Err(_) => Err(PeerFailure::TimedOut(patience)),
        }
    }

    /// Delivers a response from the client; `false` when nothing waits for it.
    pub(crate) fn resolve(&self, response: JsonRpcResponse<Value>) -> bool {
        let (id, outcome) = match response {
            JsonRpcResponse::Result(r) => (Some(r.id), Ok(r.result)),
            JsonRpcResponse::Error(e) => (e.id, Err(e.error)),
        };
        let Some(id) = id else { return false };
        self.answer(&id, outcome)
    }

    /// Fails the question `id` with `error` (e.g. its response was malformed).
    pub(crate) fn fail(&self, id: &RequestId, error: ErrorObject) -> bool {
        self.answer(id, Err(error))
    }

    fn answer(&self, id: &RequestId, outcome: Result<Value, ErrorObject>) -> bool {
        let sender = self.waiting().as_mut().and_then(|w| w.remove(id));
        sender.is_some_and(|tx| tx.send(outcome).is_ok())
    }

    /// The input ended: every waiting question fails, and no new one is sent.
    pub(crate) fn close(&self) {
        self.waiting().take();
    }
}

/// The era bridge's questions, asked down this connection's pipe.
pub(crate) struct PipeAsker<'a> {
    pub(crate) peer: &'a PeerRequests,
    pub(crate) outbox: &'a Outbox,
    /// How long a person may take to answer one question.
    pub(crate) patience: Duration,
}

impl Asker for PipeAsker<'_> {
    fn ask<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, PeerFailure>> {
        Box::pin(self.peer.ask(self.outbox, method, params, self.patience))
    }
}

/// Takes a question off the waiting map when its asker goes away, and tells
/// the client when it was still open (so a dialog does not stay up for nothing).
struct Withdraw<'a> {
    peer: &'a PeerRequests,
    outbox: &'a Outbox,
    id: &'a RequestId,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        let open = self
            .peer
            .waiting()
            .as_mut()
            .and_then(|w| w.remove(self.id))
            .is_some();
        if open {
            self.outbox.notify(&json!({
                "jsonrpc": "2.0",
                "method": CANCELLED_NOTIFICATION,
                "params": {"requestId": self.id, "reason": "the server no longer needs this answer"}
            }));
        }
    }
}

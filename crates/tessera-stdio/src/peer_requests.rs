//! Requests the server sends the client (the era bridge's questions), waiting for their responses.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicI64, Ordering};

use serde_json::{Value, json};
use tessera_protocol::{ErrorObject, JsonRpcResponse, RequestId};
use tokio::sync::oneshot;

use crate::outbox::Outbox;

/// Why a pushed request got no result.
#[derive(Debug)]
pub(crate) enum PeerFailure {
    /// The client answered with a JSON-RPC error.
    Error(ErrorObject),
    /// The input ended before the client answered.
    Closed,
}

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

    /// Sends `method` with `params` to the client and waits for its response.
    pub(crate) async fn ask(
        &self,
        outbox: &Outbox,
        method: &str,
        params: Value,
    ) -> Result<Value, PeerFailure> {
        let id = RequestId::from(self.next_id.fetch_add(1, Ordering::Relaxed));
        let (tx, rx) = oneshot::channel();
        match self.waiting().as_mut() {
            Some(waiting) => waiting.insert(id.clone(), tx),
            None => return Err(PeerFailure::Closed),
        };
        // Dropped (the call was cancelled): forget the question.
        let forget = Forget {
            peer: self,
            id: &id,
        };
        outbox
            .send_value(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        let answer = rx.await;
        drop(forget);
        match answer {
            Ok(Ok(result)) => Ok(result),
            Ok(Err(error)) => Err(PeerFailure::Error(error)),
            Err(_) => Err(PeerFailure::Closed),
        }
    }

    /// Delivers a response from the client; `false` when nothing waits for it.
    pub(crate) fn resolve(&self, response: JsonRpcResponse<Value>) -> bool {
        let (id, outcome) = match response {
            JsonRpcResponse::Result(r) => (Some(r.id), Ok(r.result)),
            JsonRpcResponse::Error(e) => (e.id, Err(e.error)),
        };
        let Some(id) = id else { return false };
        let sender = self.waiting().as_mut().and_then(|w| w.remove(&id));
        sender.is_some_and(|tx| tx.send(outcome).is_ok())
    }

    /// The input ended: every waiting question fails, and no new one is sent.
    pub(crate) fn close(&self) {
        self.waiting().take();
    }
}

/// Removes a question from the waiting map when its asker goes away.
struct Forget<'a> {
    peer: &'a PeerRequests,
    id: &'a RequestId,
}

impl Drop for Forget<'_> {
    fn drop(&mut self) {
        if let Some(w) = self.peer.waiting().as_mut() {
            w.remove(self.id);
        }
    }
}

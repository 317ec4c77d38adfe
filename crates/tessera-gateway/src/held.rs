//! The upstream calls this instance holds open while their callers answer
//! a pushed question, and what a held call says next.
//!
//! A held call costs its upstream exchange (a socket and a session over
//! HTTP, the stdio lane) and its task and client here — 68 KB at 10,000
//! pending (`bench/waiting-human`) — for as long as a person takes to
//! answer, so the table is bounded: at most [`Limits::held_calls`] on the
//! instance and [`Limits::held_calls_per_caller`] for one caller. The slot
//! is taken before the upstream call starts, so a caller past its bound is
//! refused before anything happens upstream. A question the caller cannot
//! answer (its capabilities) is refused to the upstream at once, not held.
//! A call whose caller never comes back is dropped at the next sweep (at
//! most a second apart, whenever calls are held or answered) after its
//! question's answer timeout has passed; the upstream was told already: its
//! pushed request failed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_protocol::{ClientCapabilities, ElicitRequestParams, InputRequest, InputResponse};
use tokio::sync::{mpsc, oneshot};

use crate::config::Limits;
use crate::upstream::Event;

/// What a held call said next, as any instance can carry it.
#[derive(Debug, Serialize, Deserialize)]
pub(crate) enum Outcome {
    /// The upstream's result.
    Done(Value),
    /// It pushed another question; the call stays held under the same id.
    Asked {
        /// The held call's id.
        call: String,
        /// The question's key.
        key: String,
        /// The question.
        request: Box<InputRequest>,
    },
    /// It failed: a JSON-RPC error to pass on.
    Failed(tessera_protocol::ErrorObject),
}

/// Whether a caller declaring `caps` can answer `request`.
fn can_answer(caps: &ClientCapabilities, request: &InputRequest) -> bool {
    let kinds = crate::upstream::kinds_of(caps);
    match request {
        InputRequest::Elicit(ElicitRequestParams::Form(_)) => kinds.form,
        InputRequest::Elicit(ElicitRequestParams::Url(_)) => kinds.url,
        InputRequest::Sample(_) => kinds.sampling,
        InputRequest::ListRoots(_) => kinds.roots,
    }
}

/// One held call.
struct Held {
    events: mpsc::Receiver<Event>,
    reply: oneshot::Sender<InputResponse>,
    key: String,
    principal: Option<String>,
    upstream: String,
    since: Instant,
    _slot: Slot,
}

/// How many calls are held (or starting), in all and per caller.
#[derive(Default)]
struct Counts {
    total: usize,
    per_caller: HashMap<String, usize>,
}

/// A place in the table, taken before the upstream call starts; given back when dropped.
pub(crate) struct Slot {
    counts: Arc<Mutex<Counts>>,
    caller: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut counts = lock(&self.counts);
        counts.total = counts.total.saturating_sub(1);
        if let Some(n) = counts.per_caller.get_mut(&self.caller) {
            *n -= 1;
            if *n == 0 {
                counts.per_caller.remove(&self.caller);
            }
        }
    }
}

/// Why a call could not be held.
#[derive(Debug, thiserror::Error)]
pub(crate) enum Refused {
    /// The instance holds as many as it may.
    #[error(
        "this gateway instance holds {0} calls waiting for answers, as many as it may; retry later"
    )]
    Instance(usize),
    /// The caller holds as many as it may.
    #[error(
        "you have {0} calls waiting for answers through this gateway, as many as one caller may; answer or abandon one first"
    )]
    Caller(usize),
}

/// The held calls of this instance.
pub(crate) struct HeldCalls {
    calls: Mutex<HashMap<String, Held>>,
    counts: Arc<Mutex<Counts>>,
    limits: Limits,
    last_sweep: Mutex<Instant>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A fresh call id (unique on this instance; the ticket that names one is
/// sealed, and only its principal may answer it).
pub(crate) fn call_id() -> String {
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    tessera_state::random_id().unwrap_or_else(|| {
        format!(
            "n{}",
            NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
        )
    })
}

impl HeldCalls {
    /// An empty table with these bounds.
    pub(crate) fn new(limits: Limits) -> Self {
        Self {
            calls: Mutex::default(),
            counts: Arc::default(),
            limits,
            last_sweep: Mutex::new(Instant::now()),
        }
    }

    /// Calls held now.
    pub(crate) fn len(&self) -> usize {
        lock(&self.calls).len()
    }

    /// Takes a place for a call of `caller` (its principal, else its address).
    pub(crate) fn reserve(&self, caller: Option<&str>) -> Result<Slot, Refused> {
        self.sweep();
        let caller = caller.unwrap_or("(local)").to_owned();
        let mut counts = lock(&self.counts);
        if counts.total >= self.limits.held_calls {
            return Err(Refused::Instance(counts.total));
        }
        let mine = counts.per_caller.get(&caller).copied().unwrap_or(0);
        if mine >= self.limits.held_calls_per_caller {
            return Err(Refused::Caller(mine));
        }
        counts.total += 1;
        *counts.per_caller.entry(caller.clone()).or_default() += 1;
        Ok(Slot {
            counts: Arc::clone(&self.counts),
            caller,
        })
    }

    /// Waits for what the call says next (at most the upstream timeout): its
    /// result, or a question the caller (declaring `caps`) can answer — then
    /// it is held, under `call` when it has an id already. A question the
    /// caller cannot answer is refused to the upstream at once.
    pub(crate) async fn next(
        &self,
        upstream: &str,
        mut events: mpsc::Receiver<Event>,
        slot: Slot,
        principal: Option<String>,
        call: Option<String>,
        caps: &ClientCapabilities,
    ) -> Outcome {
        self.sweep();
        let patience = self.limits.upstream_timeout();
        let event = loop {
            let event = match tokio::time::timeout(patience, events.recv()).await {
                Ok(Some(event)) => event,
                Ok(None) => {
                    return Outcome::Failed(tessera_protocol::ErrorObject::new(
                        tessera_protocol::INTERNAL_ERROR,
                        format!("the call on upstream {upstream:?} ended without a result"),
                    ));
                }
                Err(_) => {
                    return Outcome::Failed(tessera_protocol::ErrorObject::new(
                        tessera_protocol::INTERNAL_ERROR,
                        format!("upstream {upstream:?} did not answer within {patience:?}"),
                    ));
                }
            };
            match &event {
                Event::Asked { key, request, .. } if !can_answer(caps, request) => {
                    // Dropping the reply fails the pushed request: the upstream decides what that means.
                    tracing::info!(%upstream, %key, method = request.method(), "a pushed question the caller cannot answer was refused");
                }
                _ => break event,
            }
        };
        match event {
            Event::Done(Ok(result)) => Outcome::Done(result),
            Event::Done(Err(e)) => Outcome::Failed(crate::upstream::error_object(&e)),
            Event::Asked {
                key,
                request,
                reply,
            } => {
                let call = call.unwrap_or_else(call_id);
                crate::metrics::held_calls(upstream, 1);
                lock(&self.calls).insert(
                    call.clone(),
                    Held {
                        events,
                        reply,
                        key: key.clone(),
                        principal,
                        upstream: upstream.to_owned(),
                        since: Instant::now(),
                        _slot: slot,
                    },
                );
                Outcome::Asked { call, key, request }
            }
        }
    }

    /// Gives held call `call` its caller's `answer` and waits for what it
    /// says next. Only the principal that started it may answer it.
    pub(crate) async fn answer(
        &self,
        call: &str,
        principal: Option<&str>,
        answer: Option<InputResponse>,
        caps: &ClientCapabilities,
    ) -> Outcome {
        self.sweep();
        let held = {
            let mut calls = lock(&self.calls);
            match calls.get(call) {
                Some(held) if held.principal.as_deref() == principal => calls.remove(call),
                _ => None,
            }
        };
        let Some(held) = held else {
            return Outcome::Failed(tessera_protocol::ErrorObject::new(
                tessera_protocol::INVALID_PARAMS,
                "this call is no longer held by the gateway: it ended, its answer came too late, or the instance holding it restarted; start the call again",
            ));
        };
        crate::metrics::held_calls(&held.upstream, -1);
        let Held {
            events,
            reply,
            key,
            principal,
            upstream,
            _slot: slot,
            ..
        } = held;
        let Some(answer) = answer else {
            return Outcome::Failed(tessera_protocol::ErrorObject::new(
                tessera_protocol::INVALID_PARAMS,
                format!("no answer to {key:?}, the question the call is waiting on"),
            ));
        };
        // A call whose question timed out upstream has gone on: what it says next tells.
        let _ = reply.send(answer);
        self.next(
            &upstream,
            events,
            slot,
            principal,
            Some(call.to_owned()),
            caps,
        )
        .await
    }

    /// Drops calls whose caller did not come back within the answer timeout
    /// (at most once a second, when a call is about to be held).
    fn sweep(&self) {
        {
            let mut last = lock(&self.last_sweep);
            if last.elapsed() < Duration::from_secs(1) {
                return;
            }
            *last = Instant::now();
        }
        let limit = self.limits.answer_timeout() + Duration::from_secs(5);
        let dropped: Vec<Held> = {
            let mut calls = lock(&self.calls);
            let stale: Vec<String> = calls
                .iter()
                .filter(|(_, h)| h.since.elapsed() > limit)
                .map(|(id, _)| id.clone())
                .collect();
            stale.iter().filter_map(|id| calls.remove(id)).collect()
        };
        for held in dropped {
            crate::metrics::held_calls(&held.upstream, -1);
            tracing::info!(upstream = %held.upstream, "a held call whose caller did not come back was dropped");
        }
    }
}

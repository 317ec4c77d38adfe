//! Answers to calls another gateway instance holds.
//!
//! A held call lives on the instance that started it; its ticket names that
//! instance. A retry that lands elsewhere sends the answer there over the
//! deployment's answer relay (Redis pub/sub with `--redis`) and waits for
//! what the call says next, which the holder sends back the same way. When
//! no instance by that name listens any more (it stopped or restarted), the
//! caller is told at once.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tessera_protocol::{
    ClientCapabilities, ErrorObject, INTERNAL_ERROR, INVALID_PARAMS, InputResponse,
};
use tessera_server::bridge::{AnswerRelay, RelayedAnswer};
use tokio::sync::oneshot;

use crate::held::{HeldCalls, Outcome};

/// The relay message kind of an answer on its way to the holder.
const TO_HOLDER: &str = "gateway/answer";
/// The relay message kind of an outcome on its way back.
const TO_ASKER: &str = "gateway/outcome";

/// An answer for a call another instance holds.
#[derive(Serialize, Deserialize)]
struct Answer {
    call: String,
    principal: Option<String>,
    answer: Option<InputResponse>,
    /// What the caller can answer, for the call's next question.
    capabilities: ClientCapabilities,
    /// The instance waiting for the outcome, and its waiter.
    reply_to: String,
    reply: String,
}

/// What the held call said next, on its way back.
#[derive(Serialize, Deserialize)]
struct Reply {
    reply: String,
    outcome: Outcome,
}

/// This instance among the deployment's.
pub(crate) struct Instances {
    relay: Option<Arc<dyn AnswerRelay>>,
    held: Arc<HeldCalls>,
    waiting: Mutex<HashMap<String, oneshot::Sender<Outcome>>>,
    patience: Duration,
}

impl Instances {
    /// This instance, answering for `held`; with a relay, reachable by the others.
    pub(crate) fn start(
        relay: Option<Arc<dyn AnswerRelay>>,
        held: Arc<HeldCalls>,
        patience: Duration,
    ) -> Arc<Self> {
        let instances = Arc::new(Self {
            relay: relay.clone(),
            held,
            waiting: Mutex::default(),
            patience,
        });
        if let Some(relay) = relay {
            let me: Weak<Self> = Arc::downgrade(&instances);
            relay.receive(Arc::new(move |message: RelayedAnswer| {
                if let Some(me) = me.upgrade() {
                    me.heard(message);
                }
            }));
        }
        instances
    }

    /// This instance's name in tickets (`local` without a relay).
    pub(crate) fn name(&self) -> &str {
        self.relay.as_ref().map_or("local", |r| r.instance())
    }

    /// Answers held call `call` on instance `holder` (this one or another),
    /// and returns what it says next.
    pub(crate) async fn answer(
        &self,
        holder: &str,
        call: &str,
        principal: Option<&str>,
        answer: Option<InputResponse>,
        caps: &ClientCapabilities,
    ) -> Outcome {
        if holder == self.name() {
            return self.held.answer(call, principal, answer, caps).await;
        }
        let Some(relay) = &self.relay else {
            return gone("this gateway runs alone (no --redis) and did not start the call");
        };
        let reply = crate::held::call_id();
        let (tx, rx) = oneshot::channel();
        self.lock().insert(reply.clone(), tx);
        // Taken off the table however this ends (the caller may go away mid-wait).
        let _waiting = Waiting(self, &reply);
        let message = Answer {
            call: call.to_owned(),
            principal: principal.map(str::to_owned),
            answer,
            capabilities: caps.clone(),
            reply_to: self.name().to_owned(),
            reply: reply.clone(),
        };
        let sent = match serde_json::to_value(&message) {
            Ok(response) => {
                relay
                    .forward(
                        holder,
                        RelayedAnswer {
                            session: TO_HOLDER.into(),
                            response,
                        },
                    )
                    .await
            }
            Err(e) => Err(tessera_server::bridge::RelayError(e.to_string())),
        };
        match sent {
            Ok(true) => tokio::time::timeout(self.patience + Duration::from_secs(5), rx)
                .await
                .ok()
                .and_then(Result::ok)
                .unwrap_or_else(|| {
                    Outcome::Failed(ErrorObject::new(
                        INTERNAL_ERROR,
                        "the gateway instance holding this call did not say what it did next in time",
                    ))
                }),
            Ok(false) => gone("the gateway instance holding this call is gone (stopped or restarted)"),
            Err(e) => Outcome::Failed(ErrorObject::new(
                INTERNAL_ERROR,
                format!("the answer could not reach the gateway instance holding the call: {e}"),
            )),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, oneshot::Sender<Outcome>>> {
        self.waiting.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A message another instance sent this one.
    fn heard(self: Arc<Self>, message: RelayedAnswer) {
        match message.session.as_str() {
            TO_HOLDER => {
                let Ok(answer) = serde_json::from_value::<Answer>(message.response) else {
                    tracing::warn!("a relayed gateway answer that does not read; ignored");
                    return;
                };
                tokio::spawn(async move {
                    let outcome = self
                        .held
                        .answer(
                            &answer.call,
                            answer.principal.as_deref(),
                            answer.answer,
                            &answer.capabilities,
                        )
                        .await;
                    let Some(relay) = &self.relay else { return };
                    let reply = Reply {
                        reply: answer.reply,
                        outcome,
                    };
                    let Ok(response) = serde_json::to_value(&reply) else {
                        return;
                    };
                    let back = RelayedAnswer {
                        session: TO_ASKER.into(),
                        response,
                    };
                    if !matches!(relay.forward(&answer.reply_to, back).await, Ok(true)) {
                        tracing::info!(
                            "the instance that relayed an answer is gone; the outcome is dropped"
                        );
                    }
                });
            }
            TO_ASKER => {
                let Ok(reply) = serde_json::from_value::<Reply>(message.response) else {
                    tracing::warn!("a relayed gateway outcome that does not read; ignored");
                    return;
                };
                if let Some(waiter) = self.lock().remove(&reply.reply) {
                    let _ = waiter.send(reply.outcome);
                }
            }
            _ => tracing::debug!("a relayed message for another part of the deployment; ignored"),
        }
    }
}

/// A waiter for an outcome, taken off the table when dropped.
struct Waiting<'a>(&'a Instances, &'a str);

impl Drop for Waiting<'_> {
    fn drop(&mut self) {
        self.0.lock().remove(self.1);
    }
}

fn gone(why: &str) -> Outcome {
    Outcome::Failed(ErrorObject::new(
        INVALID_PARAMS,
        format!("{why}; start the call again"),
    ))
}

//! Initialize-era answers across instances: each instance listens on its own
//! Redis channel, and an instance that receives an answer for a question
//! another asked publishes it there.
//!
//! `PUBLISH` answers with the number of subscribers that received the
//! message, so a holder that is gone is known at once: the client is told,
//! instead of its answer vanishing. On a cluster the channels are sharded
//! (one per instance, so they spread over the slots) and `SPUBLISH` counts
//! the subscribers on the node owning the channel, where the holder listens.

use crate::RedisConnection;
use crate::subscriber::{ChannelListener, subscribe_forever};
use std::sync::{Arc, OnceLock};
use tessera_protocol::BoxFuture;
use tessera_server::bridge::{AnswerRelay, AnswerSink, RelayError, RelayedAnswer};

/// Relays answers over Redis pub/sub, on channels `tessera:{namespace}:answers:{instance}`.
/// A subscriber task keeps this instance's channel open (reconnecting as
/// the change bus does).
pub struct RedisRelay {
    conn: RedisConnection,
    publish: &'static str,
    namespace: String,
    instance: String,
    sink: Arc<OnceLock<AnswerSink>>,
    task: tokio::task::JoinHandle<()>,
}

impl RedisRelay {
    pub(crate) fn start(redis: &crate::Redis, namespace: &str) -> Self {
        let instance = instance_name();
        let sink: Arc<OnceLock<AnswerSink>> = Arc::default();
        let channel = channel(namespace, &instance);
        let task = tokio::spawn(subscribe_forever(
            redis.deployment.clone(),
            channel.clone(),
            "answer relay",
            RelayListener {
                channel,
                sink: Arc::clone(&sink),
            },
        ));
        Self {
            conn: redis.connection(),
            publish: redis.deployment.publish(),
            namespace: namespace.to_owned(),
            instance,
            sink,
            task,
        }
    }
}

impl Drop for RedisRelay {
    fn drop(&mut self) {
        self.task.abort();
    }
}

fn channel(namespace: &str, instance: &str) -> String {
    format!("tessera:{namespace}:answers:{instance}")
}

/// A name no other running instance has: 16 random hex digits.
fn instance_name() -> String {
    let mut bytes = [0u8; 8];
    // Without randomness, the clock and the process id still tell instances apart.
    if getrandom::fill(&mut bytes).is_err() {
        let nanos = tessera_protocol::clock::SystemTime::now()
            .duration_since(tessera_protocol::clock::UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos() as u64);
        bytes = (nanos ^ u64::from(std::process::id())).to_be_bytes();
    }
    tessera_state::lower_hex(&bytes)
}

impl AnswerRelay for RedisRelay {
    fn instance(&self) -> &str {
        &self.instance
    }

    fn forward(
        &self,
        holder: &str,
        answer: RelayedAnswer,
    ) -> BoxFuture<'_, Result<bool, RelayError>> {
        let mut conn = self.conn.clone();
        let channel = channel(&self.namespace, holder);
        Box::pin(async move {
            let payload = serde_json::to_string(&answer).map_err(|e| RelayError(e.to_string()))?;
            let heard = redis::cmd(self.publish)
                .arg(&channel)
                .arg(payload)
                .query_async::<i64>(&mut conn)
                .await
                .map_err(|e| RelayError(format!("Redis: {e}")))?;
            Ok(heard > 0)
        })
    }

    fn receive(&self, sink: AnswerSink) {
        if self.sink.set(sink).is_err() {
            tracing::warn!("an answer relay serves one endpoint; a second receiver is ignored");
        }
    }
}

/// The relay's side of this instance's channel: answers to the endpoint.
struct RelayListener {
    channel: String,
    sink: Arc<OnceLock<AnswerSink>>,
}

impl ChannelListener for RelayListener {
    fn message(&mut self, payload: &str) {
        match (
            serde_json::from_str::<RelayedAnswer>(payload),
            self.sink.get(),
        ) {
            (Ok(answer), Some(deliver)) => deliver(answer),
            (Err(_), _) => {
                tracing::warn!(channel = %self.channel, "a relayed message that is not an answer; ignored")
            }
            (Ok(_), None) => {
                tracing::warn!(channel = %self.channel, "an answer arrived before the endpoint started; ignored")
            }
        }
    }
}

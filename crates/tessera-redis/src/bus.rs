//! The change bus across instances: Redis pub/sub in, each instance's listeners out.

use crate::RedisConnection;
use crate::subscriber::{ChannelListener, subscribe_forever};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tessera_protocol::BoxFuture;
use tessera_server::{
    BusError, BusEvent, Change, ChangeBus, ChangeListener, MemoryBus, Subscription,
};

/// Publishes changes on a Redis channel and delivers what arrives on it to
/// this instance's listeners. A subscriber task keeps the channel open,
/// reconnecting with backoff (0.1 s doubling to 5 s); each time the
/// connection is lost, listeners here are told ([`BusEvent::Lost`]) so their
/// subscriptions end gracefully and clients listen again, and a listener that
/// arrives while the connection is down is ended at once.
pub struct RedisBus {
    conn: RedisConnection,
    publish: &'static str,
    channel: String,
    local: MemoryBus,
    connected: Arc<AtomicBool>,
    task: tokio::task::JoinHandle<()>,
}

impl RedisBus {
    pub(crate) fn start(redis: &crate::Redis, namespace: &str) -> Self {
        let channel = format!("tessera:{namespace}:changes");
        let local = MemoryBus::default();
        let connected = Arc::new(AtomicBool::new(false));
        let task = tokio::spawn(subscribe_forever(
            redis.deployment.clone(),
            channel.clone(),
            "change bus",
            BusListener {
                channel: channel.clone(),
                local: local.clone(),
                connected: Arc::clone(&connected),
            },
        ));
        Self {
            conn: redis.connection(),
            publish: redis.deployment.publish(),
            channel,
            local,
            connected,
            task,
        }
    }

    /// Whether the subscriber is connected now.
    pub fn is_connected(&self) -> bool {
        self.connected.load(Ordering::Acquire)
    }
}

impl Drop for RedisBus {
    fn drop(&mut self) {
        self.task.abort();
    }
}

impl ChangeBus for RedisBus {
    fn publish(&self, change: Change) -> BoxFuture<'_, Result<(), BusError>> {
        let mut conn = self.conn.clone();
        let channel = self.channel.clone();
        Box::pin(async move {
            let payload = serde_json::to_string(&change).map_err(|e| BusError(e.to_string()))?;
            // Every instance hears it on the channel, this one included.
            redis::cmd(self.publish)
                .arg(&channel)
                .arg(payload)
                .query_async::<i64>(&mut conn)
                .await
                .map(drop)
                .map_err(|e| BusError(format!("Redis: {e}")))
        })
    }

    fn subscribe(&self, listener: ChangeListener) -> Subscription {
        let subscription = self.local.subscribe(Arc::clone(&listener));
        if !self.is_connected() {
            // Nothing published elsewhere could reach it: end it now, gracefully.
            listener(BusEvent::Lost);
        }
        subscription
    }
}

/// The bus's side of its channel: changes to this instance's listeners.
struct BusListener {
    channel: String,
    local: MemoryBus,
    connected: Arc<AtomicBool>,
}

impl ChannelListener for BusListener {
    fn opened(&mut self) {
        self.connected.store(true, Ordering::Release);
    }

    fn message(&mut self, payload: &str) {
        match serde_json::from_str::<Change>(payload) {
            Ok(change) => self.local.deliver(BusEvent::Change(&change)),
            Err(_) => {
                tracing::warn!(channel = %self.channel, "a message on the change bus that is not a change; ignored")
            }
        }
    }

    fn lost(&mut self) {
        // Listeners end their subscriptions gracefully; clients listen again.
        self.connected.store(false, Ordering::Release);
        self.local.deliver(BusEvent::Lost);
    }
}

//! A Redis pub/sub channel kept open: subscribe, hand over each message,
//! and reconnect with backoff (0.1 s doubling to 5 s) whenever the
//! connection is lost. The change bus, the answer relay and the task store
//! listen this way.
//!
//! On a single Redis the channel is a classic one (`SUBSCRIBE`). On a
//! cluster it is sharded (`SSUBSCRIBE`, through the cluster client, which
//! finds the node owning the channel's slot): a message goes to that shard
//! only instead of to every node. The cluster client reports a lost node
//! connection as a push; the channel is then opened again from a new
//! client, so listeners hear of every loss, as on a single Redis.

use std::time::Duration;

use futures_util::StreamExt;
use redis::{PushKind, Value};

use crate::connection::Deployment;

/// What a kept channel tells its owner.
pub(crate) trait ChannelListener: Send + 'static {
    /// The channel is subscribed (again).
    fn opened(&mut self) {}
    /// A message's payload arrived.
    fn message(&mut self, payload: &str);
    /// The connection was lost; reconnecting follows.
    fn lost(&mut self) {}
}

/// Keeps `channel` subscribed for as long as the task runs; `what` names it in the log.
pub(crate) async fn subscribe_forever(
    deployment: Deployment,
    channel: String,
    what: &'static str,
    mut listener: impl ChannelListener,
) {
    const FIRST: Duration = Duration::from_millis(100);
    let mut backoff = FIRST;
    loop {
        let subscribed = match &deployment {
            Deployment::Single(client) => single(client, &channel, what, &mut listener).await,
            Deployment::Cluster(seeds) => sharded(seeds, &channel, what, &mut listener).await,
        };
        match subscribed {
            Ok(()) => {
                tracing::warn!(%channel, "{what} connection lost; reconnecting");
                listener.lost();
                backoff = FIRST;
            }
            Err(e) => tracing::debug!(error = %e, %channel, "{what} cannot subscribe; retrying"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

/// Subscribes on one server and delivers until the connection is lost (`Ok`).
async fn single(
    client: &redis::Client,
    channel: &str,
    what: &'static str,
    listener: &mut impl ChannelListener,
) -> redis::RedisResult<()> {
    let mut pubsub = client.get_async_pubsub().await?;
    pubsub.subscribe(channel).await?;
    listener.opened();
    tracing::info!(%channel, "{what} subscribed");
    let mut messages = pubsub.on_message();
    while let Some(message) = messages.next().await {
        match message.get_payload::<String>() {
            Ok(payload) => listener.message(&payload),
            Err(_) => tracing::warn!(%channel, "a {what} message that is not text; ignored"),
        }
    }
    Ok(())
}

/// Whether a push's first datum is `channel`.
fn names(data: &[Value], channel: &str) -> bool {
    matches!(data.first(), Some(Value::BulkString(name)) if name == channel.as_bytes())
}

/// Subscribes to the sharded channel on a cluster and delivers until a node
/// connection is lost, or the node unsubscribes the channel (`Ok`).
async fn sharded(
    seeds: &[String],
    channel: &str,
    what: &'static str,
    listener: &mut impl ChannelListener,
) -> redis::RedisResult<()> {
    let (push, mut pushed) = tokio::sync::mpsc::unbounded_channel();
    let client = Deployment::cluster_client(seeds, Some(push))?;
    let mut conn = client.get_async_connection().await?;
    conn.ssubscribe(channel).await?;
    listener.opened();
    tracing::info!(%channel, "{what} subscribed (sharded)");
    while let Some(push) = pushed.recv().await {
        match push.kind {
            PushKind::SMessage => match push.data.get(1) {
                Some(Value::BulkString(bytes)) => match std::str::from_utf8(bytes) {
                    Ok(payload) => listener.message(payload),
                    Err(_) => {
                        tracing::warn!(%channel, "a {what} message that is not text; ignored")
                    }
                },
                _ => tracing::warn!(%channel, "a {what} message without a payload; ignored"),
            },
            PushKind::Disconnection => return Ok(()),
            // The node gave up the channel's slot (a failover, a
            // migration): the client does not follow it; a new one will.
            PushKind::SUnsubscribe if names(&push.data, channel) => return Ok(()),
            _ => {}
        }
    }
    Ok(())
}

//! A Redis pub/sub channel kept open: subscribe, hand over each message,
//! and reconnect with backoff (0.1 s doubling to 5 s) whenever the
//! connection is lost. The change bus and the answer relay both listen this way.

use std::time::Duration;

use futures_util::StreamExt;

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
    client: redis::Client,
    channel: String,
    what: &'static str,
    mut listener: impl ChannelListener,
) {
    const FIRST: Duration = Duration::from_millis(100);
    let mut backoff = FIRST;
    loop {
        match client.get_async_pubsub().await {
            Ok(mut pubsub) => match pubsub.subscribe(&channel).await {
                Ok(()) => {
                    listener.opened();
                    tracing::info!(%channel, "{what} subscribed");
                    backoff = FIRST;
                    let mut messages = pubsub.on_message();
                    while let Some(message) = messages.next().await {
                        match message.get_payload::<String>() {
                            Ok(payload) => listener.message(&payload),
                            Err(_) => {
                                tracing::warn!(%channel, "a {what} message that is not text; ignored")
                            }
                        }
                    }
                    tracing::warn!(%channel, "{what} connection lost; reconnecting");
                    listener.lost();
                }
                Err(e) => tracing::warn!(error = %e, "{what} cannot subscribe; retrying"),
            },
            Err(e) => tracing::debug!(error = %e, "{what} cannot connect; retrying"),
        }
        tokio::time::sleep(backoff).await;
        backoff = (backoff * 2).min(Duration::from_secs(5));
    }
}

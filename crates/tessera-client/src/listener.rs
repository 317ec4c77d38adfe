//! A `subscriptions/listen` stream as the caller sees it.

use serde_json::Value;
use tessera_protocol::SubscriptionFilter;
use tokio::sync::mpsc;

use crate::ClientError;

/// One thing a subscription delivers.
#[derive(Debug, Clone, PartialEq)]
pub enum ListenEvent {
    /// The server's acknowledgement: what it agreed to send (always first).
    Acknowledged(SubscriptionFilter),
    /// A notification (`notifications/tools/list_changed`, `notifications/resources/updated`, …), whole.
    Notification(Value),
    /// The server ended the subscription gracefully (e.g. it is shutting down); nothing follows.
    Ended,
}

/// An open subscription; dropping it cancels the subscription (closing the
/// stream over HTTP, `notifications/cancelled` over stdio).
pub struct Listener {
    pub(crate) events: mpsc::UnboundedReceiver<Result<ListenEvent, ClientError>>,
    pub(crate) task: tokio::task::JoinHandle<()>,
}

impl Listener {
    /// The next event; `None` after [`ListenEvent::Ended`] or an error.
    pub async fn next(&mut self) -> Option<Result<ListenEvent, ClientError>> {
        self.events.recv().await
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Sorts one notification of the stream into an event.
pub(crate) fn event_of(notification: Value) -> ListenEvent {
    if notification.get("method").and_then(Value::as_str)
        == Some("notifications/subscriptions/acknowledged")
    {
        let agreed = notification
            .get("params")
            .and_then(|p| p.get("notifications"))
            .and_then(|n| serde_json::from_value(n.clone()).ok())
            .unwrap_or_default();
        return ListenEvent::Acknowledged(agreed);
    }
    ListenEvent::Notification(notification)
}

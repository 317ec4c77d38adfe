//! The channel handlers' notifications travel through to the transport.

use std::sync::Arc;

use serde_json::Value;

/// Receives serialised JSON-RPC notifications (progress, log messages) for one request.
#[derive(Clone)]
pub struct NotificationSink(Arc<dyn Fn(Value) + Send + Sync>);

impl NotificationSink {
    /// A sink that calls `f` with each notification.
    pub fn new(f: impl Fn(Value) + Send + Sync + 'static) -> Self {
        Self(Arc::new(f))
    }

    /// Sends one notification.
    pub fn send(&self, notification: Value) {
        (self.0)(notification)
    }
}

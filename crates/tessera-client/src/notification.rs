//! What a client does with the notifications a server sends on a request's
//! response (progress, log messages): shared by the client and its transports.

use std::sync::Arc;

use serde_json::Value;

/// Called with every notification a server sends before its response.
pub type NotificationHandler = Arc<dyn Fn(&Value) + Send + Sync>;

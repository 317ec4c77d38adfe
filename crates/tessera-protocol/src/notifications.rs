//! Notifications: progress, log messages, cancellation, list changes.

use serde::{Deserialize, Serialize};
use serde_json::{Number, Value};

use crate::{LoggingLevel, NotificationMeta, ProgressToken, RequestId};

/// Method name of progress notifications.
pub const PROGRESS_NOTIFICATION: &str = "notifications/progress";
/// Method name of log message notifications.
pub const LOG_MESSAGE_NOTIFICATION: &str = "notifications/message";
/// Method name of cancellation notifications.
pub const CANCELLED_NOTIFICATION: &str = "notifications/cancelled";

/// Parameters of `notifications/progress`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The token from the request's `_meta.progressToken`.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with each notification.
    pub progress: Number,
    /// Total, if known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub total: Option<Number>,
    /// A human-readable message.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

impl ProgressNotificationParams {
    /// Progress `progress` of `total` for `token`; integral values print without `.0`.
    pub fn new(
        token: ProgressToken,
        progress: f64,
        total: Option<f64>,
        message: Option<String>,
    ) -> Self {
        Self {
            progress_token: token,
            progress: json_number(progress),
            total: total.map(json_number),
            message,
            meta: None,
        }
    }
}

/// A JSON number for `f`: an integer when `f` is integral, so 5.0 prints as `5`.
/// Non-finite values (which JSON cannot carry) become 0.
pub fn json_number(f: f64) -> Number {
    if f.fract() == 0.0 && f.abs() < 9.0e15 {
        Number::from(f as i64)
    } else {
        Number::from_f64(f).unwrap_or_else(|| Number::from(0))
    }
}

/// Parameters of `notifications/message` (a log message).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageParams {
    /// Severity.
    pub level: LoggingLevel,
    /// Name of the logger.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message: any JSON value.
    pub data: Value,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// Parameters of `notifications/cancelled`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The request being cancelled.
    pub request_id: RequestId,
    /// Why.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// Parameters of `notifications/resources/updated`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ResourceUpdatedParams {
    /// The resource that changed.
    pub uri: String,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// Parameters of the list-changed notifications (only metadata).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

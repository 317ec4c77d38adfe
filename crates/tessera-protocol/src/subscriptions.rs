//! `subscriptions/listen` and its acknowledgement.

/// The method of a subscription: its response stream lives until the client or the server ends it.
pub const SUBSCRIPTIONS_LISTEN: &str = "subscriptions/listen";

use serde::{Deserialize, Serialize};

use crate::{Implementation, JsonObject, NotificationMeta, RequestId, RequestMeta};

/// Which notifications a listener wants.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these tasks (the tasks extension: the
    /// request must declare it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

/// Parameters of `subscriptions/listen`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenRequestParams {
    /// The per-request envelope.
    #[serde(rename = "_meta", default)]
    pub meta: RequestMeta,
    /// What to listen for.
    pub notifications: SubscriptionFilter,
}

/// Parameters of `notifications/subscriptions/acknowledged`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedParams {
    /// What the server will actually send.
    pub notifications: SubscriptionFilter,
    /// Notification metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<NotificationMeta>,
}

/// The result that ends a `subscriptions/listen` stream.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: crate::Complete,
    /// Metadata naming the subscription.
    #[serde(rename = "_meta")]
    pub meta: SubscriptionsListenResultMeta,
}

/// `_meta` of a `subscriptions/listen` result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenResultMeta {
    /// The subscription that ended.
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub subscription_id: RequestId,
    /// The server software.
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// Any other keys.
    #[serde(flatten)]
    pub other: JsonObject,
}

//! What changed on the server: the events `subscriptions/listen` delivers.

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tessera_protocol::{RequestId, SUBSCRIPTION_ID_KEY, SubscriptionFilter};

/// One change a listener may be told about.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "change", rename_all = "camelCase")]
pub enum Change {
    /// The tool list changed (`notifications/tools/list_changed`).
    ToolsListChanged,
    /// The prompt list changed (`notifications/prompts/list_changed`).
    PromptsListChanged,
    /// The resource list changed (`notifications/resources/list_changed`).
    ResourcesListChanged,
    /// A resource's content changed (`notifications/resources/updated`).
    ResourceUpdated {
        /// The resource's URI.
        uri: String,
    },
    /// A task's state changed (`notifications/tasks`, the tasks extension):
    /// only listeners of the task's principal that asked for its id hear it.
    TaskStatus {
        /// Whose task it is ([`NewTask::principal`](crate::NewTask::principal)).
        principal: Option<String>,
        /// The task as `tasks/get` answers it (its `taskId`, `status`, …).
        task: tessera_protocol::JsonObject,
    },
}

impl Change {
    /// Whether a listener that agreed to `filter` wants this change.
    pub fn wanted_by(&self, filter: &SubscriptionFilter) -> bool {
        match self {
            Self::ToolsListChanged => filter.tools_list_changed == Some(true),
            Self::PromptsListChanged => filter.prompts_list_changed == Some(true),
            Self::ResourcesListChanged => filter.resources_list_changed == Some(true),
            Self::ResourceUpdated { uri } => filter
                .resource_subscriptions
                .as_ref()
                .is_some_and(|uris| uris.iter().any(|u| u == uri)),
            Self::TaskStatus { task, .. } => {
                let id = task.get("taskId").and_then(Value::as_str);
                filter
                    .task_ids
                    .as_ref()
                    .is_some_and(|ids| ids.iter().any(|i| Some(i.as_str()) == id))
            }
        }
    }

    /// Whether a listener of `principal` may hear this change: a task's
    /// state only its own principal (every other change anyone).
    pub fn visible_to(&self, principal: Option<&str>) -> bool {
        match self {
            Self::TaskStatus {
                principal: owner, ..
            } => owner.as_deref() == principal,
            _ => true,
        }
    }

    /// The notification for subscription `id`.
    pub fn notification(&self, id: &RequestId) -> Value {
        let mut n = self.legacy_notification();
        n["params"]["_meta"] = json!({SUBSCRIPTION_ID_KEY: id});
        n
    }

    /// The notification as the initialize era sends it: no subscription id.
    pub fn legacy_notification(&self) -> Value {
        let method = match self {
            Self::ToolsListChanged => "notifications/tools/list_changed",
            Self::PromptsListChanged => "notifications/prompts/list_changed",
            Self::ResourcesListChanged => "notifications/resources/list_changed",
            Self::ResourceUpdated { .. } => "notifications/resources/updated",
            Self::TaskStatus { .. } => tessera_protocol::TASKS_NOTIFICATION,
        };
        let params = match self {
            Self::ResourceUpdated { uri } => json!({"uri": uri}),
            Self::TaskStatus { task, .. } => Value::Object(task.clone()),
            _ => json!({}),
        };
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_what_the_filter_names_is_wanted() {
        let filter = SubscriptionFilter {
            tools_list_changed: Some(true),
            prompts_list_changed: Some(false),
            resource_subscriptions: Some(vec!["notes://list".into()]),
            ..SubscriptionFilter::default()
        };
        assert!(Change::ToolsListChanged.wanted_by(&filter));
        assert!(!Change::PromptsListChanged.wanted_by(&filter));
        assert!(!Change::ResourcesListChanged.wanted_by(&filter));
        assert!(
            Change::ResourceUpdated {
                uri: "notes://list".into()
            }
            .wanted_by(&filter)
        );
        assert!(
            !Change::ResourceUpdated {
                uri: "notes://other".into()
            }
            .wanted_by(&filter)
        );
    }

    #[test]
    fn notifications_carry_the_subscription_id() {
        let n = Change::ResourceUpdated {
            uri: "a://b".into(),
        }
        .notification(&RequestId::from(7));
        assert_eq!(
            n,
            json!({"jsonrpc": "2.0", "method": "notifications/resources/updated",
                "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 7}, "uri": "a://b"}})
        );
        let wire = serde_json::to_string(&Change::ResourceUpdated {
            uri: "a://b".into(),
        })
        .unwrap();
        assert_eq!(wire, r#"{"change":"resourceUpdated","uri":"a://b"}"#);
    }
}

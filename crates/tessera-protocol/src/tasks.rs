//! The tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`): a
//! `tools/call` may answer with a task the client polls (`tasks/get`), feeds
//! input (`tasks/update`) and cancels (`tasks/cancel`).

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{ClientCapabilities, ErrorObject, InputRequests, JsonObject, ResultMeta};

/// The extension's identifier, under `capabilities.extensions`.
pub const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// `tasks/get`: a task's status, and its result once it has one.
pub const TASKS_GET: &str = "tasks/get";
/// `tasks/update`: answers to a task's input requests.
pub const TASKS_UPDATE: &str = "tasks/update";
/// `tasks/cancel`: asks a task to stop.
pub const TASKS_CANCEL: &str = "tasks/cancel";
/// The notification of a task's state on a `subscriptions/listen` stream
/// that asked for its id (`taskIds`): the task as `tasks/get` answers it.
pub const TASKS_NOTIFICATION: &str = "notifications/tasks";

/// Whether `capabilities` declare the tasks extension.
pub fn declares_tasks(capabilities: &ClientCapabilities) -> bool {
    capabilities
        .extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(TASKS_EXTENSION))
}

/// The client capabilities a task needs (the `requiredCapabilities` of a -32021 error).
pub fn tasks_capability() -> ClientCapabilities {
    let mut extensions = JsonObject::new();
    extensions.insert(TASKS_EXTENSION.into(), Value::Object(JsonObject::new()));
    ClientCapabilities {
        extensions: Some(extensions),
        ..ClientCapabilities::default()
    }
}

/// Where a task is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TaskStatus {
    /// Being processed.
    Working,
    /// Waiting for answers to its `inputRequests` (`tasks/update`).
    InputRequired,
    /// Finished with a result (a tool error, `isError: true`, is a result too).
    Completed,
    /// Ended by a JSON-RPC error.
    Failed,
    /// Stopped before it finished.
    Cancelled,
}

impl TaskStatus {
    /// Whether the status is final (completed, failed or cancelled).
    pub fn is_terminal(self) -> bool {
        matches!(self, Self::Completed | Self::Failed | Self::Cancelled)
    }
}

/// A task as `tasks/get` shows it: its status and timestamps, with its input
/// requests, result or error inlined according to the status.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Task {
    /// The task's identifier.
    pub task_id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// A sentence about the status, for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_message: Option<String>,
    /// When it was created (RFC 3339).
    pub created_at: String,
    /// When its status last changed (RFC 3339).
    pub last_updated_at: String,
    /// How long after creation it is kept, in milliseconds (`null`: no limit).
    pub ttl_ms: Option<u64>,
    /// How often to poll, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub poll_interval_ms: Option<u64>,
    /// The outstanding input requests (status `input_required`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// The result (status `completed`): what the call would have returned.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub result: Option<Value>,
    /// The error (status `failed`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ErrorObject>,
}

/// What `tools/call` answers when it started a task (`resultType: "task"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateTaskResult {
    /// Always `task`.
    pub result_type: TaskResultType,
    /// The task, flat (no wrapper).
    #[serde(flatten)]
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// The `resultType` of a [`CreateTaskResult`]: `"task"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TaskResultType;

impl Serialize for TaskResultType {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("task")
    }
}

impl<'de> Deserialize<'de> for TaskResultType {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == "task" {
            Ok(Self)
        } else {
            Err(serde::de::Error::custom(format!(
                "resultType {s:?} where \"task\" was expected"
            )))
        }
    }
}

/// The result of `tasks/get`: the task, with `resultType: "complete"`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetTaskResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: crate::Complete,
    /// The task, flat.
    #[serde(flatten)]
    pub task: Task,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_created_task_is_flat_and_says_task() {
        let created = CreateTaskResult {
            result_type: TaskResultType,
            task: Task {
                task_id: "t1".into(),
                status: TaskStatus::Working,
                status_message: None,
                created_at: "2026-12-01T10:00:00.000Z".into(),
                last_updated_at: "2026-12-01T10:00:00.000Z".into(),
                ttl_ms: Some(60_000),
                poll_interval_ms: Some(500),
                input_requests: None,
                result: None,
                error: None,
            },
            meta: None,
        };
        assert_eq!(
            serde_json::to_value(&created).unwrap(),
            json!({"resultType": "task", "taskId": "t1", "status": "working",
                   "createdAt": "2026-12-01T10:00:00.000Z", "lastUpdatedAt": "2026-12-01T10:00:00.000Z",
                   "ttlMs": 60000, "pollIntervalMs": 500})
        );
        let back: CreateTaskResult =
            serde_json::from_value(serde_json::to_value(&created).unwrap()).unwrap();
        assert_eq!(back, created);
        assert!(
            serde_json::from_value::<CreateTaskResult>(json!({"resultType": "complete"})).is_err()
        );
    }

    #[test]
    fn the_capability_is_read_from_extensions() {
        assert!(declares_tasks(&tasks_capability()));
        assert!(!declares_tasks(&ClientCapabilities::default()));
        assert_eq!(
            serde_json::to_value(tasks_capability()).unwrap(),
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}})
        );
    }
}

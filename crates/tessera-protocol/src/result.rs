//! `resultType`, the complete/input-required split, and caching hints.

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::InputRequiredResult;

/// The kind of a result: final, or asking the client for input first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ResultType {
    /// The request completed; the result holds the final content.
    Complete,
    /// The client must fulfil `inputRequests` and retry.
    InputRequired,
    /// The call goes on as a task the client polls (the tasks extension).
    Task,
}

impl ResultType {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::InputRequired => "input_required",
            Self::Task => "task",
        }
    }

    /// Reads a result's `resultType`; absent means `complete` (earlier revisions omit it).
    pub fn of(result: &Value) -> Result<Self, UnknownResultType> {
        match result.get("resultType") {
            None => Ok(Self::Complete),
            Some(Value::String(s)) if s == "complete" => Ok(Self::Complete),
            Some(Value::String(s)) if s == "input_required" => Ok(Self::InputRequired),
            Some(Value::String(s)) if s == "task" => Ok(Self::Task),
            Some(other) => Err(UnknownResultType(other.to_string())),
        }
    }
}

/// A `resultType` other than `complete` or `input_required`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown resultType {0}: expected \"complete\", \"input_required\" or \"task\"")]
pub struct UnknownResultType(pub String);

impl Serialize for ResultType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for ResultType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        match s.as_str() {
            "complete" => Ok(Self::Complete),
            "input_required" => Ok(Self::InputRequired),
            "task" => Ok(Self::Task),
            _ => Err(de::Error::custom(UnknownResultType(format!("{s:?}")))),
        }
    }
}

/// The `resultType` of a final result: serialises as `"complete"`, and reads
/// `"complete"` or nothing (earlier revisions omit it); anything else is an error.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Complete;

impl Serialize for Complete {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("complete")
    }
}

impl<'de> Deserialize<'de> for Complete {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match ResultType::deserialize(d)? {
            ResultType::Complete => Ok(Self),
            other => Err(de::Error::custom(format!(
                "resultType {:?} where a complete result was expected",
                other.as_str()
            ))),
        }
    }
}

/// The result of a request that may need input: complete, or `input_required`.
///
/// Only `tools/call`, `prompts/get` and `resources/read` can answer `input_required`.
#[derive(Debug, Clone, PartialEq)]
#[allow(clippy::large_enum_variant)] // built once per response and moved, never stored in bulk
pub enum Outcome<R> {
    /// The final result.
    Complete(R),
    /// The server needs input before it can finish.
    InputRequired(InputRequiredResult),
}

impl<R: Serialize> Serialize for Outcome<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Complete(r) => r.serialize(s),
            Self::InputRequired(r) => r.serialize(s),
        }
    }
}

impl<'de, R: serde::de::DeserializeOwned> Deserialize<'de> for Outcome<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        match ResultType::of(&value).map_err(de::Error::custom)? {
            ResultType::Complete => serde_json::from_value(value)
                .map(Self::Complete)
                .map_err(de::Error::custom),
            ResultType::InputRequired => serde_json::from_value(value)
                .map(Self::InputRequired)
                .map_err(de::Error::custom),
            ResultType::Task => Err(de::Error::custom(
                "resultType \"task\": the call went on as a task (poll it with tasks/get)",
            )),
        }
    }
}

/// Who may reuse a cached response.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum CacheScope {
    /// No user-specific data: any cache may share it.
    Public,
    /// Reuse only within the same authorization context.
    #[default]
    Private,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::CallToolResult;
    use serde_json::json;

    #[test]
    fn absent_result_type_is_complete() {
        let r: Outcome<CallToolResult> = serde_json::from_value(json!({"content": []})).unwrap();
        assert!(matches!(r, Outcome::Complete(_)));
    }

    #[test]
    fn unknown_result_type_is_rejected_by_name() {
        let err = serde_json::from_value::<Outcome<CallToolResult>>(
            json!({"resultType": "partial", "content": []}),
        )
        .unwrap_err();
        assert!(
            err.to_string().contains("unknown resultType \"partial\""),
            "{err}"
        );
        let err =
            serde_json::from_value::<CallToolResult>(json!({"resultType": "later", "content": []}))
                .unwrap_err();
        assert!(err.to_string().contains("unknown resultType"), "{err}");
    }

    #[test]
    fn complete_results_always_say_so() {
        let v = serde_json::to_value(CallToolResult::text("x")).unwrap();
        assert_eq!(v["resultType"], "complete");
    }
}

//! The JSON-RPC 2.0 envelope: ids, requests, notifications, responses, errors.

use std::fmt;

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Number, Value};

use crate::JsonObject;

/// A request id: a string or an integer, echoed exactly as received.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// A string id.
    String(String),
    /// An integer id (kept as the exact JSON number; never a fraction).
    Integer(Number),
}

/// A progress token: like a request id, a string or an integer.
pub type ProgressToken = RequestId;

impl RequestId {
    /// Reads an id from a JSON value; `None` for anything but a string or an integer.
    pub fn from_value(value: &Value) -> Option<Self> {
        match value {
            Value::String(s) => Some(Self::String(s.clone())),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(Self::Integer(n.clone())),
            _ => None,
        }
    }

    /// The id as a JSON value.
    pub fn to_value(&self) -> Value {
        match self {
            Self::String(s) => Value::String(s.clone()),
            Self::Integer(n) => Value::Number(n.clone()),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Integer(n.into())
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

impl From<String> for RequestId {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::String(s) => write!(f, "{s:?}"),
            Self::Integer(n) => write!(f, "{n}"),
        }
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::String(v) => s.serialize_str(v),
            Self::Integer(n) => n.serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Self::from_value(&value).ok_or_else(|| {
            de::Error::custom(format!(
                "invalid JSON-RPC id {value}: an id must be a string or an integer"
            ))
        })
    }
}

/// The `jsonrpc` member: always the string `"2.0"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct JsonRpcVersion;

impl Serialize for JsonRpcVersion {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("2.0")
    }
}

impl<'de> Deserialize<'de> for JsonRpcVersion {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = String::deserialize(d)?;
        if v == "2.0" {
            Ok(Self)
        } else {
            Err(de::Error::custom(format!(
                "unsupported jsonrpc version {v:?}: expected \"2.0\""
            )))
        }
    }
}

/// A JSON-RPC request: a method call that expects a response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcRequest<P = JsonObject> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id the response must echo.
    pub id: RequestId,
    /// The method name, e.g. `tools/call`.
    pub method: String,
    /// The parameters, when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> JsonRpcRequest<P> {
    /// A request `id` of `method` with `params`.
    pub fn new(id: RequestId, method: impl Into<String>, params: Option<P>) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            method: method.into(),
            params,
        }
    }
}

/// A JSON-RPC notification: a message without an id that gets no response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcNotification<P = JsonObject> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The notification name, e.g. `notifications/progress`.
    pub method: String,
    /// The parameters, when present.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<P>,
}

impl<P> JsonRpcNotification<P> {
    /// A notification of `method` with `params`.
    pub fn new(method: impl Into<String>, params: P) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            method: method.into(),
            params: Some(params),
        }
    }
}

/// A successful JSON-RPC response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcResultResponse<R = Value> {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request this answers.
    pub id: RequestId,
    /// The result.
    pub result: R,
}

impl<R> JsonRpcResultResponse<R> {
    /// A response to request `id` carrying `result`.
    pub fn new(id: RequestId, result: R) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            result,
        }
    }
}

/// A JSON-RPC error response. `id` is `null` when the request's id could not be read.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JsonRpcErrorResponse {
    /// Always `"2.0"`.
    pub jsonrpc: JsonRpcVersion,
    /// The id of the request this answers; `None` serialises as `null`.
    #[serde(default)]
    pub id: Option<RequestId>,
    /// The error.
    pub error: ErrorObject,
}

impl JsonRpcErrorResponse {
    /// An error response to request `id` (or to an unreadable request when `None`).
    pub fn new(id: Option<RequestId>, error: ErrorObject) -> Self {
        Self {
            jsonrpc: JsonRpcVersion,
            id,
            error,
        }
    }
}

/// The `error` member of a JSON-RPC error response.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, thiserror::Error)]
#[error("JSON-RPC error {code}: {message}")]
pub struct ErrorObject {
    /// The error code, see the constants in this crate.
    pub code: i32,
    /// A short description a person can act on.
    pub message: String,
    /// Additional information, shaped by the code.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// An error with `code` and `message` and no data.
    pub fn new(code: i32, message: impl Into<String>) -> Self {
        Self {
            code,
            message: message.into(),
            data: None,
        }
    }

    /// The same error with `data` attached.
    pub fn with_data(mut self, data: Value) -> Self {
        self.data = Some(data);
        self
    }
}

/// Any response: a result or an error.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum JsonRpcResponse<R = Value> {
    /// A successful response.
    Result(JsonRpcResultResponse<R>),
    /// An error response.
    Error(JsonRpcErrorResponse),
}

impl<'de, R: Deserialize<'de>> Deserialize<'de> for JsonRpcResponse<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        let is_error = value.get("error").is_some();
        if is_error {
            JsonRpcErrorResponse::deserialize(value)
                .map(Self::Error)
                .map_err(de::Error::custom)
        } else {
            JsonRpcResultResponse::<R>::deserialize(value)
                .map(Self::Result)
                .map_err(de::Error::custom)
        }
    }
}

/// One JSON-RPC message, classified by shape. Params and results stay JSON values.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonRpcMessage {
    /// A request (has `method` and `id`).
    Request(JsonRpcRequest<Value>),
    /// A notification (has `method`, no `id`).
    Notification(JsonRpcNotification<Value>),
    /// A response (has `result` or `error`).
    Response(JsonRpcResponse<Value>),
}

/// Why a JSON value is not a JSON-RPC message.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum MessageError {
    /// The value is an array: a JSON-RPC batch.
    #[error("JSON-RPC batches are not supported")]
    Batch,
    /// The value is not an object.
    #[error("the message is not a JSON object")]
    NotAnObject,
    /// `jsonrpc` is missing or not `"2.0"`.
    #[error("the message lacks \"jsonrpc\": \"2.0\"")]
    Version,
    /// `method` is present but not a string.
    #[error("\"method\" must be a string")]
    MethodNotString,
    /// `id` is present but neither a string nor an integer.
    #[error("\"id\" must be a string or an integer")]
    InvalidId,
    /// `params` is present but not an object.
    #[error("\"params\" must be an object")]
    ParamsNotObject,
    /// Neither a request, a notification nor a response.
    #[error("the message is neither a request, a notification nor a response")]
    Unrecognised,
}

impl JsonRpcMessage {
    /// Classifies a parsed JSON value, taking it apart without copying params.
    pub fn from_value(value: Value) -> Result<Self, MessageError> {
        let mut object = match value {
            Value::Object(o) => o,
            Value::Array(_) => return Err(MessageError::Batch),
            _ => return Err(MessageError::NotAnObject),
        };
        if object.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
            return Err(MessageError::Version);
        }
        let raw_id = object.remove("id");
        if let Some(error) = object.remove("error") {
            let id = match raw_id {
                None | Some(Value::Null) => None,
                Some(v) => Some(RequestId::from_value(&v).ok_or(MessageError::InvalidId)?),
            };
            let error: ErrorObject =
                serde_json::from_value(error).map_err(|_| MessageError::Unrecognised)?;
            return Ok(Self::Response(JsonRpcResponse::Error(
                JsonRpcErrorResponse::new(id, error),
            )));
        }
        let id = match raw_id {
            None => None,
            Some(v) => Some(RequestId::from_value(&v).ok_or(MessageError::InvalidId)?),
        };
        if let Some(method) = object.remove("method") {
            let Value::String(method) = method else {
                return Err(MessageError::MethodNotString);
            };
            let params = match object.remove("params") {
                None => None,
                Some(p @ Value::Object(_)) => Some(p),
                Some(_) => return Err(MessageError::ParamsNotObject),
            };
            return Ok(match id {
                Some(id) => Self::Request(JsonRpcRequest {
                    jsonrpc: JsonRpcVersion,
                    id,
                    method,
                    params,
                }),
                None => Self::Notification(JsonRpcNotification {
                    jsonrpc: JsonRpcVersion,
                    method,
                    params,
                }),
            });
        }
        match (id, object.remove("result")) {
            (Some(id), Some(result)) => Ok(Self::Response(JsonRpcResponse::Result(
                JsonRpcResultResponse::new(id, result),
            ))),
            _ => Err(MessageError::Unrecognised),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ids_echo_exactly() {
        for raw in [r#""abc""#, "1", "-7", "18446744073709551615", r#""""#] {
            let id: RequestId = serde_json::from_str(raw).unwrap();
            assert_eq!(serde_json::to_string(&id).unwrap(), raw);
        }
    }

    #[test]
    fn ids_that_are_neither_string_nor_integer_are_rejected_by_name() {
        for raw in ["1.5", "null", "true", "{}", "[1]"] {
            let err = serde_json::from_str::<RequestId>(raw).unwrap_err();
            assert!(
                err.to_string().contains("must be a string or an integer"),
                "{raw}: {err}"
            );
        }
    }

    #[test]
    fn classify_messages() {
        let req = json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}});
        assert!(matches!(
            JsonRpcMessage::from_value(req),
            Ok(JsonRpcMessage::Request(_))
        ));
        let note = json!({"jsonrpc":"2.0","method":"notifications/cancelled"});
        assert!(matches!(
            JsonRpcMessage::from_value(note),
            Ok(JsonRpcMessage::Notification(_))
        ));
        let resp = json!({"jsonrpc":"2.0","id":"a","result":{}});
        assert!(matches!(
            JsonRpcMessage::from_value(resp),
            Ok(JsonRpcMessage::Response(JsonRpcResponse::Result(_)))
        ));
        let err = json!({"jsonrpc":"2.0","id":null,"error":{"code":-1,"message":"x"}});
        assert!(matches!(
            JsonRpcMessage::from_value(err),
            Ok(JsonRpcMessage::Response(JsonRpcResponse::Error(_)))
        ));
    }

    #[test]
    fn classify_rejects_with_reason() {
        let cases = [
            (json!([]), MessageError::Batch),
            (json!(42), MessageError::NotAnObject),
            (json!({"id":1,"method":"x"}), MessageError::Version),
            (
                json!({"jsonrpc":"1.0","id":1,"method":"x"}),
                MessageError::Version,
            ),
            (
                json!({"jsonrpc":"2.0","id":{},"method":"x"}),
                MessageError::InvalidId,
            ),
            (
                json!({"jsonrpc":"2.0","id":null,"method":"x"}),
                MessageError::InvalidId,
            ),
            (
                json!({"jsonrpc":"2.0","id":1,"method":7}),
                MessageError::MethodNotString,
            ),
            (
                json!({"jsonrpc":"2.0","id":1,"method":"x","params":[1]}),
                MessageError::ParamsNotObject,
            ),
            (json!({"jsonrpc":"2.0","id":1}), MessageError::Unrecognised),
        ];
        for (value, expected) in cases {
            assert_eq!(
                JsonRpcMessage::from_value(value.clone()),
                Err(expected),
                "{value}"
            );
        }
    }

    #[test]
    fn error_response_without_id_serialises_null() {
        let resp = JsonRpcErrorResponse::new(None, ErrorObject::new(PARSE, "Parse error"));
        assert_eq!(
            serde_json::to_value(&resp).unwrap(),
            json!({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})
        );
    }

    const PARSE: i32 = crate::PARSE_ERROR;
}

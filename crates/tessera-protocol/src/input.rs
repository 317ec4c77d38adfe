//! Multi round-trip requests: `InputRequiredResult`, `InputRequests`, `InputResponses`.

use indexmap::IndexMap;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Value, json};

use crate::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestParams, ElicitResult, JsonObject,
    ListRootsResult, ResultMeta,
};

/// Method name of an elicitation input request.
pub const ELICITATION_CREATE: &str = "elicitation/create";
/// Method name of a sampling input request.
pub const SAMPLING_CREATE_MESSAGE: &str = "sampling/createMessage";
/// Method name of a roots input request.
pub const ROOTS_LIST: &str = "roots/list";

/// The member of a retried request's params, and of an `input_required`
/// result, that carries the server's ticket.
pub const REQUEST_STATE: &str = "requestState";
/// The member of a retried request's params that carries the client's answers.
pub const INPUT_RESPONSES: &str = "inputResponses";
/// The member of an `input_required` result that carries the questions.
pub const INPUT_REQUESTS: &str = "inputRequests";

/// Input requests by server-assigned key.
pub type InputRequests = IndexMap<String, InputRequest>;
/// The client's answers by the keys of the input requests.
pub type InputResponses = IndexMap<String, InputResponse>;

/// A server's answer that it needs input (or another round) before it can finish.
///
/// At least one of `input_requests` and `request_state` is present; a value with
/// neither does not parse.
#[derive(Debug, Clone, PartialEq)]
pub struct InputRequiredResult {
    /// What the client must ask, by key.
    pub input_requests: Option<InputRequests>,
    /// The ticket the client echoes on retry.
    pub request_state: Option<String>,
    /// Result metadata.
    pub meta: Option<ResultMeta>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct InputRequiredWire {
    #[serde(default)]
    result_type: Option<crate::ResultType>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    input_requests: Option<InputRequests>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    request_state: Option<String>,
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    meta: Option<ResultMeta>,
}

/// The serialised shape of [`InputRequiredResult`], borrowing its parts.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct InputRequiredWireRef<'a> {
    result_type: crate::ResultType,
    #[serde(skip_serializing_if = "Option::is_none")]
    input_requests: Option<&'a InputRequests>,
    #[serde(skip_serializing_if = "Option::is_none")]
    request_state: Option<&'a str>,
    #[serde(rename = "_meta", skip_serializing_if = "Option::is_none")]
    meta: Option<&'a ResultMeta>,
}

impl Serialize for InputRequiredResult {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        InputRequiredWireRef {
            result_type: crate::ResultType::InputRequired,
            input_requests: self.input_requests.as_ref(),
            request_state: self.request_state.as_deref(),
            meta: self.meta.as_ref(),
        }
        .serialize(s)
    }
}

impl<'de> Deserialize<'de> for InputRequiredResult {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let wire = InputRequiredWire::deserialize(d)?;
        if wire.result_type != Some(crate::ResultType::InputRequired) {
            return Err(de::Error::custom(
                "an InputRequiredResult must have resultType \"input_required\"",
            ));
        }
        if wire.input_requests.is_none() && wire.request_state.is_none() {
            return Err(de::Error::custom(
                "an InputRequiredResult must carry inputRequests, requestState or both; it has neither",
            ));
        }
        Ok(Self {
            input_requests: wire.input_requests,
            request_state: wire.request_state,
            meta: wire.meta,
        })
    }
}

/// One request the client fulfils on the server's behalf.
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// `elicitation/create`: ask the user.
    Elicit(ElicitRequestParams),
    /// `sampling/createMessage`: ask the client's model.
    Sample(CreateMessageRequestParams),
    /// `roots/list`: ask for the client's roots.
    ListRoots(Option<JsonObject>),
}

impl InputRequest {
    /// The method name of this request.
    pub fn method(&self) -> &'static str {
        match self {
            Self::Elicit(_) => ELICITATION_CREATE,
            Self::Sample(_) => SAMPLING_CREATE_MESSAGE,
            Self::ListRoots(_) => ROOTS_LIST,
        }
    }

    /// The message a person reads for this request: a form's or a URL
    /// elicitation's; `None` for sampling and roots.
    pub fn message(&self) -> Option<&str> {
        match self {
            Self::Elicit(ElicitRequestParams::Form(form)) => Some(&form.message),
            Self::Elicit(ElicitRequestParams::Url(url)) => Some(&url.message),
            Self::Sample(_) | Self::ListRoots(_) => None,
        }
    }
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Wire<'a, P: Serialize> {
            method: &'static str,
            #[serde(skip_serializing_if = "Option::is_none")]
            params: Option<&'a P>,
        }
        match self {
            Self::Elicit(p) => Wire {
                method: ELICITATION_CREATE,
                params: Some(p),
            }
            .serialize(s),
            Self::Sample(p) => Wire {
                method: SAMPLING_CREATE_MESSAGE,
                params: Some(p),
            }
            .serialize(s),
            Self::ListRoots(p) => Wire {
                method: ROOTS_LIST,
                params: p.as_ref(),
            }
            .serialize(s),
        }
    }
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Wire {
            method: String,
            #[serde(default)]
            params: Option<Value>,
        }
        let wire = Wire::deserialize(d)?;
        let params = |p: Option<Value>| p.unwrap_or_else(|| json!({}));
        match wire.method.as_str() {
            ELICITATION_CREATE => serde_json::from_value(params(wire.params))
                .map(Self::Elicit)
                .map_err(de::Error::custom),
            SAMPLING_CREATE_MESSAGE => serde_json::from_value(params(wire.params))
                .map(Self::Sample)
                .map_err(de::Error::custom),
            ROOTS_LIST => match wire.params {
                None => Ok(Self::ListRoots(None)),
                Some(Value::Object(o)) => Ok(Self::ListRoots(Some(o))),
                Some(_) => Err(de::Error::custom("roots/list params must be an object")),
            },
            other => Err(de::Error::custom(format!(
                "unknown input request method {other:?}: expected elicitation/create, sampling/createMessage or roots/list"
            ))),
        }
    }
}

/// One answer from the client, to the input request with the same key.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum InputResponse {
    /// The answer to an elicitation.
    Elicit(ElicitResult),
    /// The answer to a sampling request.
    Sample(CreateMessageResult),
    /// The answer to a roots request.
    Roots(ListRootsResult),
}

impl<'de> Deserialize<'de> for InputResponse {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        Self::from_value(value).map_err(de::Error::custom)
    }
}

impl InputResponse {
    /// Reads an answer, telling the three kinds apart by their required members.
    pub fn from_value(value: Value) -> Result<Self, serde_json::Error> {
        if value.get("action").is_some() {
            serde_json::from_value(value).map(Self::Elicit)
        } else if value.get("roots").is_some() {
            serde_json::from_value(value).map(Self::Roots)
        } else if value.get("model").is_some() || value.get("role").is_some() {
            serde_json::from_value(value).map(Self::Sample)
        } else {
            Err(de::Error::custom(
                "an input response must be an ElicitResult (action), a CreateMessageResult (role, content, model) or a ListRootsResult (roots)",
            ))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn neither_requests_nor_state_is_rejected() {
        let err =
            serde_json::from_value::<InputRequiredResult>(json!({"resultType": "input_required"}))
                .unwrap_err();
        assert!(err.to_string().contains("has neither"), "{err}");
    }

    #[test]
    fn state_only_is_fine() {
        let r: InputRequiredResult =
            serde_json::from_value(json!({"resultType": "input_required", "requestState": "x"}))
                .unwrap();
        assert_eq!(r.request_state.as_deref(), Some("x"));
    }

    #[test]
    fn wrong_result_type_is_rejected() {
        let err = serde_json::from_value::<InputRequiredResult>(
            json!({"resultType": "complete", "requestState": "x"}),
        )
        .unwrap_err();
        assert!(err.to_string().contains("input_required"), "{err}");
    }

    #[test]
    fn roots_request_without_params() {
        let r: InputRequest = serde_json::from_value(json!({"method": "roots/list"})).unwrap();
        assert_eq!(r, InputRequest::ListRoots(None));
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            json!({"method": "roots/list"})
        );
    }

    #[test]
    fn unknown_input_request_method_is_named() {
        let err = serde_json::from_value::<InputRequest>(json!({"method": "ping"})).unwrap_err();
        assert!(err.to_string().contains("\"ping\""), "{err}");
    }
}

//! Answers given in advance: for tests, headless runs and fixtures.

use std::collections::HashMap;

use serde_json::Value;
use tessera_protocol::{ElicitFormParams, ElicitResult, ElicitUrlParams, JsonObject};

use crate::{ClientError, Elicitor, InputKinds};
use tessera_protocol::BoxFuture;

/// One prepared answer.
#[derive(Debug, Clone, PartialEq)]
pub enum ScriptedAnswer {
    /// Accept with this content. A URL-mode request is accepted only by an
    /// answer without content (`"accept"`): field values are a form's answer,
    /// and meeting a URL they are an error, never a consent to open it.
    Accept(JsonObject),
    /// Decline.
    Decline,
    /// Cancel.
    Cancel,
}

impl ScriptedAnswer {
    /// Reads `"decline"`, `"cancel"`, `"accept"` (empty content) or an object of field values.
    pub fn from_value(key: &str, value: &Value) -> Result<Self, String> {
        match value {
            Value::String(s) if s == "decline" => Ok(Self::Decline),
            Value::String(s) if s == "cancel" => Ok(Self::Cancel),
            Value::String(s) if s == "accept" => Ok(Self::Accept(JsonObject::new())),
            Value::Object(o) => Ok(Self::Accept(o.clone())),
            other => Err(format!(
                "the answer for {key:?} must be an object of field values, \"accept\", \"decline\" or \"cancel\", not {other}"
            )),
        }
    }

    /// The elicitation result this answer gives.
    pub fn to_result(&self) -> ElicitResult {
        match self {
            Self::Accept(content) => ElicitResult::accept(content.clone()),
            Self::Decline => ElicitResult::decline(),
            Self::Cancel => ElicitResult::cancel(),
        }
    }
}

/// An [`Elicitor`] that answers form and URL requests from a map keyed by input-request key.
///
/// A request without a prepared answer is an error naming it — never a made-up
/// decline — and so is an answer of the wrong kind: a form's field values
/// meeting a URL-mode request.
#[derive(Debug, Clone, Default)]
pub struct ScriptedElicitor {
    answers: HashMap<String, ScriptedAnswer>,
}

impl ScriptedElicitor {
    /// Answers by key.
    pub fn new(answers: HashMap<String, ScriptedAnswer>) -> Self {
        Self { answers }
    }

    /// Reads `{"key": {"field": value} | "decline" | "cancel"}`.
    pub fn from_json(value: &Value) -> Result<Self, String> {
        let object = value
            .as_object()
            .ok_or("the answers must be a JSON object keyed by input request")?;
        let answers = object
            .iter()
            .map(|(k, v)| ScriptedAnswer::from_value(k, v).map(|a| (k.clone(), a)))
            .collect::<Result<_, _>>()?;
        Ok(Self { answers })
    }

    /// Whether no answer is prepared.
    pub fn is_empty(&self) -> bool {
        self.answers.is_empty()
    }

    /// The prepared answer for `key`, if any.
    pub fn answer_for(&self, key: &str) -> Option<&ScriptedAnswer> {
        self.answers.get(key)
    }

    /// Adds or replaces the answer for `key`.
    pub fn insert(&mut self, key: impl Into<String>, answer: ScriptedAnswer) {
        self.answers.insert(key.into(), answer);
    }

    fn lookup(&self, key: &str) -> Result<ElicitResult, ClientError> {
        self.answers
            .get(key)
            .map(ScriptedAnswer::to_result)
            .ok_or_else(|| {
                ClientError::Elicitation(format!("no scripted answer for input request '{key}'"))
            })
    }
}

impl Elicitor for ScriptedElicitor {
    fn kinds(&self) -> InputKinds {
        InputKinds {
            form: true,
            url: true,
            sampling: false,
            roots: false,
        }
    }

    fn form<'a>(
        &'a self,
        _server: &'a str,
        key: &'a str,
        _params: &'a ElicitFormParams,
    ) -> BoxFuture<'a, Result<ElicitResult, ClientError>> {
        Box::pin(async move { self.lookup(key) })
    }

    fn url<'a>(
        &'a self,
        _server: &'a str,
        key: &'a str,
        _params: &'a ElicitUrlParams,
    ) -> BoxFuture<'a, Result<ElicitResult, ClientError>> {
        Box::pin(async move {
            if let Some(ScriptedAnswer::Accept(fields)) = self.answers.get(key)
                && !fields.is_empty()
            {
                return Err(ClientError::Elicitation(format!(
                    "the scripted answer for input request '{key}' holds form fields, but the server asked to open a URL; script \"accept\", \"decline\" or \"cancel\" for it"
                )));
            }
            self.lookup(key)
                .map(|r| ElicitResult { content: None, ..r })
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn page() -> ElicitUrlParams {
        ElicitUrlParams {
            message: "Pay here".into(),
            url: "https://pay.example/1".into(),
            elicitation_id: Some("e1".into()),
        }
    }

    fn script(answer: ScriptedAnswer) -> ScriptedElicitor {
        ScriptedElicitor::new(HashMap::from([("open".to_string(), answer)]))
    }

    #[tokio::test]
    async fn a_forms_answer_never_consents_to_a_url() {
        let fields = serde_json::json!({"amount": 5})
            .as_object()
            .unwrap()
            .clone();
        let err = script(ScriptedAnswer::Accept(fields))
            .url("server", "open", &page())
            .await
            .unwrap_err();
        assert!(err.to_string().contains("holds form fields"), "{err}");
        let accepted = script(ScriptedAnswer::Accept(JsonObject::new()))
            .url("server", "open", &page())
            .await
            .unwrap();
        assert_eq!(
            (accepted.action, accepted.content),
            (tessera_protocol::ElicitAction::Accept, None)
        );
    }
}

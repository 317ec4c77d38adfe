//! Elicitation: asking the user through a form or a URL (`elicitation/create`).

use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;

use crate::{ElicitationSchema, JsonObject};

/// Parameters of `elicitation/create`: a form, or a URL to open.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitRequestParams {
    /// Ask for structured data through a form.
    Form(ElicitFormParams),
    /// Send the user to a URL (for data that must not pass through the client).
    Url(ElicitUrlParams),
}

/// A form elicitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitFormParams {
    /// Explicit `"form"` mode marker; `None` when the sender left it implicit.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What is being asked, for the user.
    pub message: String,
    /// The form: a flat object of primitive fields.
    pub requested_schema: ElicitationSchema,
}

/// The literal `"form"`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FormMode;

impl Serialize for FormMode {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("form")
    }
}

impl<'de> Deserialize<'de> for FormMode {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        if s == "form" {
            Ok(Self)
        } else {
            Err(de::Error::custom(format!(
                "expected mode \"form\", got {s:?}"
            )))
        }
    }
}

/// A URL elicitation.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitUrlParams {
    /// Why the user should open the URL.
    pub message: String,
    /// The URL.
    pub url: String,
    /// Identifies this elicitation (for completion notifications), when given.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation_id: Option<String>,
}

impl Serialize for ElicitRequestParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Form(p) => p.serialize(s),
            Self::Url(p) => {
                #[derive(Serialize)]
                #[serde(rename_all = "camelCase")]
                struct Tagged<'a> {
                    mode: &'static str,
                    #[serde(flatten)]
                    params: &'a ElicitUrlParams,
                }
                Tagged {
                    mode: "url",
                    params: p,
                }
                .serialize(s)
            }
        }
    }
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(d)?;
        match value.get("mode").and_then(Value::as_str) {
            Some("url") => serde_json::from_value(value)
                .map(Self::Url)
                .map_err(de::Error::custom),
            None | Some("form") => serde_json::from_value(value)
                .map(Self::Form)
                .map_err(de::Error::custom),
            Some(other) => Err(de::Error::custom(format!(
                "unknown elicitation mode {other:?}: expected \"form\" or \"url\""
            ))),
        }
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ElicitAction {
    /// Submitted the form or consented to the URL.
    Accept,
    /// Explicitly said no.
    Decline,
    /// Dismissed without choosing.
    Cancel,
}

/// The client's answer to `elicitation/create`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted form data (accept in form mode only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
    /// Extension metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<JsonObject>,
}

impl ElicitResult {
    /// An accept carrying `content`.
    pub fn accept(content: JsonObject) -> Self {
        Self {
            action: ElicitAction::Accept,
            content: Some(content),
            meta: None,
        }
    }

    /// A decline.
    pub fn decline() -> Self {
        Self {
            action: ElicitAction::Decline,
            content: None,
            meta: None,
        }
    }

    /// A cancel.
    pub fn cancel() -> Self {
        Self {
            action: ElicitAction::Cancel,
            content: None,
            meta: None,
        }
    }
}

//! One question a handler asks in a round, as it goes on the wire.

use tessera_protocol::{
    CreateMessageRequestParams, ELICITATION_CREATE, ElicitFormParams, ElicitRequestParams,
    ElicitUrlParams, FormMode, InputRequest, ROOTS_LIST, SAMPLING_CREATE_MESSAGE,
};

use crate::form::{AskedForm, FormCheck};

/// An input request a handler asked for this round.
#[derive(Debug, Clone)]
pub(crate) enum Question {
    Form(AskedForm),
    Url {
        message: String,
        url: String,
        /// The upstream's elicitation id, when a relayed question has one.
        elicitation_id: Option<String>,
    },
    Sample(Box<CreateMessageRequestParams>),
    Roots,
}

/// The kind of a question as the ticket remembers it; for forms, what an answer must fit.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub(crate) enum Asked {
    #[serde(rename = "f")]
    Form(FormCheck),
    #[serde(rename = "u")]
    Url,
    #[serde(rename = "s")]
    Sample,
    #[serde(rename = "r")]
    Roots,
}

impl Question {
    /// Says in the question why the last answer to it was not taken (forms
    /// and URLs: the message a person reads; sampling and roots have none).
    pub(crate) fn explain_invalid(&mut self, reason: &str) {
        let message = match self {
            Self::Form(form) => &mut form.message,
            Self::Url { message, .. } => message,
            Self::Sample(_) | Self::Roots => return,
        };
        *message = format!("{message}\n\n(The previous answer was not accepted: {reason})");
    }

    /// The wire request, built from the handler's parts without copying them.
    pub(crate) fn into_wire(self) -> InputRequest {
        match self {
            Self::Form(form) => InputRequest::Elicit(ElicitRequestParams::Form(ElicitFormParams {
                mode: Some(FormMode),
                message: form.message,
                requested_schema: std::sync::Arc::unwrap_or_clone(form.schema),
            })),
            Self::Url {
                message,
                url,
                elicitation_id,
            } => InputRequest::Elicit(ElicitRequestParams::Url(ElicitUrlParams {
                message,
                url,
                elicitation_id,
            })),
            Self::Sample(params) => InputRequest::Sample(*params),
            Self::Roots => InputRequest::ListRoots(None),
        }
    }

    /// A question made elsewhere (a gateway relaying an upstream's), as it came.
    pub(crate) fn from_wire(request: InputRequest) -> Self {
        match request {
            InputRequest::Elicit(ElicitRequestParams::Form(form)) => Self::Form(AskedForm {
                message: form.message,
                schema: std::sync::Arc::new(form.requested_schema),
            }),
            InputRequest::Elicit(ElicitRequestParams::Url(url)) => Self::Url {
                message: url.message,
                url: url.url,
                elicitation_id: url.elicitation_id,
            },
            InputRequest::Sample(params) => Self::Sample(Box::new(params)),
            InputRequest::ListRoots(_) => Self::Roots,
        }
    }

    /// What the ticket remembers of this question.
    pub(crate) fn asked(&self) -> Asked {
        match self {
            Self::Form(f) => Asked::Form(FormCheck::of(&f.schema)),
            Self::Url { .. } => Asked::Url,
            Self::Sample(_) => Asked::Sample,
            Self::Roots => Asked::Roots,
        }
    }

    /// The method the wire request names.
    pub(crate) fn method(&self) -> &'static str {
        match self {
            Self::Form(_) | Self::Url { .. } => ELICITATION_CREATE,
            Self::Sample(_) => SAMPLING_CREATE_MESSAGE,
            Self::Roots => ROOTS_LIST,
        }
    }
}

//! Asking only what the client can answer: input requests against its declared capabilities.

use indexmap::IndexMap;
use tessera_protocol::{ClientCapabilities, ElicitationCapability, JsonObject};

use crate::ServerError;
use crate::question::Question;

/// Refuses input requests the client's capabilities do not cover (-32021), naming all of them.
pub(super) fn check_capabilities(
    requests: &IndexMap<String, Question>,
    caps: &ClientCapabilities,
) -> Result<(), ServerError> {
    let mut required = ClientCapabilities::default();
    let mut first: Option<(&str, &'static str)> = None;
    for (key, pending) in requests {
        let missing = match pending {
            Question::Form(_) if !caps.supports_form_elicitation() => {
                required
                    .elicitation
                    .get_or_insert_with(ElicitationCapability::default)
                    .form = Some(JsonObject::new());
                true
            }
            Question::Url { .. } if !caps.supports_url_elicitation() => {
                required
                    .elicitation
                    .get_or_insert_with(ElicitationCapability::default)
                    .url = Some(JsonObject::new());
                true
            }
            Question::Sample(_) if !caps.supports_sampling() => {
                required.sampling = Some(Default::default());
                true
            }
            Question::Roots if !caps.supports_roots() => {
                required.roots = Some(JsonObject::new());
                true
            }
            _ => false,
        };
        if missing && first.is_none() {
            first = Some((key, pending.method()));
        }
    }
    match first {
        None => Ok(()),
        Some((key, method)) => Err(ServerError::MissingCapability {
            key: key.to_owned(),
            method,
            required: Box::new(required),
        }),
    }
}

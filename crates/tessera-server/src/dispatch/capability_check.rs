//! Asking only what the client can answer: input requests against its declared capabilities.

use indexmap::IndexMap;
use tessera_protocol::{
    ClientCapabilities, CreateMessageRequestParams, ElicitationCapability, JsonObject,
    SamplingCapability,
};

use crate::ServerError;
use crate::question::Question;

/// Refuses input requests the client's capabilities do not cover (-32021), naming all of them.
pub(crate) fn check_capabilities(
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
            Question::Sample(params) => match sampling_needs(params, caps) {
                Some(needed) => {
                    // Several questions may each need part of it: all of it is named.
                    let sampling = required.sampling.get_or_insert_with(Default::default);
                    sampling.tools = sampling.tools.take().or(needed.tools);
                    sampling.context = sampling.context.take().or(needed.context);
                    true
                }
                None => false,
            },
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

/// What a sampling request needs that `caps` does not declare, if anything:
/// `sampling` itself; `sampling.tools` for tools or a tool choice ("Servers
/// MUST NOT send tool-enabled sampling requests to Clients that have not
/// declared support for tool use via the `sampling.tools` capability");
/// `sampling.context` for `includeContext` other than `none` (servers
/// "SHOULD NOT use them unless the client declares `sampling.context`").
fn sampling_needs(
    params: &CreateMessageRequestParams,
    caps: &ClientCapabilities,
) -> Option<SamplingCapability> {
    let tools =
        params.tools.as_ref().is_some_and(|t| !t.is_empty()) || params.tool_choice.is_some();
    let context = matches!(
        params.include_context.as_deref(),
        Some("thisServer" | "allServers")
    );
    let declared = caps.sampling.as_ref();
    let lacks_tools = tools && declared.is_none_or(|s| s.tools.is_none());
    let lacks_context = context && declared.is_none_or(|s| s.context.is_none());
    (declared.is_none() || lacks_tools || lacks_context).then(|| SamplingCapability {
        tools: lacks_tools.then(JsonObject::new),
        context: lacks_context.then(JsonObject::new),
    })
}

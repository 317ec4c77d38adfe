//! A call's round state: what a sealed ticket carries between rounds, and
//! a round that asks as the era edge keeps it, unsealed.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_protocol::JsonObject;

use crate::answer::Kept;
use crate::question::Asked;
use crate::telemetry::flow::Flow;

/// The payload sealed into each ticket: the handler's carried state, what
/// this round asked, and every answer given in earlier rounds of the same call
/// (accepted form and URL contents under `a`; sampling and roots answers under `o`).
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct TicketBody {
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    #[serde(rename = "q", default, skip_serializing_if = "IndexMap::is_empty")]
    pub asked: IndexMap<String, Asked>,
    #[serde(rename = "a", default, skip_serializing_if = "IndexMap::is_empty")]
    pub accepted: IndexMap<String, JsonObject>,
    #[serde(rename = "o", default, skip_serializing_if = "IndexMap::is_empty")]
    pub other: IndexMap<String, Kept>,
    /// The flow's id, round and round one's span, when spans are recorded.
    #[serde(rename = "f", default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<Flow>,
}

/// A round that asks, as the era edge receives it: nothing sealed, nothing
/// serialised.
pub(crate) struct KeptRound {
    /// The questions, as the handler asked them.
    pub(crate) questions: indexmap::IndexMap<String, crate::question::Question>,
    /// What the next round must be given back (the era edge serves it instead of a ticket).
    pub(crate) body: TicketBody,
    /// `Tool`, `Prompt` or `Resource`.
    pub(crate) kind: &'static str,
    /// The tool or prompt name, or the resource URI.
    pub(crate) target: String,
}

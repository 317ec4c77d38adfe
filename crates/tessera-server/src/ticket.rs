//! What a sealed `requestState` ticket carries between rounds.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_protocol::{ElicitationSchema, JsonObject};

/// The payload sealed into each ticket: the handler's state, what this round
/// asked, and every form answer accepted in earlier rounds of the same call.
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct TicketBody {
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    #[serde(rename = "q", default, skip_serializing_if = "IndexMap::is_empty")]
    pub asked: IndexMap<String, Asked>,
    #[serde(rename = "a", default, skip_serializing_if = "IndexMap::is_empty")]
    pub accepted: IndexMap<String, JsonObject>,
}

/// The kind of an input request, and for forms the schema answers must fit.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) enum Asked {
    #[serde(rename = "f")]
    Form(ElicitationSchema),
    #[serde(rename = "u")]
    Url,
    #[serde(rename = "s")]
    Sample,
    #[serde(rename = "r")]
    Roots,
}

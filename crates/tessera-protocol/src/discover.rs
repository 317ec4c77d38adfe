//! `server/discover`: versions, capabilities and server info.

use serde::{Deserialize, Serialize};

use crate::{CacheScope, Complete, ResultMeta, ServerCapabilities};

/// The result of `server/discover`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: Complete,
    /// Protocol versions the server supports.
    pub supported_versions: Vec<String>,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// Guidance for the model on using this server.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the client may cache this, in milliseconds.
    pub ttl_ms: u64,
    /// Who may reuse the cached response.
    pub cache_scope: CacheScope,
    /// Result metadata (`serverInfo`).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

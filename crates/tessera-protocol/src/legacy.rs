//! Revision 2025-11-25 `initialize`: enough to recognise and answer an initialize-era client.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Implementation, ServerCapabilities};

/// Method name of the initialize-era handshake.
pub const INITIALIZE: &str = "initialize";
/// Notification that ends the initialize-era handshake.
pub const INITIALIZED_NOTIFICATION: &str = "notifications/initialized";

/// The revision an `initialize` answer agrees to: the one the client asked
/// for when it is an initialize-era revision we speak, else our newest one.
pub fn agreed_legacy_version(requested: Option<&str>) -> &'static str {
    requested
        .and_then(|r| crate::LEGACY_PROTOCOL_VERSIONS.iter().find(|v| **v == r))
        .copied()
        .unwrap_or(crate::LEGACY_PROTOCOL_VERSIONS[0])
}

/// Parameters of `initialize` (revision 2025-11-25 and earlier).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeRequestParams {
    /// The latest revision the client supports.
    pub protocol_version: String,
    /// The client's capabilities for the whole session.
    #[serde(default)]
    pub capabilities: Value,
    /// The client software.
    pub client_info: Implementation,
}

/// The result of `initialize`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    /// The revision the server will speak.
    pub protocol_version: String,
    /// What the server offers.
    pub capabilities: ServerCapabilities,
    /// The server software.
    pub server_info: Implementation,
    /// Guidance for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
}

//! Serving initialize-era clients statelessly: `initialize`, `ping`, old result shapes.

use serde_json::{Value, json};
use tessera_protocol::{InitializeResult, agreed_legacy_version};

use crate::McpServer;

impl McpServer {
    /// The `initialize` result: the client's version when we know it, else the newest legacy one.
    pub(crate) fn initialize_result(&self, params: Option<&Value>) -> Value {
        let requested = agreed_legacy_version(
            params
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str),
        );
        json!(InitializeResult {
            protocol_version: requested.to_owned(),
            capabilities: self.capabilities(),
            server_info: self.info.clone(),
            instructions: self.instructions.clone(),
        })
    }
}

/// Removes the 2026-07-28-only members from a result (`resultType`, caching
/// hints, `serverInfo` in `_meta`) so an initialize-era client sees the old shape.
pub fn to_legacy_shape(result: &mut Value) {
    if let Some(o) = result.as_object_mut() {
        o.remove("resultType");
        o.remove("ttlMs");
        o.remove("cacheScope");
        if let Some(Value::Object(meta)) = o.get_mut("_meta") {
            meta.remove(tessera_protocol::SERVER_INFO_KEY);
            if meta.is_empty() {
                o.remove("_meta");
            }
        }
    }
}

/// The message a legacy client gets when a handler needs input.
pub(crate) fn needs_modern_message(
    kind: &str,
    name: &str,
    key: &str,
    method: &str,
    client_version: &str,
) -> String {
    format!(
        "{kind} '{name}' needs input '{key}' ({method}), which requires MCP protocol revision {} \
         (multi round-trip requests); this client speaks {client_version}. Use a client that supports {}.",
        tessera_protocol::LATEST_PROTOCOL_VERSION,
        tessera_protocol::LATEST_PROTOCOL_VERSION,
    )
}

//! What an initialize-era client declared when it opened the connection.

use serde_json::{Map, Value};
use tessera_protocol::agreed_legacy_version;

/// The connection's initialize-era handshake: the version agreed, and what the client can answer.
#[derive(Debug, Clone)]
pub(crate) struct LegacySession {
    /// The revision the client speaks (one we support, else our newest legacy one, as `initialize` answers).
    pub(crate) version: String,
    /// `capabilities` from `initialize`: the same shape as 2026-07-28's `clientCapabilities`.
    pub(crate) capabilities: Value,
    /// `clientInfo` from `initialize`, if it was an object.
    pub(crate) client_info: Option<Value>,
}

impl LegacySession {
    /// Reads the session from `initialize` params.
    pub(crate) fn from_initialize(params: &serde_json::Map<String, Value>) -> Self {
        let field = |key: &str| params.get(key);
        // The same revision the server's `initialize` answer agrees to.
        let version =
            agreed_legacy_version(field("protocolVersion").and_then(Value::as_str)).to_owned();
        let capabilities = match field("capabilities") {
            Some(c @ Value::Object(_)) => c.clone(),
            _ => Value::Object(Map::new()),
        };
        let client_info = field("clientInfo").filter(|v| v.is_object()).cloned();
        Self {
            version,
            capabilities,
            client_info,
        }
    }

    /// Whether the agreed revision knows elicitation's `mode` member (2025-11-25 and later).
    pub(crate) fn knows_elicitation_mode(&self) -> bool {
        self.version.as_str() >= "2025-11-25"
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_handshake_and_falls_back_to_our_newest_legacy_version() {
        let params = |v: Value| v.as_object().cloned().unwrap();
        let s = LegacySession::from_initialize(&params(json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"elicitation": {}},
            "clientInfo": {"name": "c", "version": "1"}
        })));
        assert_eq!(s.version, "2025-06-18");
        assert_eq!(s.capabilities, json!({"elicitation": {}}));
        assert!(!s.knows_elicitation_mode());
        let s = LegacySession::from_initialize(&params(json!({"protocolVersion": "1999-01-01"})));
        assert_eq!(s.version, tessera_protocol::LEGACY_PROTOCOL_VERSIONS[0]);
        assert_eq!(s.capabilities, json!({}));
        assert!(s.client_info.is_none());
    }
}

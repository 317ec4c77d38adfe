//! What an initialize-era client declared when it opened its session, and
//! the sealed session id that carries it between requests.
//!
//! Over stdio the session is the connection's. Over Streamable HTTP the
//! `Mcp-Session-Id` *is* the session: the handshake sealed with the server's
//! requestState keys (its own purpose, bound to the principal and the
//! audience, expiring), so any instance sharing the key serves any request
//! of the session and no instance keeps a session table.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use tessera_protocol::agreed_legacy_version;
use tessera_state::Binding;

use crate::McpServer;

/// The binding method of session ids: no request has it, so a session id
/// never opens as a ticket and a ticket never opens as a session id.
const SESSION_PURPOSE: &str = "mcp/session";

/// How long a session id stays valid: 24 hours. A session holds nothing on
/// the server between requests, so there is no idle state to free; the
/// lifetime bounds how long a leaked id is worth anything.
pub const SESSION_LIFETIME: Duration = Duration::from_secs(24 * 60 * 60);

/// The most JSON the handshake may bring into a session id (capabilities and
/// client info together): 4 KiB, so the id stays a reasonable header.
pub const MAX_SESSION_JSON_BYTES: usize = 4 * 1024;

/// An initialize-era handshake: the version agreed, and what the client can answer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LegacySession {
    /// The revision the client speaks (one we support, else our newest
    /// legacy one, as `initialize` answers).
    #[serde(rename = "v")]
    pub version: String,
    /// `capabilities` from `initialize`: the same shape as 2026-07-28's `clientCapabilities`.
    #[serde(rename = "c")]
    pub capabilities: Value,
    /// `clientInfo` from `initialize`, if it was an object.
    #[serde(rename = "i", default, skip_serializing_if = "Option::is_none")]
    pub client_info: Option<Value>,
}

/// A session id that opened: the handshake and the id's own facts.
#[derive(Debug, Clone)]
pub struct OpenedSession {
    /// The handshake the id carries.
    pub session: LegacySession,
    /// The id's random ticket id: a short, unique name for the session
    /// (for tables of ended sessions and pending questions).
    pub key: String,
    /// When the id stops being valid, unix seconds.
    pub expires_at: u64,
}

/// Why a session id could not be minted or opened.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// The server has no requestState codec, so it cannot seal session ids.
    #[error("this server has no requestState key, so it cannot keep initialize-era sessions")]
    NoCodec,
    /// The handshake is too large to carry.
    #[error(
        "the initialize request's capabilities and clientInfo take {0} bytes of JSON; a session carries at most {MAX_SESSION_JSON_BYTES}"
    )]
    TooLarge(usize),
    /// Sealing failed.
    #[error("the session id could not be sealed: {0}")]
    Seal(#[from] tessera_state::SealError),
    /// The id is not one of ours, is for another principal, or expired.
    #[error("unknown or expired session: {0}")]
    Open(#[from] tessera_state::OpenError),
}

impl LegacySession {
    /// Reads the session from `initialize` params.
    pub fn from_initialize(params: &Map<String, Value>) -> Self {
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
    pub fn knows_elicitation_mode(&self) -> bool {
        self.version.as_str() >= "2025-11-25"
    }

    /// Seals the session into an `Mcp-Session-Id`, bound to `principal` and
    /// the server's audience, valid for [`SESSION_LIFETIME`]. The id is
    /// base64url and dots: visible ASCII, as the transport requires.
    pub fn seal(
        &self,
        server: &McpServer,
        principal: Option<&str>,
    ) -> Result<String, SessionError> {
        let codec = server.session_codec.as_ref().ok_or(SessionError::NoCodec)?;
        let len = crate::answer::json_len(&self.capabilities)
            + self.client_info.as_ref().map_or(0, crate::answer::json_len);
        if len > MAX_SESSION_JSON_BYTES {
            return Err(SessionError::TooLarge(len));
        }
        Ok(codec.seal(self, &binding(server, principal))?)
    }

    /// Opens an `Mcp-Session-Id` for `principal`: the session it carries, or
    /// why it is not a session of this server for this caller.
    pub fn open(
        server: &McpServer,
        id: &str,
        principal: Option<&str>,
    ) -> Result<OpenedSession, SessionError> {
        let codec = server.session_codec.as_ref().ok_or(SessionError::NoCodec)?;
        let opened = codec.open::<Self>(id, &binding(server, principal))?;
        Ok(OpenedSession {
            session: opened.payload,
            key: opened.ticket_id,
            expires_at: opened.expires_at,
        })
    }
}

fn binding(server: &McpServer, principal: Option<&str>) -> Binding {
    Binding::new(
        SESSION_PURPOSE,
        "",
        &Value::Object(Map::new()),
        principal,
        &server.audience,
    )
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

    fn server() -> McpServer {
        let key =
            tessera_state::StateKey::from_secret_str("a session test secret of 32 bytes or more")
                .unwrap();
        McpServer::builder("s", "1")
            .request_state(tessera_state::RequestStateCodec::new(
                tessera_state::KeyRing::new("k1", key).unwrap(),
            ))
            .build()
            .unwrap()
    }

    #[test]
    fn a_session_id_opens_only_for_its_principal_and_is_visible_ascii() {
        let server = server();
        let session = LegacySession::from_initialize(
            json!({"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}}})
                .as_object()
                .unwrap(),
        );
        let id = session.seal(&server, Some("alice")).unwrap();
        // The transport: "MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E)".
        assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{id}");
        let opened = LegacySession::open(&server, &id, Some("alice")).unwrap();
        assert_eq!(opened.session, session);
        assert!(LegacySession::open(&server, &id, Some("mallory")).is_err());
        assert!(LegacySession::open(&server, &id, None).is_err());
    }

    #[test]
    fn a_handshake_too_large_for_a_header_is_refused() {
        let server = server();
        let big = "x".repeat(MAX_SESSION_JSON_BYTES);
        let session = LegacySession::from_initialize(
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": big}})
                .as_object()
                .unwrap(),
        );
        assert!(matches!(
            session.seal(&server, None),
            Err(SessionError::TooLarge(_))
        ));
    }
}

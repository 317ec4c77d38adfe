//! The era edge: initialize-era requests served by the 2026-07-28 dispatch.
//!
//! Dispatch speaks 2026-07-28 only. An initialize-era request is settled
//! here: `initialize`, `ping` and `logging/setLevel` are answered; the
//! methods the old era does not have are not found; every other request is
//! given the envelope it stands for and dispatched with its rounds kept
//! ([`Json::Kept`]), and its result comes back in the old shape. Served per
//! request (no session to push questions on), a round that asks becomes
//! the explanation that the call needs 2026-07-28; the era bridge
//! ([`crate::bridge`]) pushes them instead.

use serde_json::{Value, json};
use tessera_protocol::{
    CallToolResult, InitializeResult, LATEST_PROTOCOL_VERSION, REQUEST_STATE, RequestMeta,
    agreed_legacy_version,
};

use crate::dispatch::{Handled, Json, Resolved};
use crate::intake::Request;
use crate::round_state::KeptRound;
use crate::{McpServer, RequestFacts, ServerError};

/// Methods of 2026-07-28 that an initialize-era client does not have.
const MODERN_ONLY: &[&str] = &[
    "server/discover",
    tessera_protocol::SUBSCRIPTIONS_LISTEN,
    tessera_protocol::TASKS_GET,
    tessera_protocol::TASKS_UPDATE,
    tessera_protocol::TASKS_CANCEL,
];

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

    /// Serves an initialize-era request per request, in the old shapes.
    pub(crate) async fn serve_initialize_era(
        &self,
        mut request: Request,
        facts: RequestFacts,
        resolved: Resolved,
    ) -> Handled {
        let id = request.id.clone();
        let out = match request.method.as_str() {
            "initialize" => {
                let params = Value::Object(std::mem::take(&mut request.params));
                Ok(Json::Value(self.initialize_result(Some(&params))))
            }
            // Per-request serving keeps no session to store a level in; log
            // notifications reach legacy clients only through SSE, which they do not get here.
            "ping" | "logging/setLevel" => Ok(Json::Value(json!({}))),
            method if MODERN_ONLY.contains(&method) => Err(ServerError::MethodNotFound {
                method: method.to_owned(),
            }),
            _ => {
                // The client declared nothing it could answer with: a round that asks is explained.
                request.stand_in_envelope(|meta| stand_in(meta, None, None));
                let method = request.method.clone();
                let version = facts.legacy_version().unwrap_or_default().to_owned();
                match self.dispatch(request, facts, resolved, true).await.1 {
                    Ok(Json::Kept(round)) => needs_modern(&method, &round, &version),
                    other => other,
                }
            }
        };
        Handled {
            id,
            result: out.and_then(legacy_raw),
        }
    }
}

/// Fills the envelope an initialize-era request stands for: the newest
/// version (dispatch serves it as such), and what its session declared.
pub(crate) fn stand_in(
    meta: &mut RequestMeta,
    capabilities: Option<tessera_protocol::ClientCapabilities>,
    client_info: Option<tessera_protocol::Implementation>,
) {
    meta.protocol_version = Some(LATEST_PROTOCOL_VERSION.to_owned());
    let mut capabilities = capabilities.unwrap_or_default();
    // An initialize-era client has no `tasks/*`: its calls never become tasks.
    if let Some(extensions) = capabilities.extensions.as_mut() {
        extensions.remove(tessera_protocol::TASKS_EXTENSION);
    }
    meta.client_capabilities = Some(capabilities);
    if client_info.is_some() {
        meta.client_info = client_info;
    }
}

/// A round that asks, for a client served per request: a tool's result
/// explains that the call needs 2026-07-28 (the model can read it); a
/// prompt or resource fails with the explanation.
fn needs_modern(method: &str, round: &KeptRound, version: &str) -> Result<Json, ServerError> {
    let (key, asked) = round
        .questions
        .iter()
        .next()
        .map_or(("(state)", REQUEST_STATE), |(k, q)| {
            (k.as_str(), q.method())
        });
    let message = needs_modern_message(round.kind, &round.target, key, asked, version);
    if method == "tools/call" {
        return Ok(Json::Value(json!(CallToolResult::error(message))));
    }
    Err(ServerError::LegacyInputRequired { message })
}

/// A result of the era edge, serialised in the old shape.
pub(crate) fn legacy_raw(json: Json) -> Result<Box<serde_json::value::RawValue>, ServerError> {
    let mut value = match json {
        Json::Value(value) => value,
        Json::Raw(raw) => {
            serde_json::from_str(raw.get()).map_err(crate::dispatch::serialisation_failed)?
        }
        Json::Kept(round) => {
            return Err(ServerError::Internal {
                message: format!(
                    "{} {}: a round that asks has no old shape",
                    round.kind, round.target
                ),
            });
        }
    };
    to_legacy_shape(&mut value);
    serde_json::value::to_raw_value(&value).map_err(crate::dispatch::serialisation_failed)
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

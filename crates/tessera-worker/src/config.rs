//! What a Worker's secrets and vars say about its server.

use std::sync::Arc;

use tessera_http::{EndpointOptions, Legacy};
use tessera_state::{KeyRing, RequestStateCodec, StateKey, TicketLedger};
use worker::Env;

use crate::ledger::{DurableObjectLedger, LEDGER_BINDING};

/// The secret holding the requestState key.
pub const KEY_VAR: &str = "MRTR_REQUEST_STATE_KEY";
/// The secret holding a key list for rotation (`id:secret,...`).
pub const KEYS_VAR: &str = "MRTR_REQUEST_STATE_KEYS";

/// The endpoint's settings and the server's ingredients, read from the environment.
pub struct WorkerConfig {
    /// Route, eras, Host and Origin allow-lists.
    pub options: EndpointOptions,
    /// What the application builds its server from.
    pub setup: WorkerSetup,
}

/// What an application needs to build its `McpServer` on a Worker.
pub struct WorkerSetup {
    /// Seals and opens tickets with the Worker's key.
    pub codec: RequestStateCodec,
    /// The Durable Object ledger, when the `TICKET_LEDGER` binding exists.
    pub ledger: Option<Arc<dyn TicketLedger>>,
    /// The Worker's environment, for the application's own vars and bindings.
    pub env: Env,
}

impl WorkerConfig {
    /// Reads the key, the allow-lists, the era policy and the ledger binding;
    /// an error is a sentence for the operator.
    pub fn from_env(env: &Env) -> Result<Self, String> {
        let codec = RequestStateCodec::new(key_ring(env)?);
        let mut options = EndpointOptions::default();
        for host in list(env, "MCP_ALLOWED_HOSTS") {
            options = options.allow_host(host);
        }
        for origin in list(env, "MCP_ALLOWED_ORIGINS") {
            options = options.allow_origin(origin);
        }
        options = options.legacy(match text(env, "MCP_LEGACY").as_deref() {
            None | Some("reject") => Legacy::Reject,
            Some("stateless") => Legacy::Stateless,
            Some(other) => {
                return Err(format!(
                    "MCP_LEGACY is {other:?}; it must be \"reject\" or \"stateless\""
                ));
            }
        });
        let ledger = env.durable_object(LEDGER_BINDING).ok().map(|namespace| {
            Arc::new(DurableObjectLedger::new(namespace)) as Arc<dyn TicketLedger>
        });
        Ok(Self {
            options,
            setup: WorkerSetup {
                codec,
                ledger,
                env: env.clone(),
            },
        })
    }
}

/// The key ring from `MRTR_REQUEST_STATE_KEYS`, else `MRTR_REQUEST_STATE_KEY`.
fn key_ring(env: &Env) -> Result<KeyRing, String> {
    if let Some(list) = text(env, KEYS_VAR) {
        return KeyRing::from_env_list(&list).map_err(|e| format!("{KEYS_VAR} is unusable: {e}"));
    }
    let secret = text(env, KEY_VAR).ok_or_else(|| {
        format!(
            "{KEY_VAR} must be configured: wrangler secret put {KEY_VAR} \
             (locally: echo \"{KEY_VAR}=$(openssl rand -base64 32)\" > .dev.vars)"
        )
    })?;
    let key =
        StateKey::from_secret_str(&secret).map_err(|e| format!("{KEY_VAR} is unusable: {e}"))?;
    KeyRing::new("k1", key).map_err(|e| e.to_string())
}

/// A secret or var as text; unset and empty are the same.
fn text(env: &Env, name: &str) -> Option<String> {
    env.secret(name)
        .map(|s| s.to_string())
        .or_else(|_| env.var(name).map(|v| v.to_string()))
        .ok()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
}

/// A comma-separated var as its non-empty entries.
fn list(env: &Env, name: &str) -> Vec<String> {
    text(env, name)
        .map(|s| {
            s.split(',')
                .map(str::trim)
                .filter(|e| !e.is_empty())
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

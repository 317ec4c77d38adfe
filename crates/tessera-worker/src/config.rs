//! What a Worker's secrets and vars say about its server.

use std::sync::Arc;

use tessera_http::{EndpointOptions, Legacy};
use tessera_server::BuildError;
use tessera_state::{KEY_VAR, KEYS_VAR, KeyRing, RequestStateCodec, TicketLedger};
use worker::Env;

use crate::ledger::{DurableObjectLedger, LEDGER_BINDING};

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
    /// The scopes every tool needs (`OAUTH_SCOPE`, split at spaces): give
    /// them to `McpServerBuilder::require_scopes`.
    pub oauth_scopes: Vec<String>,
}

impl WorkerSetup {
    /// The ledger, or an error naming the missing binding: for servers whose
    /// tools are single-use, which must not fall back to a per-isolate memory.
    pub fn require_ledger(&self) -> Result<Arc<dyn TicketLedger>, BuildError> {
        self.ledger.clone().ok_or_else(|| {
            BuildError(format!(
                "single-use tickets need the {LEDGER_BINDING} Durable Object binding \
                 (class TicketLedgerObject, with a new_sqlite_classes migration) in wrangler.jsonc"
            ))
        })
    }
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
        let oauth_scopes: Vec<String> = text(env, "OAUTH_SCOPE")
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        options = protect(env, options, &oauth_scopes)?;
        let ledger = env.durable_object(LEDGER_BINDING).ok().map(|namespace| {
            Arc::new(DurableObjectLedger::new(namespace)) as Arc<dyn TicketLedger>
        });
        Ok(Self {
            options,
            setup: WorkerSetup {
                codec,
                ledger,
                env: env.clone(),
                oauth_scopes,
            },
        })
    }
}

/// `options` protected as `OAUTH_ISSUER` and `OAUTH_RESOURCE` say (as the
/// native binaries' `--oauth-issuer` and `--oauth-resource`).
fn protect(
    env: &Env,
    options: EndpointOptions,
    scopes: &[String],
) -> Result<EndpointOptions, String> {
    let resource = text(env, "OAUTH_RESOURCE");
    let Some(issuer) = text(env, "OAUTH_ISSUER") else {
        return match resource {
            Some(_) => Err("OAUTH_RESOURCE is set without OAUTH_ISSUER: name the authorization server whose tokens are accepted".into()),
            None if !scopes.is_empty() => Err("OAUTH_SCOPE is set without OAUTH_ISSUER: name the authorization server whose tokens are accepted".into()),
            None => Ok(options),
        };
    };
    let resource = resource.ok_or(
        "OAUTH_ISSUER needs OAUTH_RESOURCE: this server's URL as clients use it (e.g. https://counter.example.workers.dev/mcp), which tokens must name",
    )?;
    let verifier = Arc::new(tessera_auth::JwtVerifier::with_fetch(
        issuer.clone(),
        resource.clone(),
        Arc::new(crate::WorkerFetch),
    ));
    let protected = tessera_auth::OAuthResource::new(resource, issuer, verifier)
        .scopes_supported(scopes.iter().cloned());
    Ok(options
        .protected_resource(protected.metadata())
        .authenticate(protected))
}

/// The key ring from the Worker's secrets (`tessera_state::KeyRing::from_configured`).
fn key_ring(env: &Env) -> Result<KeyRing, String> {
    KeyRing::from_configured(
        text(env, KEY_VAR).as_deref(),
        text(env, KEYS_VAR).as_deref(),
    )?
    .ok_or_else(|| {
        format!(
            "{KEY_VAR} must be configured: wrangler secret put {KEY_VAR} \
                 (locally: echo \"{KEY_VAR}=$(openssl rand -base64 32)\" > .dev.vars)"
        )
    })
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

//! What a Worker's secrets and vars say about its server.

use std::sync::Arc;

use tessera_auth::OAuthVars;
use tessera_http::{EndpointOptions, Vars};
use tessera_server::{BuildError, TaskPolicy, TaskStore};
use tessera_state::{KEY_VAR, KEYS_VAR, KeyRing, RequestStateCodec, TicketLedger};
use worker::Env;

use crate::ledger::{DurableObjectLedger, LEDGER_BINDING};
use crate::task_store::{DurableObjectTaskStore, TASK_STORE_BINDING};

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
    /// The Durable Object task store (default policy), when the
    /// `TASK_STORE` binding exists: give it to
    /// `McpServerBuilder::task_store`, so every isolate answers
    /// `tasks/get`, `tasks/update` and `tasks/cancel` and tasks outlive
    /// their isolate.
    pub task_store: Option<Arc<dyn TaskStore>>,
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
    /// Reads the key, the allow-lists, the era policy, OAuth and the ledger
    /// and task store bindings; an error is a sentence for the operator.
    pub fn from_env(env: &Env) -> Result<Self, String> {
        let vars = WorkerVars(env);
        let codec = RequestStateCodec::new(key_ring(&vars)?);
        let oauth = OAuthVars::from_vars(&vars)?;
        let ledger = env.durable_object(LEDGER_BINDING).ok().map(|namespace| {
            Arc::new(DurableObjectLedger::new(namespace)) as Arc<dyn TicketLedger>
        });
        // DPoP proof ids go to the tickets' Durable Object ledger where there is one.
        let options = oauth.protect(
            EndpointOptions::from_vars(&vars)?,
            Arc::new(crate::WorkerFetch),
            ledger.clone(),
        );
        let task_store = env
            .durable_object(TASK_STORE_BINDING)
            .ok()
            .map(|namespace| {
                Arc::new(DurableObjectTaskStore::new(
                    namespace,
                    "tasks",
                    TaskPolicy::default(),
                )) as Arc<dyn TaskStore>
            });
        Ok(Self {
            options,
            setup: WorkerSetup {
                codec,
                ledger,
                task_store,
                env: env.clone(),
                oauth_scopes: oauth.scopes,
            },
        })
    }
}

/// The key ring from the Worker's secrets (`tessera_state::KeyRing::from_configured`).
fn key_ring(vars: &WorkerVars<'_>) -> Result<KeyRing, String> {
    KeyRing::from_configured(
        vars.text(KEY_VAR).as_deref(),
        vars.text(KEYS_VAR).as_deref(),
    )?
    .ok_or_else(|| {
        format!(
            "{KEY_VAR} must be configured: wrangler secret put {KEY_VAR} \
                 (locally: echo \"{KEY_VAR}=$(openssl rand -base64 32)\" > .dev.vars)"
        )
    })
}

/// A Worker's secrets, then its vars.
struct WorkerVars<'a>(&'a Env);

impl Vars for WorkerVars<'_> {
    fn raw(&self, name: &str) -> Option<String> {
        self.0
            .secret(name)
            .map(|s| s.to_string())
            .or_else(|_| self.0.var(name).map(|v| v.to_string()))
            .ok()
    }
}

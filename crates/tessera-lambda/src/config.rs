//! What a function's environment says about its server.

use std::sync::Arc;
use std::time::Duration;

use tessera_auth::OAuthVars;
use tessera_http::{EndpointOptions, ProcessEnv, Vars};
use tessera_server::{McpServer, McpServerBuilder};
use tessera_state::{KEY_VAR, KEYS_VAR, KeyRing, RequestStateCodec, TicketLedger};

use crate::secret;

/// The ticket lifetime without `MRTR_REQUEST_STATE_TTL`: ten minutes, as the native binaries' `--ttl`.
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);

/// The endpoint's settings and the server's ingredients, read from the environment.
pub struct LambdaConfig {
    /// Route, eras, Host and Origin allow-lists, OAuth.
    pub options: EndpointOptions,
    /// What the application builds its server from.
    pub setup: LambdaSetup,
}

/// What an application needs to build its `McpServer` on Lambda.
pub struct LambdaSetup {
    codec: RequestStateCodec,
    ledger: Option<Arc<dyn TicketLedger>>,
    single_use: bool,
    oauth_scopes: Vec<String>,
}

impl LambdaSetup {
    /// A builder for the server named `name` at `version`, set up as the
    /// environment says: the key ring and ticket lifetime, single-use tickets
    /// in Redis with `SINGLE_USE=true`, and the `OAUTH_SCOPE` every tool
    /// needs. Add the tools, prompts and resources.
    pub fn server(&self, name: impl Into<String>, version: impl Into<String>) -> McpServerBuilder {
        let mut builder = McpServer::builder(name, version)
            .request_state(self.codec.clone())
            .require_scopes(self.oauth_scopes.clone());
        if let Some(ledger) = &self.ledger {
            builder = builder.ticket_ledger(Arc::clone(ledger));
            if self.single_use {
                builder = builder.single_use_tickets();
            }
        }
        builder
    }

    /// The codec tickets are sealed with.
    pub fn request_state(&self) -> &RequestStateCodec {
        &self.codec
    }

    /// The Redis ledger of `REDIS_URL`, when set.
    pub fn ticket_ledger(&self) -> Option<Arc<dyn TicketLedger>> {
        self.ledger.clone()
    }
}

impl LambdaConfig {
    /// Reads the process environment (see the crate's documentation): the
    /// key (from Secrets Manager when `MRTR_REQUEST_STATE_SECRET_ID` names
    /// one), the ledger's Redis (connected), the endpoint's settings. `name`
    /// is the Redis namespace. An error is a sentence for the operator.
    pub async fn from_env(name: &str) -> Result<Self, String> {
        Self::from_vars(name, &ProcessEnv).await
    }

    /// [`from_env`](Self::from_env) on other variables.
    pub async fn from_vars(name: &str, vars: &dyn Vars) -> Result<Self, String> {
        let ring = key_ring(vars).await?;
        let ttl = match vars.text("MRTR_REQUEST_STATE_TTL") {
            None => DEFAULT_TTL,
            Some(s) => s.parse().map(Duration::from_secs).map_err(|_| {
                format!("MRTR_REQUEST_STATE_TTL is {s:?}; it must be a number of seconds")
            })?,
        };
        let codec = RequestStateCodec::builder(ring)
            .ttl(ttl)
            .build()
            .map_err(|e| format!("invalid requestState settings: {e}"))?;
        let single_use = match vars.text("SINGLE_USE").as_deref() {
            None | Some("false") => false,
            Some("true") => true,
            Some(other) => {
                return Err(format!(
                    "SINGLE_USE is {other:?}; it must be \"true\" or \"false\""
                ));
            }
        };
        let ledger = match vars.text("REDIS_URL") {
            Some(url) => {
                let redis = tessera_redis::Redis::connect(&url)
                    .await
                    .map_err(|e| format!("REDIS_URL {}: {e}", without_password(&url)))?;
                Some(Arc::new(redis.ledger(name)) as Arc<dyn TicketLedger>)
            }
            None if single_use => {
                return Err("SINGLE_USE=true needs REDIS_URL: every instance must see \
                     which tickets were redeemed, and one instance's memory does not"
                    .into());
            }
            None => None,
        };
        let oauth = OAuthVars::from_vars(vars)?;
        // Any path: API Gateway chose this function (a REST API's stage
        // comes first in the path). Responses are buffered whole.
        let options = oauth.protect(
            EndpointOptions::from_vars(vars)?
                .any_path()
                .buffered_responses(),
            Arc::new(tessera_auth::ReqwestFetch::default()),
            ledger.clone(),
        );
        Ok(Self {
            options,
            setup: LambdaSetup {
                codec,
                ledger,
                single_use,
                oauth_scopes: oauth.scopes,
            },
        })
    }
}

/// The key ring: the variables, else the Secrets Manager secret they name.
async fn key_ring(vars: &dyn Vars) -> Result<KeyRing, String> {
    if let Some(ring) = KeyRing::from_configured(
        vars.text(KEY_VAR).as_deref(),
        vars.text(KEYS_VAR).as_deref(),
    )? {
        return Ok(ring);
    }
    if let Some(id) = vars.text(secret::SECRET_ID_VAR) {
        let value = secret::fetch(vars, &id).await?;
        return secret::key_ring(&id, &value);
    }
    Err(format!(
        "{KEY_VAR} must be configured: set it (32 bytes or more, e.g. `openssl rand -base64 32`) \
         in the function's environment, or name a Secrets Manager secret holding it in {}",
        secret::SECRET_ID_VAR
    ))
}

/// `url` without the password in its user info, for messages and logs.
fn without_password(url: &str) -> String {
    match (url.find("://"), url.rfind('@')) {
        (Some(scheme), Some(at)) if at > scheme => {
            format!("{}://***@{}", &url[..scheme], &url[at + 1..])
        }
        _ => url.to_owned(),
    }
}

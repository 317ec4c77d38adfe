//! Opaque tokens, verified by asking the authorization server (RFC 7662).

use std::sync::Arc;

use serde_json::Value;
use tessera_protocol::clock::{SystemTime, UNIX_EPOCH};
use tessera_server::{AuthInfo, BoxFuture};

use crate::claims::{TokenError, TokenVerifier, audience_names, bound_key, scopes_of};
use crate::fetch::HttpFetch;

/// Verifies tokens at the issuer's introspection endpoint, authenticating
/// with this resource server's own client credentials. A token must be
/// `active`, from `issuer`, for `resource`, and unexpired.
pub struct Introspection {
    endpoint: String,
    issuer: String,
    resource: String,
    client_id: String,
    client_secret: String,
    http: Arc<dyn HttpFetch>,
}

impl Introspection {
    /// Introspects at `endpoint` as `client_id`/`client_secret`, for tokens
    /// of `issuer` meant for `resource`, with reqwest.
    #[cfg(feature = "reqwest")]
    pub fn new(
        endpoint: impl Into<String>,
        issuer: impl Into<String>,
        resource: impl Into<String>,
        client_id: impl Into<String>,
        client_secret: impl Into<String>,
    ) -> Self {
        Self {
            endpoint: endpoint.into(),
            issuer: issuer.into(),
            resource: resource.into(),
            client_id: client_id.into(),
            client_secret: client_secret.into(),
            http: Arc::new(crate::ReqwestFetch::default()),
        }
    }

    /// The same verifier making its requests through `http` instead.
    pub fn fetching_with(mut self, http: Arc<dyn HttpFetch>) -> Self {
        self.http = http;
        self
    }
}

impl TokenVerifier for Introspection {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AuthInfo, TokenError>> {
        Box::pin(async move {
            let form = [("token", token), ("token_type_hint", "access_token")];
            let answer = self
                .http
                .post_form(
                    &self.endpoint,
                    (&self.client_id, &self.client_secret),
                    &form,
                )
                .await
                .map_err(TokenError::Unavailable)?;
            let invalid = |why: &str| Err(TokenError::Invalid(why.to_owned()));
            if answer.get("active").and_then(Value::as_bool) != Some(true) {
                return invalid("the token is not active");
            }
            if answer
                .get("iss")
                .and_then(Value::as_str)
                .is_some_and(|i| i != self.issuer)
            {
                return invalid("the token is from another issuer");
            }
            if !audience_names(&answer, &self.resource) {
                return invalid("the token is for another resource");
            }
            let now = SystemTime::now()
                .duration_since(UNIX_EPOCH)
                .map_or(0, |d| d.as_secs());
            if answer
                .get("exp")
                .and_then(Value::as_u64)
                .is_some_and(|exp| exp + 60 < now)
            {
                return invalid("the token has expired");
            }
            // A token with neither subject nor client names nobody tickets could be bound to.
            let Some(subject) = answer
                .get("sub")
                .or_else(|| answer.get("client_id"))
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
            else {
                return invalid("the token names no subject");
            };
            Ok(AuthInfo {
                issuer: self.issuer.clone(),
                subject: subject.to_owned(),
                scopes: scopes_of(&answer),
                client_id: answer
                    .get("client_id")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                bound_key: bound_key(&answer),
            })
        })
    }
}

//! Opaque tokens, verified by asking the authorization server (RFC 7662).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tessera_server::{AuthInfo, BoxFuture};

use crate::claims::{TokenError, TokenVerifier, audience_names, scopes_of};

/// Verifies tokens at the issuer's introspection endpoint, authenticating
/// with this resource server's own client credentials. A token must be
/// `active`, from `issuer`, for `resource`, and unexpired.
pub struct Introspection {
    endpoint: String,
    issuer: String,
    resource: String,
    client_id: String,
    client_secret: String,
    http: reqwest::Client,
}

impl Introspection {
    /// Introspects at `endpoint` as `client_id`/`client_secret`, for tokens of `issuer` meant for `resource`.
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
            http: reqwest::Client::builder()
                .timeout(Duration::from_secs(5))
                .build()
                .unwrap_or_default(),
        }
    }
}

impl TokenVerifier for Introspection {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AuthInfo, TokenError>> {
        Box::pin(async move {
            let answer: Value = self
                .http
                .post(&self.endpoint)
                .basic_auth(&self.client_id, Some(&self.client_secret))
                .form(&[("token", token), ("token_type_hint", "access_token")])
                .send()
                .await
                .map_err(|e| TokenError::Unavailable(e.to_string()))?
                .error_for_status()
                .map_err(|e| TokenError::Unavailable(e.to_string()))?
                .json()
                .await
                .map_err(|e| TokenError::Unavailable(e.to_string()))?;
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
            })
        })
    }
}

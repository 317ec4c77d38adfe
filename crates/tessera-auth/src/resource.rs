//! The protected resource: its metadata, and the hook that checks each request's token.

use std::sync::Arc;

use serde_json::{Value, json};
use tessera_http::{AuthDecision, Authenticate};
use tessera_server::BoxFuture;

use crate::claims::{TokenError, TokenVerifier};

/// This server as an OAuth protected resource: `resource` (its canonical URI)
/// trusting `authorization_server`, verifying tokens with a [`TokenVerifier`].
pub struct OAuthResource {
    resource: String,
    authorization_server: String,
    scopes_supported: Vec<String>,
    verifier: Arc<dyn TokenVerifier>,
}

impl OAuthResource {
    /// A protected resource at `resource` (e.g. `https://mcp.example.com/mcp`).
    pub fn new(
        resource: impl Into<String>,
        authorization_server: impl Into<String>,
        verifier: Arc<dyn TokenVerifier>,
    ) -> Self {
        Self {
            resource: resource.into(),
            authorization_server: authorization_server.into(),
            scopes_supported: Vec::new(),
            verifier,
        }
    }

    /// The scopes this resource knows (published in its metadata).
    pub fn scopes_supported<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes_supported = scopes.into_iter().map(Into::into).collect();
        self
    }

    /// The RFC 9728 Protected Resource Metadata document.
    pub fn metadata(&self) -> Value {
        let mut doc = json!({
            "resource": self.resource,
            "authorization_servers": [self.authorization_server],
            "bearer_methods_supported": ["header"],
        });
        if !self.scopes_supported.is_empty() {
            doc["scopes_supported"] = json!(self.scopes_supported);
        }
        doc
    }

    /// `options` serving this resource: the metadata at its well-known
    /// paths, and every request's token checked before its body is read.
    pub fn protect(self, options: tessera_http::EndpointOptions) -> tessera_http::EndpointOptions {
        options
            .protected_resource(self.metadata())
            .authenticate(self)
    }

    /// A 401 challenge; `error` with its fixed description (details stay in the log).
    fn challenge(&self, error: Option<(&str, &str)>, reason: String) -> AuthDecision {
        // The same URL the endpoint serves the metadata at.
        let url = tessera_http::resource_metadata_url(&self.resource).unwrap_or_default();
        let mut header = format!("Bearer resource_metadata=\"{url}\"");
        if let Some((error, description)) = error {
            header.push_str(&format!(
                ", error=\"{error}\", error_description=\"{description}\""
            ));
        }
        if !self.scopes_supported.is_empty() {
            header.push_str(&format!(", scope=\"{}\"", self.scopes_supported.join(" ")));
        }
        AuthDecision::Challenge {
            reason,
            www_authenticate: header,
        }
    }
}

impl Authenticate for OAuthResource {
    fn authenticate<'a>(&'a self, head: &'a http::request::Parts) -> BoxFuture<'a, AuthDecision> {
        Box::pin(async move {
            let bearer = head
                .headers
                .get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| {
                    let (scheme, token) = v.split_once(' ')?;
                    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
                });
            let Some(token) = bearer else {
                return self.challenge(None, "an access token is required".into());
            };
            match self.verifier.verify(token).await {
                Ok(info) => AuthDecision::Verified(info),
                Err(TokenError::Invalid(why)) => {
                    tracing::info!(reason = %why.escape_debug(), "access token refused");
                    self.challenge(
                        Some((
                            "invalid_token",
                            "The access token is invalid, expired or not for this resource",
                        )),
                        "the access token is invalid, expired or not for this resource".into(),
                    )
                }
                Err(e @ TokenError::Unavailable(_)) => {
                    tracing::warn!(error = %e, "cannot verify access tokens");
                    self.challenge(
                        Some((
                            "invalid_token",
                            "The access token cannot be verified right now",
                        )),
                        "the access token cannot be verified right now".into(),
                    )
                }
            }
        })
    }
}

//! The protected resource: its metadata, and the hook that checks each request's token.

use std::sync::Arc;

use serde_json::{Value, json};
use tessera_http::{AuthDecision, Authenticate};
use tessera_server::BoxFuture;

use crate::claims::{TokenError, TokenVerifier};
use crate::dpop::{Dpop, ProofRefusal};

/// This server as an OAuth protected resource: `resource` (its canonical URI)
/// trusting `authorization_server`, verifying tokens with a [`TokenVerifier`].
pub struct OAuthResource {
    resource: String,
    authorization_server: String,
    scopes_supported: Vec<String>,
    verifier: Arc<dyn TokenVerifier>,
    dpop: Option<Dpop>,
}

/// The scheme a challenge is in.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scheme {
    Bearer,
    Dpop,
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
            dpop: None,
        }
    }

    /// Takes DPoP-bound tokens (RFC 9449) presented with proofs of their
    /// key, as `dpop` says; a bound token is never taken as a bearer token,
    /// with or without this.
    pub fn dpop(mut self, dpop: Dpop) -> Self {
        self.dpop = Some(dpop);
        self
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
        if let Some(dpop) = &self.dpop {
            doc["dpop_signing_alg_values_supported"] = json!(dpop.algorithm_names());
            if dpop.is_required() {
                doc["dpop_bound_access_tokens_required"] = json!(true);
            }
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

    /// A 401 challenge in `scheme`; `error` with its fixed description
    /// (details stay in the log). Where this resource takes both schemes,
    /// the other one's challenge comes too, so a client learns it may use
    /// either; `nonce` goes out as `DPoP-Nonce`.
    fn challenge(
        &self,
        scheme: Scheme,
        error: Option<(&str, &str)>,
        reason: String,
        nonce: Option<String>,
    ) -> AuthDecision {
        // A resource taking DPoP-bound tokens only challenges in DPoP.
        let scheme = match &self.dpop {
            Some(dpop) if dpop.is_required() => Scheme::Dpop,
            _ => scheme,
        };
        let mut headers = Vec::new();
        let other = match (scheme, &self.dpop) {
            (Scheme::Bearer, Some(_)) => Some(Scheme::Dpop),
            (Scheme::Dpop, Some(dpop)) if !dpop.is_required() => Some(Scheme::Bearer),
            _ => None,
        };
        if let Some(value) = other
            .and_then(|other| http::HeaderValue::from_str(&self.challenge_text(other, None)).ok())
        {
            headers.push((http::header::WWW_AUTHENTICATE, value));
        }
        if let Some(value) = nonce.and_then(|n| http::HeaderValue::from_str(&n).ok()) {
            headers.push((http::HeaderName::from_static("dpop-nonce"), value));
        }
        AuthDecision::Challenge {
            reason,
            www_authenticate: self.challenge_text(scheme, error),
            headers,
        }
    }

    /// One challenge: `Bearer …` or `DPoP algs="…" …` (RFC 6750 §3, RFC 9449 §7.1).
    fn challenge_text(&self, scheme: Scheme, error: Option<(&str, &str)>) -> String {
        // The same URL the endpoint serves the metadata at.
        let url = tessera_http::resource_metadata_url(&self.resource).unwrap_or_default();
        let mut header = match (scheme, &self.dpop) {
            (Scheme::Dpop, Some(dpop)) => format!(
                "DPoP algs=\"{}\", resource_metadata=\"{url}\"",
                dpop.algorithm_names().join(" ")
            ),
            _ => format!("Bearer resource_metadata=\"{url}\""),
        };
        if let Some((error, description)) = error {
            header.push_str(&format!(
                ", error=\"{error}\", error_description=\"{description}\""
            ));
        }
        if !self.scopes_supported.is_empty() {
            header.push_str(&format!(", scope=\"{}\"", self.scopes_supported.join(" ")));
        }
        header
    }

    /// The refusal of a token the verifier turned down.
    fn token_refused(&self, scheme: Scheme, error: TokenError) -> AuthDecision {
        match error {
            TokenError::Invalid(why) => {
                tracing::info!(reason = %why.escape_debug(), "access token refused");
                self.challenge(
                    scheme,
                    Some((
                        "invalid_token",
                        "The access token is invalid, expired or not for this resource",
                    )),
                    "the access token is invalid, expired or not for this resource".into(),
                    None,
                )
            }
            e @ TokenError::Unavailable(_) => {
                tracing::warn!(error = %e, "cannot verify access tokens");
                self.challenge(
                    scheme,
                    Some((
                        "invalid_token",
                        "The access token cannot be verified right now",
                    )),
                    "the access token cannot be verified right now".into(),
                    None,
                )
            }
        }
    }

    /// A token presented as `Authorization: DPoP`: its proof checked first,
    /// then the token, then that the token is bound to the proof's key, and
    /// last the proof's id recorded against replay.
    async fn with_proof(
        &self,
        dpop: &Dpop,
        head: &http::request::Parts,
        token: &str,
    ) -> AuthDecision {
        // Every `DPoP` header counts: one that is not text is no proof either.
        let Some(proofs) = head
            .headers
            .get_all("dpop")
            .iter()
            .map(|v| v.to_str().ok())
            .collect::<Option<Vec<&str>>>()
        else {
            return self.challenge(
                Scheme::Dpop,
                Some((
                    "invalid_dpop_proof",
                    "The DPoP proof is invalid for this request",
                )),
                "the DPoP header is not a JWT".into(),
                None,
            );
        };
        // The canonical URI, or the path requested at its origin (a resource
        // named by its origin alone, or a proxy's path).
        let urls: Vec<String> = std::iter::once(self.resource.clone())
            .chain(crate::dpop::request_url(&self.resource, head.uri.path()))
            .collect();
        let now = tessera_protocol::clock::unix_seconds();
        let refused_proof = |why: String| {
            tracing::info!(reason = %why, "DPoP proof refused");
            self.challenge(
                Scheme::Dpop,
                Some((
                    "invalid_dpop_proof",
                    "The DPoP proof is invalid for this request",
                )),
                why,
                None,
            )
        };
        let proof = match dpop.check(&proofs, head.method.as_str(), &urls, token, now) {
            Ok(proof) => proof,
            Err(ProofRefusal::Invalid(why)) => return refused_proof(why),
            Err(ProofRefusal::Nonce(nonce)) => {
                return self.challenge(
                    Scheme::Dpop,
                    Some((
                        "use_dpop_nonce",
                        "Resource server requires nonce in DPoP proof",
                    )),
                    "the DPoP proof must carry the server's nonce".into(),
                    Some(nonce),
                );
            }
        };
        let info = match self.verifier.verify(token).await {
            Ok(info) => info,
            Err(e) => return self.token_refused(Scheme::Dpop, e),
        };
        if info.bound_key.as_deref() != Some(proof.jkt.as_str()) {
            tracing::info!("DPoP proof of a key the token is not bound to");
            return self.challenge(
                Scheme::Dpop,
                Some((
                    "invalid_token",
                    "The access token is not bound to the proof's key",
                )),
                "the access token is not bound to the DPoP proof's key".into(),
                None,
            );
        }
        if let Err(why) = dpop.record(&proof).await {
            return refused_proof(why);
        }
        AuthDecision::Verified(info)
    }
}

impl Authenticate for OAuthResource {
    fn authenticate<'a>(&'a self, head: &'a http::request::Parts) -> BoxFuture<'a, AuthDecision> {
        Box::pin(async move {
            let presented = head
                .headers
                .get(http::header::AUTHORIZATION)
                .and_then(|v| v.to_str().ok())
                .and_then(|v| v.split_once(' '))
                .map(|(scheme, token)| (scheme, token.trim()));
            let missing = || {
                self.challenge(
                    Scheme::Bearer,
                    None,
                    "an access token is required".into(),
                    None,
                )
            };
            let Some((scheme, token)) = presented else {
                return missing();
            };
            if scheme.eq_ignore_ascii_case("dpop") {
                return match &self.dpop {
                    Some(dpop) => self.with_proof(dpop, head, token).await,
                    None => missing(),
                };
            }
            if !scheme.eq_ignore_ascii_case("bearer") {
                return missing();
            }
            let info = match self.verifier.verify(token).await {
                Ok(info) => info,
                Err(e) => return self.token_refused(Scheme::Bearer, e),
            };
            // RFC 9449 §7.2: a bound token is worth nothing without its proof.
            if info.bound_key.is_some() {
                tracing::info!("a DPoP-bound access token presented as a bearer token");
                return self.challenge(
                    Scheme::Dpop,
                    Some((
                        "invalid_token",
                        "A DPoP-bound access token needs the DPoP scheme and a proof",
                    )),
                    "a DPoP-bound access token needs the DPoP scheme and a proof".into(),
                    None,
                );
            }
            if self.dpop.as_ref().is_some_and(Dpop::is_required) {
                return self.challenge(
                    Scheme::Dpop,
                    Some((
                        "invalid_token",
                        "This resource takes DPoP-bound tokens only",
                    )),
                    "this resource takes DPoP-bound access tokens only".into(),
                    None,
                );
            }
            AuthDecision::Verified(info)
        })
    }
}

//! Authentication: a hook that sees the request head and names a principal.

use std::collections::HashMap;

use http::request::Parts;
use tessera_server::BoxFuture;

/// What an [`Authenticate`] hook decided.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum AuthDecision {
    /// Authenticated as this principal (bound into tickets, visible to handlers).
    Principal(String),
    /// A verified access token: its issuer and subject are the principal;
    /// handlers see its subject, scopes and client (`Context::auth`).
    Verified(tessera_server::AuthInfo),
    /// Anonymous access is fine for this request.
    Anonymous,
    /// Refused: 401 with `WWW-Authenticate: Bearer` (naming the resource
    /// metadata when the endpoint publishes it) and this reason.
    Reject(String),
    /// Refused: 401 with exactly this `WWW-Authenticate` challenge.
    Challenge {
        /// Why (in the JSON-RPC error message).
        reason: String,
        /// The challenge, e.g. `Bearer error="invalid_token", resource_metadata="…"`.
        www_authenticate: String,
        /// More headers for the refusal, added after the challenge: another
        /// scheme's `WWW-Authenticate` challenge, a `DPoP-Nonce`. (A list, not
        /// a `HeaderMap`: every request's state holds room for this value.)
        headers: Vec<(http::HeaderName, http::HeaderValue)>,
    },
}

/// Decides who is calling, from the request head.
pub trait Authenticate: Send + Sync {
    /// Inspects the head (e.g. the `Authorization` header).
    fn authenticate<'a>(&'a self, head: &'a Parts) -> BoxFuture<'a, AuthDecision>;
}

/// Bearer tokens mapped to principals; any other or missing token is refused.
///
/// ```
/// use tessera_http::BearerTokens;
/// let auth = BearerTokens::new([("s3cret-token", "alice")]);
/// ```
#[derive(Clone, Default)]
pub struct BearerTokens {
    tokens: HashMap<String, String>,
}

impl BearerTokens {
    /// A map from token to principal.
    pub fn new<I, T, P>(tokens: I) -> Self
    where
        I: IntoIterator<Item = (T, P)>,
        T: Into<String>,
        P: Into<String>,
    {
        Self {
            tokens: tokens
                .into_iter()
                .map(|(t, p)| (t.into(), p.into()))
                .collect(),
        }
    }

    fn decide(&self, head: &Parts) -> AuthDecision {
        let Some(value) = head.headers.get(http::header::AUTHORIZATION) else {
            return AuthDecision::Reject("missing bearer token".into());
        };
        let Some(token) = value.to_str().ok().and_then(|v| {
            v.strip_prefix("Bearer ")
                .or_else(|| v.strip_prefix("bearer "))
        }) else {
            return AuthDecision::Reject("the Authorization header is not a bearer token".into());
        };
        // Compare every entry in constant time per entry so timing reveals little.
        let mut found = None;
        for (known, principal) in &self.tokens {
            if constant_time_eq(known.as_bytes(), token.trim().as_bytes()) {
                found = Some(principal.clone());
            }
        }
        found.map_or_else(
            || AuthDecision::Reject("invalid bearer token".into()),
            AuthDecision::Principal,
        )
    }
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Authenticate for BearerTokens {
    fn authenticate<'a>(&'a self, head: &'a Parts) -> BoxFuture<'a, AuthDecision> {
        let decision = self.decide(head);
        Box::pin(async move { decision })
    }
}

impl std::fmt::Debug for BearerTokens {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BearerTokens")
            .field("tokens", &self.tokens.len())
            .finish()
    }
}

//! What verifying a token yields, and why it can fail.

use tessera_server::{AuthInfo, BoxFuture};

/// Why a token is refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TokenError {
    /// The token is not valid for this resource (expired, wrong audience or issuer, bad signature…).
    #[error("invalid token: {0}")]
    Invalid(String),
    /// The issuer's keys or introspection endpoint could not be reached: not the token's fault.
    #[error("cannot verify tokens right now: {0}")]
    Unavailable(String),
}

/// Verifies access tokens for one resource.
pub trait TokenVerifier: Send + Sync {
    /// The verified claims of `token`, or why it is refused.
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AuthInfo, TokenError>>;
}

/// Scopes from a `scope` string (RFC 9068 / 7662) or an `scp` array.
pub(crate) fn scopes_of(claims: &serde_json::Value) -> Vec<String> {
    match (claims.get("scope"), claims.get("scp")) {
        (Some(serde_json::Value::String(s)), _) => {
            s.split_whitespace().map(str::to_owned).collect()
        }
        (_, Some(serde_json::Value::Array(a))) => a
            .iter()
            .filter_map(|v| v.as_str().map(str::to_owned))
            .collect(),
        (_, Some(serde_json::Value::String(s))) => {
            s.split_whitespace().map(str::to_owned).collect()
        }
        _ => Vec::new(),
    }
}

/// Whether the `aud` claim (a string or an array) names `resource`.
pub(crate) fn audience_names(claims: &serde_json::Value, resource: &str) -> bool {
    match claims.get("aud") {
        Some(serde_json::Value::String(a)) => a == resource,
        Some(serde_json::Value::Array(a)) => a.iter().any(|v| v.as_str() == Some(resource)),
        _ => false,
    }
}

/// The thumbprint of the key a token is bound to: its `cnf.jkt` (RFC 9449 §6,
/// in a JWT's claims or an introspection answer alike). A token confirmed
/// otherwise (a certificate's `x5t#S256`, a `jkt` that is not a string) is
/// bound to no key a DPoP proof can show: never a bearer token either.
pub(crate) fn bound_key(claims: &serde_json::Value) -> Option<String> {
    let cnf = claims.get("cnf")?;
    Some(
        cnf.get("jkt")
            .and_then(serde_json::Value::as_str)
            .unwrap_or_default()
            .to_owned(),
    )
}

//! JWT access tokens (RFC 9068) verified against the issuer's JSON Web Key Set.

use std::sync::Arc;
use std::time::Duration;

use async_lock::{Mutex, RwLock};
use jsonwebtoken::jwk::JwkSet;
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde_json::Value;
use tessera_protocol::clock::Instant;
use tessera_server::{AuthInfo, BoxFuture};

use crate::claims::{TokenError, TokenVerifier, audience_names, bound_key, scopes_of};
use crate::fetch::HttpFetch;

/// Seconds of clock difference tolerated on `exp` and `nbf`.
const LEEWAY_SECS: u64 = 60;
/// An unknown `kid` refetches the key set at most this often (and a failed fetch waits as long).
const REFETCH_AFTER: Duration = Duration::from_secs(30);
/// Keys are fetched again after this long, so keys the issuer retires stop being trusted.
const MAX_AGE: Duration = Duration::from_secs(3600);

/// Verifies JWT access tokens signed with RS256, ES256 or EdDSA by `issuer`,
/// for `resource`: the keys come from the issuer's `jwks_uri` (RFC 8414 or
/// OpenID discovery), cached, and fetched again when a token names a key id
/// the cache lacks. `iss` must be the issuer, `aud` must name the resource,
/// `exp`/`nbf` hold within 60 s of skew; `none` and HMAC are never accepted.
pub struct JwtVerifier {
    issuer: String,
    resource: String,
    http: Arc<dyn HttpFetch>,
    keys: RwLock<Keys>,
    /// How often a token naming an unknown key may make the set be fetched again.
    refetch_after: Duration,
    /// Held while the key set is fetched, so one fetch runs at a time; the
    /// keys themselves are never locked across a fetch.
    fetching: Mutex<()>,
}

#[derive(Default)]
struct Keys {
    jwks_uri: Option<String>,
    set: Option<JwkSet>,
    /// When the set was fetched (a failed fetch does not make it younger).
    fetched: Option<Instant>,
    /// When a fetch was last tried, whatever came of it.
    tried: Option<Instant>,
}

impl Keys {
    fn fresh(&self) -> bool {
        self.fetched.is_some_and(|t| t.elapsed() < MAX_AGE)
    }

    fn tried_within(&self, interval: Duration) -> bool {
        self.tried.is_some_and(|t| t.elapsed() < interval)
    }
}

fn unavailable(e: impl std::fmt::Display) -> TokenError {
    TokenError::Unavailable(e.to_string())
}

impl JwtVerifier {
    /// Tokens of `issuer` for `resource` (this server's canonical URI),
    /// fetching the issuer's metadata and keys with reqwest.
    #[cfg(feature = "reqwest")]
    pub fn new(issuer: impl Into<String>, resource: impl Into<String>) -> Self {
        Self::with_fetch(issuer, resource, Arc::new(crate::ReqwestFetch::default()))
    }

    /// Tokens of `issuer` for `resource`, fetching through `http` (on a
    /// Worker, the Workers fetch API).
    pub fn with_fetch(
        issuer: impl Into<String>,
        resource: impl Into<String>,
        http: Arc<dyn HttpFetch>,
    ) -> Self {
        Self {
            issuer: issuer.into(),
            resource: resource.into(),
            http,
            keys: RwLock::new(Keys::default()),
            refetch_after: REFETCH_AFTER,
            fetching: Mutex::new(()),
        }
    }

    /// How often a token naming a key the cache lacks (or a failed fetch) may
    /// make the key set be fetched again (default 30 s).
    pub fn refetch_interval(mut self, interval: Duration) -> Self {
        self.refetch_after = interval;
        self
    }

    /// The issuer's `jwks_uri`, from its metadata (RFC 8414 first, then OpenID).
    async fn jwks_uri(&self) -> Result<String, TokenError> {
        let issuer = self.issuer.trim_end_matches('/');
        let (origin, path) = match issuer
            .find("://")
            .and_then(|i| issuer[i + 3..].find('/').map(|j| i + 3 + j))
        {
            Some(split) => (&issuer[..split], &issuer[split..]),
            None => (issuer, ""),
        };
        let candidates = tessera_protocol::authorization_server_metadata_urls(origin, path);
        for url in candidates {
            let Ok(meta) = self.http.get_json(&url).await else {
                continue;
            };
            if meta.get("issuer").and_then(Value::as_str) != Some(self.issuer.as_str()) {
                tracing::warn!(%url, "authorization server metadata names another issuer; ignored");
                continue;
            }
            if let Some(uri) = meta.get("jwks_uri").and_then(Value::as_str) {
                return Ok(uri.to_owned());
            }
        }
        Err(TokenError::Unavailable(format!(
            "no metadata with a jwks_uri found for issuer {}",
            self.issuer
        )))
    }

    /// The key set, fetched when missing or an hour old, or again when `kid`
    /// is unknown; one fetch (or failure) per 30 s at most, whatever the tokens
    /// say ([`refetch_interval`](Self::refetch_interval)). Requests whose key
    /// is known and fresh never wait on a fetch; while the issuer cannot be
    /// reached, keys already trusted stay usable and the fetch is retried
    /// every interval (a failure never counts as a refresh).
    async fn key_for(&self, kid: Option<&str>) -> Result<jsonwebtoken::jwk::Jwk, TokenError> {
        let unknown = || {
            TokenError::Invalid(format!(
                "the token names key {kid:?}, which the issuer does not publish"
            ))
        };
        {
            let keys = self.keys.read().await;
            if keys.fresh()
                && let Some(key) = keys.set.as_ref().and_then(|s| find(s, kid))
            {
                return Ok(key.clone());
            }
        }
        let _turn = self.fetching.lock().await;
        let jwks_uri = {
            let keys = self.keys.read().await;
            // Looked at again in turn: the fetch before ours may have answered.
            let known = keys.set.as_ref().and_then(|s| find(s, kid));
            match known {
                Some(key) if keys.fresh() || keys.tried_within(self.refetch_after) => {
                    return Ok(key.clone());
                }
                None if keys.tried_within(self.refetch_after) && keys.set.is_none() => {
                    return Err(TokenError::Unavailable(
                        "the issuer's keys could not be fetched; retrying shortly".into(),
                    ));
                }
                None if keys.tried_within(self.refetch_after) => return Err(unknown()),
                _ => keys.jwks_uri.clone(),
            }
        };
        self.keys.write().await.tried = Some(Instant::now());
        let fetched = async {
            let uri = match jwks_uri {
                Some(u) => u,
                None => self.jwks_uri().await?,
            };
            let set: JwkSet =
                serde_json::from_value(self.http.get_json(&uri).await.map_err(unavailable)?)
                    .map_err(|e| unavailable(format!("the issuer's key set at {uri}: {e}")))?;
            Ok::<_, TokenError>((uri, set))
        }
        .await;
        let mut keys = self.keys.write().await;
        match fetched {
            Ok((uri, set)) => {
                let key = find(&set, kid).cloned();
                keys.jwks_uri = Some(uri);
                keys.set = Some(set);
                keys.fetched = Some(Instant::now());
                key.ok_or_else(unknown)
            }
            // Keys trusted before stay usable while the issuer is unreachable.
            Err(e) => keys
                .set
                .as_ref()
                .and_then(|s| find(s, kid))
                .cloned()
                .ok_or(e),
        }
    }
}

fn find<'a>(set: &'a JwkSet, kid: Option<&str>) -> Option<&'a jsonwebtoken::jwk::Jwk> {
    match kid {
        Some(kid) => set.find(kid),
        // Without a key id, a set of one key is unambiguous.
        None if set.keys.len() == 1 => set.keys.first(),
        None => None,
    }
}

impl TokenVerifier for JwtVerifier {
    fn verify<'a>(&'a self, token: &'a str) -> BoxFuture<'a, Result<AuthInfo, TokenError>> {
        Box::pin(async move {
            let invalid = |e: jsonwebtoken::errors::Error| TokenError::Invalid(e.to_string());
            let header = jsonwebtoken::decode_header(token).map_err(invalid)?;
            // RFC 9068 §4: "Resource servers MUST verify that the typ header
            // value is at+jwt or application/at+jwt and reject tokens carrying
            // any other value" (an ID token is not an access token).
            let typ = header.typ.as_deref().unwrap_or("");
            if !typ.eq_ignore_ascii_case("at+jwt")
                && !typ.eq_ignore_ascii_case("application/at+jwt")
            {
                return Err(TokenError::Invalid(format!(
                    "the token's typ is {typ:?}; an access token's is \"at+jwt\" (RFC 9068)"
                )));
            }
            if !matches!(
                header.alg,
                Algorithm::RS256 | Algorithm::ES256 | Algorithm::EdDSA
            ) {
                return Err(TokenError::Invalid(format!(
                    "tokens signed with {:?} are not accepted (RS256, ES256 or EdDSA)",
                    header.alg
                )));
            }
            let jwk = self.key_for(header.kid.as_deref()).await?;
            let key = DecodingKey::from_jwk(&jwk).map_err(invalid)?;
            let mut validation = Validation::new(header.alg);
            validation.leeway = LEEWAY_SECS;
            validation.validate_nbf = true;
            validation.set_issuer(&[&self.issuer]);
            validation.set_audience(&[&self.resource]);
            validation.set_required_spec_claims(&["exp", "iss", "aud", "sub"]);
            let claims = jsonwebtoken::decode::<Value>(token, &key, &validation)
                .map_err(invalid)?
                .claims;
            // Belt and braces: the audience must name this resource exactly.
            if !audience_names(&claims, &self.resource) {
                return Err(TokenError::Invalid(format!(
                    "the token is for another resource, not {}",
                    self.resource
                )));
            }
            // Tickets are bound to issuer and subject: a token naming no one is refused.
            let subject = match claims.get("sub").and_then(Value::as_str) {
                Some(sub) if !sub.is_empty() => sub.to_owned(),
                _ => {
                    return Err(TokenError::Invalid(
                        "the token's sub is missing or empty".into(),
                    ));
                }
            };
            Ok(AuthInfo {
                issuer: self.issuer.clone(),
                subject,
                scopes: scopes_of(&claims),
                client_id: claims
                    .get("client_id")
                    .or_else(|| claims.get("azp"))
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                bound_key: bound_key(&claims),
            })
        })
    }
}

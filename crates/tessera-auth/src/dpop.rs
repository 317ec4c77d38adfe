//! DPoP at the resource (RFC 9449 §4.3, §7, §9; the MCP DPoP extension,
//! SEP-1932): a token bound to a key (`cnf.jkt`) is accepted only with a
//! fresh proof of that key for this very request.
//!
//! Proofs are verified with `jsonwebtoken` (the signature, with the public
//! key the proof carries); the thumbprint is its RFC 7638 one; server nonces
//! are HMAC-SHA256 tags (`jsonwebtoken::crypto`) of a time window, so every
//! instance sharing the secret accepts every other's without shared state.
//! Replayed `jti`s are refused through a [`TicketLedger`], the same one
//! that makes tickets single use (memory, Redis, a Durable Object).

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use jsonwebtoken::jwk::{Jwk, ThumbprintHash};
use jsonwebtoken::{Algorithm, DecodingKey, EncodingKey, Validation};
use serde_json::Value;
use tessera_state::{LedgerError, MemoryLedger, TicketLedger};

/// How far a proof's `iat` may be from now: "within ±5 minutes of the
/// server's current time" (the MCP DPoP extension).
const WINDOW_SECS: u64 = 300;
/// Proof ids the default in-memory replay ledger holds (a few tens of MiB at most).
const MEMORY_LEDGER_IDS: usize = 262_144;
/// The longest `jti` taken: longer ones are refused, never recorded.
const MAX_JTI_BYTES: usize = 256;
/// Members of a JWK that belong to a private key (RFC 7517, RFC 7518 §6).
const PRIVATE_MEMBERS: [&str; 8] = ["d", "p", "q", "dp", "dq", "qi", "oth", "k"];

/// How the resource takes DPoP-bound tokens: which proof algorithms, whether
/// bearer tokens are still taken, where replays are recorded, and whether
/// proofs must carry a nonce the server handed out.
///
/// ```
/// use tessera_auth::Dpop;
/// let dpop = Dpop::new().nonces([7u8; 32], std::time::Duration::from_secs(300));
/// ```
pub struct Dpop {
    algorithms: Vec<Algorithm>,
    required: bool,
    ledger: Arc<dyn TicketLedger>,
    nonces: Option<Nonces>,
}

impl Default for Dpop {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for Dpop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Dpop")
            .field("algorithms", &self.algorithms)
            .field("required", &self.required)
            .field("nonces", &self.nonces.is_some())
            .finish_non_exhaustive()
    }
}

/// Server nonces: an HMAC of the current time window.
struct Nonces {
    sign: EncodingKey,
    check: DecodingKey,
    rotation_secs: u64,
}

/// How a deployment takes DPoP-bound tokens: `OAUTH_DPOP` (a Worker's or
/// Lambda's variable) and `--oauth-dpop` say `allowed` or `required`.
///
/// ```
/// use tessera_auth::DpopMode;
/// assert_eq!("required".parse::<DpopMode>(), Ok(DpopMode::Required));
/// assert!("sometimes".parse::<DpopMode>().is_err());
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DpopMode {
    /// Beside bearer tokens.
    Allowed,
    /// Instead of them: bearer tokens are refused.
    Required,
}

impl std::str::FromStr for DpopMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "allowed" => Ok(Self::Allowed),
            "required" => Ok(Self::Required),
            other => Err(format!(
                "{other:?} is no DPoP mode: \"allowed\" (beside bearer tokens) or \"required\""
            )),
        }
    }
}

impl DpopMode {
    /// [`Dpop`] in this mode, recording proof ids in `ledger` (the tickets'
    /// shared one) or, without one, in memory.
    pub fn dpop(self, ledger: Option<Arc<dyn TicketLedger>>) -> Dpop {
        let mut dpop = Dpop::new();
        if self == Self::Required {
            dpop = dpop.required();
        }
        match ledger {
            Some(ledger) => dpop.replay_ledger(ledger),
            None => dpop,
        }
    }
}

/// Why a proof is refused.
#[derive(Debug)]
pub(crate) enum ProofRefusal {
    /// Not a valid proof for this request (`invalid_dpop_proof`).
    Invalid(String),
    /// Valid but for its nonce: the one to use now (`use_dpop_nonce`).
    Nonce(String),
}

/// A checked proof: the key's thumbprint and the proof's id.
pub(crate) struct Proof {
    pub(crate) jkt: String,
    jti: String,
    iat: u64,
}

impl Dpop {
    /// DPoP with proofs in ES256, ES384, RS256, PS256 or EdDSA; bearer
    /// tokens still taken when they are not bound; replays recorded in
    /// memory (one instance: use [`replay_ledger`](Self::replay_ledger)
    /// with a shared ledger behind a load balancer); no server nonces.
    pub fn new() -> Self {
        Self {
            algorithms: vec![
                Algorithm::ES256,
                Algorithm::ES384,
                Algorithm::RS256,
                Algorithm::PS256,
                Algorithm::EdDSA,
            ],
            required: false,
            ledger: Arc::new(MemoryLedger::new(MEMORY_LEDGER_IDS)),
            nonces: None,
        }
    }

    /// Takes DPoP-bound tokens only: a bearer token is refused, and the
    /// metadata says `dpop_bound_access_tokens_required`.
    pub fn required(mut self) -> Self {
        self.required = true;
        self
    }

    /// Records proof ids in `ledger` (e.g. the Redis or Durable Object one
    /// the tickets use), so a proof replayed at any instance is refused.
    pub fn replay_ledger(mut self, ledger: Arc<dyn TicketLedger>) -> Self {
        self.ledger = ledger;
        self
    }

    /// Proofs must carry a nonce this resource handed out (RFC 9449 §9): an
    /// HMAC under `secret` of the current `rotation` window (the one before
    /// is still taken). Instances sharing `secret` accept each other's.
    pub fn nonces(mut self, secret: [u8; 32], rotation: Duration) -> Self {
        // Only an empty secret is refused, and this one is 32 bytes.
        if let (Ok(sign), Ok(check)) = (
            EncodingKey::from_secret(&secret),
            DecodingKey::from_secret(&secret),
        ) {
            self.nonces = Some(Nonces {
                sign,
                check,
                rotation_secs: rotation.as_secs().max(1),
            });
        }
        self
    }

    /// Whether bearer tokens are refused.
    pub(crate) fn is_required(&self) -> bool {
        self.required
    }

    /// The proof algorithms, by name (`algs` in challenges and metadata).
    pub(crate) fn algorithm_names(&self) -> Vec<String> {
        self.algorithms
            .iter()
            .filter_map(|a| serde_json::to_value(a).ok()?.as_str().map(str::to_owned))
            .collect()
    }

    /// The nonce to use now, when the resource asks for nonces.
    pub(crate) fn current_nonce(&self, now: u64) -> Option<String> {
        let nonces = self.nonces.as_ref()?;
        nonces.tag(now / nonces.rotation_secs)
    }

    /// Checks the request's proof (RFC 9449 §4.3) for `method` at one of
    /// `urls` presenting `token`, at time `now`: one `DPoP` header, a
    /// `dpop+jwt` signed with an accepted asymmetric algorithm by the public
    /// key in its header, `htm` the method, `htu` the request's URL (query
    /// and fragment never), `iat` within five minutes, `ath` the token's
    /// hash, and the current nonce when nonces are asked for.
    pub(crate) fn check(
        &self,
        proofs: &[&str],
        method: &str,
        urls: &[String],
        token: &str,
        now: u64,
    ) -> Result<Proof, ProofRefusal> {
        let invalid = |why: &str| Err(ProofRefusal::Invalid(why.to_owned()));
        let proof = match proofs {
            [] => return invalid("the request carries no DPoP proof"),
            [one] if !one.contains(',') => one.trim(),
            _ => return invalid("the request carries more than one DPoP proof"),
        };
        let Ok(header) = jsonwebtoken::decode_header(proof) else {
            return invalid("the DPoP proof is not a JWT");
        };
        if header.typ.as_deref() != Some("dpop+jwt") {
            return invalid("the DPoP proof's typ is not dpop+jwt");
        }
        if !self.algorithms.contains(&header.alg) {
            return invalid("the DPoP proof is signed with an algorithm not accepted here");
        }
        let Some(jwk) = header.jwk else {
            return invalid("the DPoP proof's header carries no jwk");
        };
        if carries_private_key(proof) {
            return invalid("the DPoP proof's jwk holds a private key");
        }
        let claims = verified_claims(proof, &jwk, header.alg)?;
        let text = |name: &str| claims.get(name).and_then(Value::as_str);
        let Some(jti) = text("jti").filter(|j| !j.is_empty() && j.len() <= MAX_JTI_BYTES) else {
            return invalid("the DPoP proof has no jti (or one over 256 bytes)");
        };
        if text("htm") != Some(method) {
            return invalid("the DPoP proof's htm is not the request's method");
        }
        match text("htu") {
            Some(htu) if htu.contains(['?', '#']) => {
                return invalid("the DPoP proof's htu carries a query or fragment");
            }
            Some(htu)
                if normal_uri(htu).is_some_and(|htu| {
                    urls.iter()
                        .any(|url| normal_uri(url).as_ref() == Some(&htu))
                }) => {}
            _ => return invalid("the DPoP proof's htu is not this resource's URL"),
        }
        let Some(iat) = claims.get("iat").and_then(Value::as_u64) else {
            return invalid("the DPoP proof has no iat");
        };
        if iat.abs_diff(now) > WINDOW_SECS {
            return invalid("the DPoP proof's iat is more than five minutes from now");
        }
        let ath = tessera_protocol::dpop_access_token_hash(token);
        if text("ath") != Some(ath.as_str()) {
            return invalid("the DPoP proof's ath is not the hash of the access token");
        }
        if let Some(nonces) = &self.nonces
            && !text("nonce").is_some_and(|n| nonces.accepts(n, now))
        {
            return Err(ProofRefusal::Nonce(
                self.current_nonce(now).unwrap_or_default(),
            ));
        }
        let Ok(jkt) = jwk.thumbprint(ThumbprintHash::SHA256) else {
            return invalid("the DPoP proof's key has no thumbprint");
        };
        Ok(Proof {
            jkt,
            jti: jti.to_owned(),
            iat,
        })
    }

    /// Records the proof's id, kept until no clock could take the proof
    /// again; a replay is refused, and so is a proof the ledger cannot
    /// record (it fails closed).
    pub(crate) async fn record(&self, proof: &Proof) -> Result<(), String> {
        let id = format!("dpop:{}:{}", proof.jkt, proof.jti);
        match self.ledger.consume(&id, proof.iat + WINDOW_SECS + 60).await {
            Ok(()) => Ok(()),
            Err(LedgerError::AlreadyUsed) => Err("the DPoP proof was used before".into()),
            Err(e) => {
                tracing::warn!(error = %e, "DPoP proofs cannot be recorded; refusing them");
                Err("the DPoP proof cannot be checked for replay right now".into())
            }
        }
    }
}

impl Nonces {
    fn message(window: u64) -> String {
        format!("tessera-dpop-nonce.{window}")
    }

    /// The nonce of `window`: `{window}.{tag}`.
    fn tag(&self, window: u64) -> Option<String> {
        let tag = jsonwebtoken::crypto::sign(
            Self::message(window).as_bytes(),
            &self.sign,
            Algorithm::HS256,
        )
        .ok()?;
        Some(format!("{window}.{tag}"))
    }

    /// Whether `nonce` is this window's or the one before's.
    fn accepts(&self, nonce: &str, now: u64) -> bool {
        let current = now / self.rotation_secs;
        let Some((window, tag)) = nonce.split_once('.') else {
            return false;
        };
        let Ok(window) = window.parse::<u64>() else {
            return false;
        };
        (window == current || current.checked_sub(1) == Some(window))
            && jsonwebtoken::crypto::verify(
                tag,
                Self::message(window).as_bytes(),
                &self.check,
                Algorithm::HS256,
            )
            .unwrap_or(false)
    }
}

/// The proof's claims, its signature verified with the key in its header.
fn verified_claims(proof: &str, jwk: &Jwk, alg: Algorithm) -> Result<Value, ProofRefusal> {
    let refused = || ProofRefusal::Invalid("the DPoP proof's signature does not verify".into());
    let key = DecodingKey::from_jwk(jwk).map_err(|_| refused())?;
    let mut validation = Validation::new(alg);
    validation.set_required_spec_claims::<&str>(&[]);
    validation.validate_exp = false;
    validation.validate_aud = false;
    jsonwebtoken::decode::<Value>(proof, &key, &validation)
        .map(|data| data.claims)
        .map_err(|_| refused())
}

/// Whether the `jwk` in the proof's header has members of a private key
/// (the parsed [`Jwk`] drops them, so the header is read as JSON).
fn carries_private_key(proof: &str) -> bool {
    let header = proof.split('.').next().unwrap_or_default();
    let Ok(bytes) = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(header) else {
        return true;
    };
    let Ok(header) = serde_json::from_slice::<Value>(&bytes) else {
        return true;
    };
    header
        .get("jwk")
        .and_then(Value::as_object)
        .is_none_or(|jwk| PRIVATE_MEMBERS.iter().any(|m| jwk.contains_key(*m)))
}

/// The request's URL as a client reaching `resource` signs it: the
/// resource's scheme and authority (as clients know them, whatever proxies
/// did to the `Host`) and `path`.
pub(crate) fn request_url(resource: &str, path: &str) -> Option<String> {
    let uri: http::Uri = resource.parse().ok()?;
    Some(format!(
        "{}://{}{path}",
        uri.scheme_str()?,
        uri.authority()?.as_str()
    ))
}

/// A URL as RFC 9449 §4.3 compares them: scheme and host in lower case, the
/// scheme's default port dropped, an empty path `/`; query and fragment
/// left out.
fn normal_uri(url: &str) -> Option<String> {
    let uri: http::Uri = url.parse().ok()?;
    let scheme = uri.scheme_str()?.to_ascii_lowercase();
    let authority = uri.authority()?;
    let host = authority.host().to_ascii_lowercase();
    let port = match (scheme.as_str(), authority.port_u16()) {
        ("https", Some(443)) | ("http", Some(80)) | (_, None) => String::new(),
        (_, Some(port)) => format!(":{port}"),
    };
    let path = match uri.path() {
        "" => "/",
        path => path,
    };
    Some(format!("{scheme}://{host}{port}{path}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_compare_as_rfc_9449_normalises_them() {
        assert_eq!(
            normal_uri("HTTPS://MCP.Example:443/mcp"),
            normal_uri("https://mcp.example/mcp")
        );
        assert_eq!(normal_uri("http://a:80"), Some("http://a/".into()));
        assert_ne!(
            normal_uri("https://mcp.example:8443/mcp"),
            normal_uri("https://mcp.example/mcp")
        );
        assert_ne!(
            normal_uri("https://mcp.example/other"),
            normal_uri("https://mcp.example/mcp")
        );
        assert_eq!(normal_uri("not a url"), None);
        assert_eq!(
            request_url("https://mcp.example", "/mcp").as_deref(),
            Some("https://mcp.example/mcp")
        );
    }

    #[test]
    fn a_nonce_holds_for_its_window_and_the_next_and_only_under_its_secret() {
        let dpop = Dpop::new().nonces([1; 32], Duration::from_secs(100));
        let other = Dpop::new().nonces([2; 32], Duration::from_secs(100));
        let nonces = dpop.nonces.as_ref().unwrap();
        let nonce = dpop.current_nonce(1_000).unwrap();
        assert!(nonces.accepts(&nonce, 1_050));
        assert!(nonces.accepts(&nonce, 1_150));
        assert!(!nonces.accepts(&nonce, 1_200), "two windows on: stale");
        assert!(!nonces.accepts(&nonce, 900), "a nonce from the future");
        assert!(!other.nonces.as_ref().unwrap().accepts(&nonce, 1_050));
        let (window, tag) = nonce.split_once('.').unwrap();
        let forged = format!("{}.{tag}", window.parse::<u64>().unwrap() + 1);
        assert!(!nonces.accepts(&forged, 1_100));
        assert!(!nonces.accepts("garbage", 1_000));
        // A window at the very end of time is no overflow.
        assert!(!nonces.accepts(&format!("{}.x", u64::MAX), 1_000));
        assert!(!nonces.accepts("0.x", 0));
    }
}

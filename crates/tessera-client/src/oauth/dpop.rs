//! DPoP in the client (RFC 9449, the MCP DPoP extension SEP-1932): one key
//! made for the session, a fresh proof for every request to the token
//! endpoint and to the server, and the nonces each of them asks for.
//!
//! The key is an ECDSA P-256 key (ES256, the algorithm the extension says
//! servers support), made from 32 random bytes by the `p256` crate and signed
//! with through `jsonwebtoken`, the JWT library the rest of the client and
//! `tessera-auth` use: no cryptography of our own.

use std::sync::{Mutex, PoisonError};

use base64::Engine as _;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};

use super::auth_error;
use super::pkce::random_token;
use crate::ClientError;

/// The proof signing algorithm this client uses.
pub(crate) const ALGORITHM: &str = "ES256";

/// The session's proof key, and the nonces servers handed out.
pub(crate) struct DpopKey {
    /// The private key, PKCS#8 DER (kept with tokens bound to it).
    der: Vec<u8>,
    key: EncodingKey,
    jwk: Jwk,
    /// The authorization server's latest `DPoP-Nonce`.
    token_endpoint_nonce: Mutex<Option<String>>,
    /// The MCP server's latest `DPoP-Nonce`.
    server_nonce: Mutex<Option<String>>,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DpopKey").finish_non_exhaustive()
    }
}

/// Where a proof goes: its nonce comes from that server.
#[derive(Clone, Copy)]
pub(crate) enum ProofFor {
    TokenEndpoint,
    Server,
}

impl DpopKey {
    /// A new P-256 key.
    pub(crate) fn generate() -> Result<Self, ClientError> {
        use p256::pkcs8::EncodePrivateKey as _;
        // A random 32-byte string is a valid scalar but for a chance of about
        // 2^-32; another is drawn then.
        let secret = (0..4)
            .find_map(|_| {
                let mut bytes = [0u8; 32];
                getrandom::fill(&mut bytes).ok()?;
                p256::SecretKey::from_slice(&bytes).ok()
            })
            .ok_or_else(|| auth_error("no DPoP key could be made (no randomness)"))?;
        let der = secret
            .to_pkcs8_der()
            .map_err(|e| auth_error(format!("the DPoP key could not be encoded: {e}")))?;
        Self::from_der(der.as_bytes().to_vec())
    }

    /// The key kept with stored tokens: base64 of its PKCS#8 DER.
    pub(crate) fn to_stored(&self) -> String {
        base64::engine::general_purpose::STANDARD.encode(&self.der)
    }

    /// A key [`to_stored`](Self::to_stored) wrote.
    pub(crate) fn from_stored(stored: &str) -> Result<Self, ClientError> {
        use p256::pkcs8::DecodePrivateKey as _;
        let der = base64::engine::general_purpose::STANDARD
            .decode(stored)
            .map_err(|e| auth_error(format!("the stored DPoP key is not base64: {e}")))?;
        // Checked as a P-256 key before it signs anything.
        p256::SecretKey::from_pkcs8_der(&der)
            .map_err(|e| auth_error(format!("the stored DPoP key is not a P-256 key: {e}")))?;
        Self::from_der(der)
    }

    fn from_der(der: Vec<u8>) -> Result<Self, ClientError> {
        let key = EncodingKey::from_ec_der(&der);
        let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)
            .map_err(|e| auth_error(format!("the DPoP key has no public JWK: {e}")))?;
        Ok(Self {
            der,
            key,
            jwk,
            token_endpoint_nonce: Mutex::new(None),
            server_nonce: Mutex::new(None),
        })
    }

    /// The RFC 7638 thumbprint of the public key (what a bound token's `cnf.jkt` names).
    #[cfg(test)]
    pub(crate) fn thumbprint(&self) -> String {
        self.jwk
            .thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
            .unwrap_or_default()
    }

    fn nonce_slot(&self, to: ProofFor) -> &Mutex<Option<String>> {
        match to {
            ProofFor::TokenEndpoint => &self.token_endpoint_nonce,
            ProofFor::Server => &self.server_nonce,
        }
    }

    /// Keeps the nonce `to`'s server sent (`DPoP-Nonce`); whether it is new.
    pub(crate) fn remember_nonce(&self, to: ProofFor, nonce: &str) -> bool {
        let mut slot = self
            .nonce_slot(to)
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        let new = slot.as_deref() != Some(nonce);
        *slot = Some(nonce.to_owned());
        new
    }

    /// A proof for one request: `htm` the method, `htu` the URL without its
    /// query and fragment, a new `jti`, `iat` now, `ath` the hash of the
    /// access token presented with it, and the server's latest nonce.
    pub(crate) fn proof(
        &self,
        to: ProofFor,
        method: &str,
        url: &str,
        access_token: Option<&str>,
    ) -> Result<String, ClientError> {
        let htu = url.split(['?', '#']).next().unwrap_or(url);
        let mut claims = serde_json::json!({
            "jti": random_token(16)?,
            "htm": method,
            "htu": htu,
            "iat": tessera_protocol::clock::unix_seconds(),
        });
        if let Some(token) = access_token {
            claims["ath"] = tessera_protocol::dpop_access_token_hash(token).into();
        }
        if let Some(nonce) = self
            .nonce_slot(to)
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
        {
            claims["nonce"] = nonce.into();
        }
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(self.jwk.clone());
        jsonwebtoken::encode(&header, &claims, &self.key)
            .map_err(|e| auth_error(format!("a DPoP proof could not be signed: {e}")))
    }
}

/// The access token a request presents: as a bearer token, or bound to the
/// session's key and presented with a proof (`Authorization: DPoP`).
#[derive(Clone)]
pub(crate) struct AccessToken {
    pub(crate) token: String,
    pub(crate) dpop: Option<std::sync::Arc<DpopKey>>,
}

impl std::fmt::Debug for AccessToken {
    /// The token is a credential: never printed.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccessToken")
            .field("bound", &self.dpop.is_some())
            .finish_non_exhaustive()
    }
}

impl AccessToken {
    /// `request` (to `url` with `method`) carrying this token, and a proof when bound.
    pub(crate) fn present(
        &self,
        request: reqwest::RequestBuilder,
        method: &str,
        url: &str,
    ) -> reqwest::RequestBuilder {
        let Some(key) = &self.dpop else {
            return request.bearer_auth(&self.token);
        };
        match key.proof(ProofFor::Server, method, url, Some(&self.token)) {
            Ok(proof) => request
                .header("Authorization", format!("DPoP {}", self.token))
                .header("DPoP", proof),
            // Never sent as a bearer token: without its proof the server says why.
            Err(e) => {
                tracing::warn!(error = %e, "no DPoP proof for the request");
                request.header("Authorization", format!("DPoP {}", self.token))
            }
        }
    }

    /// Notes a `DPoP-Nonce` the server sent on `response`; whether the
    /// request should be sent again with it: a `use_dpop_nonce` refusal
    /// (RFC 9449 §9) naming a nonce not tried yet.
    pub(crate) fn note_nonce(&self, response: &reqwest::Response) -> bool {
        let (Some(key), Some(nonce)) = (
            &self.dpop,
            response
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok()),
        ) else {
            return false;
        };
        let new = key.remember_nonce(ProofFor::Server, nonce);
        new && response.status() == reqwest::StatusCode::UNAUTHORIZED
            && response
                .headers()
                .get_all("www-authenticate")
                .iter()
                .filter_map(|v| v.to_str().ok())
                .filter_map(|v| tessera_protocol::BearerChallenge::parse_scheme(v, "DPoP"))
                .any(|c| c.error.as_deref() == Some("use_dpop_nonce"))
    }
}

#[cfg(test)]
mod tests {
    use sha2::Digest as _;

    use super::*;

    /// RFC 9449 §4.2: `typ` is `dpop+jwt`, the header carries the public key
    /// (no private part), the claims `jti`, `htm`, `htu` (no query or
    /// fragment), `iat`, and `ath` when a token is presented; each proof's
    /// `jti` is new. The proof verifies with the key in its own header.
    #[test]
    fn a_proof_names_the_request_and_verifies_with_its_key() {
        let key = DpopKey::generate().unwrap();
        let proof = key
            .proof(
                ProofFor::Server,
                "POST",
                "https://mcp.example/mcp?x=1#f",
                Some("tok"),
            )
            .unwrap();
        let header = jsonwebtoken::decode_header(&proof).unwrap();
        assert_eq!(header.typ.as_deref(), Some("dpop+jwt"));
        let jwk = header.jwk.unwrap();
        let public = serde_json::to_value(&jwk).unwrap();
        assert!(public.get("d").is_none(), "{public}");
        let mut validation = jsonwebtoken::Validation::new(Algorithm::ES256);
        validation.set_required_spec_claims::<&str>(&[]);
        validation.validate_exp = false;
        let claims = jsonwebtoken::decode::<serde_json::Value>(
            &proof,
            &jsonwebtoken::DecodingKey::from_jwk(&jwk).unwrap(),
            &validation,
        )
        .unwrap()
        .claims;
        assert_eq!(claims["htm"], "POST");
        assert_eq!(claims["htu"], "https://mcp.example/mcp");
        assert_eq!(
            claims["ath"],
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(sha2::Sha256::digest(b"tok"))
        );
        // Kept and read back, it is the same key.
        let kept = DpopKey::from_stored(&key.to_stored()).unwrap();
        assert_eq!(kept.thumbprint(), key.thumbprint());
        assert!(DpopKey::from_stored("bm90IGEga2V5").is_err());
        assert!(claims.get("nonce").is_none());
        assert_eq!(
            jwk.thumbprint(jsonwebtoken::jwk::ThumbprintHash::SHA256)
                .unwrap(),
            key.thumbprint()
        );
        let again = key
            .proof(ProofFor::Server, "POST", "https://mcp.example/mcp", None)
            .unwrap();
        let jti = |p: &str| {
            jsonwebtoken::dangerous::insecure_decode::<serde_json::Value>(p)
                .unwrap()
                .claims["jti"]
                .clone()
        };
        assert_ne!(jti(&proof), jti(&again));
        // A nonce the server sent goes into the next proof to that server only.
        assert!(key.remember_nonce(ProofFor::Server, "n1"));
        assert!(!key.remember_nonce(ProofFor::Server, "n1"));
        let with_nonce = key
            .proof(ProofFor::Server, "GET", "https://mcp.example/mcp", None)
            .unwrap();
        let to_as = key
            .proof(
                ProofFor::TokenEndpoint,
                "POST",
                "https://as.example/token",
                None,
            )
            .unwrap();
        let claims = |p: &str| {
            jsonwebtoken::dangerous::insecure_decode::<serde_json::Value>(p)
                .unwrap()
                .claims
        };
        assert_eq!(claims(&with_nonce)["nonce"], "n1");
        assert!(claims(&to_as).get("nonce").is_none());
    }
}

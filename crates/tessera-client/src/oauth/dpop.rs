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
use sha2::Digest as _;

use super::pkce::random_token;
use crate::ClientError;

/// The proof signing algorithm this client uses.
pub(crate) const ALGORITHM: &str = "ES256";

/// The session's proof key, and the nonces servers handed out.
pub(crate) struct DpopKey {
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

fn auth_error(message: impl Into<String>) -> ClientError {
    ClientError::Auth(message.into())
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
        let key = EncodingKey::from_ec_der(der.as_bytes());
        let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256)
            .map_err(|e| auth_error(format!("the DPoP key has no public JWK: {e}")))?;
        Ok(Self {
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
        let iat = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or_default();
        let mut claims = serde_json::json!({
            "jti": random_token(16)?,
            "htm": method,
            "htu": htu,
            "iat": iat,
        });
        if let Some(token) = access_token {
            claims["ath"] = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(sha2::Sha256::digest(token.as_bytes()))
                .into();
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
#[derive(Clone, Debug)]
pub(crate) struct AccessToken {
    pub(crate) token: String,
    pub(crate) dpop: Option<std::sync::Arc<DpopKey>>,
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

    /// Notes a `DPoP-Nonce` the server sent on `response`; whether it is new.
    pub(crate) fn note_nonce(&self, response: &reqwest::Response) -> bool {
        match (
            &self.dpop,
            response
                .headers()
                .get("dpop-nonce")
                .and_then(|v| v.to_str().ok()),
        ) {
            (Some(key), Some(nonce)) => key.remember_nonce(ProofFor::Server, nonce),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
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

//! PKCE (RFC 7636) with S256, and the random values of an authorization request.

use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};

use crate::ClientError;

/// `n` random bytes, base64url without padding.
pub(crate) fn random_token(n: usize) -> Result<String, ClientError> {
    let mut bytes = vec![0u8; n];
    getrandom::fill(&mut bytes)
        .map_err(|e| ClientError::Auth(format!("no randomness for OAuth: {e}")))?;
    Ok(URL_SAFE_NO_PAD.encode(bytes))
}

/// A code verifier and its S256 challenge.
pub(crate) struct Pkce {
    pub(crate) verifier: String,
    pub(crate) challenge: String,
}

impl Pkce {
    /// A fresh pair: 32 random bytes (43 characters) of verifier.
    pub(crate) fn new() -> Result<Self, ClientError> {
        let verifier = random_token(32)?;
        let challenge = challenge_of(&verifier);
        Ok(Self {
            verifier,
            challenge,
        })
    }
}

/// `BASE64URL(SHA256(verifier))`.
pub(crate) fn challenge_of(verifier: &str) -> String {
    URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()))
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_rfc_7636_example() {
        assert_eq!(
            super::challenge_of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk"),
            "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
        );
    }
}

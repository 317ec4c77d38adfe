//! The client's own key for `private_key_jwt` (RFC 7523 §2.2): read from a
//! PEM (PKCS#8, EC P-256 or RSA) or a JWK (an EC P-256 private key), and the
//! client assertions it signs.
//!
//! Keys are read and signed with by `jsonwebtoken` and `p256` (a JWK's `d`
//! becomes a PKCS#8 key there); no cryptography of our own.

use base64::Engine as _;
use jsonwebtoken::jwk::{AlgorithmParameters, Jwk};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::Value;

use super::auth_error;
use super::pkce::random_token;
use crate::ClientError;

/// The signing key and its algorithm: ES256 for EC P-256, RS256 for RSA.
fn signing_key(text: &str) -> Result<(EncodingKey, Algorithm), ClientError> {
    let text = text.trim();
    if text.starts_with('{') {
        return jwk_key(text).map(|key| (key, Algorithm::ES256));
    }
    if let Ok(key) = EncodingKey::from_ec_pem(text.as_bytes()) {
        return Ok((key, Algorithm::ES256));
    }
    EncodingKey::from_rsa_pem(text.as_bytes())
        .map(|key| (key, Algorithm::RS256))
        .map_err(|e| {
            auth_error(format!(
                "the client's private key is neither an EC P-256 nor an RSA key in PEM, nor an EC P-256 JWK: {e}"
            ))
        })
}

/// An EC P-256 private JWK (`kty` EC, `crv` P-256, `d`, and `x`/`y`, which
/// must be its public key).
fn jwk_key(text: &str) -> Result<EncodingKey, ClientError> {
    use p256::pkcs8::EncodePrivateKey as _;
    let jwk: Value = serde_json::from_str(text)
        .map_err(|e| auth_error(format!("the client's JWK is not JSON: {e}")))?;
    let field = |name: &str| jwk.get(name).and_then(Value::as_str).unwrap_or_default();
    if field("kty") != "EC" || field("crv") != "P-256" {
        return Err(auth_error(
            "the client's JWK is not an EC P-256 key (RSA keys are read from PEM)",
        ));
    }
    if field("d").is_empty() {
        return Err(auth_error("the client's JWK has no private part (d)"));
    }
    let d = base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(field("d"))
        .map_err(|_| auth_error("the client's JWK's d is not base64url"))?;
    let secret = p256::SecretKey::from_slice(&d)
        .map_err(|_| auth_error("the client's JWK's d is not a P-256 private key"))?;
    let der = secret
        .to_pkcs8_der()
        .map_err(|e| auth_error(format!("the client's JWK could not be encoded: {e}")))?;
    let key = EncodingKey::from_ec_der(der.as_bytes());
    // The public half it states must be the private key's own.
    let public = Jwk::from_encoding_key(&key, Algorithm::ES256)
        .map_err(|e| auth_error(format!("the client's JWK has no public key: {e}")))?;
    match public.algorithm {
        AlgorithmParameters::EllipticCurve(p) if p.x == field("x") && p.y == field("y") => Ok(key),
        _ => Err(auth_error(
            "the client's JWK's x and y are not the public key of its d",
        )),
    }
}

/// An RFC 7523 client assertion: `iss` and `sub` the client id, `aud` the
/// authorization server, valid for 5 minutes, a random `jti`; signed with
/// the client's key (`key_text`, PEM or JWK).
pub(crate) fn client_assertion(
    key_text: &str,
    client_id: &str,
    audience: &str,
) -> Result<String, ClientError> {
    let (key, algorithm) = signing_key(key_text)?;
    let now = tessera_protocol::clock::unix_seconds();
    let claims = serde_json::json!({
        "iss": client_id,
        "sub": client_id,
        "aud": audience,
        "iat": now,
        "exp": now + 300,
        "jti": random_token(16)?,
    });
    jsonwebtoken::encode(&Header::new(algorithm), &claims, &key)
        .map_err(|e| auth_error(format!("the client assertion could not be signed: {e}")))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A P-256 key made for this test alone, in PEM and as a JWK.
    const KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQghruWJcwEALI4NzNI\nLbOo64QTpjpvfSj+5j0lpBhFF7KhRANCAAQ8MURMDRsi/Z4CzYZXS4RN2YMmH2Pm\ncqrQe3sJZRoIpuD1Uu1/Ji+J5/QY3mAEBVyljJY1/5FCnhw/ukl46uXG\n-----END PRIVATE KEY-----\n";
    const JWK: &str = r#"{"kty":"EC","crv":"P-256","d":"hruWJcwEALI4NzNILbOo64QTpjpvfSj-5j0lpBhFF7I","x":"PDFETA0bIv2eAs2GV0uETdmDJh9j5nKq0Ht7CWUaCKY","y":"4PVS7X8mL4nn9BjeYAQFXKWMljX_kUKeHD-6SXjq5cY"}"#;
    const PUBLIC: &str = "-----BEGIN PUBLIC KEY-----\nMFkwEwYHKoZIzj0CAQYIKoZIzj0DAQcDQgAEPDFETA0bIv2eAs2GV0uETdmDJh9j\n5nKq0Ht7CWUaCKbg9VLtfyYvief0GN5gBAVcpYyWNf+RQp4cP7pJeOrlxg==\n-----END PUBLIC KEY-----\n";

    /// RFC 7523 §3: `iss` and `sub` the client id, `aud` the authorization
    /// server, an expiry, and a `jti`; signed with the client's key, read
    /// from a PEM or a JWK alike.
    #[test]
    fn a_client_assertion_is_signed_with_the_clients_key_and_says_who_it_is() {
        for key in [KEY, JWK] {
            let jwt = client_assertion(key, "machine-1", "https://as.example").unwrap();
            let header = jsonwebtoken::decode_header(&jwt).unwrap();
            assert_eq!(header.alg, Algorithm::ES256);
            let mut validation = jsonwebtoken::Validation::new(Algorithm::ES256);
            validation.set_audience(&["https://as.example"]);
            validation.set_issuer(&["machine-1"]);
            let public = jsonwebtoken::DecodingKey::from_ec_pem(PUBLIC.as_bytes()).unwrap();
            let claims = jsonwebtoken::decode::<Value>(&jwt, &public, &validation)
                .unwrap()
                .claims;
            assert_eq!(claims["sub"], "machine-1");
            assert!(claims["jti"].as_str().is_some_and(|j| j.len() >= 16));
        }
        assert!(client_assertion("not a key", "machine-1", "https://as.example").is_err());
    }

    #[test]
    fn a_jwk_must_be_a_whole_p256_private_key() {
        let refused = |jwk: &str| client_assertion(jwk, "c", "https://as.example").unwrap_err();
        let public_only = JWK.replace(r#""d":"hruWJcwEALI4NzNILbOo64QTpjpvfSj-5j0lpBhFF7I","#, "");
        assert!(
            refused(&public_only)
                .to_string()
                .contains("no private part")
        );
        let other_public = JWK.replace("PDFETA0b", "QDFETA0b");
        assert!(
            refused(&other_public)
                .to_string()
                .contains("not the public key")
        );
        let rsa = r#"{"kty":"RSA","n":"x","e":"AQAB","d":"y"}"#;
        assert!(refused(rsa).to_string().contains("read from PEM"));
        assert!(refused("{not json").to_string().contains("not JSON"));
    }
}

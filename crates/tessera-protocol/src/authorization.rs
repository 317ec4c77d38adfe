//! Where an authorization server's metadata is looked for, and the hash a
//! DPoP proof carries of its access token: the rules the resource server and
//! the client share.

/// The well-known URLs of the metadata of the authorization server whose
/// issuer is `origin` + `path`, in the order the authorization spec gives
/// ("Authorization Server Metadata Discovery"): for an issuer with a path,
/// OAuth 2.0 Authorization Server Metadata with path insertion, OpenID
/// Connect Discovery with path insertion, then with the path appended;
/// without a path, the two well-known documents at the origin.
///
/// ```
/// use tessera_protocol::authorization_server_metadata_urls as urls;
///
/// assert_eq!(urls("https://auth.example", ""), [
///     "https://auth.example/.well-known/oauth-authorization-server",
///     "https://auth.example/.well-known/openid-configuration",
/// ]);
/// assert_eq!(urls("https://auth.example", "/tenant1/"), [
///     "https://auth.example/.well-known/oauth-authorization-server/tenant1",
///     "https://auth.example/.well-known/openid-configuration/tenant1",
///     "https://auth.example/tenant1/.well-known/openid-configuration",
/// ]);
/// ```
pub fn authorization_server_metadata_urls(origin: &str, path: &str) -> Vec<String> {
    let origin = origin.trim_end_matches('/');
    let path = path.trim_end_matches('/');
    if path.is_empty() {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server"),
            format!("{origin}/.well-known/openid-configuration"),
        ]
    } else {
        vec![
            format!("{origin}/.well-known/oauth-authorization-server{path}"),
            format!("{origin}/.well-known/openid-configuration{path}"),
            format!("{origin}{path}/.well-known/openid-configuration"),
        ]
    }
}

/// A DPoP proof's `ath` for `access_token` (RFC 9449 §4.2): the base64url
/// (unpadded) SHA-256 of its ASCII bytes.
///
/// ```
/// // The access token and `ath` of RFC 9449 §7.1's example.
/// assert_eq!(
///     tessera_protocol::dpop_access_token_hash("Kz~8mXK1EalYznwH-LC-1fBAo.4Ljp~zsPE_NeO.gxU"),
///     "fUHyO2r2Z3DZ53EsNrWBb0xWXoaNy59IiKCAqksmQEo"
/// );
/// ```
pub fn dpop_access_token_hash(access_token: &str) -> String {
    use base64::Engine as _;
    use sha2::Digest as _;
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .encode(sha2::Sha256::digest(access_token.as_bytes()))
}

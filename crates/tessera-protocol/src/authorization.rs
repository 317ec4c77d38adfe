//! Where an authorization server's metadata is looked for: the one rule
//! the resource server (to find the JWKS) and the client (to sign in) share.

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

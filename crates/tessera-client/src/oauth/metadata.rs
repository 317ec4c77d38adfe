//! Finding who protects a server: its Protected Resource Metadata (RFC 9728)
//! and its authorization server's metadata (RFC 8414, OpenID Discovery), in
//! the order the 2026-07-28 authorization spec gives.

use serde::Deserialize;
use serde_json::Value;

use super::auth_error;
use crate::ClientError;

/// RFC 9728 Protected Resource Metadata (the fields a client uses).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct ProtectedResource {
    /// The resource identifier; sent byte for byte as `resource`.
    pub(crate) resource: String,
    /// Authorization servers, issuer identifiers.
    #[serde(default)]
    pub(crate) authorization_servers: Vec<String>,
    /// Scopes the resource knows.
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
    /// The algorithms the resource takes DPoP proofs in (RFC 9728 §2): it takes DPoP.
    #[serde(default)]
    pub(crate) dpop_signing_alg_values_supported: Option<Vec<String>>,
    /// Whether the resource takes only DPoP-bound tokens (RFC 9728 §2).
    #[serde(default)]
    pub(crate) dpop_bound_access_tokens_required: bool,
}

/// RFC 8414 authorization server metadata (the fields a client uses).
#[derive(Debug, Clone, Deserialize)]
pub(crate) struct AuthorizationServer {
    pub(crate) issuer: String,
    pub(crate) authorization_endpoint: String,
    pub(crate) token_endpoint: String,
    #[serde(default)]
    pub(crate) registration_endpoint: Option<String>,
    #[serde(default)]
    pub(crate) scopes_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) token_endpoint_auth_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) code_challenge_methods_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) grant_types_supported: Option<Vec<String>>,
    #[serde(default)]
    pub(crate) client_id_metadata_document_supported: bool,
    #[serde(default)]
    pub(crate) authorization_response_iss_parameter_supported: bool,
    /// The algorithms it takes DPoP proofs in (RFC 9449 §5.1): it offers DPoP.
    #[serde(default)]
    pub(crate) dpop_signing_alg_values_supported: Option<Vec<String>>,
}

/// Refuses an OAuth URL that is neither `https` nor `http` to a loopback
/// address: no other scheme reaches a browser or a request.
pub(crate) fn check_url(url: &str) -> Result<(), ClientError> {
    let parsed =
        reqwest::Url::parse(url).map_err(|e| auth_error(format!("{url:?} is not a URL: {e}")))?;
    let loopback = matches!(
        parsed.host(),
        Some(url::Host::Domain("localhost"))
            | Some(url::Host::Ipv4(std::net::Ipv4Addr::LOCALHOST))
            | Some(url::Host::Ipv6(std::net::Ipv6Addr::LOCALHOST))
    );
    match parsed.scheme() {
        "https" => Ok(()),
        "http" if loopback => Ok(()),
        _ => Err(auth_error(format!(
            "{url:?} is not an https URL (plain http is only for loopback addresses); refusing it"
        ))),
    }
}

/// GETs `url` as JSON; `Ok(None)` on a 4xx (not there), an error otherwise.
async fn get_json(http: &reqwest::Client, url: &str) -> Result<Option<Value>, ClientError> {
    check_url(url)?;
    let response = http
        .get(url)
        .header("Accept", "application/json")
        .header(
            "MCP-Protocol-Version",
            tessera_protocol::LATEST_PROTOCOL_VERSION,
        )
        .send()
        .await
        .map_err(ClientError::Transport)?;
    if response.status().is_client_error() {
        return Ok(None);
    }
    if !response.status().is_success() {
        return Err(auth_error(format!(
            "{url} answered HTTP {}",
            response.status()
        )));
    }
    response
        .json()
        .await
        .map(Some)
        .map_err(|e| auth_error(format!("{url} is not JSON metadata: {e}")))
}

/// The server's Protected Resource Metadata: at `hinted` (the challenge's
/// `resource_metadata`) when given on the server's own origin, else at the
/// path-suffixed well-known URI, then the root one. A hint on another origin
/// (or one that is not an absolute URL) is not fetched: the server's own
/// challenge would otherwise pick a first request to any address, an internal
/// one included, before anyone was asked; the metadata must name this
/// server's origin anyway. (The authorization server it names is fetched
/// next, as the authorization spec requires.) The `resource` must name this server:
/// the same origin, a path that is a prefix of the server's (else it is
/// refused, never used).
pub(crate) async fn protected_resource(
    http: &reqwest::Client,
    server: &reqwest::Url,
    hinted: Option<&str>,
) -> Result<ProtectedResource, ClientError> {
    let origin = server.origin().ascii_serialization();
    let same_origin =
        |url: &str| reqwest::Url::parse(url).is_ok_and(|u| u.origin() == server.origin());
    let ignored = hinted.filter(|url| !same_origin(url));
    if let Some(url) = ignored {
        tracing::warn!(hint = %url, "the server's resource_metadata is on another origin: not fetched; looking on the server's own origin");
    }
    let candidates: Vec<String> = match hinted.filter(|url| same_origin(url)) {
        Some(url) => vec![url.to_owned()],
        None => {
            let path = server.path().trim_end_matches('/');
            let mut c = Vec::new();
            if !path.is_empty() {
                c.push(format!(
                    "{origin}/.well-known/oauth-protected-resource{path}"
                ));
            }
            c.push(format!("{origin}/.well-known/oauth-protected-resource"));
            c
        }
    };
    for url in &candidates {
        let Some(doc) = get_json(http, url).await? else {
            continue;
        };
        let prm: ProtectedResource = serde_json::from_value(doc)
            .map_err(|e| auth_error(format!("{url}: invalid protected resource metadata: {e}")))?;
        check_resource(&prm.resource, server)?;
        if prm.authorization_servers.is_empty() {
            return Err(auth_error(format!("{url} names no authorization server")));
        }
        return Ok(prm);
    }
    let not_fetched = ignored
        .map(|url| {
            format!(
                "; its resource_metadata {url:?} is not on the server's origin and was not fetched"
            )
        })
        .unwrap_or_default();
    Err(auth_error(format!(
        "the server asks for authorization but publishes no protected resource metadata (tried {}){not_fetched}",
        candidates.join(", ")
    )))
}

/// Refuses metadata for another resource (RFC 9728 §3.3): a token obtained
/// for it must never be sent here, nor this server's token there.
fn check_resource(resource: &str, server: &reqwest::Url) -> Result<(), ClientError> {
    let refused = || {
        auth_error(format!(
            "the protected resource metadata is for {resource:?}, not this server ({server}); refusing to authorize"
        ))
    };
    let parsed = reqwest::Url::parse(resource).map_err(|_| refused())?;
    if parsed.origin() != server.origin() {
        return Err(refused());
    }
    let prefix = parsed.path().trim_end_matches('/');
    let path = server.path();
    if !(path == prefix || path.starts_with(&format!("{prefix}/")) || prefix.is_empty()) {
        return Err(refused());
    }
    Ok(())
}

/// The metadata of the authorization server `issuer`, from the well-known
/// URIs in the spec's order (RFC 8414 then OpenID, path-inserted for an issuer
/// with a path). A document whose `issuer` is not exactly `issuer` is skipped.
pub(crate) async fn authorization_server(
    http: &reqwest::Client,
    issuer: &str,
) -> Result<AuthorizationServer, ClientError> {
    let parsed = reqwest::Url::parse(issuer)
        .map_err(|e| auth_error(format!("authorization server {issuer:?} is not a URL: {e}")))?;
    let origin = parsed.origin().ascii_serialization();
    let path = parsed.path().trim_end_matches('/');
    let candidates = tessera_protocol::authorization_server_metadata_urls(&origin, path);
    let mut mismatched = None;
    for url in &candidates {
        let Some(doc) = get_json(http, url).await? else {
            continue;
        };
        let meta: AuthorizationServer = serde_json::from_value(doc).map_err(|e| {
            auth_error(format!("{url}: invalid authorization server metadata: {e}"))
        })?;
        // RFC 8414 §3.3: the issuer must be exactly the one asked for, or the document is not trusted.
        if meta.issuer != issuer {
            mismatched = Some(meta.issuer);
            continue;
        }
        // The spec: no advertised S256, no authorization (PKCE cannot be assumed).
        if !meta
            .code_challenge_methods_supported
            .as_ref()
            .is_some_and(|m| m.iter().any(|m| m == "S256"))
        {
            return Err(auth_error(format!(
                "authorization server {issuer} does not advertise PKCE S256 (code_challenge_methods_supported); refusing to authorize"
            )));
        }
        for endpoint in [&meta.authorization_endpoint, &meta.token_endpoint]
            .into_iter()
            .chain(meta.registration_endpoint.as_ref())
        {
            check_url(endpoint)?;
        }
        return Ok(meta);
    }
    Err(auth_error(match mismatched {
        Some(other) => format!(
            "the metadata found for authorization server {issuer} names issuer {other:?}; refusing it"
        ),
        None => format!(
            "authorization server {issuer} publishes no metadata (tried {})",
            candidates.join(", ")
        ),
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_resource_must_name_this_server() {
        let server = reqwest::Url::parse("http://localhost:3000/mcp").unwrap();
        assert!(check_resource("http://localhost:3000/mcp", &server).is_ok());
        assert!(check_resource("http://localhost:3000", &server).is_ok());
        assert!(check_resource("http://localhost:3000/", &server).is_ok());
        assert!(check_resource("https://evil.example.com/mcp", &server).is_err());
        assert!(check_resource("http://localhost:3001/mcp", &server).is_err());
        assert!(check_resource("http://localhost:3000/other", &server).is_err());
        assert!(check_resource("http://localhost:3000/mc", &server).is_err());
    }

    #[test]
    fn only_https_or_loopback_http() {
        assert!(check_url("https://as.example.com/authorize").is_ok());
        assert!(check_url("http://localhost:9/x").is_ok());
        assert!(check_url("http://127.0.0.1:9/x").is_ok());
        assert!(check_url("http://[::1]:9/x").is_ok());
        assert!(check_url("http://as.example.com/authorize").is_err());
        assert!(check_url("http://169.254.169.254/latest").is_err());
        assert!(check_url("file:///etc/passwd").is_err());
        assert!(check_url("javascript:alert(1)").is_err());
    }
}

//! `--oauth-issuer`: the endpoint as an OAuth 2.1 protected resource.

use std::sync::Arc;

use tessera_http::EndpointOptions;

use crate::ServeArgs;

/// `options` protected as `args` say, once the endpoint listens at `local`
/// on `path`: JWT access tokens of `--oauth-issuer` for `--oauth-resource`
/// (default `http://LOCAL/PATH`), the metadata document, the scopes
/// supported, and DPoP as `--oauth-dpop` says (its proofs recorded in
/// `ledger`, the tickets' shared one, when there is one).
pub(crate) fn protect(
    args: &ServeArgs,
    local: std::net::SocketAddr,
    path: &str,
    ledger: Option<Arc<dyn tessera_state::TicketLedger>>,
    options: EndpointOptions,
) -> EndpointOptions {
    let Some(issuer) = &args.oauth_issuer else {
        return options;
    };
    let resource = args
        .oauth_resource
        .clone()
        .unwrap_or_else(|| format!("http://{local}{path}"));
    // The same protection as OAUTH_* variables give (Workers, Lambda).
    tessera_auth::OAuthVars {
        issuer_and_resource: Some((issuer.clone(), resource)),
        scopes: args.oauth_scopes(),
        dpop: args.oauth_dpop,
    }
    .protect(
        options,
        Arc::new(tessera_auth::ReqwestFetch::default()),
        ledger,
    )
}

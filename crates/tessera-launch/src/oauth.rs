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
    let verifier = Arc::new(tessera_auth::JwtVerifier::new(
        issuer.clone(),
        resource.clone(),
    ));
    tracing::info!(%issuer, %resource, "OAuth: accepting access tokens of this issuer for this resource");
    let mut protected = tessera_auth::OAuthResource::new(resource, issuer.clone(), verifier)
        .scopes_supported(args.oauth_scopes());
    if let Some(mode) = args.oauth_dpop {
        tracing::info!(?mode, "OAuth: taking DPoP-bound access tokens");
        protected = protected.dpop(mode.dpop(ledger));
    }
    protected.protect(options)
}

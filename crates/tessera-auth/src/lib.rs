//! An OAuth 2.1 protected resource (2026-07-28 `basic/authorization`) for Tessera servers.
//!
//! [`OAuthResource`] is the endpoint's authentication hook: it reads the
//! bearer token, verifies it ([`JwtVerifier`] against the issuer's JWKS,
//! found through RFC 8414 / OpenID discovery, cached and refreshed on an
//! unknown `kid`; or [`Introspection`], RFC 7662, for opaque tokens), checks
//! `iss`, `aud` (this server's canonical resource URI, RFC 8707), `exp` and
//! `nbf`, and makes the verified issuer and subject the principal every ticket
//! is bound to. Tokens for another resource are refused, never passed on.
//! Its [`OAuthResource::metadata`] is the RFC 9728 document the endpoint
//! publishes; every 401 names it.
//!
//! The verifiers need no async runtime: they reach the authorization server
//! through [`HttpFetch`] ([`ReqwestFetch`] natively, feature `reqwest`, on
//! by default; `tessera-worker` has one on the Workers fetch API), so the
//! same verification runs on Cloudflare Workers.
//!
//! ```no_run
//! # fn run(server: tessera_server::McpServer) {
//! use std::sync::Arc;
//! use tessera_auth::{JwtVerifier, OAuthResource};
//! use tessera_http::{EndpointOptions, McpEndpoint};
//!
//! let resource = OAuthResource::new(
//!     "http://127.0.0.1:8787/mcp",
//!     "https://auth.example.com",
//!     Arc::new(JwtVerifier::new("https://auth.example.com", "http://127.0.0.1:8787/mcp")),
//! )
//! .scopes_supported(["counter:write"]);
//! let options = EndpointOptions::default()
//!     .protected_resource(resource.metadata())
//!     .authenticate(resource);
//! let endpoint = McpEndpoint::new(Arc::new(server), options);
//! # }
//! ```

mod claims;
mod dpop;
mod fetch;
mod introspection;
mod jwt;
mod resource;
mod vars;

pub use claims::{TokenError, TokenVerifier};
pub use dpop::{Dpop, DpopMode};
pub use fetch::HttpFetch;
#[cfg(feature = "reqwest")]
pub use fetch::ReqwestFetch;
pub use introspection::Introspection;
pub use jwt::JwtVerifier;
pub use resource::OAuthResource;
pub use vars::OAuthVars;

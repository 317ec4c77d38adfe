//! The Streamable HTTP face of a stateless MCP server.
//!
//! [`McpEndpoint`] runs the check ladder of the 2026-07-28 transport on
//! runtime-neutral `http` types (request head and body bytes in, response
//! out) and frames the answer as JSON or, when the handler streams progress
//! or log notifications, as `text/event-stream`. It implements
//! `tower_service::Service`, so it mounts in axum with `Router::route_service`.
//! With the `server` feature, [`serve`] runs it on hyper with `TCP_NODELAY`
//! and graceful shutdown.
//!
//! ```no_run
//! # async fn run(server: tessera_server::McpServer) -> std::io::Result<()> {
//! use std::sync::Arc;
//! use tessera_http::{EndpointOptions, Legacy, McpEndpoint};
//!
//! let endpoint = McpEndpoint::new(Arc::new(server), EndpointOptions::default().legacy(Legacy::Reject));
//! let listener = tokio::net::TcpListener::bind("127.0.0.1:8787").await?;
//! tessera_http::serve(listener, endpoint, tessera_http::shutdown_signal()).await
//! # }
//! ```

mod access_log;
mod auth;
mod body;
mod body_limits;
#[cfg_attr(not(feature = "server"), allow(dead_code))]
mod connections;
mod deadline;
mod endpoint;
mod headers;
mod host;
mod in_flight;
mod legacy;
mod listen_streams;
mod options;
mod reject;
#[cfg(feature = "server")]
mod serve;
mod service;
mod stream;
mod trusted_proxies;
mod vars;
#[cfg(feature = "server")]
mod write_deadline;

pub use access_log::{AccessLog, AccessRecord};
pub use auth::{AuthDecision, Authenticate, BearerTokens};
pub use body::McpBody;
pub use deadline::BodyReadTimeout;
#[cfg(feature = "server")]
pub use deadline::{DeadlineBody, DeadlineError};
pub use endpoint::McpEndpoint;
#[cfg(fuzzing)]
#[doc(hidden)]
pub use host::fuzz_authority;
pub use legacy::{
    MAX_DETACHED_CALLS, MAX_DETACHED_CALLS_PER_CALLER, MAX_QUESTIONS, MAX_QUESTIONS_PER_PRINCIPAL,
    MAX_QUESTIONS_PER_SESSION, MAX_REMEMBERED_SESSIONS, MAX_SUBSCRIPTION_URI_BYTES,
    MAX_SUBSCRIPTIONS_PER_SESSION, RESUMED_STREAM_POLL, RETRY_MS, SESSION_NOT_FOUND,
};
pub use listen_streams::DEFAULT_LISTEN_STREAMS_PER_CLIENT;
pub use options::{
    DEFAULT_KEEP_ALIVE, DEFAULT_QUESTION_TIMEOUT, EndpointOptions, Legacy, RequestTaskRuntime,
    resource_metadata_url,
};
pub use reject::misconfigured;
#[cfg(feature = "server")]
pub use serve::{ServeOptions, graceful_shutdown, serve, serve_with, shutdown_signal};
pub use trusted_proxies::TrustedProxies;
pub use vars::{ProcessEnv, Vars};

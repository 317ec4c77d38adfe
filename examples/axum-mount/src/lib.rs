//! The counter as one route of an axum application: the MCP endpoint is a
//! tower service, so it nests under a path and takes tower-http's layers
//! like any other route.

use std::sync::Arc;
use std::time::Duration;

use axum::Router;
use axum::http::{HeaderValue, Method, StatusCode};
use axum::routing::get;
use tessera::McpServer;
use tessera::http::{EndpointOptions, McpEndpoint};
use tower_http::cors::{Any, CorsLayer};
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::timeout::TimeoutLayer;
use tower_http::trace::TraceLayer;

/// Largest request body the application accepts (tower-http's limit, before Tessera's own).
pub const BODY_LIMIT: usize = 64 * 1024;

/// How long a request may take before the application answers 408 (the binary's setting).
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

/// The browser application allowed to call the endpoint (CORS and the endpoint's Origin check).
pub const APP_ORIGIN: &str = "https://app.example.com";

/// The application: `/healthz`, and the MCP endpoint (with `options`)
/// nested at `/api/mcp`, under tracing, a `request_timeout`, a body limit and
/// tower-http's CORS.
pub fn app(server: Arc<McpServer>, options: EndpointOptions, request_timeout: Duration) -> Router {
    // The router chose the path, so the endpoint serves whatever path it is handed;
    // tower-http answers CORS, so the endpoint's own CORS is off (its Origin check stays).
    let options = options.any_path().cors(false).allow_origin(APP_ORIGIN);
    let endpoint = McpEndpoint::new(server, options);
    let cors = CorsLayer::new()
        .allow_origin(HeaderValue::from_static(APP_ORIGIN))
        .allow_methods([Method::POST])
        .allow_headers(Any)
        .expose_headers(Any);
    Router::new()
        .route("/healthz", get(|| async { "ok" }))
        .nest_service("/api/mcp", endpoint)
        .layer(TraceLayer::new_for_http())
        .layer(TimeoutLayer::with_status_code(
            StatusCode::REQUEST_TIMEOUT,
            request_timeout,
        ))
        .layer(RequestBodyLimitLayer::new(BODY_LIMIT))
        .layer(cors)
}

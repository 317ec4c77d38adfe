//! Error responses and the one place JSON-RPC outcomes become HTTP statuses.

use bytes::Bytes;
use http::{HeaderValue, Response, StatusCode, header};
use serde_json::{Value, json};
use tessera_protocol::{ErrorObject, JsonRpcErrorResponse, RequestId};
use tessera_server::ServerError;
use tessera_server::intake::{Refusal, RefusalKind};

use crate::McpBody;

/// 405 for a method the endpoint does not serve.
pub(crate) fn method_not_allowed() -> Response<McpBody> {
    let mut r = error(
        StatusCode::METHOD_NOT_ALLOWED,
        None,
        tessera_protocol::TRANSPORT_ERROR,
        "Method not allowed.",
        None,
    );
    r.headers_mut()
        .insert(header::ALLOW, HeaderValue::from_static("POST"));
    r
}

/// The HTTP status for a request the server refused.
pub(crate) fn status_for(error: &ServerError) -> StatusCode {
    match error {
        ServerError::MethodNotFound { .. } => StatusCode::NOT_FOUND,
        ServerError::Unavailable { .. } => StatusCode::SERVICE_UNAVAILABLE,
        ServerError::InsufficientScope { .. } => StatusCode::FORBIDDEN,
        ServerError::RateLimited { .. } => StatusCode::TOO_MANY_REQUESTS,
        e if e.is_envelope_error() => StatusCode::BAD_REQUEST,
        _ => StatusCode::OK,
    }
}

/// A response with a JSON body.
pub(crate) fn json(status: StatusCode, body: Vec<u8>) -> Response<McpBody> {
    let mut response = Response::new(McpBody::full(Bytes::from(body)));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    response
}

/// A JSON-RPC error response with `status`.
pub(crate) fn rpc_error(
    status: StatusCode,
    id: Option<RequestId>,
    error: ErrorObject,
) -> Response<McpBody> {
    json(
        status,
        serde_json::to_vec(&JsonRpcErrorResponse::new(id, error)).unwrap_or_default(),
    )
}

/// 500 with a JSON-RPC internal error (-32603) saying what the operator must
/// fix: for hosts without a boot step (a Worker whose secret is missing),
/// where a native server would refuse to start.
pub fn misconfigured(message: &str) -> Response<McpBody> {
    error(
        StatusCode::INTERNAL_SERVER_ERROR,
        None,
        tessera_protocol::INTERNAL_ERROR,
        message,
        None,
    )
}

/// 503 with `Retry-After`: the server cannot take the request now, through no fault of its own.
pub(crate) fn unavailable(message: &str, retry_after_secs: u64) -> Response<McpBody> {
    let mut response = error(
        StatusCode::SERVICE_UNAVAILABLE,
        None,
        tessera_protocol::TRANSPORT_ERROR,
        message,
        None,
    );
    response
        .headers_mut()
        .insert(header::RETRY_AFTER, HeaderValue::from(retry_after_secs));
    response
}

/// `Retry-After` on the answer to a request the server could not take now.
pub(crate) fn add_retry_after(error: &ServerError, response: &mut Response<McpBody>) {
    if let ServerError::Unavailable {
        retry_after_secs, ..
    }
    | ServerError::RateLimited {
        retry_after_secs, ..
    } = error
    {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(*retry_after_secs));
    }
}

/// A JSON-RPC error with `code`, `message` and optional `data`.
pub(crate) fn error(
    status: StatusCode,
    id: Option<RequestId>,
    code: i32,
    message: impl Into<String>,
    data: Option<Value>,
) -> Response<McpBody> {
    let mut e = ErrorObject::new(code, message);
    e.data = data;
    rpc_error(status, id, e)
}

/// 413 for a body over `limit` bytes.
pub(crate) fn too_large(limit: usize) -> Response<McpBody> {
    refusal(&Refusal::new(RefusalKind::TooLarge(limit), None))
}

/// The intake's refusal of a body: 413 for what is too large, else 400.
pub(crate) fn refusal(refusal: &Refusal) -> Response<McpBody> {
    let status = match refusal.kind() {
        RefusalKind::TooLarge(_) | RefusalKind::TooManyValues(_) => StatusCode::PAYLOAD_TOO_LARGE,
        _ => StatusCode::BAD_REQUEST,
    };
    rpc_error(status, refusal.id().cloned(), refusal.to_error_object())
}

pub(crate) fn header_mismatch(
    id: Option<RequestId>,
    header: &str,
    body: &str,
) -> Response<McpBody> {
    error(
        StatusCode::BAD_REQUEST,
        id,
        tessera_protocol::HEADER_MISMATCH,
        format!("Bad Request: the request headers and body disagree: {body}"),
        Some(json!({"mismatch": {"header": header, "body": body}})),
    )
}

/// A plain-text response (for paths that are not the endpoint).
pub(crate) fn plain(status: StatusCode, text: &'static str) -> Response<McpBody> {
    let mut response = Response::new(McpBody::full(Bytes::from_static(text.as_bytes())));
    *response.status_mut() = status;
    response.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/plain; charset=utf-8"),
    );
    response
}

/// An empty response (202 for notifications, 204 for preflight).
pub(crate) fn empty(status: StatusCode) -> Response<McpBody> {
    let mut response = Response::new(McpBody::empty());
    *response.status_mut() = status;
    response
}

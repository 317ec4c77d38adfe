//! JSON-RPC error codes used by MCP, and the typed `data` the spec defines.

use serde::{Deserialize, Serialize};

use crate::ClientCapabilities;

/// Invalid JSON was received.
pub const PARSE_ERROR: i32 = -32700;
/// The JSON sent is not a valid request object.
pub const INVALID_REQUEST: i32 = -32600;
/// The method does not exist or is not available.
pub const METHOD_NOT_FOUND: i32 = -32601;
/// Invalid method parameter(s).
pub const INVALID_PARAMS: i32 = -32602;
/// Internal JSON-RPC error.
pub const INTERNAL_ERROR: i32 = -32603;
/// Not an MCP code: the error Tessera answers on the HTTP response of a
/// request the client cancelled, which the client ignores (cancellation.mdx:
/// "The client SHOULD ignore any response to the cancelled request").
pub const REQUEST_CANCELLED: i32 = -32800;
/// Transport-level failure that has no more specific code (HTTP method not allowed, bad origin, ...).
pub const TRANSPORT_ERROR: i32 = -32000;
/// HTTP headers disagree with the body, or a required header is missing or malformed.
pub const HEADER_MISMATCH: i32 = -32020;
/// The request needs a client capability the request's `_meta` did not declare.
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i32 = -32021;
/// The request's protocol version is unknown to the server or unsupported.
pub const UNSUPPORTED_PROTOCOL_VERSION: i32 = -32022;

/// `data` of an `UnsupportedProtocolVersionError` (-32022).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct UnsupportedVersionData {
    /// Versions the server supports; the client should pick one and retry.
    pub supported: Vec<String>,
    /// The version the client asked for, when it named one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requested: Option<String>,
}

/// `data` of a `MissingRequiredClientCapabilityError` (-32021).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingCapabilityData {
    /// The capabilities the server requires from the client for this request.
    pub required_capabilities: ClientCapabilities,
}

//! Every way a request can fail, and its JSON-RPC error (the one place codes are chosen).

use serde_json::json;
use tessera_protocol::{
    ClientCapabilities, ErrorObject, INTERNAL_ERROR, INVALID_PARAMS, INVALID_REQUEST,
    METHOD_NOT_FOUND, MISSING_REQUIRED_CLIENT_CAPABILITY, MissingCapabilityData,
    STATELESS_PROTOCOL_VERSIONS, TRANSPORT_ERROR, UNSUPPORTED_PROTOCOL_VERSION,
    UnsupportedVersionData,
};
use tessera_state::OpenError;

/// A request the server refuses, with the reason a person can act on: its
/// message is the JSON-RPC error's, except for refused tickets, whose wire
/// message is fixed and whose reason is this error's source.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
#[error("{}", self.to_error_object().message)]
pub enum ServerError {
    /// Required `_meta` keys are absent (-32602).
    MissingMeta {
        /// The missing keys.
        missing: Vec<&'static str>,
    },
    /// A `_meta` key has the wrong shape (-32602).
    InvalidMeta {
        /// The key.
        key: &'static str,
        /// What is wrong.
        problem: String,
    },
    /// The protocol version is not served (-32022).
    UnsupportedVersion {
        /// The version asked for, if any.
        requested: Option<String>,
    },
    /// No such method (-32601).
    MethodNotFound {
        /// The method asked for.
        method: String,
    },
    /// Parameters that do not fit the method (-32602).
    InvalidParams {
        /// What is wrong.
        message: String,
    },
    /// No resource or template matches the URI (-32602, `data.uri` names it).
    ResourceNotFound {
        /// The URI asked for.
        uri: String,
    },
    /// The ticket failed to open (-32602, one fixed message; the reason is only logged).
    #[error("invalid requestState ({})", .reason.reason())]
    InvalidRequestState {
        /// Why, for logs and metrics.
        #[source]
        reason: RequestStateFailure,
    },
    /// An input request needs a capability the client did not declare (-32021).
    MissingCapability {
        /// The input request's key.
        key: String,
        /// Its method (`elicitation/create`, ...).
        method: &'static str,
        /// What the client would have to declare.
        required: Box<ClientCapabilities>,
    },
    /// The request needs an extension the client did not declare on it (-32021).
    MissingExtension {
        /// What needs it, and how to declare it.
        message: String,
        /// What the client would have to declare.
        required: Box<ClientCapabilities>,
    },
    /// An initialize-era client was asked for input it cannot give (-32600).
    LegacyInputRequired {
        /// The full explanation.
        message: String,
    },
    /// The server cannot take the request now, through no fault of the
    /// request (-32000; HTTP 503 with `Retry-After`).
    Unavailable {
        /// What is unavailable (safe to show).
        message: String,
        /// Seconds after which a retry may succeed.
        retry_after_secs: u64,
    },
    /// The caller's token lacks scopes the method needs (HTTP 403 with
    /// `WWW-Authenticate: Bearer error="insufficient_scope"`, so the client can step up).
    InsufficientScope {
        /// What was called.
        target: String,
        /// The scopes it needs, space-separated.
        scope: String,
    },
    /// Too many requests from this caller (HTTP 429 with `Retry-After`;
    /// `data.retryAfterSeconds` says when to try again).
    RateLimited {
        /// What was limited, and the limit.
        message: String,
        /// Seconds until a request would be let through.
        retry_after_secs: u64,
    },
    /// Refused by middleware with its own JSON-RPC error.
    Refused(ErrorObject),
    /// The client cancelled the request (`notifications/cancelled`); the
    /// answer on its HTTP response, which the client ignores (-32800).
    Cancelled,
    /// The server failed (-32603).
    Internal {
        /// What failed (safe to show).
        message: String,
    },
}

/// Why a `requestState` was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RequestStateFailure {
    /// The codec refused it.
    #[error("the ticket does not open")]
    Open(#[source] OpenError),
    /// The request carries `requestState` but it is not a string.
    #[error("requestState is not a string")]
    NotAString,
    /// The server has no codec configured, so no ticket can be valid.
    #[error("this server has no requestState key")]
    NoCodec,
    /// A single-use ticket was presented again (or the ledger refused it).
    #[error("the ticket was already redeemed ({0})")]
    AlreadyUsed(&'static str),
}

impl RequestStateFailure {
    /// A short label for logs.
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Open(e) => e.reason(),
            Self::NotAString => "not_a_string",
            Self::NoCodec => "no_codec",
            Self::AlreadyUsed(r) => r,
        }
    }
}

impl ServerError {
    /// Invalid params with `message`.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::InvalidParams {
            message: message.into(),
        }
    }

    /// The JSON-RPC error code.
    pub fn code(&self) -> i32 {
        match self {
            Self::MissingMeta { .. }
            | Self::InvalidMeta { .. }
            | Self::InvalidParams { .. }
            | Self::ResourceNotFound { .. }
            | Self::InvalidRequestState { .. } => INVALID_PARAMS,
            Self::UnsupportedVersion { .. } => UNSUPPORTED_PROTOCOL_VERSION,
            Self::MethodNotFound { .. } => METHOD_NOT_FOUND,
            Self::MissingCapability { .. } | Self::MissingExtension { .. } => {
                MISSING_REQUIRED_CLIENT_CAPABILITY
            }
            Self::LegacyInputRequired { .. } => INVALID_REQUEST,
            Self::Unavailable { .. }
            | Self::InsufficientScope { .. }
            | Self::RateLimited { .. } => TRANSPORT_ERROR,
            Self::Refused(error) => error.code,
            Self::Internal { .. } => INTERNAL_ERROR,
            Self::Cancelled => tessera_protocol::REQUEST_CANCELLED,
        }
    }

    /// Whether the request itself was malformed at the envelope level
    /// (missing or invalid `_meta`, unsupported version, missing capability):
    /// transports answer these with 400.
    pub fn is_envelope_error(&self) -> bool {
        matches!(
            self,
            Self::MissingMeta { .. }
                | Self::InvalidMeta { .. }
                | Self::UnsupportedVersion { .. }
                | Self::MissingCapability { .. }
                | Self::MissingExtension { .. }
        )
    }

    /// The JSON-RPC error object sent on the wire.
    pub fn to_error_object(&self) -> ErrorObject {
        let code = self.code();
        match self {
            Self::MissingMeta { missing } => ErrorObject::new(
                code,
                format!(
                    "Invalid params: a protocol revision 2026-07-28 request must carry params._meta with {}; missing: {}",
                    "io.modelcontextprotocol/protocolVersion and io.modelcontextprotocol/clientCapabilities",
                    missing.join(", ")
                ),
            )
            .with_data(json!({"envelope": {"missing": missing}})),
            Self::InvalidMeta { key, problem } => ErrorObject::new(
                code,
                format!("Invalid _meta envelope for protocol revision 2026-07-28: {key}: {problem}"),
            )
            .with_data(json!({"envelope": {"key": key, "problem": problem}})),
            Self::UnsupportedVersion { requested } => {
                let message = match requested {
                    Some(v) => format!(
                        "Unsupported protocol version: {v} (this server speaks {})",
                        STATELESS_PROTOCOL_VERSIONS.join(", ")
                    ),
                    None => format!(
                        "Unsupported protocol version: the request did not name a protocol version (this server speaks {})",
                        STATELESS_PROTOCOL_VERSIONS.join(", ")
                    ),
                };
                let data = UnsupportedVersionData {
                    supported: STATELESS_PROTOCOL_VERSIONS.iter().map(|v| (*v).to_owned()).collect(),
                    requested: requested.clone(),
                };
                ErrorObject::new(code, message).with_data(json!(data))
            }
            Self::MethodNotFound { method } => {
                ErrorObject::new(code, format!("Method not found: {method}"))
            }
            Self::InvalidParams { message } => ErrorObject::new(code, message.clone()),
            Self::ResourceNotFound { uri } => {
                ErrorObject::new(code, format!("Resource {uri} not found"))
                    .with_data(json!({"uri": uri}))
            }
            Self::InvalidRequestState { .. } => {
                ErrorObject::new(code, tessera_state::WIRE_MESSAGE)
                    .with_data(json!({"reason": tessera_state::WIRE_REASON}))
            }
            Self::MissingCapability { key, method, required } => ErrorObject::new(
                code,
                format!(
                    "Cannot request input '{key}' ({method}): the request's client capabilities do not declare {}",
                    capability_names(required)
                ),
            )
            .with_data(json!(MissingCapabilityData {
                required_capabilities: (**required).clone()
            })),
            Self::MissingExtension { message, required } => ErrorObject::new(code, message.clone())
                .with_data(json!(MissingCapabilityData {
                    required_capabilities: (**required).clone()
                })),
            Self::LegacyInputRequired { message }
            | Self::Internal { message }
            | Self::Unavailable { message, .. } => {
                ErrorObject::new(code, message.clone())
            }
            Self::Cancelled => ErrorObject::new(code, "Request cancelled by the client"),
            Self::RateLimited {
                message,
                retry_after_secs,
            } => ErrorObject::new(code, message.clone())
                .with_data(json!({"retryAfterSeconds": retry_after_secs})),
            Self::Refused(error) => error.clone(),
            Self::InsufficientScope { target, scope } => ErrorObject::new(
                code,
                format!("Forbidden: {target} needs scope {scope:?}, which the access token does not grant"),
            ),
        }
    }
}

/// The capabilities `required` names, as dotted paths (`sampling.tools`),
/// for a message.
fn capability_names(required: &ClientCapabilities) -> String {
    fn walk(prefix: &str, value: &serde_json::Value, out: &mut Vec<String>) {
        match value.as_object() {
            Some(map) if !map.is_empty() => {
                for (key, inner) in map {
                    let path = if prefix.is_empty() {
                        key.clone()
                    } else {
                        format!("{prefix}.{key}")
                    };
                    walk(&path, inner, out);
                }
            }
            _ if !prefix.is_empty() => out.push(prefix.to_owned()),
            _ => {}
        }
    }
    let mut names = Vec::new();
    walk("", &json!(required), &mut names);
    match names.as_slice() {
        [] => "the required capability".to_owned(),
        [one] => one.clone(),
        many => many.join(", "),
    }
}

//! A message the intake refuses, with its JSON-RPC error.

use std::fmt;

use tessera_protocol::{ErrorObject, INVALID_PARAMS, INVALID_REQUEST, PARSE_ERROR, RequestId};

/// Why a message was refused before it reached any method.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RefusalKind {
    /// Not JSON (or nested past the parser's 128 levels), with the parser's words.
    Parse(String),
    /// Larger than the transport's byte limit, which is given.
    TooLarge(usize),
    /// More JSON values than the limit, which is given.
    TooManyValues(usize),
    /// A string id longer than the limit (in bytes), which is given.
    IdTooLong(usize),
    /// A string `_meta.progressToken` longer than the id limit (in bytes),
    /// which is given: progress notifications echo it.
    ProgressTokenTooLong(usize),
    /// A JSON-RPC batch (an array): not part of MCP.
    Batch,
    /// JSON, but not a JSON-RPC message: what is wrong with it.
    NotAMessage(&'static str),
    /// Shaped like a response (no `method`) but not a valid one.
    InvalidResponse(&'static str),
    /// A member of the message named twice.
    DuplicateMember(String),
    /// A member of `params` named twice.
    DuplicateParam(String),
}

/// A refused message: what is wrong, and the id to answer when it could be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    kind: RefusalKind,
    id: Option<RequestId>,
}

impl Refusal {
    /// A refusal of `kind` for the message whose id is `id`.
    pub fn new(kind: RefusalKind, id: Option<RequestId>) -> Self {
        Self { kind, id }
    }

    /// What is wrong.
    pub fn kind(&self) -> &RefusalKind {
        &self.kind
    }

    /// The message's id, when it could be read.
    pub fn id(&self) -> Option<&RequestId> {
        self.id.as_ref()
    }

    /// The JSON-RPC error code: -32700 for text that is not JSON, -32602 for
    /// a `params` member named twice or a progress token too long to echo,
    /// -32600 for everything else.
    pub fn code(&self) -> i32 {
        match self.kind {
            RefusalKind::Parse(_) => PARSE_ERROR,
            RefusalKind::DuplicateParam(_) | RefusalKind::ProgressTokenTooLong(_) => INVALID_PARAMS,
            _ => INVALID_REQUEST,
        }
    }

    /// The JSON-RPC error sent on the wire.
    pub fn to_error_object(&self) -> ErrorObject {
        ErrorObject::new(self.code(), self.to_string())
    }
}

impl fmt::Display for Refusal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.kind {
            RefusalKind::Parse(e) => write!(f, "Parse error: the message is not valid JSON ({e})"),
            RefusalKind::TooLarge(limit) => write!(
                f,
                "Request too large: a message may hold at most {limit} bytes"
            ),
            RefusalKind::TooManyValues(limit) => write!(
                f,
                "Request too large: a message may hold at most {limit} JSON values"
            ),
            RefusalKind::IdTooLong(limit) => write!(
                f,
                "Invalid Request: the id is longer than {limit} bytes; use a shorter id"
            ),
            RefusalKind::ProgressTokenTooLong(limit) => write!(
                f,
                "Invalid params: _meta.progressToken is longer than {limit} bytes; use a shorter token"
            ),
            RefusalKind::Batch => f.write_str(
                "Invalid Request: JSON-RPC batches are not supported; send one message at a time",
            ),
            RefusalKind::NotAMessage(problem) => {
                write!(
                    f,
                    "Invalid Request: not a valid JSON-RPC message: {problem}"
                )
            }
            RefusalKind::InvalidResponse(problem) => {
                write!(
                    f,
                    "Invalid Request: not a valid JSON-RPC response: {problem}"
                )
            }
            RefusalKind::DuplicateMember(key) => write!(
                f,
                "Invalid Request: the message names member {key:?} more than once"
            ),
            RefusalKind::DuplicateParam(key) => write!(
                f,
                "Invalid params: params names member {key:?} more than once"
            ),
        }
    }
}

impl std::error::Error for Refusal {}

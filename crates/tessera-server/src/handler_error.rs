//! What a handler returns instead of its result.

use std::fmt;

use crate::Interrupt;

/// A handler's `Result`: `?` works on [`Interrupt`]s and on any error type.
pub type Result<T, E = HandlerError> = std::result::Result<T, E>;

/// Why a handler did not produce its result.
///
/// Converts from an [`Interrupt`] (the round ends), from [`NotFound`], and
/// from any `std::error::Error` (the handler failed): a tool reports a failure
/// as a result with `isError: true` and the error's message; a prompt or
/// resource as a JSON-RPC error.
///
/// ```
/// use tessera_server::{HandlerError, Result};
///
/// fn parse(text: &str) -> Result<u32> {
///     Ok(text.parse::<u32>()?)
/// }
/// assert_eq!(parse("x").unwrap_err().to_string(), "invalid digit found in string");
/// assert!(parse("7").is_ok());
/// let _ = HandlerError::msg("no such note");
/// ```
pub struct HandlerError(pub(crate) Kind);

impl HandlerError {
    /// The error of a request whose handler cannot ask for input (a
    /// completion, a method of the server's own): not found and invalid
    /// params keep their codes (-32602, naming `target`); the rest is
    /// -32603 naming `handler` ("the completion handler of prompt p").
    pub(crate) fn into_request_error(self, target: &str, handler: &str) -> crate::ServerError {
        use crate::ServerError;
        match self.0 {
            Kind::NotFound => ServerError::invalid_params(format!("{target}: not found")),
            Kind::InvalidParams(message) => ServerError::InvalidParams { message },
            Kind::Interrupt(i) => ServerError::Internal {
                message: format!("{handler} cannot ask for input ({i})"),
            },
            Kind::Failed(e) => ServerError::Internal {
                message: format!("{handler} failed: {e}"),
            },
            Kind::Server(error) => *error,
        }
    }
}

#[derive(Debug)]
pub(crate) enum Kind {
    Interrupt(Interrupt),
    NotFound,
    InvalidParams(String),
    Failed(Box<dyn std::error::Error + Send + Sync>),
    /// The server's error to answer with as it is (its code and HTTP status).
    Server(Box<crate::ServerError>),
}

/// "No such item": a resource handler's way to answer "resource not found" with `?` (a JSON-RPC -32602 invalid-params error naming the URI).
///
/// ```
/// use tessera_server::{NotFound, Result};
/// fn note(id: &str) -> Result<String> {
///     let text = (id == "1").then(|| "first".to_owned()).ok_or(NotFound)?;
///     Ok(text)
/// }
/// assert!(note("2").is_err());
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotFound;

impl HandlerError {
    /// A failure with `message`.
    pub fn msg(message: impl Into<String>) -> Self {
        Self(Kind::Failed(message.into().into()))
    }

    /// Arguments the handler cannot use (JSON-RPC -32602 for prompts and resources).
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self(Kind::InvalidParams(message.into()))
    }

    /// Ends the request with this JSON-RPC error as it is, for tools,
    /// prompts and resources alike: what a gateway does with the error an
    /// upstream server answered.
    pub fn rpc(error: tessera_protocol::ErrorObject) -> Self {
        Self::server(crate::ServerError::Refused(error))
    }

    /// Ends the request with the server's error `error` (its JSON-RPC code,
    /// and over HTTP its status: 503 with `Retry-After` for
    /// [`Unavailable`](crate::ServerError::Unavailable), 429 for
    /// [`RateLimited`](crate::ServerError::RateLimited)).
    pub fn server(error: crate::ServerError) -> Self {
        Self(Kind::Server(Box::new(error)))
    }

    /// The interrupt, when this is one.
    pub fn as_interrupt(&self) -> Option<&Interrupt> {
        match &self.0 {
            Kind::Interrupt(i) => Some(i),
            _ => None,
        }
    }
}

impl From<Interrupt> for HandlerError {
    fn from(i: Interrupt) -> Self {
        Self(Kind::Interrupt(i))
    }
}

impl From<NotFound> for HandlerError {
    fn from(_: NotFound) -> Self {
        Self(Kind::NotFound)
    }
}

impl<E: std::error::Error + Send + Sync + 'static> From<E> for HandlerError {
    fn from(e: E) -> Self {
        Self(Kind::Failed(Box::new(e)))
    }
}

impl fmt::Display for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.0 {
            Kind::Interrupt(i) => i.fmt(f),
            Kind::NotFound => f.write_str("not found"),
            Kind::InvalidParams(m) => f.write_str(m),
            Kind::Failed(e) => e.fmt(f),
            Kind::Server(e) => e.fmt(f),
        }
    }
}

impl fmt::Debug for HandlerError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

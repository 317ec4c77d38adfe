//! Middleware on MCP requests: code that runs around every request the
//! server serves — over HTTP, stdio, the initialize-era lanes and Workers
//! alike, since every transport serves through
//! [`McpServer::serve`](crate::McpServer::serve).
//!
//! A [`Middleware`] sees the request ([`McpRequest`]: method, target,
//! principal, arguments), may refuse it with a JSON-RPC error without
//! running the rest, and sees what the rest answered ([`Outcome`]). Layers
//! run in the order they were added, the first outermost (as tower's
//! `ServiceBuilder`); [`for_tools`] and [`for_methods`] narrow one to some
//! tools or methods. Ready-made: [`RateLimit`], [`Timeout`], [`Audit`].
//!
//! ```
//! use tessera_server::middleware::{McpRequest, Middleware, Next, Served};
//! use tessera_server::{BoxFuture, Context, McpServer, ServerError, ToolDef};
//!
//! /// Refuses every call on Sundays (here: always, for the example).
//! struct Closed;
//!
//! impl Middleware for Closed {
//!     fn handle<'a>(&'a self, request: &'a McpRequest, next: Next<'a>) -> BoxFuture<'a, Result<Served, ServerError>> {
//!         if request.method == "tools/call" {
//!             return Box::pin(async { Err(ServerError::invalid_params("closed today")) });
//!         }
//!         next.run()
//!     }
//! }
//!
//! let server = McpServer::builder("demo", "1.0.0")
//!     .middleware(Closed)
//!     .tool(ToolDef::new("hello", |_: Context, _: ()| async { "Hello!" }))
//!     .build()
//!     .unwrap();
//! # let _ = server;
//! ```

mod audit;
mod rate_limit;
mod timeout;

use std::sync::Arc;

use serde_json::Value;

use crate::result_json::{Json, is_input_required};
use crate::{AuthInfo, BoxFuture, ServerError};

pub use audit::{Audit, AuditRecord};
pub use rate_limit::{MemoryRateLimits, RateDecision, RateLimit, RateLimitStore};
pub use timeout::Timeout;

/// One request as middleware sees it.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct McpRequest {
    /// The method (`tools/call`, `prompts/get`, ...).
    pub method: String,
    /// What it names: the tool or prompt name, the resource URI or the
    /// task id; `None` for methods that name nothing.
    pub target: Option<String>,
    /// The caller tickets are bound to (the token's issuer and subject, or
    /// the transport's principal); `None` for an anonymous caller.
    pub principal: Option<String>,
    /// Whom per-caller limits count against: the principal, else the
    /// client's network address (`None` over stdio: one client).
    pub caller: Option<String>,
    /// The verified access token, when the server is protected with OAuth.
    pub auth: Option<std::sync::Arc<AuthInfo>>,
    /// Whether the method is one of the protocol's or registered with the
    /// builder and, for `tools/call`, the server shows the named tool to
    /// this caller. Layers that keep something per name
    /// ([`RateLimit`]'s buckets, metrics) key by the name only when this is
    /// true, so request data cannot make up keys.
    pub offered: bool,
    /// The request's params without `_meta` (for `tools/call`, the tool's
    /// `arguments` are under `arguments`).
    pub params: Value,
    /// The transport's runtime, for layers that wait ([`Timeout`]).
    pub(crate) runtime: Runtime,
}

/// The transport's task runtime, when it has one.
#[derive(Clone, Default)]
pub(crate) struct Runtime(pub(crate) Option<Arc<dyn crate::TaskRuntime>>);

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(if self.0.is_some() { "Runtime" } else { "None" })
    }
}

impl McpRequest {
    /// The tool a `tools/call` calls.
    pub fn tool(&self) -> Option<&str> {
        (self.method == "tools/call")
            .then_some(self.target.as_deref())
            .flatten()
    }
}

/// What the rest of the chain answered, successfully.
pub struct Served(pub(crate) Json);

impl Served {
    /// Whether the result is complete or asks for input.
    pub fn outcome(&self) -> Outcome {
        let input_required = match &self.0 {
            Json::Value(value) => value["resultType"] == "input_required",
            Json::Raw(raw) => is_input_required(raw),
            Json::Kept(_) => true,
        };
        if input_required {
            Outcome::InputRequired
        } else {
            Outcome::Complete
        }
    }
}

/// How a request ended, as middleware (an audit log, metrics) classes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// A complete result (a tool's `isError: true` result included).
    Complete,
    /// An `input_required` result: the client asks the user and retries.
    InputRequired,
    /// Refused for what the request is or who sent it (bad params, a
    /// missing scope or capability, a limit): the client can act on it.
    Refused,
    /// The server failed (internal error, a backend unavailable), or the
    /// call answered that it was cancelled.
    Failed,
    /// The request was dropped unfinished: its client went away or
    /// cancelled it (`notifications/cancelled`), or a transport's own
    /// timeout ended it.
    Abandoned,
}

impl Outcome {
    /// The outcome of `result`.
    pub fn of(result: &Result<Served, ServerError>) -> Self {
        match result {
            Ok(served) => served.outcome(),
            Err(
                ServerError::Internal { .. }
                | ServerError::Unavailable { .. }
                | ServerError::Cancelled,
            ) => Self::Failed,
            Err(_) => Self::Refused,
        }
    }

    /// `complete`, `input_required`, `refused`, `failed` or `abandoned`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Complete => "complete",
            Self::InputRequired => "input_required",
            Self::Refused => "refused",
            Self::Failed => "failed",
            Self::Abandoned => "abandoned",
        }
    }
}

/// Code around every request: see it, refuse it, or run the rest with
/// [`Next::run`] and look at what it answered.
pub trait Middleware: Send + Sync + 'static {
    /// Serves `request`: usually some checks, then `next.run()`.
    fn handle<'a>(
        &'a self,
        request: &'a McpRequest,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Served, ServerError>>;
}

/// The rest of the chain: the middleware after this one, then the server.
pub struct Next<'a> {
    rest: &'a [Arc<dyn Middleware>],
    request: &'a McpRequest,
    end: Box<dyn FnOnce() -> BoxFuture<'a, Result<Json, ServerError>> + Send + 'a>,
}

impl<'a> Next<'a> {
    pub(crate) fn new(
        chain: &'a [Arc<dyn Middleware>],
        request: &'a McpRequest,
        end: Box<dyn FnOnce() -> BoxFuture<'a, Result<Json, ServerError>> + Send + 'a>,
    ) -> Self {
        Self {
            rest: chain,
            request,
            end,
        }
    }

    /// Runs the rest of the chain.
    pub fn run(self) -> BoxFuture<'a, Result<Served, ServerError>> {
        match self.rest.split_first() {
            Some((first, rest)) => first.handle(
                self.request,
                Next {
                    rest,
                    request: self.request,
                    end: self.end,
                },
            ),
            None => {
                let end = self.end;
                Box::pin(async move { end().await.map(Served) })
            }
        }
    }
}

/// `inner` for the requests `applies` says, e.g. every tool whose name
/// starts with a prefix; other requests pass it by.
///
/// ```
/// use tessera_server::middleware::{RateLimit, for_requests};
/// let limit = for_requests(
///     |r| r.tool().is_some_and(|t| t.starts_with("booking__")),
///     RateLimit::new(60, std::time::Duration::from_secs(60)),
/// );
/// # let _ = limit;
/// ```
pub fn for_requests(
    applies: impl Fn(&McpRequest) -> bool + Send + Sync + 'static,
    inner: impl Middleware,
) -> impl Middleware {
    Only { applies, inner }
}

/// `inner` for calls of these tools only; other requests pass it by.
pub fn for_tools<I, S>(tools: I, inner: impl Middleware) -> impl Middleware
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let tools: Vec<String> = tools.into_iter().map(Into::into).collect();
    for_requests(
        move |r: &McpRequest| r.tool().is_some_and(|t| tools.iter().any(|n| n == t)),
        inner,
    )
}

/// `inner` for these methods only; other requests pass it by.
pub fn for_methods<I, S>(methods: I, inner: impl Middleware) -> impl Middleware
where
    I: IntoIterator<Item = S>,
    S: Into<String>,
{
    let methods: Vec<String> = methods.into_iter().map(Into::into).collect();
    for_requests(move |r: &McpRequest| methods.contains(&r.method), inner)
}

/// A middleware that applies to some requests.
struct Only<F, M> {
    applies: F,
    inner: M,
}

impl<F, M> Middleware for Only<F, M>
where
    F: Fn(&McpRequest) -> bool + Send + Sync + 'static,
    M: Middleware,
{
    fn handle<'a>(
        &'a self,
        request: &'a McpRequest,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Served, ServerError>> {
        if (self.applies)(request) {
            self.inner.handle(request, next)
        } else {
            next.run()
        }
    }
}

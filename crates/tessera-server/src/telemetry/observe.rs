//! The SERVER span around one request, and the request's duration.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll};

use tessera_protocol::clock::Instant;
use tracing::Instrument as _;
use tracing::field::Empty;

use super::metrics::{self, Operation};
use crate::intake::Request;
use crate::{Handled, McpServer, RequestFacts, ServerError};

/// The methods this server answers: a metric names any other `_OTHER`, so a
/// client cannot mint a time series per made-up method.
const KNOWN_METHODS: &[&str] = &[
    "server/discover",
    "initialize",
    "ping",
    "logging/setLevel",
    tessera_protocol::SUBSCRIPTIONS_LISTEN,
    "tools/list",
    "tools/call",
    "prompts/list",
    "prompts/get",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "completion/complete",
    tessera_protocol::TASKS_GET,
    tessera_protocol::TASKS_UPDATE,
    tessera_protocol::TASKS_CANCEL,
];

/// What a metric says for a value outside the known set (the conventions' word).
const OTHER: &str = "_OTHER";

/// Whether spans carry arguments and answers ([`record_arguments`]).
static RECORD_ARGUMENTS: AtomicBool = AtomicBool::new(false);

/// Most bytes of arguments or answers one span attribute holds.
pub const MAX_RECORDED_BYTES: usize = 4096;

/// Puts each request's arguments (`mcp.request.arguments`) and the answers
/// it brings (`mcp.request.input_responses`) on its span, as JSON of at most
/// [`MAX_RECORDED_BYTES`] bytes. Off unless the operator turns it on: they
/// may hold what users typed.
pub fn record_arguments(on: bool) {
    RECORD_ARGUMENTS.store(on, Ordering::Relaxed);
}

/// One request being served and watched: its SERVER span, entered while it
/// is served, and when it began.
///
/// ```
/// # async fn example(server: &tessera_server::McpServer, request: tessera_server::intake::Request) {
/// let facts = tessera_server::RequestFacts::modern();
/// let observed = server.observe(&request, &facts);
/// let handled = observed.run(server.serve(request, facts)).await;
/// # let _ = handled;
/// # }
/// ```
#[must_use = "an Observation records nothing until it runs the request"]
pub struct Observation {
    span: tracing::Span,
    started: Instant,
    /// The duration's attributes, gathered only when metrics are recorded.
    operation: Option<Attributes>,
    tool_call: bool,
}

/// The owned values behind an [`Operation`].
struct Attributes {
    method: &'static str,
    tool: Option<String>,
    prompt: Option<String>,
    version: Option<&'static str>,
    transport: Option<&'static str>,
}

impl McpServer {
    /// Starts watching `request`: its SERVER span (named `{method} {target}`,
    /// attributed as the OpenTelemetry conventions for MCP say, its parent
    /// the caller's trace context) and its duration. Every transport serves a
    /// request through [`Observation::run`]; the era bridge serves all of one
    /// call's rounds inside that one span.
    pub fn observe(&self, request: &Request, facts: &RequestFacts) -> Observation {
        let span = request_span(request, facts);
        #[cfg(feature = "otel")]
        if !span.is_disabled() {
            adopt_parent(self, &span, request, facts);
        }
        let operation = metrics::enabled().then(|| self.attributes(request, facts));
        Observation {
            span,
            started: Instant::now(),
            operation,
            tool_call: request.method == "tools/call",
        }
    }

    /// What the duration metric is attributed with: names this server knows, else `_OTHER`.
    fn attributes(&self, request: &Request, facts: &RequestFacts) -> Attributes {
        let method = KNOWN_METHODS
            .iter()
            .find(|m| **m == request.method)
            .copied()
            .unwrap_or(OTHER);
        let target = request.target();
        let known = |found: bool| target.map(|t| if found { t } else { OTHER }.to_owned());
        let (tool, prompt) = match method {
            "tools/call" => (known(target.is_some_and(|t| self.tool(t).is_some())), None),
            "prompts/get" => (
                None,
                known(target.is_some_and(|t| self.prompts.contains_key(t))),
            ),
            _ => (None, None),
        };
        let version = protocol_version(request, facts).map(|v| {
            tessera_protocol::STATELESS_PROTOCOL_VERSIONS
                .iter()
                .chain(tessera_protocol::LEGACY_PROTOCOL_VERSIONS)
                .find(|known| **known == v)
                .copied()
                .unwrap_or(OTHER)
        });
        Attributes {
            method,
            tool,
            prompt,
            version,
            transport: facts.transport.map(crate::NetworkTransport::as_str),
        }
    }
}

impl Observation {
    /// The request's span.
    pub fn span(&self) -> &tracing::Span {
        &self.span
    }

    /// Serves the request with `serving` inside its span, then records how it
    /// ended (a [`Handled`], or `None` when the client went away first).
    ///
    /// A plain future around `serving`, no `async` block: a request's future
    /// is tens of kilobytes, and every layer of `async` would copy it again.
    pub fn run<F>(self, serving: F) -> Observed<F>
    where
        F: Future,
        F::Output: Served,
    {
        Observed {
            serving: serving.instrument(self.span.clone()),
            observation: Some(self),
        }
    }

    /// Records the outcome on the span and the duration in the metric.
    fn finish(self, handled: Option<&Handled>) {
        if self.span.is_disabled() && self.operation.is_none() {
            return;
        }
        let Some(handled) = handled else {
            self.span.record("mcp.mrtr.outcome", "abandoned");
            return;
        };
        let mut error_type: Option<String> = None;
        let mut status_code = None;
        let outcome = match &handled.result {
            Err(e) => {
                let code = e.code().to_string();
                self.span.record("otel.status_description", e.to_string());
                error_type = Some(code.clone());
                status_code = Some(code);
                match e {
                    ServerError::InvalidRequestState { reason } => reason.reason(),
                    _ => "error",
                }
            }
            Ok(raw) => {
                let outcome = handled.outcome();
                if self.tool_call && outcome == "complete" && is_tool_error(raw.get()) {
                    self.span.record("otel.status_code", "error");
                    error_type = Some("tool_error".into());
                }
                outcome
            }
        };
        self.span.record("mcp.mrtr.outcome", outcome);
        if let Some(e) = &error_type {
            self.span.record("error.type", e.as_str());
        }
        if let Some(code) = &status_code {
            self.span.record("rpc.response.status_code", code.as_str());
        }
        if let Some(a) = &self.operation {
            metrics::operation(
                self.started.elapsed().as_secs_f64(),
                &Operation {
                    method: a.method,
                    tool: a.tool.as_deref(),
                    prompt: a.prompt.as_deref(),
                    protocol_version: a.version,
                    transport: a.transport,
                    error_type: error_type.as_deref(),
                    status_code: status_code.as_deref(),
                },
            );
        }
    }
}

pin_project_lite::pin_project! {
    /// A request served inside its span ([`Observation::run`]).
    #[must_use = "futures do nothing unless polled"]
    pub struct Observed<F> {
        #[pin]
        serving: tracing::instrument::Instrumented<F>,
        observation: Option<Observation>,
    }
}

impl<F> Future for Observed<F>
where
    F: Future,
    F::Output: Served,
{
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.project();
        let served = std::task::ready!(this.serving.poll(cx));
        if let Some(observation) = this.observation.take() {
            observation.finish(served.handled());
        }
        Poll::Ready(served)
    }
}

/// What serving a request ends with: its [`Handled`], or nothing when the
/// client went away before the answer.
pub trait Served {
    /// The outcome, when there is one.
    fn handled(&self) -> Option<&Handled>;
}

impl Served for Handled {
    fn handled(&self) -> Option<&Handled> {
        Some(self)
    }
}

impl Served for Option<Handled> {
    fn handled(&self) -> Option<&Handled> {
        self.as_ref()
    }
}

/// The span's name: `{mcp.method.name} {target}`, the target being the tool
/// or prompt name (a resource URI is an attribute, not part of the name: the
/// conventions keep names low in cardinality).
struct SpanName<'a> {
    method: &'a str,
    target: Option<&'a str>,
}

impl fmt::Display for SpanName<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.target {
            Some(target) => write!(f, "{} {target}", self.method),
            None => f.write_str(self.method),
        }
    }
}

/// A request id in its string form (`jsonrpc.request.id`): a string id as it
/// is, unquoted.
struct IdText<'a>(&'a tessera_protocol::RequestId);

impl fmt::Display for IdText<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            tessera_protocol::RequestId::String(s) => f.write_str(s),
            tessera_protocol::RequestId::Integer(n) => write!(f, "{n}"),
        }
    }
}

/// The SERVER span of `request`, with every attribute known before it is served.
fn request_span(request: &Request, facts: &RequestFacts) -> tracing::Span {
    let method = request.method.as_str();
    let target = request.target();
    let named = matches!(method, "tools/call" | "prompts/get");
    let span = tracing::info_span!(
        target: "tessera::mcp",
        "mcp",
        otel.name = %SpanName { method, target: target.filter(|_| named) },
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        gen_ai.operation.name = Empty,
        gen_ai.tool.name = Empty,
        gen_ai.prompt.name = Empty,
        mcp.resource.uri = Empty,
        jsonrpc.request.id = %IdText(&request.id),
        mcp.protocol.version = Empty,
        mcp.session.id = Empty,
        network.transport = Empty,
        error.type = Empty,
        rpc.response.status_code = Empty,
        mcp.mrtr.outcome = Empty,
        mcp.mrtr.round = Empty,
        mcp.mrtr.flow_id = Empty,
        mcp.mrtr.input_keys = Empty,
        mcp.request.arguments = Empty,
        mcp.request.input_responses = Empty,
    );
    if span.is_disabled() {
        return span;
    }
    if RECORD_ARGUMENTS.load(Ordering::Relaxed) {
        for (param, field) in [
            ("arguments", "mcp.request.arguments"),
            ("inputResponses", "mcp.request.input_responses"),
        ] {
            if let Some(value) = request.param(param) {
                span.record(field, bounded_json(value).as_str());
            }
        }
    }
    match (method, target) {
        ("tools/call", Some(tool)) => {
            span.record("gen_ai.operation.name", "execute_tool");
            span.record("gen_ai.tool.name", tool);
        }
        ("prompts/get", Some(prompt)) => {
            span.record("gen_ai.prompt.name", prompt);
        }
        ("resources/read", Some(uri)) => {
            span.record("mcp.resource.uri", uri);
        }
        _ => {}
    }
    if let Some(version) = protocol_version(request, facts) {
        span.record("mcp.protocol.version", version);
    }
    if let Some(transport) = facts.transport {
        span.record("network.transport", transport.as_str());
    }
    if let Some(session) = &facts.session_id {
        span.record("mcp.session.id", session.as_str());
    }
    span
}

/// The revision the request speaks: the transport's legacy version, else its `_meta`'s.
fn protocol_version<'a>(request: &'a Request, facts: &'a RequestFacts) -> Option<&'a str> {
    facts
        .legacy_version()
        .or_else(|| request.protocol_version())
}

/// `value` as JSON, cut at a character boundary after [`MAX_RECORDED_BYTES`] (then ending in `…`).
fn bounded_json(value: &serde_json::Value) -> String {
    let mut text = value.to_string();
    if text.len() > MAX_RECORDED_BYTES {
        let mut end = MAX_RECORDED_BYTES;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push('…');
    }
    text
}

/// Whether a `tools/call` result says `isError: true` (read without building it).
fn is_tool_error(raw: &str) -> bool {
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: Option<bool>,
    }
    serde_json::from_str::<Flag>(raw).is_ok_and(|f| f.is_error == Some(true))
}

/// Gives `span` its parent: the request's `_meta` trace context, else the
/// transport's, else round one's span when the request carries a ticket.
#[cfg(feature = "otel")]
fn adopt_parent(server: &McpServer, span: &tracing::Span, request: &Request, facts: &RequestFacts) {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    let carried = match request.trace_context() {
        Some((traceparent, tracestate)) => {
            Some(super::propagation::extract(traceparent, tracestate))
        }
        None => facts
            .trace_context
            .as_ref()
            .map(|c| super::propagation::extract(&c.traceparent, c.tracestate.as_deref())),
    };
    let parent = carried
        .filter(|cx| cx.span().span_context().is_valid())
        .or_else(|| {
            let first = server.round_one(request, facts)?;
            Some(opentelemetry::Context::new().with_remote_span_context(first))
        });
    if let Some(parent) = parent {
        let _ = span.set_parent(parent);
    }
}

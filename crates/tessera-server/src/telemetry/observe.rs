//! The SERVER span around one request, and the request's duration.

use std::borrow::Cow;
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
/// let resolved = server.resolve(&request, &facts);
/// let observed = server.observe(&request, &facts, &resolved);
/// let handled = observed.run(server.serve_resolved(request, facts, resolved)).await;
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
    /// Whether the outcome was recorded (else dropping it records `abandoned`).
    done: bool,
}

/// The owned values behind an [`Operation`].
struct Attributes {
    method: &'static str,
    tool: Option<String>,
    prompt: Option<String>,
    version: Option<&'static str>,
    transport: Option<&'static str>,
}

/// What a request names, as resolving it found ([`McpServer::resolve`]
/// gives a [`Resolved`](crate::Resolved), which is one): read by the span and
/// the duration metric, so they look nothing up themselves.
pub trait Target {
    /// Whether the server has the tool or prompt the request names (its span
    /// and metric carry the name only then).
    fn known(&self) -> bool;
    /// Round one's span context and tracestate as `request`'s ticket keeps
    /// them, when it carries one that opens (opened here, and then not again
    /// to serve it).
    fn round_one(&self, request: &Request) -> Option<RoundOne<'_>>;
}

/// Round one's span context and `tracestate`, as a ticket keeps them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RoundOne<'a> {
    /// `{trace id}-{span id}-{flags}`, in hex.
    pub span_context: &'a str,
    /// Its `tracestate` (W3C header form), when it had one.
    pub trace_state: Option<&'a str>,
}

impl McpServer {
    /// Starts watching `request`: its SERVER span (named `{method} {target}`,
    /// attributed as the OpenTelemetry conventions for MCP say, its parent
    /// the caller's trace context) and its duration. Every transport serves a
    /// request through [`Observation::run`]; the era bridge serves all of one
    /// call's rounds inside that one span.
    ///
    /// `target` is what the request names as [resolving](McpServer::resolve)
    /// it found: the span and the metric read it, and look nothing up again.
    pub fn observe(
        &self,
        request: &Request,
        facts: &RequestFacts,
        target: &dyn Target,
    ) -> Observation {
        let span = request_span(request, facts, target);
        #[cfg(feature = "otel")]
        if !span.is_disabled() {
            place_in_trace(&span, request, facts, target);
        }
        let operation = metrics::enabled().then(|| attributes(request, facts, target));
        Observation {
            span,
            started: Instant::now(),
            operation,
            tool_call: request.method == "tools/call",
            done: false,
        }
    }
}

/// What the duration metric is attributed with: names this server knows, else `_OTHER`.
fn attributes(request: &Request, facts: &RequestFacts, named: &dyn Target) -> Attributes {
    // A metric names any other method `_OTHER`: no time series per made-up method.
    let method = crate::protocol_methods::PROTOCOL_METHODS
        .iter()
        .find(|m| **m == request.method)
        .copied()
        .unwrap_or(OTHER);
    let target = request.target();
    let known = |found: bool| target.map(|t| if found { t } else { OTHER }.to_owned());
    let (tool, prompt) = match method {
        "tools/call" => (known(named.known()), None),
        "prompts/get" => (None, known(named.known())),
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

    /// Records the outcome on the span and the duration in the metric: how
    /// `handled` ended, or `abandoned` (`error.type` `cancelled`) when the
    /// request was dropped before its answer.
    fn finish(&mut self, handled: Option<&Handled>) {
        self.done = true;
        if self.span.is_disabled() && self.operation.is_none() {
            return;
        }
        let mut error_type: Option<String> = None;
        let mut status_code = None;
        let outcome = match handled.map(|h| (h, &h.result)) {
            None => {
                error_type = Some("cancelled".into());
                "abandoned"
            }
            Some((_, Err(e))) => {
                let code = e.code().to_string();
                self.span.record("otel.status_code", "error");
                // The message may repeat what the caller sent: only on request.
                if RECORD_ARGUMENTS.load(Ordering::Relaxed) {
                    let message = e.to_string();
                    self.span.record(
                        "otel.status_description",
                        bounded(&message, MAX_RECORDED_BYTES),
                    );
                }
                error_type = Some(code.clone());
                status_code = Some(code);
                match e {
                    ServerError::InvalidRequestState { reason } => reason.reason(),
                    _ => "error",
                }
            }
            Some((handled, Ok(raw))) => {
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

impl Drop for Observation {
    fn drop(&mut self) {
        if !self.done {
            self.finish(None);
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
        if let Some(mut observation) = this.observation.take() {
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
/// conventions keep names low in cardinality). Given to the span as text, not
/// as a `Display` value the span layer would format through `fmt` again.
fn span_name<'a>(method: &'a str, target: Option<&str>) -> Cow<'a, str> {
    match target {
        Some(target) => {
            let mut name = String::with_capacity(method.len() + 1 + target.len());
            name.push_str(method);
            name.push(' ');
            name.push_str(target);
            Cow::Owned(name)
        }
        None => Cow::Borrowed(method),
    }
}

/// A request id in its string form (`jsonrpc.request.id`): a string id as it
/// is (bounded), unquoted; a number in decimal.
fn id_text(id: &tessera_protocol::RequestId) -> Cow<'_, str> {
    match id {
        tessera_protocol::RequestId::String(s) => Cow::Borrowed(bounded(s, MAX_NAME_BYTES)),
        tessera_protocol::RequestId::Integer(n) => Cow::Owned(n.to_string()),
    }
}

/// Most bytes of a name the client sent (a method, tool or prompt name, an
/// id) that a span attribute keeps; a resource URI keeps [`MAX_URI_BYTES`].
const MAX_NAME_BYTES: usize = 256;

/// Most bytes of a resource URI a span attribute keeps.
const MAX_URI_BYTES: usize = 1024;

/// `text` cut to at most `max` bytes, at a character boundary.
fn bounded(text: &str, max: usize) -> &str {
    if text.len() <= max {
        return text;
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

/// The SERVER span of `request`, with every attribute known before it is
/// served. Whatever the client named is bounded; the span's name carries a
/// tool or prompt only when this server has it (low cardinality, as the
/// conventions ask).
fn request_span(request: &Request, facts: &RequestFacts, resolved: &dyn Target) -> tracing::Span {
    let method = bounded(&request.method, MAX_NAME_BYTES);
    let target = request.target();
    let named = matches!(method, "tools/call" | "prompts/get") && resolved.known();
    // Every attribute known now is given as the span is made (one visit of
    // its fields), not recorded after one by one.
    let (operation, tool, prompt, uri) = match (method, target) {
        ("tools/call", Some(tool)) => (
            Some("execute_tool"),
            Some(bounded(tool, MAX_NAME_BYTES)),
            None,
            None,
        ),
        ("prompts/get", Some(prompt)) => (None, None, Some(bounded(prompt, MAX_NAME_BYTES)), None),
        ("resources/read", Some(uri)) => (None, None, None, Some(bounded(uri, MAX_URI_BYTES))),
        _ => (None, None, None, None),
    };
    let span = tracing::info_span!(
        target: "tessera::mcp",
        "mcp",
        otel.name = span_name(method, target.filter(|_| named)).as_ref(),
        otel.kind = "server",
        otel.status_code = Empty,
        otel.status_description = Empty,
        mcp.method.name = method,
        gen_ai.operation.name = operation,
        gen_ai.tool.name = tool,
        gen_ai.prompt.name = prompt,
        mcp.resource.uri = uri,
        jsonrpc.request.id = id_text(&request.id).as_ref(),
        mcp.protocol.version = protocol_version(request, facts).map(|v| bounded(v, MAX_NAME_BYTES)),
        mcp.session.id = facts.session_id.as_deref(),
        network.transport = facts.transport.map(crate::NetworkTransport::as_str),
        error.type = Empty,
        rpc.response.status_code = Empty,
        mcp.mrtr.outcome = Empty,
        mcp.mrtr.round = Empty,
        mcp.mrtr.flow_id = Empty,
        mcp.mrtr.input_keys = Empty,
        mcp.request.arguments = Empty,
        mcp.request.input_responses = Empty,
    );
    if !span.is_disabled() && RECORD_ARGUMENTS.load(Ordering::Relaxed) {
        for (param, field) in [
            ("arguments", "mcp.request.arguments"),
            (
                tessera_protocol::INPUT_RESPONSES,
                "mcp.request.input_responses",
            ),
        ] {
            if let Some(value) = request.param(param) {
                span.record(field, bounded_json(value).as_str());
            }
        }
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
    let text = value.to_string();
    if text.len() <= MAX_RECORDED_BYTES {
        return text;
    }
    format!("{}…", bounded(&text, MAX_RECORDED_BYTES))
}

/// Whether a `tools/call` result says `isError: true` (read without building
/// it, and not read at all when the text has no `"isError"` key: a quote
/// inside a JSON string is escaped, so the unescaped key cannot hide in one;
/// a key spelled with `\u` escapes, which no encoder here writes, is not seen).
fn is_tool_error(raw: &str) -> bool {
    if !raw.contains(r#""isError""#) {
        return false;
    }
    #[derive(serde::Deserialize)]
    struct Flag {
        #[serde(rename = "isError", default)]
        is_error: Option<bool>,
    }
    serde_json::from_str::<Flag>(raw).is_ok_and(|f| f.is_error == Some(true))
}

/// Places `span` in its trace: its parent is the first valid of the
/// request's `_meta` trace context, the transport's, and round one's span
/// when the request carries a ticket; and a later round's span links to
/// round one's (read from the ticket once, for both).
#[cfg(feature = "otel")]
fn place_in_trace(
    span: &tracing::Span,
    request: &Request,
    facts: &RequestFacts,
    resolved: &dyn Target,
) {
    use opentelemetry::trace::TraceContextExt;
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    // Round one's span, from the ticket opened when the request was resolved.
    let first = resolved
        .round_one(request)
        .and_then(super::flow::otel::round_one);
    let valid = |cx: opentelemetry::Context| cx.span().span_context().is_valid().then_some(cx);
    let parent = request
        .trace_context()
        .and_then(|(traceparent, tracestate)| {
            valid(super::propagation::extract(traceparent, tracestate))
        })
        .or_else(|| {
            let c = facts.trace_context.as_ref()?;
            valid(super::propagation::extract(
                &c.traceparent,
                c.tracestate.as_deref(),
            ))
        })
        .or_else(|| {
            let first = first.clone()?;
            Some(opentelemetry::Context::new().with_remote_span_context(first))
        });
    if let Some(parent) = parent {
        let _ = span.set_parent(parent);
    }
    // A span made here is never round one's own (the era bridge runs its
    // later rounds inside round one's span, and links nothing).
    if let Some(first) = first {
        span.add_link(first);
    }
}

#[cfg(test)]
mod tests {
    use super::is_tool_error;

    #[test]
    fn tool_errors_are_read_from_the_top_level_flag() {
        assert!(is_tool_error(r#"{"content":[],"isError":true}"#));
        assert!(is_tool_error(r#"{ "isError" : true, "content": [] }"#));
        assert!(!is_tool_error(r#"{"content":[],"isError":false}"#));
        assert!(!is_tool_error(r#"{"content":[]}"#));
        // The words inside text are not the flag.
        assert!(!is_tool_error(
            r#"{"content":[{"type":"text","text":"{\"isError\":true}"}]}"#
        ));
        // Nested under another key, it is not the result's flag either.
        assert!(!is_tool_error(
            r#"{"content":[],"structuredContent":{"isError":true}}"#
        ));
    }
}

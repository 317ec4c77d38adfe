//! What an operator sees of each request: one span per MCP message, named and
//! attributed as the OpenTelemetry semantic conventions for MCP say
//! (`gen-ai/mcp.md`), the rounds of a multi round-trip flow tied together,
//! and the server's metrics.
//!
//! - [`observe`](crate::McpServer::observe): the SERVER span of one request,
//!   and its duration, which every transport wraps around serving it;
//! - `flow`: what a ticket carries so that later rounds find round one;
//! - `metrics`: the instruments, recorded once `record_metrics` was given
//!   a meter (feature `otel`).
//!
//! Spans are `tracing` spans under the target [`SPAN_TARGET`]: with no
//! subscriber interested in it, a request pays one disabled-callsite check.
//! With the `otel` feature and a `tracing-opentelemetry` layer installed, a
//! span takes its parent from the request's `params._meta.traceparent` and
//! `tracestate` (the conventions' rule), else from the transport's
//! ([`RequestFacts::trace_context`](crate::RequestFacts::trace_context): HTTP
//! headers), else from round one of its flow, and links to round one's span.
//! Contexts are W3C trace context, whatever the global propagator is.
//!
//! Arguments and answers never become attributes unless the operator turns
//! [`record_arguments`] on.

pub(crate) mod flow;
pub mod metrics;
mod observe;
#[cfg(feature = "otel")]
mod propagation;

pub use observe::{
    MAX_RECORDED_BYTES, Observation, Observed, RoundOne, Served, Target, record_arguments,
};
#[cfg(feature = "otel")]
pub use propagation::inject_into;

#[cfg(feature = "otel")]
pub use metrics::record_metrics;

/// The `tracing` target of the SERVER span around each request (and the
/// CLIENT spans of questions the era bridge pushes).
pub const SPAN_TARGET: &str = "tessera::mcp";

/// The span context of the request being served (`{trace id}-{span id}-{flags}`),
/// for the task it starts to keep ([`NewTask::trace`](crate::NewTask::trace)).
pub(crate) fn task_trace() -> Option<String> {
    #[cfg(feature = "otel")]
    return flow::otel::kept_of(&request_span()?).0;
    #[cfg(not(feature = "otel"))]
    None
}

/// Links the request being served to the span that started its task
/// (`trace`, as [`task_trace`] kept it), as later rounds link to round one.
#[cfg(feature = "otel")]
pub(crate) fn link_to_task_start(trace: &str) {
    if let Some(span) = request_span() {
        flow::otel::link_to_round_one(
            &span,
            RoundOne {
                span_context: trace,
                trace_state: None,
            },
        );
    }
}

/// The SERVER span of the request being served, when it is recorded: the
/// current span if [`McpServer::observe`](crate::McpServer::observe) made it
/// (never a span of the caller's own, which a flow must not be sealed into).
pub(crate) fn request_span() -> Option<tracing::Span> {
    let span = tracing::Span::current();
    let ours = span
        .metadata()
        .is_some_and(|m| m.target() == SPAN_TARGET && m.name() == "mcp");
    ours.then_some(span)
}

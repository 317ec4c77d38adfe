//! One flow, one story: round one's span context and a flow id ride in every
//! ticket the flow seals, so a later round links to round one's span (and,
//! arriving without trace context of its own, continues round one's trace).
//! Sealed and bound like the rest of the ticket, so a client cannot move a
//! flow into another trace; it adds about 100 bytes to each ticket while
//! spans are recorded, and under `SealMode::Signed` the client can read the
//! ids (of a trace it took part in).

use serde::{Deserialize, Serialize};

/// What a ticket carries of its flow, when spans are recorded.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub(crate) struct Flow {
    /// The flow's id, the same in every round (`mcp.mrtr.flow_id`).
    #[serde(rename = "i")]
    pub id: String,
    /// The round that sealed the ticket: 1 for round one.
    #[serde(rename = "n")]
    pub round: u32,
    /// Round one's span context, `{trace id}-{span id}-{flags}` in hex, when
    /// it had a valid one.
    #[serde(rename = "t", default, skip_serializing_if = "Option::is_none")]
    pub first: Option<String>,
}

impl Flow {
    /// This round's place in the flow: the next round after `sealed`, or round
    /// one of a new flow. Records it on the request's span and links that span to
    /// round one's. `None` when no span is recorded (nothing goes in the ticket).
    pub(crate) fn this_round(sealed: Option<Flow>) -> Option<Flow> {
        let span = super::request_span()?;
        let flow = match sealed {
            Some(earlier) => {
                #[cfg(feature = "otel")]
                if let Some(first) = earlier.first.as_deref() {
                    otel::link_to_round_one(&span, first);
                }
                Flow {
                    round: earlier.round.saturating_add(1),
                    ..earlier
                }
            }
            None => Flow {
                id: tessera_state::random_id().unwrap_or_default(),
                round: 1,
                #[cfg(feature = "otel")]
                first: otel::span_context_of(&span),
                #[cfg(not(feature = "otel"))]
                first: None,
            },
        };
        span.record("mcp.mrtr.round", i64::from(flow.round));
        span.record("mcp.mrtr.flow_id", flow.id.as_str());
        Some(flow)
    }
}

/// The span contexts behind the flow (feature `otel`).
#[cfg(feature = "otel")]
pub(crate) mod otel {
    use opentelemetry::trace::{
        SpanContext, SpanId, TraceContextExt, TraceFlags, TraceId, TraceState,
    };
    use tracing_opentelemetry::OpenTelemetrySpanExt;

    /// `span`'s context as a ticket keeps it, when it has a valid one.
    pub(crate) fn span_context_of(span: &tracing::Span) -> Option<String> {
        let cx = span.context();
        let sc = cx.span().span_context().clone();
        sc.is_valid().then(|| {
            format!(
                "{}-{}-{:02x}",
                sc.trace_id(),
                sc.span_id(),
                sc.trace_flags().to_u8()
            )
        })
    }

    /// Round one's span context from what [`span_context_of`] kept (a ticket
    /// this server sealed, so malformed only if the key was shared with
    /// something else: then none).
    pub(crate) fn round_one(kept: &str) -> Option<SpanContext> {
        let mut parts = kept.split('-');
        let trace = TraceId::from_hex(parts.next()?).ok()?;
        let span = SpanId::from_hex(parts.next()?).ok()?;
        let flags = u8::from_str_radix(parts.next()?, 16).ok()?;
        let sc = SpanContext::new(
            trace,
            span,
            TraceFlags::new(flags),
            true,
            TraceState::default(),
        );
        sc.is_valid().then_some(sc)
    }

    /// Links `span` to round one's span, unless it is round one's span (the
    /// era bridge runs every round inside the one request's span).
    pub(crate) fn link_to_round_one(span: &tracing::Span, kept: &str) {
        let Some(first) = round_one(kept) else {
            return;
        };
        let own = span.context().span().span_context().span_id();
        if own != first.span_id() {
            span.add_link(first);
        }
    }
}

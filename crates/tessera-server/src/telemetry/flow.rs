//! One flow, one story: round one's span context and a flow id ride in every
//! ticket the flow seals, so a later round links to round one's span (and,
//! arriving without trace context of its own, continues round one's trace).
//! Round one's `tracestate` rides with it, whole (at most 512 bytes, the
//! W3C size vendors keep), so later rounds carry the caller's vendor entries
//! too. Sealed and bound like the rest of the ticket, so a client cannot
//! move a flow into another trace; it adds about 100 bytes (plus the
//! tracestate) to each ticket while spans are recorded, and under
//! `SealMode::Signed` the client can read the ids (of a trace it took part in).

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
    /// Round one's `tracestate`, when it had one (W3C header form).
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
}

impl Flow {
    /// Round one's span context and tracestate, when it had a valid one.
    pub(crate) fn round_one(&self) -> Option<super::RoundOne<'_>> {
        Some(super::RoundOne {
            span_context: self.first.as_deref()?,
            trace_state: self.state.as_deref(),
        })
    }

    /// This round's place in the flow: the next round after `sealed`, or round
    /// one of a new flow. Records it on the request's span (which
    /// [`observe`](crate::McpServer::observe) linked to round one's when it
    /// made it). `None` when no span is recorded (nothing goes in the ticket).
    pub(crate) fn this_round(sealed: Option<Flow>) -> Option<Flow> {
        let span = super::request_span()?;
        let flow = match sealed {
            Some(earlier) => Flow {
                round: earlier.round.saturating_add(1),
                ..earlier
            },
            None => {
                #[cfg(feature = "otel")]
                let (first, state) = otel::kept_of(&span);
                #[cfg(not(feature = "otel"))]
                let (first, state) = (None, None);
                Flow {
                    id: tessera_state::random_id().unwrap_or_default(),
                    round: 1,
                    first,
                    state,
                }
            }
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

    /// `span`'s context as a ticket keeps it (`{trace id}-{span id}-{flags}`),
    /// when it has a valid one, and its `tracestate` in its header form, when
    /// it has one that fits a ticket ([`MAX_TRACESTATE_BYTES`]).
    pub(crate) fn kept_of(span: &tracing::Span) -> (Option<String>, Option<String>) {
        let cx = span.context();
        let sc = cx.span().span_context().clone();
        if !sc.is_valid() {
            return (None, None);
        }
        let header = sc.trace_state().header();
        let state = (!header.is_empty() && header.len() <= MAX_TRACESTATE_BYTES).then_some(header);
        // `{trace id}-{span id}-{flags}`, written without `fmt` (this runs on every traced flow).
        let mut context = String::with_capacity(32 + 1 + 16 + 1 + 2);
        tessera_state::push_lower_hex(&mut context, &sc.trace_id().to_bytes());
        context.push('-');
        tessera_state::push_lower_hex(&mut context, &sc.span_id().to_bytes());
        context.push('-');
        tessera_state::push_lower_hex(&mut context, &[sc.trace_flags().to_u8()]);
        (Some(context), state)
    }

    /// The longest `tracestate` a ticket carries: 512 bytes (the W3C Trace
    /// Context's "vendors SHOULD propagate at least 512 characters"); a
    /// longer one is left out, round one's span context still kept.
    pub(crate) const MAX_TRACESTATE_BYTES: usize = 512;

    /// Round one's span context, its `tracestate` included, from what
    /// [`kept_of`] kept (a ticket this server
    /// sealed, so malformed only if the key was shared with something else:
    /// then none).
    pub(crate) fn round_one(kept: crate::telemetry::RoundOne<'_>) -> Option<SpanContext> {
        let state = kept
            .trace_state
            .and_then(|s| s.parse::<TraceState>().ok())
            .unwrap_or_default();
        let mut parts = kept.span_context.split('-');
        let trace = TraceId::from_hex(parts.next()?).ok()?;
        let span = SpanId::from_hex(parts.next()?).ok()?;
        let flags = u8::from_str_radix(parts.next()?, 16).ok()?;
        let sc = SpanContext::new(trace, span, TraceFlags::new(flags), true, state);
        sc.is_valid().then_some(sc)
    }

    /// Links `span` to the span `kept` names (the call that started a task),
    /// unless it is that span itself. (A later round's span is linked to round
    /// one's where it is made, in `observe`.)
    pub(crate) fn link_to_round_one(span: &tracing::Span, kept: crate::telemetry::RoundOne<'_>) {
        let Some(first) = round_one(kept) else {
            return;
        };
        let own = span.context().span().span_context().span_id();
        if own != first.span_id() {
            span.add_link(first);
        }
    }
}

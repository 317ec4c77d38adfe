//! The server's instruments. Until `record_metrics` is given a meter
//! (feature `otel`; `tessera-otel` does it), every recording here returns at
//! once: a request pays one atomic load per instrument it touches. The
//! recording functions are for Tessera's own transports (hidden from the docs).
//!
//! | Instrument | Kind | Unit | Attributes |
//! |---|---|---|---|
//! | `mcp.server.operation.duration` | histogram | s | `mcp.method.name`, `gen_ai.tool.name`, `gen_ai.prompt.name`, `mcp.protocol.version`, `network.transport`, `error.type`, `rpc.response.status_code` |
//! | `tessera.ticket.refusals` | counter | `{ticket}` | `tessera.refusal.reason` |
//! | `tessera.ledger.duration` | histogram | s | `tessera.ledger.outcome` (`redeemed`, `already_used`, `failed`) |
//! | `tessera.ledger.failures` | counter | `{redemption}` | `tessera.ledger.error` |
//! | `tessera.legacy.pending_questions` | up-down counter | `{question}` | `network.transport` |
//! | `tessera.listen.streams` | up-down counter | `{stream}` | |
//! | `tessera.connections.shed` | counter | `{connection}` | `tessera.connection.reason` |

/// The attributes of one operation's duration (the conventions' set).
#[derive(Debug, Default)]
pub struct Operation<'a> {
    /// `mcp.method.name`.
    pub method: &'a str,
    /// `gen_ai.tool.name` (`tools/call`).
    pub tool: Option<&'a str>,
    /// `gen_ai.prompt.name` (`prompts/get`).
    pub prompt: Option<&'a str>,
    /// `mcp.protocol.version`.
    pub protocol_version: Option<&'a str>,
    /// `network.transport`: `tcp` or `pipe`.
    pub transport: Option<&'static str>,
    /// `error.type`: the JSON-RPC error code, or `tool_error`.
    pub error_type: Option<&'a str>,
    /// `rpc.response.status_code`: the JSON-RPC error code.
    pub status_code: Option<&'a str>,
}

#[cfg(feature = "otel")]
mod instruments {
    use std::sync::OnceLock;

    use opentelemetry::KeyValue;
    use opentelemetry::metrics::{Counter, Histogram, Meter, UpDownCounter};

    /// The conventions' advice for `mcp.server.operation.duration`, in seconds.
    const DURATION_BOUNDARIES: &[f64] = &[
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];

    pub(super) struct Instruments {
        pub operation_duration: Histogram<f64>,
        pub ticket_refusals: Counter<u64>,
        pub ledger_duration: Histogram<f64>,
        pub ledger_failures: Counter<u64>,
        pub pending_questions: UpDownCounter<i64>,
        pub listen_streams: UpDownCounter<i64>,
        pub connections_shed: Counter<u64>,
    }

    pub(super) static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();

    /// Starts recording this server's metrics into `meter` (once per process:
    /// `false` if a meter was given before, which keeps recording).
    pub fn record_metrics(meter: &Meter) -> bool {
        let mut fresh = false;
        INSTRUMENTS.get_or_init(|| {
            fresh = true;
            Instruments {
                operation_duration: meter
                    .f64_histogram("mcp.server.operation.duration")
                    .with_unit("s")
                    .with_description("Duration of an MCP request as the server saw it")
                    .with_boundaries(DURATION_BOUNDARIES.to_vec())
                    .build(),
                ticket_refusals: meter
                    .u64_counter("tessera.ticket.refusals")
                    .with_unit("{ticket}")
                    .with_description("requestState tickets refused, by reason")
                    .build(),
                ledger_duration: meter
                    .f64_histogram("tessera.ledger.duration")
                    .with_unit("s")
                    .with_description("Time to redeem a single-use ticket in the ledger")
                    .with_boundaries(vec![
                        0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0,
                    ])
                    .build(),
                ledger_failures: meter
                    .u64_counter("tessera.ledger.failures")
                    .with_unit("{redemption}")
                    .with_description("Single-use redemptions the ledger could not record")
                    .build(),
                pending_questions: meter
                    .i64_up_down_counter("tessera.legacy.pending_questions")
                    .with_unit("{question}")
                    .with_description(
                        "Questions pushed to initialize-era clients and not yet answered",
                    )
                    .build(),
                listen_streams: meter
                    .i64_up_down_counter("tessera.listen.streams")
                    .with_unit("{stream}")
                    .with_description("Open listen streams")
                    .build(),
                connections_shed: meter
                    .u64_counter("tessera.connections.shed")
                    .with_unit("{connection}")
                    .with_description(
                        "Connections closed or refused at the connection cap, by reason",
                    )
                    .build(),
            }
        });
        fresh
    }

    pub(super) fn attrs(op: &super::Operation<'_>) -> Vec<KeyValue> {
        let mut out = Vec::with_capacity(7);
        out.push(KeyValue::new("mcp.method.name", op.method.to_owned()));
        let optional = [
            ("gen_ai.tool.name", op.tool),
            ("gen_ai.prompt.name", op.prompt),
            ("mcp.protocol.version", op.protocol_version),
            ("network.transport", op.transport),
            ("error.type", op.error_type),
            ("rpc.response.status_code", op.status_code),
        ];
        for (key, value) in optional {
            if let Some(value) = value {
                out.push(KeyValue::new(key, value.to_owned()));
            }
        }
        out
    }
}

#[cfg(feature = "otel")]
pub use instruments::record_metrics;

#[cfg(feature = "otel")]
use opentelemetry::KeyValue;

/// Runs `record` with the instruments, once a meter was given.
#[cfg(feature = "otel")]
fn with(record: impl FnOnce(&instruments::Instruments)) {
    if let Some(i) = instruments::INSTRUMENTS.get() {
        record(i);
    }
}

/// Whether metrics are recorded (what an operation's attributes are gathered for).
pub fn enabled() -> bool {
    #[cfg(feature = "otel")]
    return instruments::INSTRUMENTS.get().is_some();
    #[cfg(not(feature = "otel"))]
    false
}

/// One request took `seconds`.
#[doc(hidden)]
pub fn operation(seconds: f64, op: &Operation<'_>) {
    #[cfg(feature = "otel")]
    with(|i| {
        i.operation_duration
            .record(seconds, &instruments::attrs(op))
    });
    #[cfg(not(feature = "otel"))]
    let _ = (seconds, op);
}

/// A ticket was refused for `reason` (a [`RequestStateFailure::reason`](crate::RequestStateFailure::reason)).
#[doc(hidden)]
pub fn ticket_refused(reason: &'static str) {
    #[cfg(feature = "otel")]
    with(|i| {
        i.ticket_refusals
            .add(1, &[KeyValue::new("tessera.refusal.reason", reason)])
    });
    #[cfg(not(feature = "otel"))]
    let _ = reason;
}

/// A single-use redemption took `seconds` and ended as `outcome`
/// (`redeemed`, `already_used` or `failed`); `error` names a failure.
#[doc(hidden)]
pub fn ledger(seconds: f64, outcome: &'static str, error: Option<&'static str>) {
    #[cfg(feature = "otel")]
    with(|i| {
        i.ledger_duration
            .record(seconds, &[KeyValue::new("tessera.ledger.outcome", outcome)]);
        if let Some(error) = error {
            i.ledger_failures
                .add(1, &[KeyValue::new("tessera.ledger.error", error)]);
        }
    });
    #[cfg(not(feature = "otel"))]
    let _ = (seconds, outcome, error);
}

/// One question pushed to an initialize-era client, counted in
/// `tessera.legacy.pending_questions` while it lives (dropped when answered,
/// failed or abandoned).
#[doc(hidden)]
#[must_use = "the question counts as pending only while this lives"]
pub struct PendingQuestion(&'static str);

impl PendingQuestion {
    /// Counts a question pushed over `transport`.
    pub fn new(transport: &'static str) -> Self {
        pending_questions(1, transport);
        Self(transport)
    }
}

impl Drop for PendingQuestion {
    fn drop(&mut self) {
        pending_questions(-1, self.0);
    }
}

/// Questions pushed to initialize-era clients over `transport` changed by `delta`.
fn pending_questions(delta: i64, transport: &'static str) {
    #[cfg(feature = "otel")]
    with(|i| {
        i.pending_questions
            .add(delta, &[KeyValue::new("network.transport", transport)])
    });
    #[cfg(not(feature = "otel"))]
    let _ = (delta, transport);
}

/// Open listen streams changed by `delta`.
#[doc(hidden)]
pub fn listen_streams(delta: i64) {
    #[cfg(feature = "otel")]
    with(|i| i.listen_streams.add(delta, &[]));
    #[cfg(not(feature = "otel"))]
    let _ = delta;
}

/// A connection was closed or refused at the connection cap, for `reason`.
#[doc(hidden)]
pub fn connection_shed(reason: &'static str) {
    #[cfg(feature = "otel")]
    with(|i| {
        i.connections_shed
            .add(1, &[KeyValue::new("tessera.connection.reason", reason)])
    });
    #[cfg(not(feature = "otel"))]
    let _ = reason;
}

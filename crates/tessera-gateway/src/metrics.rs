//! The gateway's instruments, recorded into the global meter (which
//! `tessera-otel` sets from `OTEL_*` and `--metrics`; without it every
//! recording is a no-op).
//!
//! | Instrument | Kind | Unit | Attributes |
//! |---|---|---|---|
//! | `tessera.gateway.upstream.duration` | histogram | s | `tessera.upstream`, `mcp.method.name`, `error.type` |
//! | `tessera.gateway.held_calls` | up-down counter | `{call}` | `tessera.upstream` |

use std::sync::OnceLock;
use std::time::Duration;

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Histogram, UpDownCounter};
use tessera_client::ClientError;

struct Instruments {
    upstream_duration: Histogram<f64>,
    held_calls: UpDownCounter<i64>,
}

fn instruments() -> &'static Instruments {
    static INSTRUMENTS: OnceLock<Instruments> = OnceLock::new();
    INSTRUMENTS.get_or_init(|| {
        let meter = opentelemetry::global::meter("tessera-gateway");
        Instruments {
            upstream_duration: meter
                .f64_histogram("tessera.gateway.upstream.duration")
                .with_unit("s")
                .with_description("One request to an upstream server, from sending it to its result (time spent answering pushed questions included)")
                .build(),
            held_calls: meter
                .i64_up_down_counter("tessera.gateway.held_calls")
                .with_unit("{call}")
                .with_description("Upstream calls held open while their callers answer a pushed question")
                .build(),
        }
    })
}

/// One request to `upstream` took `took`; `error`, when it failed.
pub(crate) fn upstream_request(
    upstream: &str,
    method: &str,
    took: Duration,
    error: Option<&ClientError>,
) {
    let mut attributes = vec![
        KeyValue::new("tessera.upstream", upstream.to_owned()),
        KeyValue::new("mcp.method.name", method.to_owned()),
    ];
    if let Some(error) = error {
        let kind = match error {
            ClientError::Rpc { error, .. } => error.code.to_string(),
            ClientError::Process(_) => "process".into(),
            ClientError::Transport(_) => "transport".into(),
            ClientError::TimedOut { .. } => "timeout".into(),
            _ => "protocol".into(),
        };
        attributes.push(KeyValue::new("error.type", kind));
    }
    instruments()
        .upstream_duration
        .record(took.as_secs_f64(), &attributes);
}

/// Calls held for `upstream` changed by `delta`.
pub(crate) fn held_calls(upstream: &str, delta: i64) {
    instruments().held_calls.add(
        delta,
        &[KeyValue::new("tessera.upstream", upstream.to_owned())],
    );
}

//! Trace context in and out of a message's `_meta`, through OpenTelemetry's
//! global propagator (W3C trace context once `tessera-otel` set it up).

use serde_json::{Map, Value};
use tracing_opentelemetry::OpenTelemetrySpanExt;

/// A context from W3C trace context fields.
pub(crate) fn extract(traceparent: &str, tracestate: Option<&str>) -> opentelemetry::Context {
    struct Carried<'a>(&'a str, Option<&'a str>);
    impl opentelemetry::propagation::Extractor for Carried<'_> {
        fn get(&self, key: &str) -> Option<&str> {
            match key {
                "traceparent" => Some(self.0),
                "tracestate" => self.1,
                _ => None,
            }
        }
        fn keys(&self) -> Vec<&str> {
            vec!["traceparent", "tracestate"]
        }
    }
    opentelemetry::global::get_text_map_propagator(|p| p.extract(&Carried(traceparent, tracestate)))
}

/// Puts `span`'s context into a message's `_meta` (a question the era bridge
/// pushes, so the client's own spans can continue the trace).
pub fn inject_into(span: &tracing::Span, meta: &mut Map<String, Value>) {
    struct Meta<'a>(&'a mut Map<String, Value>);
    impl opentelemetry::propagation::Injector for Meta<'_> {
        fn set(&mut self, key: &str, value: String) {
            self.0.insert(key.to_owned(), Value::String(value));
        }
    }
    let cx = span.context();
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut Meta(meta)));
}

//! Trace context in and out of a message's `_meta`: W3C trace context, as
//! the OpenTelemetry conventions for MCP carry it there (whatever the
//! process's global propagator is), read and written by the SDK's propagator.

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
    opentelemetry::propagation::TextMapPropagator::extract(
        &opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        &Carried(traceparent, tracestate),
    )
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
    opentelemetry::propagation::TextMapPropagator::inject_context(
        &opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        &span.context(),
        &mut Meta(meta),
    );
}

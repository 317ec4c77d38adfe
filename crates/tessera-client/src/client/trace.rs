//! The current span's trace context into a request's `_meta` (feature
//! `otel`): the OpenTelemetry conventions for MCP carry it there.

use tessera_protocol::JsonObject;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// Injects the current `tracing` span's OpenTelemetry context as W3C trace
/// context (nothing when no span is recorded; a `traceparent` already in
/// `meta` is kept).
pub(super) fn inject_current(meta: &mut JsonObject) {
    struct Meta<'a>(&'a mut JsonObject);
    impl opentelemetry::propagation::Injector for Meta<'_> {
        fn set(&mut self, key: &str, value: String) {
            self.0
                .insert(key.to_owned(), serde_json::Value::String(value));
        }
    }
    if meta.contains_key("traceparent") {
        return;
    }
    opentelemetry::propagation::TextMapPropagator::inject_context(
        &opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        &tracing::Span::current().context(),
        &mut Meta(meta),
    );
}

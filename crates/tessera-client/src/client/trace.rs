//! The current span's trace context into a request's `_meta` (feature
//! `otel`): the OpenTelemetry conventions for MCP carry it there.

use tessera_protocol::JsonObject;
use tracing_opentelemetry::OpenTelemetrySpanExt as _;

/// Injects the current `tracing` span's OpenTelemetry context through the
/// global propagator (nothing when no span is recorded).
pub(super) fn inject_current(meta: &mut JsonObject) {
    struct Meta<'a>(&'a mut JsonObject);
    impl opentelemetry::propagation::Injector for Meta<'_> {
        fn set(&mut self, key: &str, value: String) {
            self.0
                .insert(key.to_owned(), serde_json::Value::String(value));
        }
    }
    let cx = tracing::Span::current().context();
    opentelemetry::global::get_text_map_propagator(|p| p.inject_context(&cx, &mut Meta(meta)));
}

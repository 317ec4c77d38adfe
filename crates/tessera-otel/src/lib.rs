//! OpenTelemetry for Tessera servers: traces and metrics exported with OTLP
//! over HTTP/protobuf, configured by the standard `OTEL_*` variables, and a
//! Prometheus text endpoint. Nothing is exported unless configured.
//!
//! ```no_run
//! use tracing_subscriber::Layer as _;
//! use tracing_subscriber::layer::SubscriberExt as _;
//! use tracing_subscriber::util::SubscriberInitExt as _;
//!
//! # fn main() -> Result<(), tessera_otel::TelemetryError> {
//! let telemetry = tessera_otel::Telemetry::builder("my-server")
//!     .prometheus(true)
//!     .from_env()?;
//! // The per-request span is for traces: the log leaves it out.
//! let filter = tracing_subscriber::EnvFilter::new("info,tessera::mcp=warn");
//! let log = tracing_subscriber::fmt::layer().with_filter(filter);
//! let subscriber = tracing_subscriber::registry().with(log);
//! match telemetry.tracing_layer() {
//!     Some(spans) => subscriber.with(spans).init(),
//!     None => subscriber.init(),
//! }
//! // ... serve; keep `telemetry` until exit: dropping it sends what is queued.
//! # Ok(()) }
//! ```
//!
//! | Variable | Meaning |
//! |---|---|
//! | `OTEL_EXPORTER_OTLP_ENDPOINT` | Export traces and metrics to `{endpoint}/v1/traces` and `/v1/metrics` |
//! | `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, `..._METRICS_ENDPOINT` | The full URL for one signal |
//! | `OTEL_EXPORTER_OTLP_PROTOCOL` (and per signal) | `http/protobuf`, the one this build speaks; anything else is refused at boot |
//! | `OTEL_TRACES_EXPORTER`, `OTEL_METRICS_EXPORTER` | `otlp` (default) or `none` |
//! | `OTEL_SERVICE_NAME` | `service.name` (else the binary's name) |
//! | `OTEL_TRACES_SAMPLER`, `OTEL_TRACES_SAMPLER_ARG` | The sampler (default `parentbased_always_on`) |
//! | `OTEL_BSP_SCHEDULE_DELAY` | How often spans are sent, ms |
//! | `OTEL_METRIC_EXPORT_INTERVAL` | How often metrics are sent, ms |
//! | `OTEL_SDK_DISABLED` | `true`: no OTLP export |
//!
//! Spans and metrics are those `tessera_server::telemetry` defines; context
//! travels as W3C trace context (the global propagator is set to it).

mod config;
mod prometheus_endpoint;

use std::sync::Arc;

use opentelemetry::trace::TracerProvider as _;
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::SdkMeterProvider;
use opentelemetry_sdk::trace::SdkTracerProvider;
use tracing_subscriber::Layer;

/// Why telemetry could not be set up: a message for the operator.
#[derive(Debug, thiserror::Error)]
pub enum TelemetryError {
    /// A variable asks for something this build does not do.
    #[error("{0}")]
    Unsupported(String),
    /// The OTLP exporter could not be built (a malformed endpoint, say).
    #[error("OTLP exporter: {0}")]
    Exporter(String),
    /// The Prometheus exporter could not be built.
    #[error("Prometheus exporter: {0}")]
    Prometheus(String),
}

/// How to set telemetry up: the service's default name, and whether to keep
/// metrics for a Prometheus endpoint.
#[derive(Debug, Clone)]
pub struct TelemetryBuilder {
    service_name: String,
    prometheus: bool,
    arguments: bool,
}

impl TelemetryBuilder {
    /// Keeps the metrics for [`Telemetry::serve_metrics`] too (`--metrics`).
    pub fn prometheus(mut self, on: bool) -> Self {
        self.prometheus = on;
        self
    }

    /// Puts arguments and answers on spans (`--trace-arguments`; off by
    /// default: they may hold what users typed).
    pub fn record_arguments(mut self, on: bool) -> Self {
        self.arguments = on;
        self
    }

    /// Sets up what the environment configures (and Prometheus, if asked),
    /// installs the global propagator, tracer and meter providers, and starts
    /// Tessera's instruments.
    pub fn from_env(self) -> Result<Telemetry, TelemetryError> {
        self.install_with(|name| std::env::var(name).ok())
    }

    fn install_with(
        self,
        var: impl Fn(&str) -> Option<String>,
    ) -> Result<Telemetry, TelemetryError> {
        let export = config::Export::from_vars(&var)?;
        let mut telemetry = Telemetry::default();
        if !export.traces && !export.metrics && !self.prometheus {
            return Ok(telemetry);
        }
        let named_by_env = var("OTEL_SERVICE_NAME").is_some_and(|v| !v.trim().is_empty())
            || var("OTEL_RESOURCE_ATTRIBUTES").is_some_and(|v| v.contains("service.name="));
        let resource = if named_by_env {
            Resource::builder().build()
        } else {
            Resource::builder()
                .with_service_name(self.service_name.clone())
                .build()
        };
        opentelemetry::global::set_text_map_propagator(
            opentelemetry_sdk::propagation::TraceContextPropagator::new(),
        );
        if export.traces {
            tessera_server::telemetry::record_arguments(self.arguments);
            let exporter = opentelemetry_otlp::SpanExporter::builder()
                .with_http()
                .build()
                .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
            let provider = SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(resource.clone())
                .build();
            opentelemetry::global::set_tracer_provider(provider.clone());
            telemetry.traces = Some(provider);
        }
        if export.metrics || self.prometheus {
            let mut builder = SdkMeterProvider::builder().with_resource(resource);
            if export.metrics {
                let exporter = opentelemetry_otlp::MetricExporter::builder()
                    .with_http()
                    .build()
                    .map_err(|e| TelemetryError::Exporter(e.to_string()))?;
                builder = builder.with_periodic_exporter(exporter);
            }
            if self.prometheus {
                let registry = prometheus::Registry::new();
                let exporter = opentelemetry_prometheus::exporter()
                    .with_registry(registry.clone())
                    .without_target_info()
                    .build()
                    .map_err(|e| TelemetryError::Prometheus(e.to_string()))?;
                builder = builder.with_reader(exporter);
                telemetry.registry = Some(Arc::new(registry));
            }
            let provider = builder.build();
            opentelemetry::global::set_meter_provider(provider.clone());
            tessera_server::telemetry::record_metrics(
                &opentelemetry::metrics::MeterProvider::meter(&provider, "tessera"),
            );
            telemetry.meters = Some(provider);
        }
        Ok(telemetry)
    }
}

/// Telemetry as the environment configured it. Keep it until the process
/// exits: dropping it flushes what is queued and stops the exporters.
#[derive(Default)]
pub struct Telemetry {
    traces: Option<SdkTracerProvider>,
    meters: Option<SdkMeterProvider>,
    registry: Option<Arc<prometheus::Registry>>,
}

impl Telemetry {
    /// Telemetry for a service named `service_name` unless `OTEL_SERVICE_NAME` says otherwise.
    pub fn builder(service_name: impl Into<String>) -> TelemetryBuilder {
        TelemetryBuilder {
            service_name: service_name.into(),
            prometheus: false,
            arguments: false,
        }
    }

    /// Whether spans are exported.
    pub fn exports_traces(&self) -> bool {
        self.traces.is_some()
    }

    /// Whether metrics are recorded (OTLP or Prometheus).
    pub fn records_metrics(&self) -> bool {
        self.meters.is_some()
    }

    /// The layer that turns `tracing` spans at `info` and above into
    /// OpenTelemetry spans, when traces are exported. When it is `None`,
    /// leave it out of the subscriber rather than adding the `Option`: a
    /// `None` layer still marks every callsite as wanted, so spans nobody
    /// records would be built.
    pub fn tracing_layer<S>(&self) -> Option<impl Layer<S> + use<S>>
    where
        S: tracing::Subscriber + for<'span> tracing_subscriber::registry::LookupSpan<'span>,
    {
        let tracer = self.traces.as_ref()?.tracer("tessera");
        Some(
            tracing_opentelemetry::layer()
                .with_tracer(tracer)
                .with_location(false)
                .with_threads(false)
                .with_tracked_inactivity(false)
                .with_target(false)
                .with_filter(tracing_subscriber::filter::LevelFilter::INFO),
        )
    }

    /// The metrics in the Prometheus text format, when kept for Prometheus.
    pub fn prometheus_text(&self) -> Option<String> {
        use prometheus::Encoder as _;
        let registry = self.registry.as_ref()?;
        let mut text = Vec::new();
        prometheus::TextEncoder::new()
            .encode(&registry.gather(), &mut text)
            .ok()?;
        String::from_utf8(text).ok()
    }

    /// Serves the Prometheus text format at `GET /metrics` on `listener`
    /// (`None` unless the builder asked for Prometheus). Run it as a task.
    pub fn serve_metrics(
        &self,
        listener: tokio::net::TcpListener,
    ) -> Option<impl Future<Output = ()> + Send + 'static> {
        let registry = Arc::clone(self.registry.as_ref()?);
        Some(prometheus_endpoint::serve(listener, registry))
    }

    /// Sends what is queued and stops the exporters (also on drop).
    pub fn shutdown(&mut self) {
        if let Some(traces) = self.traces.take()
            && let Err(e) = traces.shutdown()
        {
            eprintln!("telemetry: spans not all sent: {e}");
        }
        if let Some(meters) = self.meters.take()
            && let Err(e) = meters.shutdown()
        {
            eprintln!("telemetry: metrics not all sent: {e}");
        }
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        self.shutdown();
    }
}

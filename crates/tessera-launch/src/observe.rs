//! What watches a server process: the log on stderr (through the batched
//! queue of [`access_log`](crate::access_log)), the per-request access line,
//! and with the `otel` feature OpenTelemetry from the `OTEL_*` variables.

use std::sync::Arc;

use crate::access_log::{LogGuard, LogQueue};

/// The default log filter: `info`, without the per-request span (its fields
/// are for traces; `RUST_LOG=info,tessera::mcp=info` shows it in the log).
pub const DEFAULT_LOG_FILTER: &str = "info,tessera::mcp=warn";

/// The log and telemetry of a process. Keep it until exit: dropping it
/// writes what is queued (and with `otel` sends what is unexported).
pub struct Observability {
    /// Spans and metrics (exported only when configured).
    #[cfg(feature = "otel")]
    pub telemetry: tessera_otel::Telemetry,
    /// The access log, when requests are logged (`RUST_LOG` at `info` for `tessera_http::stream`).
    access_log: Option<Arc<dyn tessera_http::AccessLog>>,
    _log: LogGuard,
}

impl Observability {
    /// Logs to stderr at `info` unless `RUST_LOG` says otherwise (colours on
    /// a terminal), through a queue one thread writes in batches, so that the
    /// per-request line never makes a request wait; with `otel`, spans and
    /// metrics as the `OTEL_*` variables configure them.
    ///
    /// Installs the global `tracing` subscriber: call it once per process.
    pub fn init(
        #[cfg(feature = "otel")] telemetry: tessera_otel::TelemetryBuilder,
    ) -> Result<Self, String> {
        use tracing_subscriber::Layer as _;
        use tracing_subscriber::layer::SubscriberExt as _;
        use tracing_subscriber::util::SubscriberInitExt as _;

        #[cfg(feature = "otel")]
        let telemetry = telemetry
            .from_env()
            .map_err(|e| format!("telemetry: {e}"))?;
        let (queue, guard) = LogQueue::to_stderr();
        let log = tracing_subscriber::fmt::layer()
            .with_writer(queue.clone())
            .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
            .with_filter(
                tracing_subscriber::EnvFilter::try_from_default_env()
                    .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER)),
            );
        let subscriber = tracing_subscriber::registry().with(log);
        // No `Option` layer when nothing is exported: a `None` layer still makes
        // every callsite "sometimes", and the per-request span would be built for nobody.
        #[cfg(feature = "otel")]
        let installed = match telemetry.tracing_layer() {
            Some(spans) => subscriber.with(spans).try_init(),
            None => subscriber.try_init(),
        };
        #[cfg(not(feature = "otel"))]
        let installed = subscriber.try_init();
        installed.map_err(|e| format!("logging: {e}"))?;
        // The per-request line, when it is wanted, is formatted by the writer thread too.
        let access_log = tracing::enabled!(target: "tessera_http::stream", tracing::Level::INFO)
            .then(|| Arc::new(queue) as Arc<dyn tessera_http::AccessLog>);
        #[cfg(feature = "otel")]
        if telemetry.exports_traces() {
            tracing::info!("OpenTelemetry: exporting spans over OTLP/HTTP");
        }
        Ok(Self {
            #[cfg(feature = "otel")]
            telemetry,
            access_log,
            _log: guard,
        })
    }

    /// `options` with the access log, when requests are logged.
    pub fn access_log(
        &self,
        options: tessera_http::EndpointOptions,
    ) -> tessera_http::EndpointOptions {
        match &self.access_log {
            Some(log) => options.access_log(Arc::clone(log)),
            None => options,
        }
    }

    /// Serves the Prometheus text format on `addr` (`--metrics`), as a task
    /// of the current runtime.
    #[cfg(feature = "otel")]
    pub async fn serve_metrics(&self, addr: &str) -> Result<(), String> {
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("--metrics: cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        let serving = self
            .telemetry
            .serve_metrics(listener)
            .ok_or("--metrics: Prometheus was not set up")?;
        tokio::spawn(serving);
        tracing::info!(%local, "Prometheus metrics at http://{local}/metrics");
        Ok(())
    }
}

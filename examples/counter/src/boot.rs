//! Starting a counter process: logging, and the server its command line,
//! `PORT`, the environment and `.dev.vars` describe.

use std::sync::Arc;

use tessera::McpServer;
use tessera::state::TicketLedger;

use crate::config::{self, Config};

/// The endpoint's options for `config` once it listens at `local`: the era
/// policy, the answer relay of `--redis`, and OAuth protection when
/// `--oauth-issuer` is given.
pub fn endpoint_options(
    config: &Config,
    local: std::net::SocketAddr,
    relay: Option<Arc<dyn tessera::bridge::AnswerRelay>>,
) -> tessera::http::EndpointOptions {
    let mut options =
        with_access_log(tessera::http::EndpointOptions::default().legacy(config.legacy));
    if let Some(relay) = relay {
        options = options.answer_relay(relay);
    }
    let Some(issuer) = &config.oauth_issuer else {
        return options;
    };
    let resource = config
        .oauth_resource
        .clone()
        .unwrap_or_else(|| format!("http://{local}/mcp"));
    let verifier = Arc::new(tessera::auth::JwtVerifier::new(
        issuer.clone(),
        resource.clone(),
    ));
    let protected = tessera::auth::OAuthResource::new(resource.clone(), issuer.clone(), verifier)
        .scopes_supported(config.oauth_scope.iter().flat_map(|s| s.split_whitespace()));
    tracing::info!(%issuer, %resource, "OAuth: accepting access tokens of this issuer for this resource");
    options
        .protected_resource(protected.metadata())
        .authenticate(protected)
}

/// What watches the process: the log and, when the environment configures
/// it, OpenTelemetry. Keep it until exit: dropping it sends what is queued.
pub struct Observability {
    /// Spans and metrics (exported only when configured).
    pub telemetry: tessera::otel::Telemetry,
    _log: crate::log_queue::LogGuard,
}

/// The default log filter: `info`, without the per-request span (its fields
/// are for traces; `RUST_LOG=info,tessera::mcp=info` shows it in the log).
pub const DEFAULT_LOG_FILTER: &str = "info,tessera::mcp=warn";

/// Logs to stderr at `info` unless `RUST_LOG` says otherwise (colours on a
/// terminal), through a queue written by its own thread, so that the
/// per-request line never makes a request wait; and sets `telemetry` up from
/// the `OTEL_*` variables.
pub fn init_observability(
    telemetry: tessera::otel::TelemetryBuilder,
) -> Result<Observability, String> {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;

    let telemetry = telemetry
        .from_env()
        .map_err(|e| format!("telemetry: {e}"))?;
    let (queue, guard) = crate::log_queue::LogQueue::to_stderr();
    let log = tracing_subscriber::fmt::layer()
        .with_writer(queue.clone())
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(DEFAULT_LOG_FILTER)),
        );
    // No `Option` layer when nothing is exported: a `None` layer still makes
    // every callsite "sometimes", and the per-request span would be built for nobody.
    let subscriber = tracing_subscriber::registry().with(log);
    match telemetry.tracing_layer() {
        Some(spans) => subscriber.with(spans).init(),
        None => subscriber.init(),
    }
    // The per-request line, when it is wanted, is formatted by the writer thread too.
    if tracing::enabled!(target: "tessera_http::stream", tracing::Level::INFO) {
        let _ = ACCESS_LOG.set(Arc::new(queue));
    }
    if telemetry.exports_traces() {
        tracing::info!("OpenTelemetry: exporting spans over OTLP/HTTP");
    }
    Ok(Observability {
        telemetry,
        _log: guard,
    })
}

/// Serves the Prometheus text format on `addr` (`--metrics`), as a task of the current runtime.
pub async fn serve_metrics(observability: &Observability, addr: &str) -> Result<(), String> {
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| format!("--metrics: cannot listen on {addr}: {e}"))?;
    let local = listener.local_addr().map_err(|e| e.to_string())?;
    let serving = observability
        .telemetry
        .serve_metrics(listener)
        .ok_or("--metrics: Prometheus was not set up")?;
    tokio::spawn(serving);
    tracing::info!(%local, "Prometheus metrics at http://{local}/metrics");
    Ok(())
}

/// The access log `init_observability` set up, when requests are logged.
static ACCESS_LOG: std::sync::OnceLock<Arc<dyn tessera::http::AccessLog>> =
    std::sync::OnceLock::new();

/// Endpoint options with the access log, when `init_observability` set one up.
pub fn with_access_log(options: tessera::http::EndpointOptions) -> tessera::http::EndpointOptions {
    match ACCESS_LOG.get() {
        Some(log) => options.access_log(Arc::clone(log)),
        None => options,
    }
}

/// The command line and `PORT`, parsed.
pub fn config_from_args() -> Result<Config, String> {
    Config::from_args(std::env::args().skip(1), std::env::var("PORT").ok())
}

/// The server `config` describes; every failure is a message
/// for the operator. Call it inside the Tokio runtime: a `--ledger` connects to Redis.
pub async fn configured_server(config: Config) -> Result<(Config, McpServer), String> {
    let dir = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
    let ring = config::key_ring(
        std::env::var(config::KEY_VAR).ok(),
        std::env::var(config::KEYS_VAR).ok(),
        &dir,
        config.dev,
    )?;
    let ledger_url = config
        .ledger
        .as_ref()
        .or(config.redis.as_ref().filter(|_| config.single_use));
    let ledger: Option<Arc<dyn TicketLedger>> = match ledger_url {
        Some(url) => {
            let redis = tessera::redis::Redis::connect(url)
                .await
                .map_err(|e| format!("--ledger {url}: {e}"))?;
            tracing::info!(%url, "single-use tickets are redeemed in Redis");
            Some(Arc::new(redis.ledger("counter")))
        }
        None => None,
    };
    let server = crate::counter_server_with(
        config::codec(ring, config.ttl)?,
        config.single_use,
        ledger,
        config.oauth_scope.as_deref(),
    )
    .map_err(|e| e.to_string())?;
    Ok((config, server))
}

/// The relay of initialize-era answers over the `--redis` Redis, if one is given.
pub async fn answer_relay(
    config: &Config,
) -> Result<Option<Arc<dyn tessera::bridge::AnswerRelay>>, String> {
    let Some(url) = &config.redis else {
        return Ok(None);
    };
    let redis = tessera::redis::Redis::connect(url)
        .await
        .map_err(|e| format!("--redis {url}: {e}"))?;
    tracing::info!(%url, "initialize-era answers are relayed between instances through Redis");
    Ok(Some(Arc::new(redis.answer_relay("counter"))))
}

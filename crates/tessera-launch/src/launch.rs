//! Serving a binary's server: the key ring, the shared Redis, the server the
//! binary builds, then HTTP or stdio until a signal.

use std::fmt::Display;
use std::process::ExitCode;
use std::sync::Arc;

use bytes::Bytes;
use http::{Request, Response};
use hyper::body::Incoming;
use tessera_http::{DeadlineBody, EndpointOptions, Legacy, McpEndpoint};
use tessera_server::{McpServer, McpServerBuilder};
use tessera_state::{RequestStateCodec, TicketLedger};
use tower_service::Service;

use crate::{Observability, ServeArgs, keys};

type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// A server process about to start: its name (in messages, and the Redis
/// namespace), its flags, and the defaults its flags fall back to.
///
/// ```no_run
/// use tessera_launch::Launch;
/// use tessera_server::{Context, ToolDef};
///
/// fn main() -> std::process::ExitCode {
///     Launch::from_args("hello").main(|setup| {
///         setup
///             .server("hello", "1.0.0")
///             .tool(ToolDef::new("hello", |_: Context, _: ()| async { "Hello!" }))
///             .build()
///     })
/// }
/// ```
#[derive(Debug)]
pub struct Launch {
    name: String,
    args: ServeArgs,
    default_port: u16,
    default_legacy: Legacy,
    path: String,
}

/// What a binary builds its server from: the codec its tickets are sealed
/// with, the ledger and bus the flags chose, and the flags themselves.
pub struct Setup {
    name: String,
    args: ServeArgs,
    codec: RequestStateCodec,
    ledger: Option<Arc<dyn TicketLedger>>,
    #[cfg(feature = "redis")]
    redis: Option<tessera_redis::Redis>,
}

impl Setup {
    /// A builder for the server named `name` at `version`, set up as the
    /// flags say: the key ring and `--ttl`, `--rate-limit` (tool calls per
    /// caller and per tool, shared in Redis with `--redis` or `--redis-cluster`),
    /// `--single-use` (each tool's tickets redeemed once, in Redis with
    /// `--ledger`, `--redis` or `--redis-cluster`), `--oauth-scope` (every
    /// tool needs it), and with `--redis` or `--redis-cluster` the change
    /// bus and the task store shared by every instance. Add the tools, prompts and resources.
    pub fn server(&self, name: impl Into<String>, version: impl Into<String>) -> McpServerBuilder {
        let mut builder = McpServer::builder(name, version)
            .request_state(self.codec.clone())
            .require_scopes(self.args.oauth_scopes());
        if self.args.single_use() {
            builder = builder.single_use_tickets();
        }
        if let Some(ledger) = &self.ledger {
            builder = builder.ticket_ledger(Arc::clone(ledger));
        }
        if let Some((requests, window)) = self
            .args
            .rate_limit
            .as_deref()
            .and_then(|text| tessera_server::middleware::RateLimit::parse(text).ok())
        {
            let store: Arc<dyn tessera_server::middleware::RateLimitStore> = {
                #[cfg(feature = "redis")]
                match &self.redis {
                    Some(redis) => Arc::new(redis.rate_limits(&self.name)),
                    None => Arc::new(tessera_server::middleware::MemoryRateLimits::default()),
                }
                #[cfg(not(feature = "redis"))]
                Arc::new(tessera_server::middleware::MemoryRateLimits::default())
            };
            let limit = tessera_server::middleware::RateLimit::in_store(requests, window, store);
            builder = builder.middleware(tessera_server::middleware::for_methods(
                ["tools/call"],
                limit,
            ));
        }
        #[cfg(feature = "redis")]
        if let Some(redis) = &self.redis {
            builder = builder
                .change_bus(Arc::new(redis.bus(&self.name)))
                .task_store(Arc::new(
                    redis.task_store(&self.name, tessera_server::TaskPolicy::default()),
                ));
        }
        builder
    }

    /// The codec tickets are sealed with (the configured key ring, `--ttl`).
    pub fn request_state(&self) -> &RequestStateCodec {
        &self.codec
    }

    /// The ledger single-use tickets are redeemed in, when the flags chose a shared one.
    pub fn ticket_ledger(&self) -> Option<Arc<dyn TicketLedger>> {
        self.ledger.clone()
    }

    /// The Redis of `--redis`, connected: for the binary's own data.
    #[cfg(feature = "redis")]
    pub fn redis(&self) -> Option<&tessera_redis::Redis> {
        self.redis.as_ref()
    }

    /// The flags.
    pub fn args(&self) -> &ServeArgs {
        &self.args
    }

    /// The process's name, as given to [`Launch::new`].
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The key ring, then the Redis connections the flags name.
    async fn connect(name: &str, args: &ServeArgs) -> Result<Self, String> {
        let dir = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
        let ring = keys::key_ring(
            std::env::var(keys::KEY_VAR).ok(),
            std::env::var(keys::KEYS_VAR).ok(),
            &dir,
            args.dev,
        )?;
        let codec = keys::codec(ring, args.ttl())?;
        #[allow(unused_mut)]
        let mut setup = Setup {
            name: name.to_owned(),
            args: args.clone(),
            codec,
            ledger: None,
            #[cfg(feature = "redis")]
            redis: None,
        };
        #[cfg(feature = "redis")]
        {
            use tessera_redis::Redis;
            if let Some(url) = &args.redis {
                let redis = Redis::connect(url)
                    .await
                    .map_err(|e| format!("--redis {url}: {e}"))?;
                tracing::info!(%url, "instances share this Redis");
                setup.redis = Some(redis);
            } else if let Some(seeds) = &args.redis_cluster {
                let seeds_shown = seeds.join(",");
                let redis = Redis::connect_cluster(seeds)
                    .await
                    .map_err(|e| format!("--redis-cluster {seeds_shown}: {e}"))?;
                tracing::info!(seeds = %seeds_shown, "instances share this Redis Cluster");
                setup.redis = Some(redis);
            }
            let ledger = match (&args.ledger, &setup.redis) {
                (Some(url), _) => Some(
                    Redis::connect(url)
                        .await
                        .map_err(|e| format!("--ledger {url}: {e}"))?
                        .ledger(name),
                ),
                (None, Some(redis)) => Some(redis.ledger(name)),
                _ => None,
            };
            if let Some(ledger) = ledger {
                if args.single_use() {
                    tracing::info!("single-use tickets are redeemed in Redis");
                }
                setup.ledger = Some(Arc::new(ledger));
            }
        }
        Ok(setup)
    }
}

impl Launch {
    /// A process named `name` (in messages, and the namespace of its keys in Redis) with `args`.
    pub fn new(name: impl Into<String>, args: ServeArgs) -> Self {
        Self {
            name: name.into(),
            args,
            default_port: 8787,
            default_legacy: Legacy::default(),
            path: "/mcp".into(),
        }
    }

    /// [`new`](Self::new) with the flags of this process's command line
    /// (`--help` prints them; a bad flag exits with its usage).
    pub fn from_args(name: impl Into<String>) -> Self {
        let name = name.into();
        // The flags only: not ServeArgs' own documentation as the program's description.
        let command = <ServeArgs as clap::Args>::augment_args(clap::Command::new(name.clone()))
            .about(None)
            .long_about(None);
        let matches = command.get_matches();
        let args = <ServeArgs as clap::FromArgMatches>::from_arg_matches(&matches)
            .unwrap_or_else(|e| e.exit());
        Self::new(name, args)
    }

    /// The port without `--addr` when `PORT` is not set (default 8787).
    pub fn default_port(mut self, port: u16) -> Self {
        self.default_port = port;
        self
    }

    /// What initialize-era clients get over HTTP without `--legacy` (default: [`Legacy::Serve`], sessions with the forms).
    pub fn default_legacy(mut self, legacy: Legacy) -> Self {
        self.default_legacy = legacy;
        self
    }

    /// The path announced in the listening line, for an application that
    /// mounts the endpoint elsewhere ([`run_with`](Self::run_with); default `/mcp`).
    pub fn path(mut self, path: impl Into<String>) -> Self {
        self.path = path.into();
        self
    }

    /// Where to listen: `--addr`, else `127.0.0.1:$PORT`, else the default port.
    pub fn addr(&self) -> String {
        self.args.addr.clone().unwrap_or_else(|| {
            let port = std::env::var("PORT").unwrap_or_else(|_| self.default_port.to_string());
            format!("127.0.0.1:{port}")
        })
    }

    /// [`run`](Self::run), then the exit code: failure, with the message on
    /// stderr as `NAME: message`, when it did not start or stopped on an error.
    pub fn main<F, E>(self, build: F) -> ExitCode
    where
        F: FnOnce(&Setup) -> Result<McpServer, E>,
        E: Display,
    {
        self.main_with(build, McpEndpoint::new)
    }

    /// [`run_with`](Self::run_with), then the exit code, as [`main`](Self::main).
    pub fn main_with<F, E, A, S, B>(self, build: F, app: A) -> ExitCode
    where
        F: FnOnce(&Setup) -> Result<McpServer, E>,
        E: Display,
        A: FnOnce(Arc<McpServer>, EndpointOptions) -> S,
        S: Service<Request<DeadlineBody<Incoming>>, Response = Response<B>>
            + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
        S::Error: Into<BoxError>,
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let name = self.name.clone();
        match self.run_with(build, app) {
            Ok(()) => ExitCode::SUCCESS,
            Err(message) => {
                eprintln!("{name}: {message}");
                ExitCode::FAILURE
            }
        }
    }

    /// Sets up logging (and telemetry), builds the server with `build`, and
    /// serves it until SIGTERM or Ctrl-C: on stdin/stdout with `--stdio`,
    /// else as a Streamable HTTP endpoint at `/mcp`. Every failure to start
    /// is a message for the operator.
    pub fn run<F, E>(self, build: F) -> Result<(), String>
    where
        F: FnOnce(&Setup) -> Result<McpServer, E>,
        E: Display,
    {
        self.run_with(build, McpEndpoint::new)
    }

    /// [`run`](Self::run) serving the application `app` makes of the server
    /// and the endpoint options the flags describe, e.g. an axum router that
    /// nests the [`McpEndpoint`] (HTTP only).
    pub fn run_with<F, E, A, S, B>(self, build: F, app: A) -> Result<(), String>
    where
        F: FnOnce(&Setup) -> Result<McpServer, E>,
        E: Display,
        A: FnOnce(Arc<McpServer>, EndpointOptions) -> S,
        S: Service<Request<DeadlineBody<Incoming>>, Response = Response<B>>
            + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
        S::Error: Into<BoxError>,
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        let addr = self.addr();
        self.args.check(&addr)?;
        let observability = Observability::init(
            #[cfg(feature = "otel")]
            tessera_otel::Telemetry::builder(self.name.clone())
                .prometheus(self.args.metrics.is_some())
                .record_arguments(self.args.trace_arguments),
        )?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .map_err(|e| format!("cannot start the runtime: {e}"))?;
        let served = runtime.block_on(self.serve(&observability, addr, build, app));
        runtime.shutdown_timeout(std::time::Duration::from_secs(1));
        served
    }

    async fn serve<F, E, A, S, B>(
        self,
        observability: &Observability,
        addr: String,
        build: F,
        app: A,
    ) -> Result<(), String>
    where
        F: FnOnce(&Setup) -> Result<McpServer, E>,
        E: Display,
        A: FnOnce(Arc<McpServer>, EndpointOptions) -> S,
        S: Service<Request<DeadlineBody<Incoming>>, Response = Response<B>>
            + Clone
            + Send
            + 'static,
        S::Future: Send + 'static,
        S::Error: Into<BoxError>,
        B: http_body::Body<Data = Bytes> + Send + 'static,
        B::Error: Into<BoxError>,
    {
        #[cfg(feature = "otel")]
        if let Some(metrics) = &self.args.metrics {
            observability.serve_metrics(metrics).await?;
        }
        let setup = Setup::connect(&self.name, &self.args).await?;
        let server = Arc::new(build(&setup).map_err(|e| e.to_string())?);
        if self.args.stdio {
            tracing::info!("serving MCP on stdin/stdout (both protocol eras)");
            return tessera_stdio::serve_stdio(server, tessera_stdio::StdioOptions::default())
                .await
                .map_err(|e| format!("stdio: {e}"));
        }
        let legacy = self.args.legacy.unwrap_or(self.default_legacy);
        let mut options = observability.access_log(EndpointOptions::default().legacy(legacy));
        let mut serving = tessera_http::ServeOptions::default();
        if let Some(proxies) = &self.args.trust_proxy {
            options = options.trust_proxies(proxies.clone());
            if self.args.proxy_protocol {
                serving = serving.proxy_protocol(proxies.clone());
            }
        }
        #[cfg(feature = "redis")]
        let options = match &setup.redis {
            Some(redis) => options
                .answer_relay(Arc::new(redis.answer_relay(&self.name)))
                .session_notes(Arc::new(redis.session_notes(&self.name)))
                .stream_log(Arc::new(redis.stream_log(&self.name))),
            None => options,
        };
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        #[cfg(feature = "auth")]
        let options =
            crate::oauth::protect(&self.args, local, &self.path, setup.ledger.clone(), options);
        let service = app(Arc::clone(&server), options);
        tracing::info!(%local, ?legacy, "serving MCP at http://{local}{}", self.path);
        tessera_http::serve_with(
            listener,
            service,
            tessera_http::graceful_shutdown(server),
            serving,
        )
        .await
        .map_err(|e| e.to_string())
    }
}

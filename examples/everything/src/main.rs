//! `everything-server`: the conformance fixture on Streamable HTTP at `/mcp`.
//!
//! A test fixture: the requestState key is generated at start, so tickets do
//! not survive a restart; with `--redis URL`, tasks are kept in that Redis
//! (or with `--redis-cluster URL,...` in that Redis Cluster) for every
//! instance and the key comes from `MRTR_REQUEST_STATE_KEY(S)`, so
//! instances share it. Prints `listening on http://ADDR/mcp` on stdout
//! once it accepts connections (useful with `--addr 127.0.0.1:0`).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use tessera::http::{EndpointOptions, Legacy, McpEndpoint};
use tessera::state::{KeyRing, RequestStateCodec, StateKey};

const USAGE: &str = "usage: everything-server [--addr HOST:PORT] [--legacy reject|stateless|serve]
                         [--redis URL | --redis-cluster URL,...]

  --addr     where to listen (default 127.0.0.1:$PORT, or 127.0.0.1:3000)
  --legacy   initialize-era clients: refused (reject, the default), served
             per request without sessions (stateless), or served in sessions
             with questions pushed as requests (serve)
  --redis    keep tasks in this Redis, shared with every instance; the
             requestState key then comes from MRTR_REQUEST_STATE_KEY or
             MRTR_REQUEST_STATE_KEYS (instances must share it)
  --redis-cluster
             as --redis, on the Redis Cluster these nodes belong to

Serves the MCP conformance fixture at http://HOST:PORT/mcp with a fresh
requestState key, and prints `listening on http://HOST:PORT/mcp` when ready.";

fn main() -> ExitCode {
    use tracing_subscriber::Layer as _;
    use tracing_subscriber::layer::SubscriberExt as _;
    use tracing_subscriber::util::SubscriberInitExt as _;
    // Spans over OTLP when the OTEL_* variables say where (kept until exit).
    let telemetry = match tessera::otel::Telemetry::builder("everything-server").from_env() {
        Ok(telemetry) => telemetry,
        Err(e) => {
            eprintln!("everything-server: telemetry: {e}");
            return ExitCode::FAILURE;
        }
    };
    let log = tracing_subscriber::fmt::layer()
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .with_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        );
    let subscriber = tracing_subscriber::registry().with(log);
    match telemetry.tracing_layer() {
        Some(spans) => subscriber.with(spans).init(),
        None => subscriber.init(),
    }
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("everything-server: {message}");
            ExitCode::FAILURE
        }
    }
}

/// What the command line says.
#[derive(Debug)]
struct Settings {
    /// Where to listen (from the command line, else `PORT`, else 3000).
    addr: String,
    /// The policy for initialize-era clients.
    legacy: Legacy,
    /// The Redis tasks are kept in.
    redis: Option<SharedRedis>,
}

/// `--redis` or `--redis-cluster`.
#[derive(Debug, PartialEq)]
enum SharedRedis {
    One(String),
    Cluster(Vec<String>),
}

fn settings(
    mut args: impl Iterator<Item = String>,
    port: Option<String>,
) -> Result<Settings, String> {
    let mut addr = format!("127.0.0.1:{}", port.as_deref().unwrap_or("3000"));
    let mut legacy = Legacy::Reject;
    let mut redis = None;
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => {
                addr = args
                    .next()
                    .ok_or(format!("--addr needs a value\n\n{USAGE}"))?
            }
            "--legacy" => {
                legacy = args
                    .next()
                    .ok_or(format!("--legacy needs a value\n\n{USAGE}"))?
                    .parse()
                    .map_err(|e| format!("{e}\n\n{USAGE}"))?
            }
            "--redis" => {
                redis = Some(SharedRedis::One(
                    args.next()
                        .ok_or(format!("--redis needs a URL\n\n{USAGE}"))?,
                ))
            }
            "--redis-cluster" => {
                let seeds = args
                    .next()
                    .ok_or(format!("--redis-cluster needs URLs\n\n{USAGE}"))?;
                redis = Some(SharedRedis::Cluster(
                    seeds.split(',').map(str::to_owned).collect(),
                ))
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
        }
    }
    Ok(Settings {
        addr,
        legacy,
        redis,
    })
}

/// The key ring: from the environment with `--redis` (instances share it),
/// else a fresh key.
fn key_ring(shared: bool) -> Result<KeyRing, String> {
    if shared {
        let var = |name| std::env::var(name).ok();
        return KeyRing::from_configured(
            var(tessera::state::KEY_VAR).as_deref(),
            var(tessera::state::KEYS_VAR).as_deref(),
        )?
        .ok_or_else(|| {
            format!(
                "--redis needs the key the instances share in {} (make one with `openssl rand -base64 32`)",
                tessera::state::KEY_VAR
            )
        });
    }
    let key = StateKey::generate().map_err(|e| format!("cannot generate a key: {e}"))?;
    KeyRing::new("k1", key).map_err(|e| e.to_string())
}

fn run() -> Result<(), String> {
    let Settings {
        addr,
        legacy,
        redis,
    } = settings(std::env::args().skip(1), std::env::var("PORT").ok())?;
    let builder =
        everything::everything_builder(RequestStateCodec::new(key_ring(redis.is_some())?));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async {
        let builder = match &redis {
            Some(shared) => {
                let redis = match shared {
                    SharedRedis::One(url) => tessera::redis::Redis::connect(url)
                        .await
                        .map_err(|e| format!("--redis {url}: {e}"))?,
                    SharedRedis::Cluster(seeds) => tessera::redis::Redis::connect_cluster(seeds)
                        .await
                        .map_err(|e| format!("--redis-cluster {}: {e}", seeds.join(",")))?,
                };
                let store = redis.task_store(everything::SERVER_NAME, Default::default());
                // Task notifications reach listeners on every instance.
                builder
                    .task_store(Arc::new(store))
                    .change_bus(Arc::new(redis.bus(everything::SERVER_NAME)))
            }
            None => builder,
        };
        let server = Arc::new(builder.build().map_err(|e| e.to_string())?);
        let endpoint = McpEndpoint::new(
            Arc::clone(&server),
            EndpointOptions::default().legacy(legacy),
        );
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "listening on http://{local}/mcp")
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("cannot write to stdout: {e}"))?;
        tessera::http::serve(listener, endpoint, tessera::http::graceful_shutdown(server))
            .await
            .map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        let args = |a: &[&str]| {
            a.iter()
                .map(|s| (*s).to_owned())
                .collect::<Vec<_>>()
                .into_iter()
        };
        assert_eq!(settings(args(&[]), None).unwrap().addr, "127.0.0.1:3000");
        assert_eq!(
            settings(args(&[]), Some("9000".into())).unwrap().addr,
            "127.0.0.1:9000"
        );
        assert_eq!(
            settings(args(&["--addr", "127.0.0.1:0"]), Some("9000".into()))
                .unwrap()
                .addr,
            "127.0.0.1:0"
        );
        assert!(settings(args(&["--addr"]), None).is_err());
        assert!(settings(args(&["--bogus"]), None).is_err());
        assert_eq!(
            settings(args(&["--legacy", "stateless"]), None)
                .unwrap()
                .legacy,
            Legacy::Stateless
        );
        assert!(settings(args(&["--legacy", "maybe"]), None).is_err());
        assert_eq!(
            settings(args(&["--redis", "redis://127.0.0.1:6379/"]), None)
                .unwrap()
                .redis,
            Some(SharedRedis::One("redis://127.0.0.1:6379/".into()))
        );
        assert!(settings(args(&["--redis"]), None).is_err());
        assert_eq!(
            settings(args(&["--redis-cluster", "redis://a:1,redis://b:2"]), None)
                .unwrap()
                .redis,
            Some(SharedRedis::Cluster(vec![
                "redis://a:1".into(),
                "redis://b:2".into()
            ]))
        );
    }
}

//! `notes`: the notes server on Streamable HTTP, alone (SQLite) or one of many (Redis).

use std::process::ExitCode;
use std::sync::Arc;

use notes::config::Config;
use tessera::http::{EndpointOptions, McpEndpoint};
use tessera::{ChangeBus, MemoryBus};

/// mimalloc, as for the counter.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let outcome = Config::from_args(std::env::args().skip(1), std::env::var("PORT").ok()).and_then(
        |config| {
            let watching = counter::boot::init_observability(
                tessera::otel::Telemetry::builder("notes").prometheus(config.metrics.is_some()),
            )?;
            run(config, &watching)
        },
    );
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("notes: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(config: Config, watching: &counter::boot::Observability) -> Result<(), String> {
    let dir = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
    let ring = counter::config::key_ring(
        std::env::var(counter::config::KEY_VAR).ok(),
        std::env::var(counter::config::KEYS_VAR).ok(),
        &dir,
        config.dev,
    )?;
    let codec = counter::config::codec(ring, config.ttl)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async {
        if let Some(addr) = &config.metrics {
            counter::boot::serve_metrics(watching, addr).await?;
        }
        let mut options = EndpointOptions::default().legacy(config.legacy);
        let server = match &config.redis {
            Some(url) => {
                let redis = tessera::redis::Redis::connect(url)
                    .await
                    .map_err(|e| format!("cannot reach {url}: {e}"))?;
                tracing::info!(%url, "notes, single-use tickets, changes and initialize-era answers in Redis");
                options = options.answer_relay(Arc::new(redis.answer_relay("notes")));
                notes::notes_server(
                    Arc::new(notes::RedisStore::new(redis.connection())),
                    Arc::new(redis.bus("notes")),
                    codec,
                    Some(Arc::new(redis.ledger("notes"))),
                )
            }
            None => {
                let store = notes::SqliteStore::open(&config.db)
                    .map_err(|e| format!("{}: {e}", config.db.display()))?;
                tracing::info!(db = %config.db.display(), "notes in SQLite");
                let bus: Arc<dyn ChangeBus> = Arc::new(MemoryBus::default());
                notes::notes_server(Arc::new(store), bus, codec, None)
            }
        }
        .map_err(|e| e.to_string())?;
        let server = Arc::new(server);
        let listener = tokio::net::TcpListener::bind(&config.addr)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.addr))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        tracing::info!(%local, "serving MCP at http://{local}/mcp");
        let endpoint = McpEndpoint::new(
            Arc::clone(&server),
            counter::boot::with_access_log(options),
        );
        tessera::http::serve(listener, endpoint, tessera::http::graceful_shutdown(server))
            .await
            .map_err(|e| e.to_string())
    })
}

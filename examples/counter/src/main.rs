//! `counter`: the increase-counter MCP server on Streamable HTTP.

use std::process::ExitCode;
use std::sync::Arc;

use counter::config::{self, Config};
use tessera::http::{EndpointOptions, McpEndpoint};

/// mimalloc: many small, short-lived allocations per request; glibc's malloc
/// spends a fifth of the server's CPU on them under load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("counter: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let config = Config::from_args(std::env::args().skip(1), std::env::var("PORT").ok())?;
    let dir = std::env::current_dir().map_err(|e| format!("no working directory: {e}"))?;
    let ring = config::key_ring(
        std::env::var(config::KEY_VAR).ok(),
        std::env::var(config::KEYS_VAR).ok(),
        &dir,
        config.dev,
    )?;
    let server =
        counter::counter_server(config::codec(ring, config.ttl)?).map_err(|e| e.to_string())?;
    let endpoint = McpEndpoint::new(
        Arc::new(server),
        EndpointOptions::default().legacy(config.legacy),
    );
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&config.addr)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.addr))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        tracing::info!(%local, legacy = ?config.legacy, "serving MCP at http://{local}/mcp");
        tessera::http::serve(listener, endpoint, tessera::http::shutdown_signal())
            .await
            .map_err(|e| e.to_string())
    })
}

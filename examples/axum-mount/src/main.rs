//! `axum-mount`: the counter at `/api/mcp` inside an axum application.

use std::process::ExitCode;

use counter::config::{self, Config};

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info")),
        )
        .with_writer(std::io::stderr)
        .init();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("axum-mount: {message}");
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
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&config.addr)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.addr))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        eprintln!("axum-mount: serving MCP at http://{local}/api/mcp");
        tessera::http::serve(
            listener,
            axum_mount::app(server, axum_mount::REQUEST_TIMEOUT),
            tessera::http::shutdown_signal(),
        )
        .await
        .map_err(|e| e.to_string())
    })
}

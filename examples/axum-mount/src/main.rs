//! `axum-mount`: the counter at `/api/mcp` inside an axum application.

use std::process::ExitCode;

fn main() -> ExitCode {
    let outcome = counter::boot::config_from_args().and_then(|config| {
        let _watching =
            counter::boot::init_observability(tessera::otel::Telemetry::builder("axum-mount"))?;
        run(config)
    });
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("axum-mount: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(config: counter::config::Config) -> Result<(), String> {
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async {
        let (config, server) = counter::boot::configured_server(config).await?;
        let server = std::sync::Arc::new(server);
        let listener = tokio::net::TcpListener::bind(&config.addr)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.addr))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        eprintln!("axum-mount: serving MCP at http://{local}/api/mcp");
        tessera::http::serve(
            listener,
            axum_mount::app(std::sync::Arc::clone(&server), axum_mount::REQUEST_TIMEOUT),
            tessera::http::graceful_shutdown(server),
        )
        .await
        .map_err(|e| e.to_string())
    })
}

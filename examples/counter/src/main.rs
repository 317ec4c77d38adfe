//! `counter`: the increase-counter MCP server on Streamable HTTP, or stdio with `--stdio`.

use std::process::ExitCode;
use std::sync::Arc;

use tessera::http::McpEndpoint;

/// mimalloc: many small, short-lived allocations per request; glibc's malloc
/// spends a fifth of the server's CPU on them under load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> ExitCode {
    let started = counter::boot::config_from_args().and_then(|config| {
        let watching = counter::boot::init_observability(
            tessera::otel::Telemetry::builder("counter")
                .prometheus(config.metrics.is_some())
                .record_arguments(config.trace_arguments),
        )?;
        Ok((config, watching))
    });
    let outcome = started.and_then(|(config, watching)| run(config, &watching));
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("counter: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run(
    config: counter::config::Config,
    watching: &counter::boot::Observability,
) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    if let Some(addr) = &config.metrics {
        runtime.block_on(counter::boot::serve_metrics(watching, addr))?;
    }
    let (config, server) = runtime.block_on(counter::boot::configured_server(config))?;
    let server = Arc::new(server);
    if config.stdio {
        tracing::info!("serving MCP on stdin/stdout (both protocol eras)");
        let served = runtime.block_on(tessera::stdio::serve_stdio(
            server,
            tessera::stdio::StdioOptions::default(),
        ));
        // Reading stdin parks a blocking thread the runtime would otherwise wait for.
        runtime.shutdown_background();
        return served.map_err(|e| format!("stdio: {e}"));
    }
    runtime.block_on(async {
        let relay = counter::boot::answer_relay(&config).await?;
        let listener = tokio::net::TcpListener::bind(&config.addr)
            .await
            .map_err(|e| format!("cannot listen on {}: {e}", config.addr))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        let endpoint = McpEndpoint::new(
            Arc::clone(&server),
            counter::boot::endpoint_options(&config, local, relay),
        );
        tracing::info!(%local, legacy = ?config.legacy, "serving MCP at http://{local}/mcp");
        tessera::http::serve(listener, endpoint, tessera::http::graceful_shutdown(server))
            .await
            .map_err(|e| e.to_string())
    })
}

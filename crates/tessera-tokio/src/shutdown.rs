//! The signal that ends a server process.

/// Completes on Ctrl-C or, on Unix, SIGTERM.
pub async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => tracing::info!("interrupted; stopping"),
        () = term => tracing::info!("terminated; stopping"),
    }
}

/// Completes on Ctrl-C or SIGTERM, having ended `server`'s open
/// subscriptions (each gets its result and its stream closes), so that a
/// graceful shutdown does not wait on them: pass it to `serve`.
pub async fn graceful_shutdown(server: std::sync::Arc<tessera_server::McpServer>) {
    shutdown_signal().await;
    server.end_subscriptions();
}

//! What the CLI tests share: a server of the test's own, served on its own
//! runtime thread for the whole test binary.

use std::sync::Arc;

use tessera_server::McpServer;

/// Serves the server `make` builds (on the server's thread, in its runtime)
/// on a free port; its MCP URL.
pub fn serve_on_thread(make: impl FnOnce() -> McpServer + Send + 'static) -> String {
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().unwrap();
        runtime.block_on(async move {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            tx.send(format!("http://{}/mcp", listener.local_addr().unwrap()))
                .unwrap();
            let endpoint = tessera_http::McpEndpoint::new(Arc::new(make()), Default::default());
            tessera_http::serve(listener, endpoint, std::future::pending())
                .await
                .unwrap();
        });
    });
    rx.recv().unwrap()
}

//! What the CLI tests share: a server of the test's own, served on its own
//! runtime thread for the whole test binary, and a headless run of `tessera`.
#![allow(dead_code)]

use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

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

/// A headless run of `tessera`: its exit code, what it printed (each
/// stream, and both together) and how long it took.
pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
    /// Stdout, then stderr.
    pub out: String,
    pub took: Duration,
}

/// Runs `tessera ARGS` with stdin closed (no terminal).
pub fn tessera(args: &[&str]) -> Run {
    let started = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_tessera"))
        .args(args)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    Run {
        code: out.status.code().unwrap_or(-1),
        out: format!("{stdout}{stderr}"),
        stdout,
        stderr,
        took: started.elapsed(),
    }
}

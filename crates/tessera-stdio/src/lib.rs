//! The stdio transport for Tessera servers (MCP 2026-07-28 stdio binding).
//!
//! Newline-delimited JSON-RPC on stdin and stdout; nothing but protocol on
//! stdout (logs belong on stderr); requests served concurrently through the
//! same [`McpServer`] the HTTP endpoint uses; `notifications/cancelled` stops
//! a running request; a malformed line gets a JSON-RPC error and reading goes
//! on; end of input, SIGTERM and Ctrl-C end the server cleanly.
//!
//! Both protocol eras on one connection: a request with the 2026-07-28
//! `_meta` envelope is served statelessly, and a client that opens with
//! `initialize` (2025-11-25, 2025-06-18, …) is served in its revision. When
//! such a client calls a tool that asks for input, the era bridge pushes the
//! questions to it as `elicitation/create` (`sampling/createMessage`,
//! `roots/list`) requests and feeds the answers back to the same handler:
//! authors write each tool once.
//!
//! ```no_run
//! # async fn run(server: tessera_server::McpServer) -> std::io::Result<()> {
//! tessera_stdio::serve_stdio(std::sync::Arc::new(server), Default::default()).await
//! # }
//! ```

mod connection;
mod options;
mod outbox;
mod peer_requests;
mod stdin;

use std::sync::Arc;

pub use connection::serve_connection;
pub use options::StdioOptions;
use tessera_server::McpServer;
pub use tessera_tokio::shutdown_signal;

/// Serves `server` on this process's stdin and stdout until stdin ends, or
/// SIGTERM or Ctrl-C arrives.
///
/// Stdin is read on a thread of its own, not the runtime's blocking pool: when
/// this returns, a `#[tokio::main]` that returns with it exits, even while the
/// client still holds the pipe open.
pub async fn serve_stdio(server: Arc<McpServer>, options: StdioOptions) -> std::io::Result<()> {
    serve_connection(
        server,
        stdin::DetachedStdin::start()?,
        tokio::io::stdout(),
        options,
        shutdown_signal(),
    )
    .await
}

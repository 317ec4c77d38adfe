//! Startup for Tessera server binaries: what every `main` would otherwise
//! copy.
//!
//! [`Launch`] serves an [`McpServer`](tessera_server::McpServer) with
//! production defaults: the key ring from `MRTR_REQUEST_STATE_KEYS` or
//! `MRTR_REQUEST_STATE_KEY` (the environment first, then `.dev.vars` in the
//! working directory; `--dev` writes a new key there, mode 0600, never
//! through a symbolic link), the log on stderr written in batches off the
//! request path, graceful shutdown on SIGTERM and Ctrl-C, Streamable HTTP or
//! (`--stdio`) stdin/stdout. [`ServeArgs`] is the `clap` struct of the
//! standard flags, to `#[command(flatten)]` into a binary's own.
//!
//! Features add flags: `redis` (`--redis`, `--ledger`), `auth`
//! (`--oauth-issuer`, `--oauth-resource`, `--oauth-scope`), `otel`
//! (`--metrics`, `--trace-arguments`, and OTLP from the `OTEL_*` variables).
//!
//! ```no_run
//! use tessera_server::{Context, ToolDef};
//!
//! fn main() -> std::process::ExitCode {
//!     tessera_launch::main("hello", |setup| {
//!         setup
//!             .server("hello", "1.0.0")
//!             .tool(ToolDef::new("hello", |_: Context, _: ()| async { "Hello!" }))
//!             .build()
//!     })
//! }
//! ```

mod access_log;
mod args;
pub mod keys;
mod launch;
#[cfg(feature = "auth")]
mod oauth;
mod observe;

use std::fmt::Display;
use std::process::ExitCode;

pub use args::{DEFAULT_TTL, ServeArgs};
pub use launch::{Launch, Setup};
pub use observe::{DEFAULT_LOG_FILTER, Observability};

/// Parses this process's command line as [`ServeArgs`], builds the server
/// with `build` and serves it ([`Launch::main`]): the whole `main` of a
/// server binary.
pub fn main<F, E>(name: &str, build: F) -> ExitCode
where
    F: FnOnce(&Setup) -> Result<tessera_server::McpServer, E>,
    E: Display,
{
    Launch::from_args(name).main(build)
}

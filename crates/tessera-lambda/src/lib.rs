//! Tessera on AWS Lambda.
//!
//! A Lambda has no sockets of its own: each invocation hands over one HTTP
//! request (from a function URL, an API Gateway HTTP or REST API, or an
//! application load balancer), and the instance may be frozen between
//! invocations or never see the next one. A stateless 2026-07-28 server
//! fits: every round of a tool's questions is one request, and the sealed
//! `requestState` ticket is all that connects them. [`main`] serves the
//! same check ladder and handlers as the native server
//! (`tessera_http::McpEndpoint`) through `lambda_http`.
//!
//! Configuration is the function's environment ([`LambdaConfig`]):
//!
//! - the key: `MRTR_REQUEST_STATE_KEY` (32 bytes or more) or
//!   `MRTR_REQUEST_STATE_KEYS` (`id:secret,...`, the first one active), or
//!   `MRTR_REQUEST_STATE_SECRET_ID`, a Secrets Manager secret read at start
//!   through the AWS Parameters and Secrets Lambda Extension ([`secret`]);
//!   without a key the function fails its start, naming the fix;
//! - `MRTR_REQUEST_STATE_TTL`: ticket lifetime in seconds (default 600);
//! - `REDIS_URL`: the single-use ledger in Redis, shared by every instance,
//!   and `SINGLE_USE=true` to make every ticket redeemable once (refused
//!   without `REDIS_URL`: a ledger in one instance's memory does not stop a
//!   replay sent to another);
//! - `MCP_ALLOWED_HOSTS`, `MCP_ALLOWED_ORIGINS`, `MCP_LEGACY`
//!   (`tessera_http::EndpointOptions::from_vars`): the function URL's
//!   hostname must be allowed;
//! - `OAUTH_ISSUER`, `OAUTH_RESOURCE`, `OAUTH_SCOPE`
//!   (`tessera_auth::OAuthVars`), as the native binaries' `--oauth-*` flags;
//! - `RUST_LOG` (default `info`), written to CloudWatch through stderr.
//!
//! Not here, unlike the native server: tasks (a frozen instance runs no
//! background work), initialize-era sessions (a pushed question waits in
//! one instance; `MCP_LEGACY=stateless` serves those clients without
//! forms), listen streams and other long-lived event streams (a response
//! is buffered whole, then sent).
//!
//! ```no_run
//! use tessera_server::{Context, ToolDef};
//!
//! fn main() -> std::process::ExitCode {
//!     tessera_lambda::main("hello", |setup| {
//!         setup
//!             .server("hello", "1.0.0")
//!             .tool(ToolDef::new("hello", |_: Context, _: ()| async { "Hello!" }))
//!             .build()
//!     })
//! }
//! ```

mod config;
mod local_http;
pub mod secret;
mod serve;

pub use config::{LambdaConfig, LambdaSetup};
pub use serve::{main, run};

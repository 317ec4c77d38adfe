//! tokio for Tessera's transports. The server core (`tessera-server`) needs
//! no async runtime; the transports that run on tokio (Streamable HTTP's
//! `serve`, stdio) take what they need of one from here:
//!
//! - [`LineReader`]: the stdio framing (newline-delimited messages with a
//!   maximum length), for servers and clients alike;
//! - [`TokioTasks`]: the [`TaskRuntime`](tessera_server::TaskRuntime) a
//!   call that goes on as a task runs on (feature `server`, default);
//! - [`shutdown_signal`] and [`graceful_shutdown`]: the end of a server
//!   process (feature `server`).

mod lines;
#[cfg(feature = "server")]
mod shutdown;
#[cfg(feature = "server")]
mod tasks;

pub use lines::{Line, LineReader};
#[cfg(feature = "server")]
pub use shutdown::{graceful_shutdown, shutdown_signal};
#[cfg(feature = "server")]
pub use tasks::TokioTasks;

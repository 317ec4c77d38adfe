//! Tessera on Cloudflare Workers.
//!
//! A Worker has no boot step and no sockets: each `fetch` event hands over one
//! request. [`serve`] takes it to the same check ladder and handlers the
//! native server runs (`tessera_http::McpEndpoint`, built without hyper or
//! tokio) and returns the response — JSON, or a streamed `text/event-stream`
//! body when a handler sends notifications first. The server is built once
//! per isolate, from the Worker's secrets and vars ([`WorkerConfig`]):
//!
//! - `MRTR_REQUEST_STATE_KEY` (a secret, 32 bytes or more) or
//!   `MRTR_REQUEST_STATE_KEYS` (`id:secret,...`, the first one active). When
//!   neither is set, or a key is short, every request is answered 500 with a
//!   JSON-RPC error that names the fix, and the log says the same.
//! - `MCP_ALLOWED_HOSTS`, `MCP_ALLOWED_ORIGINS`: comma-separated names added to
//!   the Host and Origin allow-lists (loopback names are always allowed), so a
//!   deployed Worker accepts its own hostname.
//! - `MCP_LEGACY`: `reject` (the default) or `stateless`.
//! - A Durable Object binding `TICKET_LEDGER` of class [`TicketLedgerObject`]:
//!   when present, [`WorkerSetup::ledger`] is a [`DurableObjectLedger`] so
//!   single-use tools refuse a ticket presented twice, across isolates and
//!   locations.
//!
//! ```ignore
//! use worker::{Context, Env, HttpRequest, event};
//!
//! #[event(fetch)]
//! async fn fetch(req: HttpRequest, env: Env, _ctx: Context) -> worker::Result<http::Response<tessera_worker::McpBody>> {
//!     Ok(tessera_worker::serve(req, &env, |setup| my_server(setup.codec)).await)
//! }
//! ```

mod config;
mod ledger;
mod ledger_object;
mod serve;

pub use config::{WorkerConfig, WorkerSetup};
pub use ledger::{DurableObjectLedger, LEDGER_BINDING};
pub use ledger_object::TicketLedgerObject;
pub use serve::serve;
pub use tessera_http::McpBody;

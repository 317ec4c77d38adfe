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
//! - `OAUTH_ISSUER`, `OAUTH_RESOURCE`, `OAUTH_SCOPE`: as the native
//!   binaries' `--oauth-*` flags. With an issuer, the Worker is an OAuth 2.1
//!   protected resource: JWT access tokens of that issuer for
//!   `OAUTH_RESOURCE` (required with it: the URL clients use), verified
//!   against the issuer's keys fetched with the Workers fetch API
//!   ([`WorkerFetch`]); the RFC 9728 metadata is served and every 401 names
//!   it; tickets are bound to the token's issuer and subject;
//!   `OAUTH_SCOPE` (space-separated) is what every tool needs
//!   ([`WorkerSetup::oauth_scopes`]: 403 `insufficient_scope` without it).
//! - A Durable Object binding `TICKET_LEDGER` of class [`TicketLedgerObject`]:
//!   when present, [`WorkerSetup::ledger`] is a [`DurableObjectLedger`] so
//!   single-use tools refuse a ticket presented twice, across isolates and
//!   locations.
//! - A Durable Object binding `TASK_STORE` of class [`TaskStoreObject`]:
//!   when present, [`WorkerSetup::task_store`] is a [`DurableObjectTaskStore`],
//!   so tasks (the tasks extension) are answered by every isolate and outlive
//!   the one that started them. Their handlers run on the request's
//!   `waitUntil` ([`WorkerTasks`]), which Cloudflare ends 30 s after the
//!   response: a task needing longer ends `failed`, saying its instance
//!   stopped. A server that keeps its tasks in the isolate's memory (the
//!   builder's default) runs none on a Worker (-32603 names it).
//!
//! ```ignore
//! use worker::{Context, Env, HttpRequest, event};
//!
//! #[event(fetch)]
//! async fn fetch(req: HttpRequest, env: Env, ctx: Context) -> worker::Result<http::Response<tessera_worker::McpBody>> {
//!     Ok(tessera_worker::serve(req, &env, ctx, |setup| my_server(setup.codec)).await)
//! }
//! ```

mod config;
mod fetch;
mod ledger;
mod ledger_object;
mod serve;
mod task_runtime;
mod task_store;
mod task_store_object;

pub use config::{WorkerConfig, WorkerSetup};
pub use fetch::WorkerFetch;
pub use ledger::{DurableObjectLedger, LEDGER_BINDING};
pub use ledger_object::TicketLedgerObject;
pub use serve::serve;
pub use task_runtime::WorkerTasks;
pub use task_store::{
    DurableObjectTaskStore, MAX_WORKER_RESULT_BYTES, TASK_STORE_BINDING, WAKE_POLL,
};
pub use task_store_object::TaskStoreObject;
pub use tessera_http::McpBody;

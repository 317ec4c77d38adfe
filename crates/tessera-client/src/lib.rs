//! An MCP 2026-07-28 client that completes multi round-trip flows, over
//! Streamable HTTP or over stdio with a server process it starts.
//!
//! Every request carries the per-request `_meta` (protocol version, client
//! info, and capabilities derived from what the caller can actually answer)
//! and the standard headers (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`, mirrored `Mcp-Param-*`). Responses may be JSON or SSE. When a
//! server answers `input_required`, [`McpClient::call_tool`] hands each input
//! request to the caller's [`Elicitor`] and retries with a new id, the same
//! arguments, the answers, and the `requestState` echoed byte for byte.
//!
//! A server that only speaks the initialize era is recognised and spoken to
//! the old way: over stdio ([`McpClient::stdio`]) the client probes with
//! `server/discover`; over HTTP its first request is the probe, and a
//! `400 Bad Request` without a recognized modern error means the old era.
//! It then does the `initialize` handshake (over HTTP keeping the session the
//! server assigns), and the same [`Elicitor`] answers the `elicitation/create`
//! requests such a server pushes (over HTTP, on the call's response stream).
//!
//! ```no_run
//! # async fn run() -> Result<(), tessera_client::ClientError> {
//! use tessera_client::McpClient;
//! let client = McpClient::builder("http://127.0.0.1:8787/mcp").build()?;
//! for tool in client.list_tools().await? {
//!     println!("{}", tool.name);
//! }
//! # Ok(()) }
//! ```

mod client;
mod connect_mode;
mod elicitor;
mod error;
mod http_transport;
mod listener;
mod mcp_headers;
mod notification;
mod oauth;
mod push_bound;
mod result_cache;
mod scripted;
mod stdio_transport;

pub use client::{
    DEFAULT_TASK_WAIT, LoadedSkill, MAX_POLL_INTERVAL, MAX_TASK_LISTENERS, MIN_POLL_INTERVAL,
    McpClient, McpClientBuilder, ServerFeatures,
};
pub use connect_mode::ConnectMode;
pub use elicitor::{Elicitor, InputKinds};
pub use error::ClientError;
pub use listener::{ListenEvent, Listener};
pub use mcp_headers::{encode_header_value, invalid_header_annotation};
pub use notification::NotificationHandler;
pub use oauth::{
    Authorizer, BearerChallenge, EnterpriseSignIn, HeadlessAuthorizer, OAuthConfig, PreRegistered,
    StoredTokens, TokenStore,
};
pub use scripted::{ScriptedAnswer, ScriptedElicitor};
pub use tessera_protocol::BoxFuture;

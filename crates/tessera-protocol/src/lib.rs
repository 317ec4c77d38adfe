//! Wire types of the Model Context Protocol, revision 2026-07-28.
//!
//! Everything a stateless 2026-07-28 server and its clients exchange: the
//! JSON-RPC envelope, per-request `_meta`, discovery, tools, prompts,
//! resources, completion, subscriptions, notifications, and the multi
//! round-trip request types (`InputRequiredResult`, `InputRequests`,
//! `InputResponses`). Plus just enough of revision 2025-11-25 (`initialize`)
//! to recognise and answer an initialize-era client.
//!
//! No I/O and no async runtime: this crate builds for `wasm32-unknown-unknown`.
//!
//! Conventions: wire names are `camelCase`; unknown fields on input are
//! ignored; absent optional fields are omitted on output.
//!
//! ```
//! use tessera_protocol::{CallToolResult, Outcome};
//!
//! let result: Outcome<CallToolResult> =
//!     serde_json::from_str(r#"{"content":[{"type":"text","text":"hi"}]}"#).unwrap();
//! assert!(matches!(result, Outcome::Complete(_)));
//! ```

mod authorization;
mod bearer_challenge;
mod boxed_future;
mod capabilities;
pub mod clock;
mod completion;
mod content;
mod discover;
mod elicitation;
mod error_code;
mod form;
mod header_value;
mod input;
mod jsonrpc;
mod legacy;
mod meta;
mod meta_key;
mod notifications;
mod param_header;
mod prompts;
mod resources;
mod result;
mod roots;
pub mod rounds;
mod sampling;
mod schema_validator;
mod skills;
pub mod sse;
mod subscriptions;
mod tasks;
mod timestamp;
mod tools;
mod trace_context;
mod version;

pub use authorization::{authorization_server_metadata_urls, dpop_access_token_hash};
pub use bearer_challenge::BearerChallenge;
pub use boxed_future::BoxFuture;
pub use capabilities::*;
pub use completion::*;
pub use content::*;
pub use discover::*;
pub use elicitation::*;
pub use error_code::*;
pub use form::*;
pub use header_value::*;
pub use input::*;
pub use jsonrpc::*;
pub use legacy::*;
pub use meta::*;
pub use meta_key::check_meta_key;
pub use notifications::*;
pub use param_header::{ParamHeader, param_headers};
pub use prompts::*;
pub use resources::*;
pub use result::*;
pub use roots::*;
pub use sampling::*;
pub use schema_validator::{SchemaMismatch, SchemaValidator, UnusableSchema};
pub use skills::*;
pub use subscriptions::*;
pub use tasks::*;
pub use timestamp::Rfc3339;
pub use tools::*;
pub use trace_context::TraceContext;
pub use version::*;

/// A JSON object: the type of `_meta`, capability settings and free-form params.
pub type JsonObject = serde_json::Map<String, serde_json::Value>;

//! A stateless MCP 2026-07-28 server whose handlers *return* `input_required`
//! instead of awaiting a human.
//!
//! Build an [`McpServer`] once, share it behind an `Arc`, and hand it one
//! JSON-RPC request at a time with the [`RequestFacts`] the transport checked.
//! Everything request-scoped lives in the [`RequestContext`]: arguments,
//! `_meta`, capabilities, principal, the verified ticket state and the
//! answers to earlier input requests.
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use tessera_server::{ElicitForm, FormField, InputRequired, McpServer, RequestContext, ToolDef, ToolReply};
//! use tessera_protocol::CallToolResult;
//!
//! #[derive(Deserialize, schemars::JsonSchema)]
//! struct Args { name: String }
//!
//! async fn greet(ctx: RequestContext<()>, args: Args) -> ToolReply<()> {
//!     match ctx.accepted::<Confirm>("confirm") {
//!         Some(Confirm { ok: true }) => CallToolResult::text(format!("Hello, {}!", args.name)).into(),
//!         Some(_) => CallToolResult::text("Not greeted.").into(),
//!         None => InputRequired::new()
//!             .elicit("confirm", ElicitForm::new("Greet?").required("ok", FormField::boolean()))
//!             .into(),
//!     }
//! }
//! #[derive(Deserialize)]
//! struct Confirm { ok: bool }
//!
//! let key = tessera_state::StateKey::from_secret_str("an example secret of at least 32 bytes").unwrap();
//! let codec = tessera_state::RequestStateCodec::new(tessera_state::KeyRing::new("k1", key).unwrap());
//! let server = McpServer::builder("greeter", "1.0.0")
//!     .request_state(codec)
//!     .tool(ToolDef::new("greet").description("Greets after asking").handler(greet))
//!     .build()
//!     .unwrap();
//! assert_eq!(server.info().name, "greeter");
//! ```

mod answer;
mod builder;
mod completion;
mod context;
mod dispatch;
mod envelope;
mod enveloped;
mod error;
mod facts;
mod form;
mod handler;
mod input_required;
mod legacy;
mod notify;
mod pagination;
mod prompt;
mod reply;
mod resource;
mod schema;
mod server;
mod ticket;
mod tool;

pub use answer::Answer;
pub use builder::{BuildError, McpServerBuilder};
pub use completion::CompletionHandler;
pub use context::RequestContext;
pub use dispatch::Handled;
pub use envelope::check_envelope;
pub use enveloped::EnvelopedRequest;
pub use error::ServerError;
pub use facts::{Era, RequestFacts};
pub use form::{ElicitForm, FormField};
pub use input_required::InputRequired;
pub use notify::NotificationSink;
pub use prompt::{PromptArguments, PromptDef};
pub use reply::{PromptReply, Reply, ResourceReply, ToolReply};
pub use resource::{ResourceDef, ResourceTemplateDef, TemplateVariables};
pub use server::{CacheHint, McpServer};
pub use tool::ToolDef;

use std::future::Future;
use std::pin::Pin;

/// A boxed, sendable future: how handlers are stored without a runtime.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

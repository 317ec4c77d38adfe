//! A stateless MCP 2026-07-28 server whose handlers *return* `input_required`
//! instead of awaiting a human.
//!
//! Build an [`McpServer`] once, share it behind an `Arc`, and hand it one
//! JSON-RPC request at a time with the [`RequestFacts`] the transport checked.
//! A handler reads top to bottom: each [`Context::ask`] yields the user's
//! answer, or ends the round with `?` so the client can ask the user and
//! retry; the handler then runs again and the same `ask` yields the answer.
//! Applications use this crate through the `tessera` facade.
//!
//! ```
//! use tessera_server::{Context, Form, McpServer, Result, ToolDef};
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Args { name: String }
//!
//! #[derive(serde::Deserialize, schemars::JsonSchema)]
//! struct Confirm { ok: bool }
//! impl Form for Confirm { const KEY: &'static str = "confirm"; }
//!
//! async fn greet(ctx: Context, args: Args) -> Result<String> {
//!     let Confirm { ok } = ctx.ask("Greet?")?;
//!     Ok(if ok { format!("Hello, {}!", args.name) } else { "Not greeted.".into() })
//! }
//!
//! let key = tessera_state::StateKey::from_secret_str("an example secret of at least 32 bytes").unwrap();
//! let codec = tessera_state::RequestStateCodec::new(tessera_state::KeyRing::new("k1", key).unwrap());
//! let server = McpServer::builder("greeter", "1.0.0")
//!     .request_state(codec)
//!     .tool(ToolDef::new("greet", greet).description("Greets after asking"))
//!     .build()
//!     .unwrap();
//! assert_eq!(server.info().name, "greeter");
//! ```

mod answer;
mod app_state;
mod arguments;
pub mod bridge;
mod builder;
mod catalog;
mod change;
mod change_bus;
mod completion;
mod context;
mod definition;
mod dispatch;
mod error;
mod facts;
mod form;
mod handler;
mod handler_error;
mod incoming;
pub mod intake;
mod interrupt;
mod json_schema;
mod latch;
mod legacy;
mod memory_task_store;
mod method;
pub mod middleware;
mod notifier;
mod notify;
mod pagination;
mod prompt;
mod protocol_methods;
mod question;
mod relayed;
mod resource;
mod response;
mod result_json;
mod round_state;
mod running_tasks;
mod scopes;
mod server;
mod skill;
mod skill_table;
pub mod task_entry;
mod task_runtime;
pub mod task_store;
pub mod telemetry;
#[cfg(feature = "testing")]
pub mod testing;
mod tool;
mod uri_template;
mod visibility;

pub use app_state::State;
pub use arguments::Arguments;
pub use builder::{BuildError, McpServerBuilder};
pub use catalog::CatalogError;
pub use change::Change;
pub use change_bus::{BusError, BusEvent, ChangeBus, ChangeListener, MemoryBus, Subscription};
pub use completion::{IntoCompletion, PartialArgument};
pub use context::Context;
pub use dispatch::{Handled, MAX_ANNOUNCED_TASK_BYTES, MAX_LISTENED_TASKS, Resolved};
pub use error::{RequestStateFailure, ServerError};
pub use facts::{AuthInfo, Era, NetworkTransport, RequestFacts, caller_key};
pub use form::{Form, FormChoice, FormValue};
pub use handler_error::{HandlerError, NotFound, Result};
pub use interrupt::Interrupt;
pub use legacy::to_legacy_shape;
pub use memory_task_store::MemoryTaskStore;
pub use method::MethodDef;
pub use notifier::Notifier;
pub use notify::NotificationSink;
pub use prompt::{PromptArguments, PromptDef};
pub use resource::{ResourceDef, ResourceTemplateDef, TemplateVariables};
pub use response::{IntoPromptResult, IntoResourceResult, IntoToolResult, Json};
pub use running_tasks::MAX_RUNNING_ARGUMENT_BYTES_PER_CALLER;
pub use scopes::{ExactScopes, PrefixScopes, ScopeMatch};
pub use server::{CacheHint, McpServer};
pub use skill::{SkillDef, SkillLoadError};
pub use task_runtime::TaskRuntime;
pub use task_store::{
    DEFAULT_POLL_INTERVAL, DEFAULT_TASK_TTL, MAX_KEPT_RESULT_BYTES,
    MAX_KEPT_RESULT_BYTES_PER_PRINCIPAL, MAX_KEPT_TASKS, MAX_KEPT_TASKS_PER_PRINCIPAL,
    MAX_LIVE_TASKS, MAX_LIVE_TASKS_PER_PRINCIPAL, MAX_TASK_RESULT_BYTES, NewTask, TaskOutcome,
    TaskPolicy, TaskRecord, TaskStore, TaskStoreError,
};
pub use tessera_protocol::BoxFuture;
pub use tool::{TaskSupport, ToolDef};
pub use visibility::{Offered, ShowPermitted, Viewer, Visibility};

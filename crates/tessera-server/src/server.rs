//! The server: its catalog, codec, ledger and caching hints.

use std::sync::Arc;

use tessera_protocol::{CacheScope, Implementation};
use tessera_state::{RequestStateCodec, TicketLedger};

use crate::{McpServerBuilder, PromptDef, ResourceDef, ResourceTemplateDef, ToolDef};

/// How long, and for whom, clients may cache a result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CacheHint {
    /// Milliseconds the result stays fresh (`ttlMs`).
    pub ttl_ms: u64,
    /// Who may share the cached result (`cacheScope`).
    pub scope: CacheScope,
}

impl CacheHint {
    /// A hint of `ttl_ms` milliseconds for `scope`.
    pub const fn new(ttl_ms: u64, scope: CacheScope) -> Self {
        Self { ttl_ms, scope }
    }
}

/// A stateless MCP server: built once, `Send + Sync`, shared behind an `Arc`.
///
/// Holds no mutable request state; every request is served from its own
/// context. Dispatch one request with [`McpServer::handle`]; transports
/// (HTTP, stdio) do that for you.
///
/// ```
/// use tessera_server::{Context, McpServer, RequestFacts, ToolDef};
/// use tessera_protocol::JsonRpcRequest;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Echo { text: String }
///
/// let server = McpServer::builder("echo", "1.0.0")
///     .tool(ToolDef::new("echo", |_ctx: Context, args: Echo| async move { args.text }))
///     .build()
///     .unwrap();
/// let request: JsonRpcRequest<serde_json::Value> = serde_json::from_value(serde_json::json!({
///     "jsonrpc": "2.0", "id": 7, "method": "tools/list",
///     "params": {"_meta": {
///         "io.modelcontextprotocol/protocolVersion": "2026-07-28",
///         "io.modelcontextprotocol/clientCapabilities": {}
///     }}
/// })).unwrap();
/// let response = futures_executor(server.handle(request, RequestFacts::modern()));
/// assert_eq!(response.to_json()["result"]["tools"][0]["name"], "echo");
/// # fn futures_executor<F: std::future::Future>(f: F) -> F::Output {
/// #     tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(f)
/// # }
/// ```
pub struct McpServer {
    pub(crate) info: Implementation,
    pub(crate) audience: String,
    pub(crate) instructions: Option<String>,
    /// What it offers: tools, prompts, resources, templates.
    pub(crate) registry: crate::catalog::Registry,
    pub(crate) codec: Option<RequestStateCodec>,
    /// The codec's keys with a session's lifetime, for initialize-era session ids.
    pub(crate) session_codec: Option<RequestStateCodec>,
    /// Tasks (the tasks extension), when a tool may run as one.
    pub(crate) tasks: Option<Arc<dyn crate::TaskStore>>,
    /// The arguments this instance's running tasks hold, by caller.
    pub(crate) running_tasks: Arc<crate::running_tasks::RunningTasks>,
    pub(crate) ledger: Option<Arc<dyn TicketLedger>>,
    pub(crate) discover_cache: CacheHint,
    pub(crate) list_cache: CacheHint,
    pub(crate) read_cache: CacheHint,
    pub(crate) page_size: usize,
    /// Around every request, the first outermost.
    pub(crate) middleware: Vec<Arc<dyn crate::middleware::Middleware>>,
    /// Methods of the server's own, by name.
    pub(crate) methods: indexmap::IndexMap<String, crate::MethodDef>,
    /// Skills (the skills extension), when any is served.
    pub(crate) skills: Option<Arc<crate::skill_table::SkillTable>>,
    /// Extensions declared in the capabilities, besides tasks and skills.
    pub(crate) extensions: tessera_protocol::JsonObject,
    /// What each caller is shown (everything, without one).
    pub(crate) visibility: Option<Arc<dyn crate::Visibility>>,
    /// Whether a token's granted scopes cover what a target needs.
    pub(crate) scope_match: Arc<dyn crate::ScopeMatch>,
    pub(crate) result_meta: serde_json::Value,
    pub(crate) app_state: Arc<crate::app_state::AppState>,
    /// Where changes travel to `subscriptions/listen` streams.
    pub(crate) bus: Arc<dyn crate::ChangeBus>,
    /// Set once: every open subscription ends gracefully.
    pub(crate) ending: crate::latch::Latch,
}

impl McpServer {
    /// Publishes changes to listeners: hand it to the code that changes tools,
    /// prompts or resources.
    pub fn notifier(&self) -> crate::Notifier {
        crate::Notifier {
            bus: Arc::clone(&self.bus),
        }
    }

    /// Ends every open `subscriptions/listen` stream gracefully (each gets
    /// its result, then its stream closes), and every later one at once: call
    /// it when shutting down, before waiting for connections to close.
    pub fn end_subscriptions(&self) {
        self.ending.set();
    }

    /// Starts building a server named `name` at `version`.
    pub fn builder(name: impl Into<String>, version: impl Into<String>) -> McpServerBuilder {
        McpServerBuilder::new(name, version)
    }

    /// The server's name and version.
    pub fn info(&self) -> &Implementation {
        &self.info
    }

    /// Where the server keeps tasks: `None` when none of its tools may run
    /// as one.
    pub fn task_store(&self) -> Option<&Arc<dyn crate::TaskStore>> {
        self.tasks.as_ref()
    }

    /// The tools offered now, in registration order.
    pub fn tools(&self) -> Vec<Arc<ToolDef>> {
        self.catalog().tools.values().cloned().collect()
    }

    /// The prompts offered now, in registration order.
    pub fn prompts(&self) -> Vec<Arc<PromptDef>> {
        self.catalog().prompts.values().cloned().collect()
    }

    /// The resources offered now, in registration order.
    pub fn resources(&self) -> Vec<Arc<ResourceDef>> {
        self.catalog().resources.values().cloned().collect()
    }

    /// The resource templates offered now, in registration order.
    pub fn resource_templates(&self) -> Vec<Arc<ResourceTemplateDef>> {
        self.catalog().templates.clone()
    }

    /// The tool offered now as `name`.
    pub fn tool(&self, name: &str) -> Option<Arc<ToolDef>> {
        self.catalog().tools.get(name).cloned()
    }

    /// What the server offers now (a request serves from one snapshot).
    pub(crate) fn catalog(&self) -> Arc<crate::catalog::Catalog> {
        self.registry.current()
    }

    /// The requestState codec, if one is configured.
    pub fn request_state_codec(&self) -> Option<&RequestStateCodec> {
        self.codec.as_ref()
    }
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let catalog = self.catalog();
        f.debug_struct("McpServer")
            .field("info", &self.info)
            .field("tools", &catalog.tools.keys().collect::<Vec<_>>())
            .field("prompts", &catalog.prompts.keys().collect::<Vec<_>>())
            .field("resources", &catalog.resources.keys().collect::<Vec<_>>())
            .field("codec", &self.codec.is_some())
            .finish_non_exhaustive()
    }
}

//! Building an [`McpServer`](crate::McpServer).

use std::sync::Arc;

use serde_json::json;
use tessera_protocol::{CacheScope, Implementation, SERVER_INFO_KEY};
use tessera_state::{MemoryLedger, RequestStateCodec, TicketLedger};

use crate::app_state::AppState;
use crate::catalog::{Catalog, Registry, admit_prompt, admit_resource, admit_template};
use crate::{CacheHint, McpServer, PromptDef, ResourceDef, ResourceTemplateDef, ToolDef};

/// Why a server could not be built: a message naming the registration at fault.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BuildError(pub String);

/// Collects tools, prompts, resources and settings, then builds an [`McpServer`].
pub struct McpServerBuilder {
    info: Implementation,
    instructions: Option<String>,
    tools: Vec<ToolDef>,
    prompts: Vec<PromptDef>,
    resources: Vec<ResourceDef>,
    templates: Vec<ResourceTemplateDef>,
    skills: Vec<crate::SkillDef>,
    codec: Option<RequestStateCodec>,
    ledger: Option<Arc<dyn TicketLedger>>,
    task_store: Option<Arc<dyn crate::TaskStore>>,
    discover_cache: CacheHint,
    list_cache: CacheHint,
    read_cache: CacheHint,
    page_size: usize,
    middleware: Vec<Arc<dyn crate::middleware::Middleware>>,
    scope_match: Arc<dyn crate::ScopeMatch>,
    visibility: Option<Arc<dyn crate::Visibility>>,
    methods: Vec<crate::MethodDef>,
    extensions: tessera_protocol::JsonObject,
    audience: Option<String>,
    app_state: AppState,
    bus: Option<Arc<dyn crate::ChangeBus>>,
    /// Every tool single-use ([`single_use_tickets`](Self::single_use_tickets)).
    all_single_use: bool,
    /// Scopes every tool requires besides its own ([`require_scopes`](Self::require_scopes)).
    required_scopes: Vec<String>,
    /// Builds without a codec though a handler may ask ([`without_request_state`](Self::without_request_state)).
    never_asks: bool,
}

impl McpServerBuilder {
    pub(crate) fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            info: Implementation::new(name, version),
            instructions: None,
            tools: Vec::new(),
            prompts: Vec::new(),
            resources: Vec::new(),
            templates: Vec::new(),
            skills: Vec::new(),
            codec: None,
            ledger: None,
            task_store: None,
            bus: None,
            discover_cache: CacheHint::new(60_000, CacheScope::Private),
            list_cache: CacheHint::new(60_000, CacheScope::Private),
            read_cache: CacheHint::new(0, CacheScope::Private),
            page_size: 100,
            middleware: Vec::new(),
            scope_match: Arc::new(crate::ExactScopes),
            visibility: None,
            methods: Vec::new(),
            extensions: tessera_protocol::JsonObject::new(),
            audience: None,
            app_state: AppState::default(),
            never_asks: false,
            all_single_use: false,
            required_scopes: Vec::new(),
        }
    }

    /// Guidance for the model, returned by `server/discover`.
    pub fn instructions(mut self, instructions: impl Into<String>) -> Self {
        self.instructions = Some(instructions.into());
        self
    }

    /// Human-readable server title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.info.title = Some(title.into());
        self
    }

    /// An icon a client may show for the server (`https:` or `data:`; checked at build).
    pub fn icon(mut self, icon: tessera_protocol::Icon) -> Self {
        self.info.icons.get_or_insert_with(Vec::new).push(icon);
        self
    }

    /// Registers a tool (`#[tessera::tool]` makes the function that returns its definition).
    pub fn tool(mut self, tool: ToolDef) -> Self {
        self.tools.push(tool);
        self
    }

    /// Registers a prompt.
    pub fn prompt(mut self, prompt: PromptDef) -> Self {
        self.prompts.push(prompt);
        self
    }

    /// Registers a resource.
    pub fn resource(mut self, resource: ResourceDef) -> Self {
        self.resources.push(resource);
        self
    }

    /// Registers a resource template.
    pub fn resource_template(mut self, template: ResourceTemplateDef) -> Self {
        self.templates.push(template);
        self
    }

    /// Application state handlers reach with [`State<T>`](crate::State) or
    /// [`Context::app_state`](crate::Context::app_state): a database pool, a
    /// client, configuration. One value per type; a later one replaces it.
    ///
    /// ```
    /// # let codec = tessera_state::RequestStateCodec::new(tessera_state::KeyRing::new("k1", tessera_state::StateKey::generate().unwrap()).unwrap());
    /// use tessera_server::{Context, McpServer, State, ToolDef};
    ///
    /// #[derive(Clone)]
    /// struct Prefix(String);
    ///
    /// #[derive(serde::Deserialize, schemars::JsonSchema)]
    /// struct Quote { text: String }
    ///
    /// let server = McpServer::builder("demo", "1.0.0")
    ///     .request_state(codec)
    ///     .with_state(Prefix("> ".into()))
    ///     .tool(
    ///         ToolDef::new("quote", |ctx: Context, args: Quote| async move {
    ///             let State(Prefix(p)) = State::<Prefix>::from_context(&ctx)?;
    ///             Ok::<_, tessera_server::HandlerError>(format!("{p}{}", args.text))
    ///         })
    ///         .needs_state::<Prefix>(),
    ///     )
    ///     .build();
    /// assert!(server.is_ok());
    /// ```
    pub fn with_state<T: Send + Sync + 'static>(mut self, state: T) -> Self {
        self.app_state.insert(state);
        self
    }

    /// The codec that seals and opens `requestState` tickets (needed by any handler that asks for input).
    pub fn request_state(mut self, codec: RequestStateCodec) -> Self {
        self.codec = Some(codec);
        self
    }

    /// Whether a ticket codec is configured ([`request_state`](Self::request_state)).
    pub fn has_request_state(&self) -> bool {
        self.codec.is_some()
    }

    /// Builds without a ticket codec although a handler takes a `Context`
    /// (see [`ToolDef::asks`](crate::ToolDef::asks)): for a server whose
    /// handlers never ask for input. A handler that asks all the same fails
    /// that call with -32603.
    ///
    /// ```
    /// use tessera_server::{Context, McpServer, Result, ToolDef};
    ///
    /// async fn ping(_ctx: Context, _: serde_json::Value) -> Result<String> {
    ///     Ok("pong".into())
    /// }
    /// let tool = || ToolDef::new("ping", ping).asks();
    /// let refused = McpServer::builder("pinger", "1.0").tool(tool()).build();
    /// assert!(refused.unwrap_err().to_string().contains("request_state"));
    /// let built = McpServer::builder("pinger", "1.0").tool(tool()).without_request_state().build();
    /// assert!(built.is_ok());
    /// ```
    pub fn without_request_state(mut self) -> Self {
        self.never_asks = true;
        self
    }

    /// The bus changes travel on to `subscriptions/listen` streams (default:
    /// [`MemoryBus`](crate::MemoryBus), this process only; behind a load
    /// balancer, a shared one so a listener on one instance hears changes made on another).
    /// Handlers publish on it through `State<Notifier>`, always available.
    pub fn change_bus(mut self, bus: Arc<dyn crate::ChangeBus>) -> Self {
        self.bus = Some(bus);
        self
    }

    /// The ledger single-use tools redeem tickets through (default: in memory,
    /// sized by the codec's TTL: [`MemoryLedger::for_ttl`](tessera_state::MemoryLedger::for_ttl)).
    pub fn ticket_ledger(mut self, ledger: Arc<dyn TicketLedger>) -> Self {
        self.ledger = Some(ledger);
        self
    }

    /// Where tasks are kept (tools that may run as tasks): by default a
    /// [`MemoryTaskStore`](crate::MemoryTaskStore) in this process; a shared
    /// store (`tessera_redis::RedisTaskStore`) lets every instance answer
    /// `tasks/get`, `tasks/update` and `tasks/cancel`.
    pub fn task_store(mut self, store: Arc<dyn crate::TaskStore>) -> Self {
        self.task_store = Some(store);
        self
    }

    /// Every tool's tickets are redeemed at most once, as if each were
    /// [`ToolDef::single_use`]: a replayed ticket is refused (through the
    /// [`ticket_ledger`](Self::ticket_ledger)).
    pub fn single_use_tickets(mut self) -> Self {
        self.all_single_use = true;
        self
    }

    /// OAuth scopes a caller's token must grant to call any tool, besides
    /// each tool's own ([`ToolDef::scopes`]).
    ///
    /// ```
    /// # use tessera_server::{Context, McpServer, ToolDef};
    /// let server = McpServer::builder("demo", "1.0.0")
    ///     .require_scopes(["mcp:tools"])
    ///     .tool(ToolDef::new("noop", |_: Context, _: ()| async { "done" }))
    ///     .build()
    ///     .unwrap();
    /// assert_eq!(server.tool("noop").unwrap().required_scopes(), ["mcp:tools"]);
    /// ```
    pub fn require_scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.required_scopes
            .extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Runs `layer` around every request (see [`middleware`](crate::middleware)):
    /// layers run in the order added, the first outermost.
    pub fn middleware(mut self, layer: impl crate::middleware::Middleware) -> Self {
        self.middleware.push(Arc::new(layer));
        self
    }

    /// How granted scopes cover needed ones (default [`ExactScopes`](crate::ExactScopes)):
    /// [`PrefixScopes`](crate::PrefixScopes) for a hierarchy, or a rule of the server's own.
    ///
    /// ```
    /// # use tessera_server::{Context, McpServer, PrefixScopes, ToolDef};
    /// let server = McpServer::builder("demo", "1.0.0")
    ///     .scope_match(PrefixScopes::new(':'))
    ///     .tool(ToolDef::new("read", |_: Context, _: ()| async { "read" }).scopes(["files:read"]))
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn scope_match(mut self, matcher: impl crate::ScopeMatch) -> Self {
        self.scope_match = Arc::new(matcher);
        self
    }

    /// Shows each caller only what `filter` lets it see, and refuses the
    /// rest as unknown (see [`Visibility`](crate::Visibility));
    /// [`ShowPermitted`](crate::ShowPermitted) hides what a token's scopes do not cover.
    pub fn visibility(mut self, filter: impl crate::Visibility) -> Self {
        self.visibility = Some(Arc::new(filter));
        self
    }

    /// Serves `skill` (the skills extension, SEP-2640): its `SKILL.md` is
    /// listed among the resources, every file is readable at its `skill://`
    /// URI, and the server declares `io.modelcontextprotocol/skills` and
    /// answers `skills/list`, `skills/get` and `resources/directory/read`.
    pub fn skill(mut self, skill: crate::SkillDef) -> Self {
        self.skills.push(skill);
        self
    }

    /// Serves each of `skills` ([`skill`](Self::skill)), for instance those
    /// [`SkillDef::load_all`](crate::SkillDef::load_all) found in a directory.
    pub fn skills(mut self, skills: impl IntoIterator<Item = crate::SkillDef>) -> Self {
        self.skills.extend(skills);
        self
    }

    /// Declares the extension `id` (`capabilities.extensions`, with its
    /// `settings`; `{}` for none) in `server/discover` and `initialize`. The
    /// id needs a prefix (`com.example/…`, `io.modelcontextprotocol/ui`),
    /// checked at build. The tasks extension is declared by the server itself.
    ///
    /// ```
    /// # use tessera_server::McpServer;
    /// let server = McpServer::builder("demo", "1.0.0")
    ///     .extension("com.example/search", serde_json::json!({"maxResults": 50}))
    ///     .build()
    ///     .unwrap();
    /// # let _ = server;
    /// ```
    pub fn extension(mut self, id: impl Into<String>, settings: serde_json::Value) -> Self {
        self.extensions.insert(id.into(), settings);
        self
    }

    /// Serves a method of the server's own (an extension's request or
    /// notification; see [`MethodDef`](crate::MethodDef)).
    pub fn method(mut self, method: crate::MethodDef) -> Self {
        self.methods.push(method);
        self
    }

    /// Caching hint of `server/discover`.
    pub fn discover_cache(mut self, hint: CacheHint) -> Self {
        self.discover_cache = hint;
        self
    }

    /// Caching hint of the list methods.
    pub fn list_cache(mut self, hint: CacheHint) -> Self {
        self.list_cache = hint;
        self
    }

    /// Caching hint of `resources/read`.
    pub fn read_cache(mut self, hint: CacheHint) -> Self {
        self.read_cache = hint;
        self
    }

    /// Who tickets are for (bound into each one; default: the server name).
    /// Give deployments that share a key and a name different audiences, e.g.
    /// their public URLs, so a ticket from one does not open on another.
    pub fn audience(mut self, audience: impl Into<String>) -> Self {
        self.audience = Some(audience.into());
        self
    }

    /// Items per page of the list methods (at least 1).
    pub fn page_size(mut self, page_size: usize) -> Self {
        self.page_size = page_size.max(1);
        self
    }

    /// The first definition that may ask, when there is no codec to seal its tickets.
    fn refuse_asking_without_codec(&self) -> Result<(), BuildError> {
        let asking = (self.tools.iter().find(|t| t.asks))
            .map(|t| format!("tool {:?}", t.tool.name))
            .or_else(|| {
                (self.prompts.iter().find(|p| p.asks))
                    .map(|p| format!("prompt {:?}", p.prompt.name))
            })
            .or_else(|| {
                (self.resources.iter().find(|r| r.asks))
                    .map(|r| format!("resource {:?}", r.resource.uri))
            })
            .or_else(|| {
                (self.templates.iter().find(|t| t.asks))
                    .map(|t| format!("resource template {:?}", t.template.uri_template))
            });
        match asking {
            Some(what) => Err(BuildError(format!(
                "{what} takes a Context and may ask for input, but the server has no ticket codec \
                 to seal its requestState: add .request_state(codec) to the builder (launch's \
                 `setup.server(..)` and `TestClient::build` add one), or \
                 .without_request_state() if no handler ever asks"
            ))),
            None => Ok(()),
        }
    }

    /// Checks the registrations and builds the server.
    pub fn build(mut self) -> Result<McpServer, BuildError> {
        // Handlers reach the change bus as `State<Notifier>`, on the bus the server serves from.
        let bus = self
            .bus
            .take()
            .unwrap_or_else(|| Arc::new(crate::MemoryBus::default()));
        if !self
            .app_state
            .contains(std::any::TypeId::of::<crate::Notifier>())
        {
            self.app_state
                .insert(crate::Notifier::new(Arc::clone(&bus)));
        }
        crate::catalog::check_icons("server", &self.info.name, self.info.icons.as_deref())?;
        if self.codec.is_none() && !self.never_asks {
            self.refuse_asking_without_codec()?;
        }
        let registry = Registry::new(
            self.all_single_use,
            std::mem::take(&mut self.required_scopes),
        );
        let mut catalog = Catalog::default();
        for tool in self.tools {
            let tool = registry.admit_tool(tool, &self.app_state)?;
            let name = tool.tool.name.clone();
            if catalog.tools.insert(name.clone(), Arc::new(tool)).is_some() {
                return Err(BuildError(format!("tool {name:?} is registered twice")));
            }
        }
        for prompt in self.prompts {
            admit_prompt(&prompt, &self.app_state)?;
            let name = prompt.prompt.name.clone();
            if catalog
                .prompts
                .insert(name.clone(), Arc::new(prompt))
                .is_some()
            {
                return Err(BuildError(format!("prompt {name:?} is registered twice")));
            }
        }
        let skills = if self.skills.is_empty() {
            None
        } else {
            if self
                .extensions
                .contains_key(tessera_protocol::SKILLS_EXTENSION)
            {
                return Err(BuildError(format!(
                    "the {} extension is declared by the server itself when it serves skills \
                     (.skill(..)); remove .extension({0:?}, ..)",
                    tessera_protocol::SKILLS_EXTENSION
                )));
            }
            let (table, listed) =
                crate::skill_table::SkillTable::build(std::mem::take(&mut self.skills))?;
            // A resource of its own at a skill file's URI would serve other
            // bytes than the skill's manifest promises.
            if let Some(r) = self
                .resources
                .iter()
                .find(|r| table.serves_file(&r.resource.uri))
            {
                return Err(BuildError(format!(
                    "resource {:?} is a file of a skill: a skill's files are served from the skill",
                    r.resource.uri
                )));
            }
            self.resources.extend(listed);
            Some(table)
        };
        for resource in self.resources {
            admit_resource(&resource, &self.app_state)?;
            let uri = resource.resource.uri.clone();
            if catalog
                .resources
                .insert(uri.clone(), Arc::new(resource))
                .is_some()
            {
                return Err(BuildError(format!("resource {uri:?} is registered twice")));
            }
        }
        for template in self.templates {
            admit_template(&template, &self.app_state)?;
            catalog.templates.push(Arc::new(template));
        }
        for (id, settings) in &self.extensions {
            tessera_protocol::check_meta_key(id, true)
                .map_err(|problem| BuildError(format!("extension id {problem}")))?;
            if !settings.is_object() {
                return Err(BuildError(format!(
                    "extension {id:?}: its settings must be a JSON object ({{}} for none)"
                )));
            }
        }
        let mut methods = indexmap::IndexMap::new();
        for method in self.methods {
            method.check()?;
            let name = method.name.clone();
            if methods.insert(name.clone(), method).is_some() {
                return Err(BuildError(format!("method {name:?} is registered twice")));
            }
        }
        // Every tool single-use includes the ones added while serving: they need the ledger too.
        let single_use = self.all_single_use || catalog.tools.values().any(|t| t.single_use);
        if single_use && self.codec.is_none() {
            return Err(BuildError(
                "a single-use tool needs a requestState codec (McpServerBuilder::request_state)"
                    .into(),
            ));
        }
        let ledger = match self.ledger {
            Some(l) => Some(l),
            None if single_use => {
                tracing::warn!(
                    "single-use tools redeem tickets through an in-memory ledger: with several \
                     instances behind a load balancer, configure a shared one (McpServerBuilder::ticket_ledger)"
                );
                // Sized so that only a flood lasting a whole TTL could fill it.
                let ttl = self
                    .codec
                    .as_ref()
                    .map_or(tessera_state::DEFAULT_TTL, RequestStateCodec::ttl);
                Some(Arc::new(MemoryLedger::for_ttl(ttl)) as Arc<dyn TicketLedger>)
            }
            None => None,
        };
        let tasks = catalog
            .tools
            .values()
            .any(|t| t.task_support != crate::TaskSupport::Forbidden)
            .then(|| {
                self.task_store
                    .unwrap_or_else(|| Arc::new(crate::MemoryTaskStore::default()))
            });
        let result_meta = json!({ SERVER_INFO_KEY: self.info });
        let audience = self.audience.unwrap_or_else(|| self.info.name.clone());
        Ok(McpServer {
            audience,
            info: self.info,
            instructions: self.instructions,
            registry: registry.serving(catalog),
            session_codec: self
                .codec
                .as_ref()
                .map(|c| c.with_ttl(crate::bridge::SESSION_LIFETIME)),
            codec: self.codec,
            tasks,
            running_tasks: Arc::default(),
            ledger,
            discover_cache: self.discover_cache,
            list_cache: self.list_cache,
            read_cache: self.read_cache,
            page_size: self.page_size,
            middleware: self.middleware,
            scope_match: self.scope_match,
            visibility: self.visibility,
            methods,
            skills,
            extensions: self.extensions,
            result_meta,
            app_state: Arc::new(self.app_state),
            bus,
            ending: crate::latch::Latch::default(),
        })
    }
}

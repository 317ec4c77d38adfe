//! The client: requests with `_meta` (and, over HTTP, headers), discovery and
//! lists. Layered below it: [`builder`] (configuration), [`era`] (the session
//! and its era), [`rounds`] (the MRTR loop), [`tasks`], [`listen`]; the
//! transports (`http_transport`, `stdio_transport`) know nothing of it.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tessera_protocol::{
    CallToolResult, DiscoverResult, ElicitRequestParams, ErrorObject, GetPromptResult,
    INPUT_KEY_META_KEY, INTERNAL_ERROR, Implementation, InputRequest, InputRequests, JsonObject,
    JsonRpcNotification, JsonRpcRequest, JsonRpcVersion, LATEST_PROTOCOL_VERSION,
    LEGACY_PROTOCOL_VERSIONS, METHOD_NOT_FOUND, Prompt, ReadResourceResult, RequestId, RequestMeta,
    Resource, STATELESS_PROTOCOL_VERSIONS, SubscriptionFilter, Tool, UNSUPPORTED_PROTOCOL_VERSION,
};

use crate::http_transport::{HttpTransport, Mirrored};
use crate::listener::{self, ListenEvent, Listener};
use crate::mcp_headers::{invalid_header_annotation, param_headers};
use crate::push_bound::PushBound;
use crate::stdio_transport::{PushHandler, StdioTransport};
use crate::{ClientError, ConnectMode, Elicitor, InputKinds, NotificationHandler};

mod builder;
mod era;
mod listen;
mod rounds;
mod skills;
mod tasks;
#[cfg(feature = "otel")]
mod trace;

use builder::local_label;
pub use builder::{DEFAULT_TASK_WAIT, McpClientBuilder};
use era::{Era, HttpEra, http_era_of};
use rounds::push_handler;
pub use skills::LoadedSkill;
pub use tasks::{MAX_POLL_INTERVAL, MAX_TASK_LISTENERS, MIN_POLL_INTERVAL};

/// How requests reach the server.
enum Transport {
    Http(HttpTransport),
    Stdio(Arc<StdioTransport>),
}

/// What a server offers besides its tools, prompts and resources.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerFeatures {
    /// Tool calls may go on as tasks (the tasks extension).
    pub tasks: bool,
    /// `subscriptions/listen` delivers change notifications.
    pub listen: bool,
    /// Skills are served (the skills extension): [`list_skills`](McpClient::list_skills).
    pub skills: bool,
    /// `resources/directory/read` is answered ([`read_directory`](McpClient::read_directory)).
    pub directory_read: bool,
}

/// An MCP client for one server: an HTTP endpoint, or a process it started (stdio).
pub struct McpClient {
    transport: Transport,
    client_info: Implementation,
    elicitor: Option<Arc<dyn Elicitor>>,
    max_rounds: usize,
    /// Longest a task is followed.
    task_wait: Duration,
    on_notification: Option<NotificationHandler>,
    extra_meta: JsonObject,
    /// The trace context every request carries, when one was given.
    trace_context: Option<tessera_protocol::TraceContext>,
    mode: ConnectMode,
    /// Time limit of one exchange that no person answers in.
    timeout: Duration,
    era: tokio::sync::OnceCell<Era>,
    version: Mutex<String>,
    next_id: AtomicI64,
    tool_schemas: Mutex<HashMap<String, Value>>,
    /// Listed tools' `outputSchema`s, compiled: their results are checked against them.
    output_checks: Mutex<HashMap<String, tessera_protocol::SchemaValidator>>,
    /// Discover and list results the server marked fresh (`ttlMs`).
    cache: crate::result_cache::ResultCache,
    server_name: Mutex<Option<String>>,
    /// Why answering a pushed question failed, to report instead of the server's error that followed.
    push_failure: Arc<Mutex<Option<ClientError>>>,
    /// The bound on initialize-era calls that may push questions.
    push_bound: Arc<PushBound>,
    /// Tasks followed by notification now (at most [`MAX_TASK_LISTENERS`]:
    /// each holds a listen stream, which servers count per client).
    task_listeners: Arc<std::sync::atomic::AtomicUsize>,
    /// Signing in to an HTTP server that asks for it.
    oauth: Option<tokio::sync::Mutex<crate::oauth::OAuthSession>>,
    /// Whether an initialize-era session's standalone stream is kept open.
    standalone_stream: bool,
    /// The task reading it, stopped when the client closes or is dropped.
    standalone: Mutex<Option<AbortOnDrop>>,
}

/// A background task stopped when this is dropped.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What a client is configured with, besides its transport.
struct Settings {
    client_info: Implementation,
    elicitor: Option<Arc<dyn Elicitor>>,
    max_rounds: usize,
    task_wait: Duration,
    on_notification: Option<NotificationHandler>,
    extra_meta: JsonObject,
    trace_context: Option<tessera_protocol::TraceContext>,
    mode: ConnectMode,
    timeout: Duration,
    standalone_stream: bool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl McpClient {
    /// The capabilities declared on every request: exactly what the elicitor can answer.
    pub fn capabilities(&self) -> tessera_protocol::ClientCapabilities {
        self.elicitor
            .as_ref()
            .map_or_else(InputKinds::default, |e| e.kinds())
            .capabilities()
    }

    /// The server's URL as the client uses it (its key for stored tokens); `None` over stdio.
    pub fn server_url(&self) -> Option<String> {
        match &self.transport {
            Transport::Http(http) => Some(http.url.to_string()),
            Transport::Stdio(_) => None,
        }
    }

    /// The protocol version in use (after the first request, the one agreed).
    pub fn protocol_version(&self) -> String {
        lock(&self.version).clone()
    }

    /// Whether the server was found to speak only the initialize era (stdio).
    pub async fn is_initialize_era(&self) -> Result<bool, ClientError> {
        Ok(matches!(self.era().await?, Era::Legacy { .. }))
    }

    /// Another session with the same HTTP server, answered by `elicitor`: for
    /// an initialize-era server its own `initialize`
    /// and `Mcp-Session-Id`, so what the server pushes during its calls
    /// reaches `elicitor` alone. It shares this client's connection pool,
    /// headers and settings (not an OAuth sign-in). For a gateway that gives
    /// each caller's call a session of its own; stdio has one session per
    /// process ([`ClientError::Config`]).
    pub fn new_session(&self, elicitor: Arc<dyn Elicitor>) -> Result<McpClient, ClientError> {
        let Transport::Http(http) = &self.transport else {
            return Err(ClientError::Config(
                "a stdio server has one session: its process".into(),
            ));
        };
        let push_failure = Arc::new(Mutex::new(None));
        let push_bound = PushBound::new(self.max_rounds, self.timeout);
        let push = rounds::push_handler(
            Some(Arc::clone(&elicitor)),
            http.url.host_str().unwrap_or("the server").to_owned(),
            Arc::clone(&push_failure),
            Arc::clone(&push_bound),
        );
        let transport = Transport::Http(HttpTransport {
            http: http.http.clone(),
            url: http.url.clone(),
            bearer: http.bearer.clone(),
            session: Arc::default(),
            push,
        });
        let settings = Settings {
            client_info: self.client_info.clone(),
            elicitor: Some(elicitor),
            max_rounds: self.max_rounds,
            task_wait: self.task_wait,
            on_notification: self.on_notification.clone(),
            extra_meta: self.extra_meta.clone(),
            trace_context: self.trace_context.clone(),
            // The era this client settled is the server's: no probe again.
            mode: match self.era.get() {
                Some(Era::Legacy { .. }) => ConnectMode::Legacy,
                Some(Era::Modern) => ConnectMode::Modern,
                None => self.mode,
            },
            timeout: self.timeout,
            standalone_stream: self.standalone_stream,
        };
        Ok(Self::assemble(
            transport,
            settings,
            (push_failure, push_bound),
            None,
        ))
    }

    /// A client of `transport` with `settings`, nothing learnt from its
    /// server yet; `pushes` are its push handler's failure slot and bound.
    fn assemble(
        transport: Transport,
        settings: Settings,
        pushes: (Arc<Mutex<Option<ClientError>>>, Arc<PushBound>),
        oauth: Option<tokio::sync::Mutex<crate::oauth::OAuthSession>>,
    ) -> Self {
        let Settings {
            client_info,
            elicitor,
            max_rounds,
            task_wait,
            on_notification,
            extra_meta,
            trace_context,
            mode,
            timeout,
            standalone_stream,
        } = settings;
        let (push_failure, push_bound) = pushes;
        McpClient {
            transport,
            client_info,
            elicitor,
            max_rounds,
            task_wait,
            on_notification,
            extra_meta,
            trace_context,
            mode,
            timeout,
            era: tokio::sync::OnceCell::new(),
            version: Mutex::new(LATEST_PROTOCOL_VERSION.to_owned()),
            next_id: AtomicI64::new(1),
            tool_schemas: Mutex::new(HashMap::new()),
            output_checks: Mutex::new(HashMap::new()),
            cache: Default::default(),
            server_name: Mutex::new(None),
            push_failure,
            push_bound,
            task_listeners: Arc::default(),
            oauth,
            standalone_stream,
            standalone: Mutex::new(None),
        }
    }

    /// Ends the session: a stdio server's input is closed, and it is given
    /// two seconds to exit before it is terminated; an initialize-era HTTP
    /// session is ended with `DELETE`.
    pub async fn close(&self) {
        drop(lock(&self.standalone).take());
        match &self.transport {
            Transport::Stdio(stdio) => stdio.close(Duration::from_secs(2)).await,
            Transport::Http(http) => {
                let token = self.oauth_token().await;
                http.end_session(&self.protocol_version(), token.as_ref())
                    .await;
            }
        }
    }

    /// The OAuth access token in use, if the client signed in.
    pub(super) async fn oauth_token(&self) -> Option<crate::oauth::AccessToken> {
        match &self.oauth {
            Some(oauth) => oauth.lock().await.credential(),
            None => None,
        }
    }

    /// The `_meta` of a `method` request: [`meta`](Self::meta), and for a tool
    /// call, a `tasks/*` method or `subscriptions/listen` the tasks extension
    /// (a tool call may go on as a task, which this client follows, by
    /// notification when the server offers it).
    fn meta_for(&self, method: &str) -> Value {
        let mut meta = self.meta();
        if (method == "tools/call"
            || method.starts_with("tasks/")
            || method == tessera_protocol::SUBSCRIPTIONS_LISTEN)
            && let Some(caps) = meta
                .get_mut(tessera_protocol::CLIENT_CAPABILITIES_KEY)
                .and_then(Value::as_object_mut)
            && let Some(extensions) = caps
                .entry("extensions")
                .or_insert_with(|| json!({}))
                .as_object_mut()
        {
            extensions.insert(tessera_protocol::TASKS_EXTENSION.into(), json!({}));
        }
        meta
    }

    fn meta(&self) -> Value {
        let mut meta = serde_json::to_value(RequestMeta {
            protocol_version: Some(self.protocol_version()),
            client_info: Some(self.client_info.clone()),
            client_capabilities: Some(self.capabilities()),
            ..RequestMeta::default()
        })
        .unwrap_or_else(|_| json!({}));
        if let Some(m) = meta.as_object_mut() {
            for (k, v) in &self.extra_meta {
                m.insert(k.clone(), v.clone());
            }
            self.add_trace_context(m);
        }
        meta
    }

    /// Puts the trace context into a request's `_meta`: the one given to the
    /// builder, else (feature `otel`) the current span's; a `traceparent` the
    /// caller put in `_meta` itself wins.
    fn add_trace_context(&self, meta: &mut JsonObject) {
        match &self.trace_context {
            Some(_) if meta.contains_key("traceparent") => {}
            Some(context) => context.insert_into(meta),
            #[cfg(feature = "otel")]
            None => trace::inject_current(meta),
            #[cfg(not(feature = "otel"))]
            None => {}
        }
    }

    /// Sends one request (with `_meta` added) and returns its result; on
    /// -32022 it switches to a mutually supported version once and retries.
    pub async fn request(&self, method: &str, params: JsonObject) -> Result<Value, ClientError> {
        let sent = if self.era.get().is_none()
            && matches!(self.transport, Transport::Http(_))
            && self.mode == ConnectMode::Auto
        {
            // Over HTTP the first request is the probe (Streamable HTTP,
            // Backward Compatibility): its answer tells the era.
            let sent = self.send(method, params.clone()).await;
            match http_era_of(&sent) {
                Some(HttpEra::Legacy) => {
                    if let Era::Legacy { .. } =
                        self.era.get_or_try_init(|| self.initialize()).await?
                    {
                        return self.send_legacy(method, params).await;
                    }
                }
                Some(HttpEra::Modern) => {
                    let _ = self.era.set(Era::Modern);
                }
                None => {}
            }
            sent
        } else {
            if let Era::Legacy { .. } = self.era().await? {
                return self.send_legacy(method, params).await;
            }
            self.send(method, params.clone()).await
        };
        match sent {
            Err(ClientError::Rpc { error, .. }) if error.code == UNSUPPORTED_PROTOCOL_VERSION => {
                self.adopt_supported(&error)?;
                self.send(method, params).await
            }
            other => other,
        }
    }

    /// [`request`](Self::request), answered from the cache while the server's
    /// `ttlMs` says the last result is fresh.
    async fn cached(&self, method: &str, params: JsonObject) -> Result<Value, ClientError> {
        let key = crate::result_cache::ResultCache::key(method, &params);
        if let Some(hit) = key.as_deref().and_then(|k| self.cache.fresh(k)) {
            return Ok(hit);
        }
        let generation = self.cache.generation();
        let result = self.request(method, params).await?;
        if let Some(key) = key {
            self.cache.keep(generation, key, &result);
        }
        Ok(result)
    }

    /// Forgets the discover and list results kept for their `ttlMs`, so the
    /// next call asks the server (change notifications heard through
    /// [`listen`](Self::listen) do this for the list they name).
    pub fn forget_cached_results(&self) {
        self.cache.clear();
    }

    async fn send(&self, method: &str, mut params: JsonObject) -> Result<Value, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut meta = self.meta_for(method);
        if let (Some(m), Some(Value::Object(given))) =
            (meta.as_object_mut(), params.remove("_meta"))
        {
            m.extend(given);
        }
        params.insert("_meta".into(), meta);
        let body = json!(JsonRpcRequest::new(
            RequestId::from(id),
            method,
            Some(&params)
        ));
        let (message, status) = match &self.transport {
            Transport::Http(http) => {
                let version = self.protocol_version();
                let name = tessera_protocol::name_param(method)
                    .and_then(|field| params.get(field))
                    .and_then(Value::as_str);
                let mut mirrored = Vec::new();
                if method == "tools/call"
                    && let (Some(name), Some(arguments)) = (
                        params.get("name").and_then(Value::as_str),
                        params.get("arguments"),
                    )
                    && let Some(schema) = lock(&self.tool_schemas).get(name).cloned()
                {
                    mirrored = param_headers(&schema, arguments);
                }
                self.exchange_signed_in(
                    http,
                    &body,
                    id,
                    Mirrored {
                        version: &version,
                        method,
                        name,
                        params: mirrored,
                        open_ended: false,
                        token: None,
                    },
                )
                .await?
            }
            Transport::Stdio(stdio) => (stdio.exchange(&body, id, Some(self.timeout)).await?, 0),
        };
        self.settle(message, status)
    }

    /// One HTTP exchange, signing in (and retrying) when the server challenges
    /// and OAuth is configured: at most three tries.
    async fn exchange_signed_in(
        &self,
        http: &HttpTransport,
        body: &Value,
        id: i64,
        mirrored: Mirrored<'_>,
    ) -> Result<(Value, u16), ClientError> {
        let Some(oauth) = &self.oauth else {
            return http
                .exchange(body, id, mirrored, self.on_notification.as_ref())
                .await;
        };
        let mut tries = 0;
        loop {
            tries += 1;
            let token = oauth.lock().await.credential();
            let attempt = Mirrored {
                token: token.as_ref(),
                params: mirrored.params.clone(),
                ..mirrored
            };
            match http
                .exchange(body, id, attempt, self.on_notification.as_ref())
                .await
            {
                Err(ClientError::Unauthorized { status, challenge }) if tries < 3 => {
                    let mut session = oauth.lock().await;
                    // Another request may have signed in meanwhile: then just retry with its token.
                    if session.token() == token.as_ref().map(|t| t.token.as_str()) {
                        session.answer(status, &challenge).await?;
                        // Another authorization context: "Caches MUST NOT be
                        // shared across authorization contexts".
                        self.cache.clear();
                    }
                }
                Ok(answer) => {
                    oauth.lock().await.succeeded();
                    return Ok(answer);
                }
                other => return other,
            }
        }
    }

    /// A response message's result, or its error.
    fn settle(&self, message: Value, status: u16) -> Result<Value, ClientError> {
        if let Some(error) = message.get("error") {
            let error: ErrorObject = serde_json::from_value(error.clone())
                .map_err(|e| ClientError::Protocol(format!("malformed error: {e}")))?;
            return Err(ClientError::Rpc { status, error });
        }
        let result = message.get("result").cloned().ok_or_else(|| {
            ClientError::Protocol("the response has neither result nor error".into())
        })?;
        if let Some(name) = result
            .get("_meta")
            .and_then(|m| m.get(tessera_protocol::SERVER_INFO_KEY))
            .and_then(|i| i.get("name"))
            .and_then(Value::as_str)
        {
            *lock(&self.server_name) = Some(name.to_owned());
        }
        Ok(result)
    }

    fn parse<T: DeserializeOwned>(what: &str, value: Value) -> Result<T, ClientError> {
        serde_json::from_value(value)
            .map_err(|e| ClientError::Protocol(format!("invalid {what} result: {e}")))
    }

    /// `server/discover`. An initialize-era server has none: its `initialize`
    /// result is given in the same shape (its one version, capabilities and instructions).
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        if let Era::Legacy { initialized } = self.era().await? {
            return Ok(DiscoverResult {
                supported_versions: vec![self.protocol_version()],
                capabilities: initialized
                    .get("capabilities")
                    .and_then(|c| serde_json::from_value(c.clone()).ok())
                    .unwrap_or_default(),
                instructions: initialized
                    .get("instructions")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
                ..DiscoverResult::default()
            });
        }
        let v = self.cached("server/discover", JsonObject::new()).await?;
        Self::parse("server/discover", v)
    }

    /// What the server offers beyond tools, prompts and resources: tasks (the
    /// tasks extension, which [`call_tool`](Self::call_tool) follows) and
    /// change notifications through [`listen`](Self::listen).
    pub async fn server_features(&self) -> Result<ServerFeatures, ClientError> {
        let caps = self.discover().await?.capabilities;
        let listed = |c: &Option<tessera_protocol::ListChangedCapability>| {
            c.as_ref().and_then(|c| c.list_changed) == Some(true)
        };
        let resources = caps.resources.as_ref();
        let modern = !self.is_initialize_era().await?;
        let skills = caps
            .extensions
            .as_ref()
            .and_then(|e| e.get(tessera_protocol::SKILLS_EXTENSION));
        Ok(ServerFeatures {
            skills: skills.is_some(),
            directory_read: skills.and_then(|s| s.get("directoryRead")) == Some(&json!(true)),
            tasks: modern
                && caps
                    .extensions
                    .as_ref()
                    .is_some_and(|e| e.contains_key(tessera_protocol::TASKS_EXTENSION)),
            listen: modern
                && (listed(&caps.tools)
                    || listed(&caps.prompts)
                    || resources.and_then(|r| r.list_changed) == Some(true)
                    || resources.and_then(|r| r.subscribe) == Some(true)),
        })
    }

    async fn list_all(&self, method: &str, field: &str) -> Result<Vec<Value>, ClientError> {
        self.list_all_with(method, field, JsonObject::new()).await
    }

    /// Every page of `method` with `base` params, the items under `field`.
    async fn list_all_with(
        &self,
        method: &str,
        field: &str,
        base: JsonObject,
    ) -> Result<Vec<Value>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let mut params = base.clone();
            if let Some(c) = &cursor {
                params.insert("cursor".into(), json!(c));
            }
            let v = self.cached(method, params).await?;
            match v.get(field) {
                Some(Value::Array(page)) => items.extend(page.iter().cloned()),
                _ => {
                    return Err(ClientError::Protocol(format!(
                        "{method} result has no {field} array"
                    )));
                }
            }
            match v.get("nextCursor").and_then(Value::as_str) {
                Some(next) => cursor = Some(next.to_owned()),
                None => return Ok(items),
            }
        }
        Err(ClientError::Protocol(format!(
            "{method}: more than 1000 pages"
        )))
    }

    /// `tools/list`, every page. Tools whose `x-mcp-header` annotations are invalid are left out (with a warning).
    pub async fn list_tools(&self) -> Result<Vec<Tool>, ClientError> {
        let mut tools = Vec::new();
        for raw in self.list_all("tools/list", "tools").await? {
            let tool: Tool = Self::parse("tools/list", raw)?;
            let schema = Value::Object(tool.input_schema.clone());
            if let Some(problem) = invalid_header_annotation(&schema) {
                tracing::warn!(tool = %tool.name, %problem, "tool left out: invalid x-mcp-header annotation");
                continue;
            }
            lock(&self.tool_schemas).insert(tool.name.clone(), schema);
            let check = tool.output_schema.as_ref().and_then(|output| {
                tessera_protocol::SchemaValidator::new(output)
                    .inspect_err(|problem| {
                        tracing::warn!(tool = %tool.name, %problem, "outputSchema not checked: it cannot be compiled");
                    })
                    .ok()
            });
            match check {
                Some(check) => lock(&self.output_checks).insert(tool.name.clone(), check),
                None => lock(&self.output_checks).remove(&tool.name),
            };
            tools.push(tool);
        }
        Ok(tools)
    }

    /// `prompts/list`, every page.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, ClientError> {
        self.list_all("prompts/list", "prompts")
            .await?
            .into_iter()
            .map(|v| Self::parse("prompts/list", v))
            .collect()
    }

    /// `resources/list`, every page.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, ClientError> {
        self.list_all("resources/list", "resources")
            .await?
            .into_iter()
            .map(|v| Self::parse("resources/list", v))
            .collect()
    }

    /// `resources/templates/list`, every page.
    pub async fn list_resource_templates(
        &self,
    ) -> Result<Vec<tessera_protocol::ResourceTemplate>, ClientError> {
        self.list_all("resources/templates/list", "resourceTemplates")
            .await?
            .into_iter()
            .map(|v| Self::parse("resources/templates/list", v))
            .collect()
    }
}

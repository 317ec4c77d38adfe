//! The client: requests with `_meta` (and, over HTTP, headers), the era of a stdio server, the MRTR loop.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tessera_protocol::{
    CallToolResult, DiscoverResult, ElicitRequestParams, ErrorObject, GetPromptResult,
    INPUT_KEY_META_KEY, INTERNAL_ERROR, Implementation, InputRequest, InputRequests,
    InputRequiredResult, JsonObject, LATEST_PROTOCOL_VERSION, LEGACY_PROTOCOL_VERSIONS,
    METHOD_NOT_FOUND, Prompt, ReadResourceResult, RequestMeta, Resource, ResultType,
    STATELESS_PROTOCOL_VERSIONS, SubscriptionFilter, Tool, UNSUPPORTED_PROTOCOL_VERSION,
};

use crate::http_transport::{HttpTransport, Mirrored};
use crate::listener::{self, ListenEvent, Listener};
use crate::mcp_headers::{invalid_header_annotation, param_headers};
use crate::stdio_transport::{PushHandler, StdioTransport};
use crate::{ClientError, ConnectMode, Elicitor, InputKinds};

/// Called with every notification a server sends before its response.
pub type NotificationHandler = Arc<dyn Fn(&Value) + Send + Sync>;

/// Where the server is.
enum Target {
    Url(String),
    Process {
        program: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
}

/// How requests reach the server.
enum Transport {
    Http(HttpTransport),
    Stdio(Arc<StdioTransport>),
}

/// The era a server was found to speak.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Era {
    Modern,
    /// Initialize era: the version agreed, and what `initialize` said of the server.
    Legacy {
        initialized: Box<Value>,
    },
}

/// How long a stdio server may take to answer the `server/discover` probe
/// before it is taken for an initialize-era server that stays silent.
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Configures an [`McpClient`].
pub struct McpClientBuilder {
    target: Target,
    client_info: Implementation,
    elicitor: Option<Arc<dyn Elicitor>>,
    max_rounds: usize,
    on_notification: Option<NotificationHandler>,
    bearer: Option<String>,
    timeout: Duration,
    extra_meta: JsonObject,
    mode: ConnectMode,
    oauth: Option<crate::OAuthConfig>,
}

impl McpClientBuilder {
    /// How the client names itself in `_meta` (default `tessera-client`).
    pub fn client_info(mut self, name: impl Into<String>, version: impl Into<String>) -> Self {
        self.client_info = Implementation::new(name, version);
        self
    }

    /// Who answers input requests; without one, no input capability is declared.
    pub fn elicitor(mut self, elicitor: Arc<dyn Elicitor>) -> Self {
        self.elicitor = Some(elicitor);
        self
    }

    /// Most rounds of one multi round-trip call (default 10).
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// Receives progress and log notifications.
    pub fn on_notification(mut self, handler: NotificationHandler) -> Self {
        self.on_notification = Some(handler);
        self
    }

    /// Sends `Authorization: Bearer <token>` (HTTP).
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// Time limit of one exchange (default 120 s); over stdio, calls that may
    /// push questions to a person (initialize era) wait without a limit.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Adds a key to every request's `_meta` (e.g. `progressToken` or the log level).
    pub fn meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.extra_meta.insert(key.into(), value);
        self
    }

    /// Sets a variable in a stdio server's environment (added to this process's).
    pub fn env(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        if let Target::Process { env, .. } = &mut self.target {
            env.push((name.into(), value.into()));
        }
        self
    }

    /// Signs in with OAuth when the server (HTTP) answers 401 or 403
    /// `insufficient_scope`, then retries the request.
    pub fn oauth(mut self, config: crate::OAuthConfig) -> Self {
        self.oauth = Some(config);
        self
    }

    /// Which protocol era to speak to a stdio server (default [`ConnectMode::Auto`]).
    pub fn connect_mode(mut self, mode: ConnectMode) -> Self {
        self.mode = mode;
        self
    }

    /// Builds the client; a stdio server is started now (so call this inside a Tokio runtime).
    pub fn build(self) -> Result<McpClient, ClientError> {
        let Self {
            target,
            client_info,
            elicitor,
            max_rounds,
            on_notification,
            bearer,
            timeout,
            extra_meta,
            mode,
            oauth,
        } = self;
        let push_failure = Arc::new(Mutex::new(None));
        let mut session = None;
        let transport = match target {
            Target::Url(url) => {
                let url = reqwest::Url::parse(&url)
                    .map_err(|e| ClientError::Config(format!("invalid URL {url:?}: {e}")))?;
                let http = reqwest::Client::builder()
                    .timeout(timeout)
                    .tcp_nodelay(true)
                    .build()
                    .map_err(|e| ClientError::Config(e.to_string()))?;
                if let Some(config) = oauth {
                    session = Some(tokio::sync::Mutex::new(crate::oauth::OAuthSession::new(
                        config,
                        url.clone(),
                    )?));
                }
                let push = push_handler(
                    elicitor.clone(),
                    url.host_str().unwrap_or("the server").to_owned(),
                    Arc::clone(&push_failure),
                );
                Transport::Http(HttpTransport {
                    http,
                    url,
                    bearer,
                    session: Arc::default(),
                    push,
                })
            }
            Target::Process { .. } if bearer.is_some() => {
                return Err(ClientError::Config(
                    "a bearer token is for HTTP servers, not stdio".into(),
                ));
            }
            Target::Process { program, args, env } => {
                let push = push_handler(
                    elicitor.clone(),
                    local_label(&program),
                    Arc::clone(&push_failure),
                );
                Transport::Stdio(Arc::new(StdioTransport::spawn(
                    &program,
                    &args,
                    &env,
                    on_notification.clone(),
                    push,
                )?))
            }
        };
        Ok(McpClient {
            transport,
            client_info,
            elicitor,
            max_rounds,
            on_notification,
            extra_meta,
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
            oauth: session,
        })
    }
}

/// What a server offers besides its tools, prompts and resources.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ServerFeatures {
    /// Tool calls may go on as tasks (the tasks extension).
    pub tasks: bool,
    /// `subscriptions/listen` delivers change notifications.
    pub listen: bool,
}

/// An MCP client for one server: an HTTP endpoint, or a process it started (stdio).
pub struct McpClient {
    transport: Transport,
    client_info: Implementation,
    elicitor: Option<Arc<dyn Elicitor>>,
    max_rounds: usize,
    on_notification: Option<NotificationHandler>,
    extra_meta: JsonObject,
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
    /// Signing in to an HTTP server that asks for it.
    oauth: Option<tokio::sync::Mutex<crate::oauth::OAuthSession>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl McpClient {
    /// Starts configuring a client for `url` (the MCP endpoint).
    pub fn builder(url: impl Into<String>) -> McpClientBuilder {
        Self::builder_for(Target::Url(url.into()))
    }

    /// Starts configuring a client that starts `program` with `args` and
    /// speaks to it over stdio: 2026-07-28 when the server does, else the
    /// initialize era (see [`ConnectMode`]).
    pub fn stdio<I, S>(program: impl Into<String>, args: I) -> McpClientBuilder
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self::builder_for(Target::Process {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            env: Vec::new(),
        })
    }

    fn builder_for(target: Target) -> McpClientBuilder {
        McpClientBuilder {
            target,
            client_info: Implementation::new("tessera-client", env!("CARGO_PKG_VERSION")),
            elicitor: None,
            max_rounds: 10,
            on_notification: None,
            bearer: None,
            timeout: Duration::from_secs(120),
            extra_meta: JsonObject::new(),
            mode: ConnectMode::Auto,
            oauth: None,
        }
    }

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

    /// Ends the session: a stdio server's input is closed, and it is given
    /// two seconds to exit before it is terminated.
    pub async fn close(&self) {
        if let Transport::Stdio(stdio) = &self.transport {
            stdio.close(Duration::from_secs(2)).await;
        }
    }

    /// The `_meta` of a `method` request: [`meta`](Self::meta), and for a tool
    /// call or a `tasks/*` method the tasks extension (a tool call may go on
    /// as a task, which this client follows).
    fn meta_for(&self, method: &str) -> Value {
        let mut meta = self.meta();
        if (method == "tools/call" || method.starts_with("tasks/"))
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

    /// A `tasks/cancel` for task `task`, ready to run on its own (a caller
    /// stopped waiting); its outcome is only logged.
    fn cancel_request(
        &self,
        task: String,
    ) -> impl std::future::Future<Output = ()> + Send + 'static {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": tessera_protocol::TASKS_CANCEL,
            "params": {"taskId": task, "_meta": self.meta_for(tessera_protocol::TASKS_CANCEL)}});
        let version = self.protocol_version();
        let transport = match &self.transport {
            Transport::Http(http) => Transport::Http(http.clone()),
            Transport::Stdio(stdio) => Transport::Stdio(Arc::clone(stdio)),
        };
        let timeout = self.timeout;
        async move {
            let sent = match &transport {
                Transport::Http(http) => {
                    let mirrored = Mirrored {
                        version: &version,
                        method: tessera_protocol::TASKS_CANCEL,
                        name: Some(&task),
                        params: Vec::new(),
                        open_ended: false,
                        token: None,
                    };
                    http.exchange(&body, id, mirrored, None).await.map(|_| ())
                }
                Transport::Stdio(stdio) => {
                    stdio.exchange(&body, id, Some(timeout)).await.map(|_| ())
                }
            };
            match sent {
                Ok(()) => tracing::debug!(%task, "task cancelled: its caller stopped waiting"),
                Err(e) => tracing::debug!(%task, error = %e, "could not cancel a task"),
            }
        }
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
        }
        meta
    }

    /// The server's era, settled on first use. Over HTTP a server is taken
    /// as 2026-07-28. Over stdio the binding's probe decides: `server/discover`
    /// answered (or a recognised version error) means modern; any other error,
    /// or silence, means initialize era (`basic/transports/stdio`).
    async fn era(&self) -> Result<&Era, ClientError> {
        self.era
            .get_or_try_init(|| async {
                if matches!(self.transport, Transport::Http(_)) {
                    return match self.mode {
                        ConnectMode::Modern => Ok(Era::Modern),
                        ConnectMode::Legacy => self.initialize().await,
                        // Streamable HTTP's rule: attempt a modern request (discovery).
                        ConnectMode::Auto => {
                            let generation = self.cache.generation();
                            let probe = self.send("server/discover", JsonObject::new()).await;
                            match http_era_of(&probe) {
                                Some(HttpEra::Legacy) => self.initialize().await,
                                Some(HttpEra::Modern) => {
                                    match probe {
                                        // Kept, so that discover() need not ask again.
                                        Ok(result) => {
                                            if let Some(key) = crate::result_cache::ResultCache::key(
                                                "server/discover",
                                                &JsonObject::new(),
                                            ) {
                                                self.cache.keep(generation, key, &result);
                                            }
                                        }
                                        Err(ClientError::Rpc { error, .. })
                                            if error.code == UNSUPPORTED_PROTOCOL_VERSION =>
                                        {
                                            self.adopt_supported(&error)?;
                                        }
                                        Err(_) => {}
                                    }
                                    Ok(Era::Modern)
                                }
                                None => Err(probe.err().unwrap_or_else(|| {
                                    ClientError::Protocol("the probe neither failed nor succeeded".into())
                                })),
                            }
                        }
                    };
                }
                match self.mode {
                    ConnectMode::Modern => return Ok(Era::Modern),
                    ConnectMode::Legacy => return self.initialize().await,
                    ConnectMode::Auto => {}
                }
                let probe = tokio::time::timeout(
                    PROBE_TIMEOUT,
                    self.send("server/discover", JsonObject::new()),
                )
                .await;
                match probe {
                    Ok(Ok(result)) => {
                        let offered = result
                            .get("supportedVersions")
                            .and_then(Value::as_array)
                            .cloned()
                            .unwrap_or_default();
                        match STATELESS_PROTOCOL_VERSIONS
                            .iter()
                            .find(|v| offered.iter().any(|o| o == **v))
                        {
                            Some(v) => {
                                *lock(&self.version) = (*v).to_owned();
                                Ok(Era::Modern)
                            }
                            // Discover answered, yet only handshake-era versions offered: that is an old server's advertisement.
                            None if offered.iter().any(|o| {
                                o.as_str()
                                    .is_some_and(|o| LEGACY_PROTOCOL_VERSIONS.contains(&o))
                            }) =>
                            {
                                self.initialize().await
                            }
                            None => Err(ClientError::UnsupportedServer(format!(
                                "the server supports {offered:?}; this client speaks {}",
                                STATELESS_PROTOCOL_VERSIONS.join(", ")
                            ))),
                        }
                    }
                    Ok(Err(ClientError::Rpc { error, .. }))
                        if error.code == UNSUPPORTED_PROTOCOL_VERSION =>
                    {
                        self.adopt_supported(&error).map(|()| Era::Modern)
                    }
                    // Any other error, a reply that is not a valid response, or silence: an initialize-era server.
                    Ok(Err(ClientError::Rpc { .. } | ClientError::Protocol(_))) | Err(_) => {
                        self.initialize().await
                    }
                    Ok(Err(other)) => Err(other),
                }
            })
            .await
    }

    /// The `initialize` handshake, then `notifications/initialized`.
    async fn initialize(&self) -> Result<Era, ClientError> {
        let mut params = JsonObject::new();
        params.insert("protocolVersion".into(), json!(LEGACY_PROTOCOL_VERSIONS[0]));
        params.insert("capabilities".into(), json!(self.capabilities()));
        params.insert("clientInfo".into(), json!(self.client_info));
        let result = self.send_legacy("initialize", params).await?;
        let version = result
            .get("protocolVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if !LEGACY_PROTOCOL_VERSIONS.contains(&version) {
            return Err(ClientError::UnsupportedServer(format!(
                "the server answered initialize with protocol version {version:?}; this client speaks {}",
                LEGACY_PROTOCOL_VERSIONS.join(", ")
            )));
        }
        *lock(&self.version) = version.to_owned();
        if let Some(name) = result
            .get("serverInfo")
            .and_then(|i| i.get("name"))
            .and_then(Value::as_str)
        {
            *lock(&self.server_name) = Some(name.to_owned());
        }
        let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
        match &self.transport {
            Transport::Stdio(stdio) => stdio.notify(&initialized).await?,
            Transport::Http(http) => http.post_message(&initialized, version).await?,
        }
        Ok(Era::Legacy {
            initialized: Box::new(result),
        })
    }

    /// Switches to a version the server named in a -32022 error, if we speak one.
    fn adopt_supported(&self, error: &ErrorObject) -> Result<(), ClientError> {
        let supported: Vec<String> = error
            .data
            .as_ref()
            .and_then(|d| d.get("supported"))
            .and_then(|s| serde_json::from_value(s.clone()).ok())
            .unwrap_or_default();
        let Some(pick) = STATELESS_PROTOCOL_VERSIONS
            .iter()
            .find(|v| supported.iter().any(|s| s == *v))
        else {
            return Err(ClientError::UnsupportedServer(format!(
                "the server supports {supported:?}; this client speaks {}",
                STATELESS_PROTOCOL_VERSIONS.join(", ")
            )));
        };
        *lock(&self.version) = (*pick).to_owned();
        Ok(())
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
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
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
            let token = oauth.lock().await.token().map(str::to_owned);
            let attempt = Mirrored {
                token: token.as_deref(),
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
                    if session.token() == token.as_deref() {
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

    /// An initialize-era request: no 2026-07-28 envelope, only the caller's `_meta` keys.
    async fn send_legacy(
        &self,
        method: &str,
        mut params: JsonObject,
    ) -> Result<Value, ClientError> {
        let mut meta = self.extra_meta.clone();
        if let Some(Value::Object(given)) = params.remove("_meta") {
            meta.extend(given);
        }
        if !meta.is_empty() {
            params.insert("_meta".into(), Value::Object(meta));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        // A call that may ask waits as long as the person answering takes; the rest are bounded.
        let patience = (!matches!(method, "tools/call" | "prompts/get" | "resources/read"))
            .then_some(self.timeout);
        lock(&self.push_failure).take();
        let (message, status) = match &self.transport {
            Transport::Stdio(stdio) => (stdio.exchange(&body, id, patience).await?, 0),
            Transport::Http(http) => {
                // The handshake names its version in the body; later requests in the header.
                let version = if method == "initialize" {
                    LEGACY_PROTOCOL_VERSIONS[0].to_owned()
                } else {
                    self.protocol_version()
                };
                let mirrored = Mirrored {
                    version: &version,
                    method,
                    name: None,
                    params: Vec::new(),
                    open_ended: patience.is_none(),
                    token: None,
                };
                self.exchange_signed_in(http, &body, id, mirrored).await?
            }
        };
        match self.settle(message, status) {
            // The call failed because answering a pushed question did: that is the reason to report.
            Err(ClientError::Rpc { .. }) if lock(&self.push_failure).is_some() => {
                Err(lock(&self.push_failure)
                    .take()
                    .unwrap_or(ClientError::TooManyRounds(0)))
            }
            other => other,
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

    /// Opens a `subscriptions/listen` stream for what `filter` names; the
    /// first event is the server's acknowledgement of what it will send.
    ///
    /// ```no_run
    /// # async fn run(client: tessera_client::McpClient) -> Result<(), tessera_client::ClientError> {
    /// use tessera_client::ListenEvent;
    /// use tessera_protocol::SubscriptionFilter;
    /// let mut listener = client
    ///     .listen(SubscriptionFilter { resources_list_changed: Some(true), ..Default::default() })
    ///     .await?;
    /// while let Some(event) = listener.next().await {
    ///     if let ListenEvent::Notification(n) = event? { println!("{n}"); }
    /// }
    /// # Ok(()) }
    /// ```
    pub async fn listen(&self, filter: SubscriptionFilter) -> Result<Listener, ClientError> {
        if let Era::Legacy { .. } = self.era().await? {
            return Err(ClientError::UnsupportedServer(
                "subscriptions/listen is a 2026-07-28 method; this server speaks the initialize era".into(),
            ));
        }
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut params = JsonObject::new();
        params.insert("_meta".into(), self.meta());
        params.insert("notifications".into(), json!(filter));
        let body =
            json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen", "params": params});
        let (tx, events) = tokio::sync::mpsc::unbounded_channel();
        // A change heard here makes the cached list it names stale.
        let cache = self.cache.clone();
        let task = match &self.transport {
            Transport::Http(http) => {
                let (http, version) = (http.clone(), self.protocol_version());
                // The stream carries the token; a protected server is signed in to first.
                let token = match &self.oauth {
                    Some(oauth) => {
                        if oauth.lock().await.token().is_none() {
                            self.request("server/discover", JsonObject::new()).await?;
                        }
                        oauth.lock().await.token().map(str::to_owned)
                    }
                    None => None,
                };
                tokio::spawn(async move {
                    let to = tx.clone();
                    let forward: NotificationHandler = Arc::new(move |n: &Value| {
                        cache.notice(n);
                        drop(to.send(Ok(listener::event_of(n.clone()))));
                    });
                    let mirrored = Mirrored {
                        version: &version,
                        method: "subscriptions/listen",
                        name: None,
                        params: Vec::new(),
                        open_ended: true,
                        token: token.as_deref(),
                    };
                    let end = http.exchange(&body, id, mirrored, Some(&forward)).await;
                    let _ = tx.send(ended(end));
                })
            }
            Transport::Stdio(stdio) => {
                let stdio = Arc::clone(stdio);
                let (to, mut notifications) = tokio::sync::mpsc::unbounded_channel();
                stdio.route(id, to);
                let routed = Routed(Arc::clone(&stdio), id);
                tokio::spawn(async move {
                    let _routed = routed;
                    let forward = async {
                        while let Some(n) = notifications.recv().await {
                            cache.notice(&n);
                            let _ = tx.send(Ok(listener::event_of(n)));
                        }
                    };
                    let end = tokio::select! {
                        end = stdio.exchange(&body, id, None) => end,
                        () = forward => return,
                    };
                    // Notifications already routed come before the end.
                    while let Ok(n) = notifications.try_recv() {
                        cache.notice(&n);
                        let _ = tx.send(Ok(listener::event_of(n)));
                    }
                    let _ = tx.send(ended(end.map(|message| (message, 0))));
                })
            }
        };
        Ok(Listener { events, task })
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
        Ok(ServerFeatures {
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
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let mut params = JsonObject::new();
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

    /// Calls a tool, answering input requests until the result is complete; returns the raw result.
    ///
    /// When the tool was listed with an `outputSchema`, a result that is not an
    /// error must carry `structuredContent` satisfying it
    /// ([`ClientError::StructuredContent`] otherwise).
    pub async fn call_tool_raw(&self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        let result = self.call_tool_unchecked(name, arguments).await?;
        let check = lock(&self.output_checks).get(name).cloned();
        if let Some(check) = check {
            let is_error = result.get("isError") == Some(&Value::Bool(true));
            check
                .check_tool_result(is_error, result.get("structuredContent"))
                .map_err(|problem| ClientError::StructuredContent {
                    tool: name.to_owned(),
                    problem,
                })?;
        }
        Ok(result)
    }

    async fn call_tool_unchecked(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<Value, ClientError> {
        let mut params = JsonObject::new();
        params.insert("name".into(), json!(name));
        params.insert("arguments".into(), arguments);
        match self.run_rounds("tools/call", params.clone()).await {
            // Refused before it ran: "the client SHOULD call tools/list to check
            // for changes to the tool's inputSchema, then retry the original
            // request with the appropriate headers".
            Err(ClientError::Rpc { error, .. })
                if error.code == tessera_protocol::HEADER_MISMATCH =>
            {
                self.cache
                    .notice(&json!({"method": "notifications/tools/list_changed"}));
                self.list_tools().await?;
                self.run_rounds("tools/call", params).await
            }
            other => other,
        }
    }

    /// Calls a tool, answering input requests until the result is complete.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<CallToolResult, ClientError> {
        let v = self.call_tool_raw(name, arguments).await?;
        Self::parse("tools/call", v)
    }

    /// One round of `tools/call` in manual mode: the caller handles `input_required` itself.
    pub async fn call_tool_once(
        &self,
        name: &str,
        arguments: Value,
        input_responses: Option<JsonObject>,
        request_state: Option<String>,
    ) -> Result<tessera_protocol::Outcome<CallToolResult>, ClientError> {
        let mut params = JsonObject::new();
        params.insert("name".into(), json!(name));
        params.insert("arguments".into(), arguments);
        if let Some(r) = input_responses {
            params.insert("inputResponses".into(), Value::Object(r));
        }
        if let Some(s) = request_state {
            params.insert("requestState".into(), json!(s));
        }
        let v = self.request("tools/call", params).await?;
        Self::parse("tools/call", v)
    }

    /// Gets a prompt, answering input requests until the result is complete.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<GetPromptResult, ClientError> {
        let mut params = JsonObject::new();
        params.insert("name".into(), json!(name));
        params.insert("arguments".into(), Value::Object(arguments));
        let v = self.run_rounds("prompts/get", params).await?;
        Self::parse("prompts/get", v)
    }

    /// Reads a resource, answering input requests until the result is complete.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, ClientError> {
        let mut params = JsonObject::new();
        params.insert("uri".into(), json!(uri));
        let v = self.run_rounds("resources/read", params).await?;
        Self::parse("resources/read", v)
    }

    /// The multi round-trip loop: retry with a new id, the same params, the
    /// answers for exactly the keys asked, and the ticket echoed unchanged.
    async fn run_rounds(&self, method: &str, base: JsonObject) -> Result<Value, ClientError> {
        let mut responses: Option<JsonObject> = None;
        let mut state: Option<String> = None;
        for round in 1..=self.max_rounds {
            let mut params = base.clone();
            if let Some(r) = responses.take() {
                params.insert("inputResponses".into(), Value::Object(r));
            }
            if let Some(s) = state.take() {
                params.insert("requestState".into(), Value::String(s));
            }
            let result = self.request(method, params).await?;
            match ResultType::of(&result).map_err(|e| ClientError::Protocol(e.to_string()))? {
                ResultType::Complete => return Ok(result),
                ResultType::Task if method == "tools/call" => {
                    return self.follow_task(result).await;
                }
                ResultType::Task => {
                    return Err(ClientError::Protocol(format!(
                        "{method} answered with a task; only tools/call may"
                    )));
                }
                ResultType::InputRequired => {
                    let ir: InputRequiredResult = Self::parse(method, result)?;
                    state = ir.request_state;
                    match ir.input_requests.filter(|r| !r.is_empty()) {
                        Some(requests) => responses = Some(self.answer(&requests).await?),
                        // Nothing to ask: the server wants another round with its state; back off a little.
                        None => tokio::time::sleep(Duration::from_millis(50 * round as u64)).await,
                    }
                }
            }
        }
        Err(ClientError::TooManyRounds(self.max_rounds))
    }

    /// Follows a tool call that went on as a task: polls `tasks/get` at the
    /// server's interval, answers its input requests with `tasks/update`, and
    /// returns its result; a caller that stops waiting cancels it.
    async fn follow_task(&self, created: Value) -> Result<Value, ClientError> {
        let created: tessera_protocol::CreateTaskResult = Self::parse("tools/call", created)?;
        let id = created.task.task_id;
        let mut guard = CancelTask {
            client: self,
            id: Some(id.clone()),
        };
        let mut interval = created.task.poll_interval_ms;
        loop {
            let wait = interval.unwrap_or(1000).clamp(50, 30_000);
            tokio::time::sleep(Duration::from_millis(wait)).await;
            let mut params = JsonObject::new();
            params.insert("taskId".into(), json!(id));
            let got = self.request(tessera_protocol::TASKS_GET, params).await?;
            let task: tessera_protocol::GetTaskResult = Self::parse("tasks/get", got)?;
            interval = task.task.poll_interval_ms.or(interval);
            match task.task.status {
                tessera_protocol::TaskStatus::Working => {}
                tessera_protocol::TaskStatus::InputRequired => {
                    // The task works again once every request has an answer, so
                    // what it shows now is a new round (a key asked again too).
                    let asked = task.task.input_requests.unwrap_or_default();
                    if asked.is_empty() {
                        continue;
                    }
                    let answers = self.answer(&asked).await?;
                    let mut params = JsonObject::new();
                    params.insert("taskId".into(), json!(id));
                    params.insert("inputResponses".into(), Value::Object(answers));
                    self.request(tessera_protocol::TASKS_UPDATE, params).await?;
                    interval = Some(0);
                }
                tessera_protocol::TaskStatus::Completed => {
                    guard.id = None;
                    return task.task.result.ok_or_else(|| {
                        ClientError::Protocol(format!("task {id} completed without a result"))
                    });
                }
                tessera_protocol::TaskStatus::Failed => {
                    guard.id = None;
                    return Err(ClientError::Rpc {
                        status: 0,
                        error: task.task.error.unwrap_or_else(|| {
                            tessera_protocol::ErrorObject::new(
                                tessera_protocol::INTERNAL_ERROR,
                                format!("task {id} failed without an error"),
                            )
                        }),
                    });
                }
                tessera_protocol::TaskStatus::Cancelled => {
                    guard.id = None;
                    return Err(ClientError::TaskCancelled {
                        task: id,
                        message: task.task.status_message,
                    });
                }
            }
        }
    }

    async fn answer(&self, requests: &InputRequests) -> Result<JsonObject, ClientError> {
        // Who asks: where the user connected, and the name the server gives itself.
        let place = match &self.transport {
            Transport::Http(http) => http.url.host_str().unwrap_or("the server").to_owned(),
            Transport::Stdio(stdio) => local_label(&stdio.program),
        };
        let server = match lock(&self.server_name).as_deref() {
            Some(name) => format!(
                "{} (at {place})",
                name.chars().filter(|c| !c.is_control()).collect::<String>()
            ),
            None => place,
        };
        let mut answers = JsonObject::new();
        for (key, request) in requests {
            let value = answer_one(self.elicitor.as_deref(), &server, key, request).await?;
            answers.insert(key.clone(), value);
        }
        Ok(answers)
    }
}

/// Cancels a task its caller stopped waiting for (`tasks/cancel`, sent by its own task).
struct CancelTask<'a> {
    client: &'a McpClient,
    /// The task, while it has not ended.
    id: Option<String>,
}

impl Drop for CancelTask<'_> {
    fn drop(&mut self) {
        let Some(id) = self.id.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        // Drop cannot wait; the request goes out on the client's transport.
        let cancel = self.client.cancel_request(id);
        runtime.spawn(cancel);
    }
}

/// What the answer to a modern request over HTTP says of the server's era.
enum HttpEra {
    Modern,
    Legacy,
}

/// The era an HTTP answer shows: a result or a recognized modern error is a
/// modern server; any other `400 Bad Request` is an initialize-era one
/// (Streamable HTTP, Backward Compatibility: "If the body is empty or is not
/// a recognized modern JSON-RPC error, fall back to initialize"); `None` when
/// the answer tells nothing (the request did not get through).
fn http_era_of(answer: &Result<Value, ClientError>) -> Option<HttpEra> {
    match answer {
        Ok(_) => Some(HttpEra::Modern),
        Err(ClientError::Rpc { error, status }) => {
            let supported: Vec<&str> = error
                .data
                .as_ref()
                .and_then(|d| d.get("supported"))
                .and_then(Value::as_array)
                .map(|s| s.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            let legacy_only = !supported.is_empty()
                && supported
                    .iter()
                    .all(|v| LEGACY_PROTOCOL_VERSIONS.contains(v));
            match error.code {
                UNSUPPORTED_PROTOCOL_VERSION if legacy_only => Some(HttpEra::Legacy),
                UNSUPPORTED_PROTOCOL_VERSION
                | tessera_protocol::HEADER_MISMATCH
                | tessera_protocol::MISSING_REQUIRED_CLIENT_CAPABILITY => Some(HttpEra::Modern),
                _ if *status == 400 => Some(HttpEra::Legacy),
                _ => Some(HttpEra::Modern),
            }
        }
        Err(ClientError::HttpStatus { status: 400, .. }) => Some(HttpEra::Legacy),
        Err(_) => None,
    }
}

/// Routes a stdio subscription's notifications for as long as it lives.
struct Routed(Arc<StdioTransport>, i64);

impl Drop for Routed {
    fn drop(&mut self) {
        self.0.unroute(self.1);
    }
}

/// How a subscription's response (and its HTTP status) ends it: a result is a
/// graceful end, an error is reported.
fn ended(response: Result<(Value, u16), ClientError>) -> Result<ListenEvent, ClientError> {
    let (message, status) = response?;
    match message.get("error") {
        Some(error) => Err(ClientError::Rpc {
            status,
            error: serde_json::from_value(error.clone())
                .map_err(|e| ClientError::Protocol(format!("malformed error: {e}")))?,
        }),
        None => Ok(ListenEvent::Ended),
    }
}

/// One input request answered by the elicitor, if it can answer its kind.
async fn answer_one(
    elicitor: Option<&dyn Elicitor>,
    server: &str,
    key: &str,
    request: &InputRequest,
) -> Result<Value, ClientError> {
    let unanswerable = || ClientError::Unanswerable {
        key: key.to_owned(),
        method: request.method().to_owned(),
    };
    let elicitor = elicitor.ok_or_else(unanswerable)?;
    let kinds = elicitor.kinds();
    Ok(match request {
        InputRequest::Elicit(ElicitRequestParams::Form(p)) if kinds.form => {
            json!(elicitor.form(server, key, p).await?)
        }
        InputRequest::Elicit(ElicitRequestParams::Url(p)) if kinds.url => {
            json!(elicitor.url(server, key, p).await?)
        }
        InputRequest::Sample(p) if kinds.sampling => json!(elicitor.sample(key, p).await?),
        InputRequest::ListRoots(_) if kinds.roots => json!(elicitor.roots(key).await?),
        _ => return Err(unanswerable()),
    })
}

/// How a local server is named to the user: its program's file name.
fn local_label(program: &str) -> String {
    let name = std::path::Path::new(program)
        .file_name()
        .map_or_else(|| program.to_owned(), |n| n.to_string_lossy().into_owned());
    format!("{name} (local process)")
}

/// The key of a pushed question whose server does not name it (any server but Tessera's bridge).
fn unnamed_key(method: &str) -> &'static str {
    match method {
        tessera_protocol::SAMPLING_CREATE_MESSAGE => "sampling",
        tessera_protocol::ROOTS_LIST => "roots",
        _ => "elicitation",
    }
}

/// Answers what an initialize-era server pushes: its questions through the
/// elicitor (the key from [`INPUT_KEY_META_KEY`] when the server names one,
/// else `elicitation`, `sampling` or `roots`), and `ping`.
fn push_handler(
    elicitor: Option<Arc<dyn Elicitor>>,
    server: String,
    failure: Arc<Mutex<Option<ClientError>>>,
) -> PushHandler {
    Arc::new(move |method: String, params: Value| {
        let (elicitor, server, failure) = (elicitor.clone(), server.clone(), Arc::clone(&failure));
        Box::pin(async move {
            if method == "ping" {
                return Ok(json!({}));
            }
            let key = params
                .get("_meta")
                .and_then(|m| m.get(INPUT_KEY_META_KEY))
                .and_then(Value::as_str)
                .unwrap_or_else(|| unnamed_key(&method))
                .to_owned();
            let request: InputRequest =
                serde_json::from_value(json!({"method": method, "params": params})).map_err(
                    |e| ErrorObject::new(METHOD_NOT_FOUND, format!("cannot answer {method}: {e}")),
                )?;
            match answer_one(elicitor.as_deref(), &server, &key, &request).await {
                Ok(answer) => Ok(answer),
                Err(e) => {
                    let error = ErrorObject::new(INTERNAL_ERROR, e.to_string());
                    *lock(&failure) = Some(e);
                    Err(error)
                }
            }
        })
    })
}

//! Configuring and building a client.

use super::*;

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

    pub(super) fn builder_for(target: Target) -> McpClientBuilder {
        McpClientBuilder {
            target,
            client_info: Implementation::new("tessera-client", env!("CARGO_PKG_VERSION")),
            elicitor: None,
            max_rounds: 10,
            task_wait: DEFAULT_TASK_WAIT,
            on_notification: None,
            bearer: None,
            timeout: Duration::from_secs(120),
            extra_meta: JsonObject::new(),
            trace_context: None,
            mode: ConnectMode::Auto,
            oauth: None,
            headers: Vec::new(),
            standalone_stream: false,
        }
    }
}

/// How long a task is followed unless configured.
pub const DEFAULT_TASK_WAIT: Duration = Duration::from_secs(3600);

/// Where the server is.
pub(super) enum Target {
    Url(String),
    Process {
        program: String,
        args: Vec<String>,
        env: Vec<(String, String)>,
    },
}

/// Configures an [`McpClient`].
pub struct McpClientBuilder {
    target: Target,
    client_info: Implementation,
    elicitor: Option<Arc<dyn Elicitor>>,
    max_rounds: usize,
    task_wait: Duration,
    on_notification: Option<NotificationHandler>,
    bearer: Option<String>,
    timeout: Duration,
    extra_meta: JsonObject,
    trace_context: Option<tessera_protocol::TraceContext>,
    mode: ConnectMode,
    oauth: Option<crate::OAuthConfig>,
    headers: Vec<(String, String)>,
    standalone_stream: bool,
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

    /// Most rounds of one multi round-trip call (default 10); for a call that
    /// went on as a task, the most rounds of input it may ask.
    pub fn max_rounds(mut self, rounds: usize) -> Self {
        self.max_rounds = rounds.max(1);
        self
    }

    /// Longest a call that went on as a task is followed (default 1 hour):
    /// past it the task is cancelled and the call fails with
    /// [`ClientError::TaskUnfinished`](crate::ClientError::TaskUnfinished).
    pub fn task_wait(mut self, longest: Duration) -> Self {
        self.task_wait = longest;
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

    /// Time limit of one exchange (default 120 s). An initialize-era call
    /// that may push questions waits on the server this long in all, the
    /// time spent answering its questions not counted, and may push at most
    /// [`max_rounds`](Self::max_rounds) of them ([`ClientError::TimedOut`],
    /// [`ClientError::TooManyRounds`]).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Adds a key to every request's `_meta` (e.g. `progressToken` or the log level).
    pub fn meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.extra_meta.insert(key.into(), value);
        self
    }

    /// Sends this W3C trace context in every request's `_meta` (every round
    /// of a flow continues it), e.g. [`TraceContext::from_env`](tessera_protocol::TraceContext::from_env)
    /// for a command run inside a trace. Without it, and with the `otel`
    /// feature, each request carries the current span's context.
    pub fn trace_context(mut self, context: tessera_protocol::TraceContext) -> Self {
        self.trace_context = Some(context);
        self
    }

    /// Sends this header with every request (HTTP), e.g. an API key the
    /// server wants; a name or value that is not a valid header fails [`build`](Self::build).
    pub fn header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.headers.push((name.into(), value.into()));
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

    /// With an initialize-era HTTP server, keep the session's standalone
    /// stream (`GET`) open from the handshake on, as the 2025-11-25 transport
    /// lets a server send its requests and notifications there rather than
    /// on a call's stream: requests are answered (the elicitor), notifications
    /// go to [`on_notification`](Self::on_notification). Off by default; a
    /// server keeps one standalone stream per session, so this and
    /// [`McpClient::listen`] (which opens it too) do not go together.
    pub fn standalone_stream(mut self, open: bool) -> Self {
        self.standalone_stream = open;
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
            task_wait,
            on_notification,
            bearer,
            timeout,
            extra_meta,
            trace_context,
            mode,
            oauth,
            headers,
            standalone_stream,
        } = self;
        let push_failure = Arc::new(Mutex::new(None));
        let push_bound = PushBound::new(max_rounds, timeout);
        let mut session = None;
        let transport = match target {
            Target::Url(url) => {
                let url = reqwest::Url::parse(&url)
                    .map_err(|e| ClientError::Config(format!("invalid URL {url:?}: {e}")))?;
                let mut default_headers = reqwest::header::HeaderMap::new();
                for (name, value) in &headers {
                    let name = reqwest::header::HeaderName::from_bytes(name.as_bytes())
                        .map_err(|e| ClientError::Config(format!("header name {name:?}: {e}")))?;
                    let value = reqwest::header::HeaderValue::from_str(value)
                        .map_err(|e| ClientError::Config(format!("header {name}: {e}")))?;
                    default_headers.append(name, value);
                }
                let http = reqwest::Client::builder()
                    .default_headers(default_headers)
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
                    Arc::clone(&push_bound),
                );
                Transport::Http(HttpTransport {
                    http,
                    url,
                    bearer,
                    session: Arc::default(),
                    push,
                })
            }
            Target::Process { .. } if bearer.is_some() || !headers.is_empty() => {
                return Err(ClientError::Config(
                    "a bearer token or headers are for HTTP servers, not stdio".into(),
                ));
            }
            Target::Process { program, args, env } => {
                let push = push_handler(
                    elicitor.clone(),
                    local_label(&program),
                    Arc::clone(&push_failure),
                    Arc::clone(&push_bound),
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
        let settings = Settings {
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
        };
        Ok(McpClient::assemble(
            transport,
            settings,
            (push_failure, push_bound),
            session,
        ))
    }
}

/// How a local server is named to the user: its program's file name.
pub(super) fn local_label(program: &str) -> String {
    let name = std::path::Path::new(program)
        .file_name()
        .map_or_else(|| program.to_owned(), |n| n.to_string_lossy().into_owned());
    format!("{name} (local process)")
}

//! How an endpoint is configured.

use std::sync::Arc;

use crate::Authenticate;

/// What happens to initialize-era (2025-11-25 and earlier) clients.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Legacy {
    /// Refuse them with 400 and -32022 naming the supported versions.
    Reject,
    /// Serve them per request, without sessions, in the old result shapes;
    /// a handler that asks for input fails at once with an explanation.
    Stateless,
    /// Serve them the sessionful Streamable HTTP of their revision: the
    /// session id is sealed from the handshake (any instance sharing the key
    /// serves any request of it), and a handler's questions are pushed on
    /// the call's event stream as the requests they are. Needs the server's
    /// requestState key; without one, clients are served as by `Stateless`.
    /// The call waiting for an answer lives on the instance that asked, so
    /// the answer's POST must reach it: on Workers, where it may land in
    /// another isolate, use `Stateless` or `Reject`.
    #[default]
    Serve,
}

/// How long a pushed question waits for its answer unless configured: 30 minutes, as on stdio.
pub const DEFAULT_QUESTION_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(30 * 60);

/// How long an event stream stays silent before it writes a keep-alive comment, unless configured.
pub const DEFAULT_KEEP_ALIVE: std::time::Duration = std::time::Duration::from_secs(15);

/// The version of an initialize-era request that names none: the
/// transport's rule, "the server SHOULD assume protocol version 2025-03-26".
pub(crate) const ASSUMED_LEGACY_VERSION: &str = "2025-03-26";

impl std::str::FromStr for Legacy {
    type Err = String;

    /// `reject`, `stateless` or `serve`, as a command line spells it.
    ///
    /// ```
    /// assert_eq!("serve".parse(), Ok(tessera_http::Legacy::Serve));
    /// assert!("maybe".parse::<tessera_http::Legacy>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "reject" => Ok(Self::Reject),
            "stateless" => Ok(Self::Stateless),
            "serve" => Ok(Self::Serve),
            other => Err(format!(
                "--legacy takes reject, stateless or serve, not {other:?}"
            )),
        }
    }
}

/// Endpoint settings: route, eras, host and origin checks, CORS, body limit, auth.
#[derive(Clone)]
pub struct EndpointOptions {
    /// The one path served; `None` serves any path (the router in front chose it).
    pub(crate) route: Option<String>,
    pub(crate) legacy: Legacy,
    pub(crate) question_timeout: std::time::Duration,
    pub(crate) answer_relay: Option<Arc<dyn tessera_server::bridge::AnswerRelay>>,
    pub(crate) session_notes: Option<Arc<dyn tessera_server::bridge::SessionNotes>>,
    pub(crate) stream_log: Option<Arc<dyn tessera_server::bridge::StreamLog>>,
    pub(crate) allowed_hosts: Vec<String>,
    pub(crate) any_host: bool,
    pub(crate) allowed_origins: Vec<String>,
    pub(crate) cors: bool,
    pub(crate) body_limit: usize,
    pub(crate) intake: tessera_server::intake::Limits,
    pub(crate) body_bytes_in_flight: usize,
    pub(crate) large_bodies_at_once: usize,
    pub(crate) authenticate: Option<Arc<dyn Authenticate>>,
    pub(crate) task_runtime: Option<Arc<dyn tessera_server::TaskRuntime>>,
    pub(crate) listen_streams_per_client: usize,
    /// Whether `subscriptions/listen` is served (a stream that stays open).
    pub(crate) listen: bool,
    pub(crate) keep_alive: Option<std::time::Duration>,
    /// Where each request's log line goes instead of `tracing`.
    pub(crate) access_log: Option<Arc<dyn crate::AccessLog>>,
    /// RFC 9728 metadata served at the well-known paths, when the endpoint is protected.
    pub(crate) protected_resource: Option<serde_json::Value>,
    /// Peers whose `X-Forwarded-For` names the client.
    pub(crate) trusted_proxies: crate::TrustedProxies,
}

impl Default for EndpointOptions {
    fn default() -> Self {
        Self {
            route: Some("/mcp".into()),
            legacy: Legacy::Serve,
            question_timeout: DEFAULT_QUESTION_TIMEOUT,
            answer_relay: None,
            session_notes: None,
            stream_log: None,
            allowed_hosts: Vec::new(),
            any_host: false,
            allowed_origins: Vec::new(),
            cors: true,
            body_limit: 1024 * 1024,
            intake: tessera_server::intake::Limits::default(),
            body_bytes_in_flight: 64 * 1024 * 1024,
            large_bodies_at_once: 2,
            authenticate: None,
            // Serving with hyper is serving on tokio; elsewhere (Workers) none.
            #[cfg(feature = "server")]
            task_runtime: Some(Arc::new(tessera_tokio::TokioTasks)),
            #[cfg(not(feature = "server"))]
            task_runtime: None,
            protected_resource: None,
            listen_streams_per_client: crate::listen_streams::DEFAULT_LISTEN_STREAMS_PER_CLIENT,
            listen: true,
            keep_alive: Some(DEFAULT_KEEP_ALIVE),
            access_log: None,
            trusted_proxies: crate::TrustedProxies::default(),
        }
    }
}

impl EndpointOptions {
    /// The path of the MCP endpoint (default `/mcp`); other paths get 404.
    pub fn route(mut self, route: impl Into<String>) -> Self {
        self.route = Some(route.into());
        self
    }

    /// Serves whatever path the request has: for mounting under a router that
    /// already chose this endpoint (axum's `nest_service` strips the prefix).
    ///
    /// ```
    /// let options = tessera_http::EndpointOptions::default().any_path();
    /// # let _ = options;
    /// ```
    pub fn any_path(mut self) -> Self {
        self.route = None;
        self
    }

    /// The proxies in front of the server (`--trust-proxy`): from them, the
    /// client address per-caller limits count against is read from
    /// `X-Forwarded-For` by the rightmost-untrusted rule (see
    /// [`TrustedProxies`](crate::TrustedProxies)); from anyone else it is
    /// the peer. Default: none.
    pub fn trust_proxies(mut self, proxies: crate::TrustedProxies) -> Self {
        self.trusted_proxies = proxies;
        self
    }

    /// What to do with initialize-era clients (default [`Legacy::Serve`]).
    pub fn legacy(mut self, legacy: Legacy) -> Self {
        self.legacy = legacy;
        self
    }

    /// Forwards the answers of initialize-era clients to the instance whose
    /// call asked (e.g. `tessera_redis::Redis::answer_relay`), so that a
    /// session's requests may reach any instance of the deployment.
    pub fn answer_relay(mut self, relay: Arc<dyn tessera_server::bridge::AnswerRelay>) -> Self {
        self.answer_relay = Some(relay);
        self
    }

    /// Where the notes on initialize-era sessions are kept (ended, log level,
    /// subscriptions, who holds the standalone stream): give every instance
    /// the same shared store (e.g. `tessera_redis::Redis::session_notes`) so
    /// a DELETE on one ends the session on all, also after restarts, and the
    /// log level and subscriptions follow the session to whatever instance
    /// serves it. Without one they are kept in this process
    /// ([`MemorySessionNotes`](tessera_server::bridge::MemorySessionNotes)),
    /// and hold only on the instance that took them, until it restarts.
    pub fn session_notes(mut self, notes: Arc<dyn tessera_server::bridge::SessionNotes>) -> Self {
        self.session_notes = Some(notes);
        self
    }

    /// Where initialize-era calls' streams keep their events to be resumed
    /// (`Last-Event-ID`): in this process by default, so a client resumes on
    /// the instance it was on; the same shared store on every instance (e.g.
    /// `tessera_redis::Redis::stream_log`) lets it resume on any.
    pub fn stream_log(mut self, log: Arc<dyn tessera_server::bridge::StreamLog>) -> Self {
        self.stream_log = Some(log);
        self
    }

    /// How long a question pushed to an initialize-era client waits for its
    /// answer (default 30 minutes: a person reading a form); the call then
    /// fails with an error saying so.
    pub fn question_timeout(mut self, timeout: std::time::Duration) -> Self {
        self.question_timeout = timeout;
        self
    }

    /// Allows a `Host` name besides the loopback names (`localhost`, `127.0.0.1`, `[::1]`); any port.
    pub fn allow_host(mut self, host: impl Into<String>) -> Self {
        self.allowed_hosts.push(host.into().to_ascii_lowercase());
        self
    }

    /// Accepts any `Host` (for deployments where a proxy checks it).
    pub fn allow_any_host(mut self) -> Self {
        self.any_host = true;
        self
    }

    /// Allows a browser `Origin` (e.g. `https://app.example.com`) besides loopback origins.
    pub fn allow_origin(mut self, origin: impl Into<String>) -> Self {
        self.allowed_origins
            .push(origin.into().to_ascii_lowercase());
        self
    }

    /// Turns CORS headers and preflight answers on or off (default on, for allowed origins).
    pub fn cors(mut self, on: bool) -> Self {
        self.cors = on;
        self
    }

    /// Largest accepted body in bytes (default 1 MiB; larger ones get 413).
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.body_limit = bytes;
        self
    }

    /// Most JSON values (objects, arrays, strings, numbers… at any depth) a
    /// request body may hold (default 20,000; more get 413 before any is built).
    pub fn max_json_values(mut self, values: usize) -> Self {
        self.intake.max_json_values = values;
        self
    }

    /// Longest string JSON-RPC id a request may carry, in bytes (default 256;
    /// a longer one gets 400 with -32600, its id not echoed).
    pub fn max_id_bytes(mut self, bytes: usize) -> Self {
        self.intake.max_id_bytes = bytes;
        self
    }

    /// Most request-body bytes beyond each body's first 16 KiB the endpoint
    /// reads at once, across all connections (default 64 MiB): stalled uploads
    /// cannot hold more memory than this; past it a request gets 503 with
    /// `Retry-After`. Small bodies never wait on it.
    pub fn body_bytes_in_flight(mut self, bytes: usize) -> Self {
        self.body_bytes_in_flight = bytes;
        self
    }

    /// How many large bodies (64 KiB and more) are parsed and served at once
    /// (default 2, at least 1); more wait for nothing: they get 503 with
    /// `Retry-After`, so small requests keep the workers.
    pub fn large_bodies_at_once(mut self, n: usize) -> Self {
        self.large_bodies_at_once = n.max(1);
        self
    }

    /// Publishes RFC 9728 Protected Resource Metadata (`resource`,
    /// `authorization_servers`, …) at `/.well-known/oauth-protected-resource`
    /// and its path-suffixed form for the resource's path; 401 and 403
    /// challenges then name it in `resource_metadata`.
    pub fn protected_resource(mut self, metadata: serde_json::Value) -> Self {
        self.protected_resource = Some(metadata);
        self
    }

    /// The URL clients fetch the Protected Resource Metadata from (path-suffixed), when published.
    pub fn resource_metadata_url(&self) -> Option<String> {
        let resource = self
            .protected_resource
            .as_ref()?
            .get("resource")?
            .as_str()?;
        resource_metadata_url(resource)
    }

    /// Whether `path` is where the Protected Resource Metadata is served.
    pub(crate) fn is_resource_metadata_path(&self, path: &str) -> bool {
        let Some(resource) = self
            .protected_resource
            .as_ref()
            .and_then(|m| m.get("resource"))
            .and_then(|r| r.as_str())
            .and_then(|r| http::Uri::try_from(r).ok())
        else {
            return false;
        };
        let suffix = resource.path().trim_end_matches('/');
        path == "/.well-known/oauth-protected-resource"
            || (!suffix.is_empty()
                && path == format!("/.well-known/oauth-protected-resource{suffix}"))
    }

    /// Hands each finished request's record to `log` (instead of an `info`
    /// event per request), so it can be formatted and written off the request path.
    pub fn access_log(mut self, log: Arc<dyn crate::AccessLog>) -> Self {
        self.access_log = Some(log);
        self
    }

    /// Authenticates every request before it is parsed.
    pub fn authenticate(mut self, auth: impl Authenticate + 'static) -> Self {
        self.authenticate = Some(Arc::new(auth));
        self
    }

    /// Long-lived streams (`subscriptions/listen`, a session's GET stream)
    /// one client may hold open at once (default 16); a client is its
    /// principal, or its address when anonymous. More are refused with 429.
    /// Anonymous callers are told apart by address only when served by
    /// [`serve`](crate::serve): an endpoint mounted elsewhere bounds
    /// authenticated callers only.
    ///
    /// ```
    /// let options = tessera_http::EndpointOptions::default().listen_streams_per_client(4);
    /// # let _ = options;
    /// ```
    pub fn listen_streams_per_client(mut self, most: usize) -> Self {
        self.listen_streams_per_client = most.max(1);
        self
    }

    /// How long an event stream may stay silent before it writes a
    /// keep-alive comment (default 15 s; `None`: never), so proxies keep it
    /// and a peer that is gone is noticed when the write fails. Timed on the
    /// [`task_runtime`](Self::task_runtime): without one (Workers), no
    /// keep-alives are written.
    pub fn keep_alive(mut self, every: Option<std::time::Duration>) -> Self {
        self.keep_alive = every.filter(|d| !d.is_zero());
        self
    }

    /// Where calls that go on as tasks run (default: tokio with the `server`
    /// feature, none without it, which serves no tasks).
    pub fn task_runtime(mut self, runtime: Arc<dyn tessera_server::TaskRuntime>) -> Self {
        self.task_runtime = Some(runtime);
        self
    }

    /// For platforms that send each response whole and freeze the instance
    /// afterwards (AWS Lambda): no task runtime (no background work), no
    /// keep-alive comments, and `subscriptions/listen` refused with -32601
    /// rather than held open until the platform's timeout.
    pub fn buffered_responses(mut self) -> Self {
        self.task_runtime = None;
        self.keep_alive = None;
        self.listen = false;
        self
    }
}

/// Where the Protected Resource Metadata of `resource` is served: the
/// path-suffixed well-known URI of RFC 9728 §3.1.
pub fn resource_metadata_url(resource: &str) -> Option<String> {
    let url = http::Uri::try_from(resource).ok()?;
    let origin = format!("{}://{}", url.scheme_str()?, url.authority()?);
    let path = url.path().trim_end_matches('/');
    Some(format!(
        "{origin}/.well-known/oauth-protected-resource{path}"
    ))
}

/// A task runtime for one request, put in its extensions: it runs the
/// tasks that request starts, over the endpoint's
/// [`task_runtime`](EndpointOptions::task_runtime). For hosts whose
/// background work belongs to the request that started it (a Worker's
/// `waitUntil`).
#[derive(Clone)]
pub struct RequestTaskRuntime(pub Arc<dyn tessera_server::TaskRuntime>);

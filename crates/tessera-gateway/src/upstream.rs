//! One upstream server: its connection (restarted when a process dies), its
//! era, and how a call on it is made — relayed round by round to a
//! 2026-07-28 server, or held open while an initialize-era server pushes
//! its questions.
//!
//! Pushed questions must reach the call they belong to. Over Streamable
//! HTTP each held call gets a session of its own (its own `initialize`), so
//! what the server pushes on that call's stream is that call's — and two
//! callers never share a session's state upstream. An initialize-era stdio
//! server has one session, its process, and does not say which call a
//! pushed request is for; the gateway runs one call at a time on it (the
//! *lane*), and a call waits for the lane at most the upstream timeout.

use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tessera_client::{ClientError, ConnectMode, Elicitor, InputKinds, McpClient};
use tessera_protocol::{
    BoxFuture, ClientCapabilities, CreateMessageRequestParams, CreateMessageResult,
    ElicitFormParams, ElicitRequestParams, ElicitResult, ElicitUrlParams, InputRequest,
    InputResponse, JsonObject, ListRootsResult,
};
use tokio::sync::{mpsc, oneshot};

use crate::config::{self, Limits, Transport, UpstreamEra};

/// What an upstream call in progress says next.
pub(crate) enum Event {
    /// It pushed a question; its answer goes to `reply`.
    Asked {
        /// The question's key (the one the server names, else its kind).
        key: String,
        /// The question.
        request: Box<InputRequest>,
        /// Where the caller's answer goes.
        reply: oneshot::Sender<InputResponse>,
    },
    /// It ended: the upstream's result, or why there is none.
    Done(Result<Value, UpstreamError>),
}

/// Why an upstream could not serve.
#[derive(Debug, Clone, thiserror::Error)]
pub(crate) enum UpstreamError {
    /// It is not reachable now (its process is being restarted, or its URL does not answer).
    #[error("upstream {upstream:?} is unavailable: {reason}")]
    Down {
        /// The upstream.
        upstream: String,
        /// Why.
        reason: String,
    },
    /// It answered with a JSON-RPC error, passed on as it is.
    #[error("{0}")]
    Rpc(tessera_protocol::ErrorObject),
    /// The exchange failed.
    #[error("upstream {upstream:?} failed: {reason}")]
    Failed {
        /// The upstream.
        upstream: String,
        /// What happened.
        reason: String,
    },
    /// Its one-call-at-a-time lane stayed taken.
    #[error(
        "upstream {upstream:?} is busy with another call: an initialize-era stdio server does not say which call a question is for, so the gateway runs one call at a time on it; try again"
    )]
    Busy {
        /// The upstream.
        upstream: String,
    },
}

/// An upstream failure as the caller gets it: the upstream's own JSON-RPC
/// error as it is, or an internal error naming the upstream.
pub(crate) fn error_object(error: &UpstreamError) -> tessera_protocol::ErrorObject {
    match error {
        UpstreamError::Rpc(e) => e.clone(),
        other => {
            tessera_protocol::ErrorObject::new(tessera_protocol::INTERNAL_ERROR, other.to_string())
        }
    }
}

/// An upstream failure before its call started, as the caller gets it: the
/// upstream's own JSON-RPC error as it is; an upstream down or busy as
/// unavailable (503, retry later); any other failure an internal error
/// naming the upstream.
pub(crate) fn server_error(error: &UpstreamError) -> tessera_server::ServerError {
    use tessera_server::ServerError;
    match error {
        UpstreamError::Rpc(e) => ServerError::Refused(e.clone()),
        UpstreamError::Down { .. } | UpstreamError::Busy { .. } => ServerError::Unavailable {
            message: error.to_string(),
            retry_after_secs: 5,
        },
        UpstreamError::Failed { .. } => ServerError::Internal {
            message: error.to_string(),
        },
    }
}

/// The era an upstream was found to speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Era {
    /// 2026-07-28: rounds are relayed, nothing is held.
    Modern,
    /// The initialize era: questions are pushed during a call, which is held.
    Initialize,
}

/// A live connection to an upstream.
struct Connection {
    client: Arc<McpClient>,
    era: Era,
    /// An initialize-era stdio server's lane and where its pushes go now.
    lane: Option<Lane>,
}

/// One call at a time on a stdio server that pushes, and the sink of the call holding it.
#[derive(Clone)]
struct Lane {
    turn: Arc<tokio::sync::Mutex<()>>,
    route: Route,
}

/// Where the pushes of a shared connection go: the call that holds its lane.
type Route = Arc<Mutex<Option<mpsc::Sender<Event>>>>;

/// The connection's state.
enum State {
    Up(Arc<Connection>),
    /// Down since `since`; tried `attempts` times.
    Down {
        reason: String,
        since: Instant,
        attempts: u32,
    },
}

/// An upstream server as the gateway reaches it.
pub(crate) struct Upstream {
    pub(crate) config: config::Upstream,
    limits: Limits,
    state: tokio::sync::Mutex<State>,
    /// Told when the upstream's lists may have changed (a notification, a restart).
    pub(crate) changed: Arc<tokio::sync::Notify>,
}

/// How long a dead stdio server waits before it is started again, by attempt.
fn backoff(attempts: u32) -> Duration {
    Duration::from_millis(100u64.saturating_mul(1 << attempts.min(7))).min(Duration::from_secs(10))
}

impl Upstream {
    /// An upstream not yet connected.
    pub(crate) fn new(config: config::Upstream, limits: Limits) -> Self {
        Self {
            config,
            limits,
            state: tokio::sync::Mutex::new(State::Down {
                reason: "not connected yet".into(),
                since: Instant::now() - Duration::from_secs(60),
                attempts: 0,
            }),
            changed: Arc::default(),
        }
    }

    /// The name it is configured under.
    pub(crate) fn name(&self) -> &str {
        &self.config.name
    }

    fn down(&self, reason: impl Into<String>) -> UpstreamError {
        UpstreamError::Down {
            upstream: self.config.name.clone(),
            reason: reason.into(),
        }
    }

    /// The live connection, connecting (again) when there is none and the
    /// backoff since the last try has passed.
    async fn connection(&self) -> Result<Arc<Connection>, UpstreamError> {
        let mut state = self.state.lock().await;
        let attempts = match &*state {
            State::Up(conn) => return Ok(Arc::clone(conn)),
            State::Down {
                reason,
                since,
                attempts,
            } => {
                if since.elapsed() < backoff(*attempts) {
                    return Err(self.down(format!("{reason}; trying again shortly")));
                }
                *attempts
            }
        };
        match self.connect().await {
            Ok(conn) => {
                let conn = Arc::new(conn);
                tracing::info!(upstream = %self.config.name, era = ?conn.era, "upstream connected");
                *state = State::Up(Arc::clone(&conn));
                self.changed.notify_one();
                Ok(conn)
            }
            Err(reason) => {
                tracing::warn!(upstream = %self.config.name, %reason, "upstream unavailable");
                *state = State::Down {
                    reason: reason.clone(),
                    since: Instant::now(),
                    attempts: attempts.saturating_add(1),
                };
                Err(self.down(reason))
            }
        }
    }

    /// Connects: starts the process or reaches the URL, and settles the era.
    async fn connect(&self) -> Result<Connection, String> {
        let route: Route = Arc::default();
        let changed = Arc::clone(&self.changed);
        let on_notification: tessera_client::NotificationHandler = Arc::new(move |n: &Value| {
            let method = n.get("method").and_then(Value::as_str).unwrap_or_default();
            if method.ends_with("/list_changed") {
                changed.notify_one();
            }
        });
        let builder = match &self.config.transport {
            Transport::Stdio { command, env } => {
                let mut b = McpClient::stdio(&command[0], command[1..].iter().cloned());
                for (k, v) in env {
                    b = b.env(k.clone(), v.clone());
                }
                // Every kind may be pushed: which call's client can answer it is known only then.
                b.elicitor(Arc::new(Forwarder::routed(
                    Arc::clone(&route),
                    InputKinds {
                        form: true,
                        url: true,
                        sampling: true,
                        roots: true,
                    },
                    self.limits.answer_timeout(),
                )))
            }
            Transport::Http { url, headers } => {
                let mut b = McpClient::builder(url.clone());
                for (k, v) in headers {
                    b = b.header(k.clone(), v.clone());
                }
                b
            }
        };
        let mode = match self.config.era {
            UpstreamEra::Auto => ConnectMode::Auto,
            UpstreamEra::Modern => ConnectMode::Modern,
            UpstreamEra::Initialize => ConnectMode::Legacy,
        };
        let client = builder
            .client_info("tessera-gateway", env!("CARGO_PKG_VERSION"))
            .connect_mode(mode)
            .on_notification(on_notification)
            .timeout(self.limits.upstream_timeout())
            .max_rounds(self.limits.max_rounds)
            .build()
            .map_err(|e| e.to_string())?;
        let era = match client.is_initialize_era().await {
            Ok(true) => Era::Initialize,
            Ok(false) => Era::Modern,
            Err(e) => {
                client.close().await;
                return Err(e.to_string());
            }
        };
        let stdio = matches!(self.config.transport, Transport::Stdio { .. });
        Ok(Connection {
            client: Arc::new(client),
            era,
            lane: (stdio && era == Era::Initialize).then(|| Lane {
                turn: Arc::default(),
                route,
            }),
        })
    }

    /// Marks the connection dead after `error`, when the error says the
    /// process exited or the server cannot be reached (not when one slow
    /// request timed out); the next use connects again.
    async fn failed(&self, conn: &Arc<Connection>, error: &ClientError) {
        let gone = match error {
            ClientError::Process(_) => true,
            ClientError::Transport(e) => e.is_connect(),
            _ => false,
        };
        if !gone {
            return;
        }
        let mut state = self.state.lock().await;
        if let State::Up(current) = &*state
            && Arc::ptr_eq(current, conn)
        {
            tracing::warn!(upstream = %self.config.name, %error, "upstream connection lost; it is started again");
            *state = State::Down {
                reason: error.to_string(),
                since: Instant::now(),
                attempts: 0,
            };
            let client = Arc::clone(&conn.client);
            tokio::spawn(async move { client.close().await });
            self.changed.notify_one();
        }
    }

    /// The era it speaks (connecting first if need be).
    pub(crate) async fn era(&self) -> Result<Era, UpstreamError> {
        Ok(self.connection().await?.era)
    }

    /// The shared client, for lists and 2026-07-28 requests.
    pub(crate) async fn client(&self) -> Result<Arc<McpClient>, UpstreamError> {
        Ok(Arc::clone(&self.connection().await?.client))
    }

    /// One request on the shared connection, its failures named after this upstream.
    pub(crate) async fn request(
        &self,
        method: &str,
        params: JsonObject,
    ) -> Result<Value, UpstreamError> {
        let conn = self.connection().await?;
        let started = Instant::now();
        let result = conn.client.request(method, params).await;
        crate::metrics::upstream_request(
            self.name(),
            method,
            started.elapsed(),
            result.as_ref().err(),
        );
        match result {
            Ok(value) => Ok(value),
            Err(e) => {
                self.failed(&conn, &e).await;
                Err(self.error_of(e))
            }
        }
    }

    /// A client error as the gateway reports it.
    fn error_of(&self, error: ClientError) -> UpstreamError {
        match error {
            ClientError::Rpc { error, .. } => UpstreamError::Rpc(error),
            other => UpstreamError::Failed {
                upstream: self.config.name.clone(),
                reason: other.to_string(),
            },
        }
    }

    /// Starts `method` on an initialize-era upstream, held: its events come
    /// through the returned receiver — each pushed question, then the end.
    /// The questions a caller cannot answer (`caps`) are not offered upstream.
    pub(crate) async fn start_held(
        self: &Arc<Self>,
        method: String,
        params: JsonObject,
        caps: &ClientCapabilities,
    ) -> Result<mpsc::Receiver<Event>, UpstreamError> {
        let conn = self.connection().await?;
        let (events, receiver) = mpsc::channel(1);
        let (client, turn) = match &conn.lane {
            // One session per call: its pushes are its own.
            None => {
                let kinds = kinds_of(caps);
                let elicitor =
                    Forwarder::direct(events.clone(), kinds, self.limits.answer_timeout());
                let client = conn
                    .client
                    .new_session(Arc::new(elicitor))
                    .map_err(|e| self.error_of(e))?;
                (Arc::new(client), None)
            }
            Some(lane) => {
                let turn = tokio::time::timeout(
                    self.limits.upstream_timeout(),
                    Arc::clone(&lane.turn).lock_owned(),
                )
                .await
                .map_err(|_| UpstreamError::Busy {
                    upstream: self.config.name.clone(),
                })?;
                *lane.route.lock().unwrap_or_else(PoisonError::into_inner) = Some(events.clone());
                (
                    Arc::clone(&conn.client),
                    Some((turn, Arc::clone(&lane.route))),
                )
            }
        };
        let upstream = Arc::clone(self);
        let task = async move {
            let started = Instant::now();
            let result = client.request(&method, params).await;
            crate::metrics::upstream_request(
                upstream.name(),
                &method,
                started.elapsed(),
                result.as_ref().err(),
            );
            if let Err(e) = &result {
                upstream.failed(&conn, e).await;
            }
            match turn {
                // The lane is free again: later pushes go nowhere until the next call takes it.
                Some((_turn, route)) => {
                    route.lock().unwrap_or_else(PoisonError::into_inner).take();
                }
                None => client.close().await,
            }
            let _ = events
                .send(Event::Done(result.map_err(|e| upstream.error_of(e))))
                .await;
        };
        tokio::spawn(tracing::Instrument::in_current_span(task));
        Ok(receiver)
    }
}

/// What a caller with `caps` can answer.
pub(crate) fn kinds_of(caps: &ClientCapabilities) -> InputKinds {
    InputKinds {
        form: caps.supports_form_elicitation(),
        url: caps.supports_url_elicitation(),
        sampling: caps.supports_sampling(),
        roots: caps.supports_roots(),
    }
}

/// The elicitor of an upstream call: each question it is asked becomes an
/// [`Event::Asked`] for the call, and waits for the caller's answer.
struct Forwarder {
    to: To,
    kinds: InputKinds,
    answer_timeout: Duration,
}

/// Where a forwarder's questions go.
enum To {
    /// Its own call's events.
    Direct(mpsc::Sender<Event>),
    /// The call that holds the lane now.
    Routed(Route),
}

impl Forwarder {
    fn direct(to: mpsc::Sender<Event>, kinds: InputKinds, answer_timeout: Duration) -> Self {
        Self {
            to: To::Direct(to),
            kinds,
            answer_timeout,
        }
    }

    fn routed(route: Route, kinds: InputKinds, answer_timeout: Duration) -> Self {
        Self {
            to: To::Routed(route),
            kinds,
            answer_timeout,
        }
    }

    async fn push(&self, key: &str, request: InputRequest) -> Result<InputResponse, ClientError> {
        let sink = match &self.to {
            To::Direct(sink) => Some(sink.clone()),
            To::Routed(route) => route.lock().unwrap_or_else(PoisonError::into_inner).clone(),
        };
        let Some(sink) = sink else {
            return Err(ClientError::Elicitation(
                "no call of the gateway's is waiting for this question".into(),
            ));
        };
        let (reply, answer) = oneshot::channel();
        let asked = Event::Asked {
            key: key.to_owned(),
            request: Box::new(request),
            reply,
        };
        // The call reads its next event when its caller answers the one before.
        match tokio::time::timeout(self.answer_timeout, sink.send(asked)).await {
            Ok(Ok(())) => {}
            Ok(Err(_)) => return Err(ClientError::Elicitation("the caller went away".into())),
            Err(_) => {
                return Err(ClientError::Elicitation(format!(
                    "the caller did not take the question within {:?}",
                    self.answer_timeout
                )));
            }
        }
        match tokio::time::timeout(self.answer_timeout, answer).await {
            Ok(Ok(answer)) => Ok(answer),
            Ok(Err(_)) => Err(ClientError::Elicitation(
                "the caller went away before answering".into(),
            )),
            Err(_) => Err(ClientError::Elicitation(format!(
                "the caller did not answer within {:?}",
                self.answer_timeout
            ))),
        }
    }
}

/// An answer of the wrong kind for the question.
fn mismatched(key: &str) -> ClientError {
    ClientError::Elicitation(format!("the answer to {key:?} is not one to its question"))
}

impl Elicitor for Forwarder {
    fn kinds(&self) -> InputKinds {
        self.kinds
    }

    fn form<'a>(
        &'a self,
        _server: &'a str,
        key: &'a str,
        params: &'a ElicitFormParams,
    ) -> BoxFuture<'a, Result<ElicitResult, ClientError>> {
        Box::pin(async move {
            let request = InputRequest::Elicit(ElicitRequestParams::Form(params.clone()));
            match self.push(key, request).await? {
                InputResponse::Elicit(result) => Ok(result),
                _ => Err(mismatched(key)),
            }
        })
    }

    fn url<'a>(
        &'a self,
        _server: &'a str,
        key: &'a str,
        params: &'a ElicitUrlParams,
    ) -> BoxFuture<'a, Result<ElicitResult, ClientError>> {
        Box::pin(async move {
            let request = InputRequest::Elicit(ElicitRequestParams::Url(params.clone()));
            match self.push(key, request).await? {
                InputResponse::Elicit(result) => Ok(result),
                _ => Err(mismatched(key)),
            }
        })
    }

    fn sample<'a>(
        &'a self,
        key: &'a str,
        params: &'a CreateMessageRequestParams,
    ) -> BoxFuture<'a, Result<CreateMessageResult, ClientError>> {
        Box::pin(async move {
            match self.push(key, InputRequest::Sample(params.clone())).await? {
                InputResponse::Sample(result) => Ok(result),
                _ => Err(mismatched(key)),
            }
        })
    }

    fn roots<'a>(&'a self, key: &'a str) -> BoxFuture<'a, Result<ListRootsResult, ClientError>> {
        Box::pin(async move {
            match self.push(key, InputRequest::ListRoots(None)).await? {
                InputResponse::Roots(result) => Ok(result),
                _ => Err(mismatched(key)),
            }
        })
    }
}

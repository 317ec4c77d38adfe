//! Initialize-era clients in sessions ([`Legacy::Serve`](crate::Legacy::Serve)):
//! the sessionful Streamable HTTP of revisions 2025-03-26 to 2025-11-25,
//! served by the same handlers and the same era bridge as stdio.
//!
//! - `initialize` answers with an `Mcp-Session-Id`: the handshake sealed
//!   ([`LegacySession::seal`]), so any instance sharing the key serves any
//!   request of the session and none keeps a session table.
//! - A call whose handler asks for input answers with an event stream; each
//!   question is pushed on it as the request it is (`elicitation/create`, …),
//!   the client POSTs the response, the bridge runs the handler again with
//!   the answers, and the result ends the stream.
//! - GET opens the session's standalone stream: list changes, and
//!   `notifications/resources/updated` for what it subscribed to
//!   (`resources/subscribe`); `logging/setLevel` sets what its calls log.
//! - DELETE ends a session; a request of an unknown, expired or ended session
//!   gets 404, and one without a session id (other than `initialize`) 400.

mod questions;
mod resumable;

use std::sync::Arc;

use http::request::Parts;
use http::{HeaderValue, Method, Response, StatusCode};
use serde_json::{Value, json};
use tessera_protocol::{
    INITIALIZE, INVALID_PARAMS, INVALID_REQUEST, JsonRpcResponse, LoggingLevel, RequestId,
};
use tessera_server::bridge::{
    AnswerRelay, Bridge, LegacySession, MemorySessionNotes, MemoryStreamLog, NotesError,
    OpenedSession, RelayedAnswer, STREAM_LEASE, SessionError, SessionNote, SessionNotes, StreamLog,
    Wanted, is_bridged, requested_log_level,
};
use tessera_server::intake::Request;
use tessera_server::{Change, Era, Handled, RequestFacts, Resolved, ServerError};

use questions::{Delivery, Questions, StreamAsker, first_of};
pub use questions::{MAX_QUESTIONS, MAX_QUESTIONS_PER_PRINCIPAL, MAX_QUESTIONS_PER_SESSION};
pub use resumable::{
    MAX_DETACHED_CALLS, MAX_DETACHED_CALLS_PER_CALLER, POLL as RESUMED_STREAM_POLL, RETRY_MS,
};
pub use tessera_server::bridge::{
    MAX_REMEMBERED_SESSIONS, MAX_SUBSCRIPTION_URI_BYTES, MAX_SUBSCRIPTIONS_PER_SESSION,
};

use crate::stream::{RequestLog, Running};
use crate::{McpBody, McpEndpoint, reject};

/// The session header (the transport spells it `Mcp-Session-Id`; header names are case-insensitive).
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// The JSON-RPC code of a 404 for an unknown session (the one the other SDKs send).
pub const SESSION_NOT_FOUND: i32 = -32001;

/// The endpoint's session state: the questions waiting for answers, and
/// the notes on sessions (ended, log level, subscriptions, the stream).
pub(crate) struct Sessions {
    questions: Arc<Questions>,
    notes: Arc<dyn SessionNotes>,
    relay: Option<Arc<dyn AnswerRelay>>,
    /// Bridged calls' streams, kept to be resumed.
    resumable: Arc<resumable::Resumable>,
}

impl Sessions {
    /// The session state of an endpoint; with a relay, question ids name
    /// this instance and answers forwarded to it reach its waiting calls;
    /// without shared `notes`, they are kept in this process.
    pub(crate) fn new(
        relay: Option<&Arc<dyn AnswerRelay>>,
        notes: Option<Arc<dyn SessionNotes>>,
        stream_log: Option<Arc<dyn StreamLog>>,
    ) -> Self {
        let questions = Arc::new(Questions::new(relay.map(|r| r.instance().to_owned())));
        if let Some(relay) = relay {
            let questions = Arc::clone(&questions);
            relay.receive(Arc::new(move |answer: RelayedAnswer| {
                let Ok(response) = serde_json::from_value(answer.response) else {
                    tracing::warn!("a relayed answer that is not a JSON-RPC response; ignored");
                    return;
                };
                if questions.deliver(&answer.session, response) == Delivery::NoSuchQuestion {
                    tracing::info!("a relayed answer found no waiting question (answered, withdrawn or timed out)");
                }
            }));
        }
        Self {
            questions,
            notes: notes.unwrap_or_else(|| Arc::new(MemorySessionNotes::default())),
            relay: relay.cloned(),
            resumable: resumable::Resumable::new(
                stream_log.unwrap_or_else(|| Arc::new(MemoryStreamLog::default())),
            ),
        }
    }
}

impl McpEndpoint {
    /// An initialize-era request under [`Legacy::Serve`](crate::Legacy::Serve);
    /// `version` is the one its `MCP-Protocol-Version` header names.
    pub(crate) async fn serve_session(
        &self,
        head: &Parts,
        request: Request,
        mut facts: RequestFacts,
        version: Option<String>,
        resolved: Resolved,
    ) -> Response<McpBody> {
        if request.method == INITIALIZE {
            return self.initialize(request, facts, resolved).await;
        }
        if self.server.request_state_codec().is_none() {
            // No key, no sessions: served per request, as Legacy::Stateless does.
            facts.era = Era::Legacy {
                version: version.unwrap_or_else(|| crate::options::ASSUMED_LEGACY_VERSION.into()),
            };
            return self.dispatch(request, facts, resolved).await;
        }
        let (opened, note) = match self.open_session(head, facts.principal.as_deref()).await {
            Ok(opened) => opened,
            Err(no) => return no.response(Some(request.id.clone())),
        };
        facts.era = Era::Legacy {
            version: opened.session.version.clone(),
        };
        facts = facts.with_session(&opened.key);
        if let Some(answered) = self.take_note(&opened, &request, &facts).await {
            return answered;
        }
        if !is_bridged(&request.method) {
            return self.dispatch(request, facts, resolved).await;
        }
        let log_level = note.log_level.unwrap_or(LoggingLevel::Debug);
        self.bridged(request, facts, opened, log_level, resolved)
            .await
    }

    /// What is noted of a session's requests: the level of
    /// `logging/setLevel` (then answered by the server), and
    /// `resources/subscribe` and `unsubscribe`, answered here. A
    /// subscription is kept only to what the caller could read
    /// ([`McpServer::may_subscribe`](tessera_server::McpServer::may_subscribe)),
    /// by a URI of at most [`MAX_SUBSCRIPTION_URI_BYTES`].
    async fn take_note(
        &self,
        opened: &OpenedSession,
        request: &Request,
        facts: &RequestFacts,
    ) -> Option<Response<McpBody>> {
        let notes = &self.sessions.notes;
        let id = request.id.clone();
        let noted = match request.method.as_str() {
            "logging/setLevel" => {
                let level = requested_log_level(request)?;
                notes
                    .set_log_level(&opened.key, opened.expires_at, level)
                    .await
            }
            "resources/subscribe" | "resources/unsubscribe" => {
                let Some(uri) = request.param("uri").and_then(Value::as_str) else {
                    return Some(reject::error(
                        StatusCode::OK,
                        Some(id),
                        INVALID_PARAMS,
                        format!("Invalid {} params: uri must be a string", request.method),
                        None,
                    ));
                };
                if request.method == "resources/subscribe" {
                    if uri.len() > MAX_SUBSCRIPTION_URI_BYTES {
                        return Some(reject::error(
                            StatusCode::OK,
                            Some(id),
                            INVALID_PARAMS,
                            format!(
                                "Invalid resources/subscribe params: uri is longer than {MAX_SUBSCRIPTION_URI_BYTES} bytes"
                            ),
                            None,
                        ));
                    }
                    // Initialize-era clients expect JSON-RPC errors in a 200 answer.
                    if let Err(e) = self.server.may_subscribe(uri, facts) {
                        return Some(reject::rpc_error(
                            StatusCode::OK,
                            Some(id),
                            e.to_error_object(),
                        ));
                    }
                    notes.subscribe(&opened.key, opened.expires_at, uri).await
                } else {
                    notes.unsubscribe(&opened.key, uri).await
                }
            }
            _ => return None,
        };
        match noted {
            Err(full) => Some(refuse_note(Some(id), full)),
            Ok(()) if request.method.starts_with("resources/") => Some(reject::json(
                StatusCode::OK,
                serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": {}}))
                    .unwrap_or_default(),
            )),
            Ok(()) => None,
        }
    }

    /// A call that may ask, served through the era bridge: its questions go
    /// on its event stream, their answers come by POST.
    async fn bridged(
        &self,
        request: Request,
        facts: RequestFacts,
        opened: OpenedSession,
        log_level: LoggingLevel,
        resolved: Resolved,
    ) -> Response<McpBody> {
        let questions = Arc::clone(&self.sessions.questions);
        let patience = self.options().question_timeout;
        let session_key = opened.key.clone();
        let serve = move |server: Arc<tessera_server::McpServer>,
                          request: Request,
                          facts: RequestFacts,
                          _: Resolved| async move {
            let id = request.id.clone();
            let Some(stream) = facts.notifications.clone() else {
                return Handled {
                    id,
                    result: Err(ServerError::Internal {
                        message: "no event stream to push questions on".into(),
                    }),
                };
            };
            let asker = StreamAsker {
                questions,
                session: opened.key,
                caller: facts.caller_key(),
                stream,
                patience,
                runtime: facts.tasks.clone(),
            };
            let bridge = Bridge {
                server: &server,
                session: &opened.session,
                asker: &asker,
                facts,
                max_rounds: tessera_server::bridge::DEFAULT_MAX_ROUNDS,
                log_level,
            };
            bridge.serve(request).await.unwrap_or(Handled {
                id,
                result: Err(ServerError::Cancelled),
            })
        };
        // Detached and resumable when it can be; else tied to its connection.
        match self.detachment(&facts, &session_key) {
            Some(detachment) => {
                self.dispatch_detached(detachment, request, facts, resolved, serve)
                    .await
            }
            None => self.dispatch_with(request, facts, resolved, serve).await,
        }
    }

    /// `initialize`: the usual answer, with the session id sealed from the handshake.
    async fn initialize(
        &self,
        request: Request,
        mut facts: RequestFacts,
        resolved: Resolved,
    ) -> Response<McpBody> {
        let session = LegacySession::from_initialize(&request.params);
        let sealed = session.seal(&self.server, facts.principal.as_deref());
        let sealed = match sealed {
            Ok(sealed) => Some(sealed),
            Err(SessionError::NoCodec) => {
                // No key, no sessions: served per request, as Legacy::Stateless does.
                tracing::warn!(
                    "an initialize-era client is served without a session: this server has no requestState key"
                );
                None
            }
            Err(e) => {
                return reject::error(
                    StatusCode::BAD_REQUEST,
                    Some(request.id.clone()),
                    INVALID_PARAMS,
                    format!("Invalid initialize params: {e}"),
                    None,
                );
            }
        };
        facts.era = Era::Legacy {
            version: session.version,
        };
        let mut response = self.dispatch(request, facts, resolved).await;
        if let Some(value) = sealed.and_then(|s| HeaderValue::from_str(&s).ok()) {
            response.headers_mut().insert(SESSION_HEADER, value);
        }
        response
    }

    /// The session a request names and its note, or why not: no id (400),
    /// one that is not (or no longer) a session of this server for this
    /// caller (404), or notes that cannot be read (503).
    async fn open_session(
        &self,
        head: &Parts,
        principal: Option<&str>,
    ) -> Result<(OpenedSession, SessionNote), NoSession> {
        let header = head.headers.get(SESSION_HEADER).ok_or(NoSession::Missing)?;
        let token = header
            .to_str()
            .map_err(|_| NoSession::NotFound("the session id is not text".into()))?;
        match LegacySession::open(&self.server, token, principal) {
            Ok(opened) => match self.sessions.notes.read(&opened.key).await {
                Ok(note) if note.ended => Err(NoSession::NotFound("the session was ended".into())),
                Ok(note) => Ok((opened, note)),
                Err(e) => Err(NoSession::Notes(e)),
            },
            Err(SessionError::Open(e)) => {
                tracing::debug!(reason = e.reason(), "a session id did not open");
                Err(NoSession::NotFound(
                    "the session id is unknown, expired or not yours".into(),
                ))
            }
            Err(e) => Err(NoSession::NotFound(e.to_string())),
        }
    }

    /// A client's response to a pushed question: to the call waiting for it,
    /// here or (through the relay) on the instance that asked.
    pub(crate) async fn answer_question(
        &self,
        head: &Parts,
        principal: Option<&str>,
        response: JsonRpcResponse<Value>,
    ) -> Response<McpBody> {
        let opened = match self.open_session(head, principal).await {
            Ok((opened, _)) => opened,
            Err(no) => return no.response(None),
        };
        let id = match &response {
            JsonRpcResponse::Result(r) => Some(r.id.clone()),
            JsonRpcResponse::Error(e) => e.id.clone(),
        };
        let shown = id
            .as_ref()
            .map_or("(no id)".to_owned(), ToString::to_string);
        let holder = id.as_ref().and_then(questions::holder_of);
        if let (Some(relay), Some(holder)) = (&self.sessions.relay, holder)
            && holder != relay.instance()
        {
            let answer = RelayedAnswer {
                session: opened.key,
                response: json!(response),
            };
            return match relay.forward(holder, answer).await {
                Ok(true) => reject::empty(StatusCode::ACCEPTED),
                Ok(false) => reject::error(
                    StatusCode::NOT_FOUND,
                    None,
                    INVALID_REQUEST,
                    format!(
                        "Not Found: question {shown} was asked by a server instance that is gone; call the tool again"
                    ),
                    None,
                ),
                Err(e) => {
                    tracing::warn!(error = %e, "an answer could not be relayed");
                    reject::unavailable(
                        "Service Unavailable: the answer cannot reach the server instance that asked; retry",
                        1,
                    )
                }
            };
        }
        match self.sessions.questions.deliver(&opened.key, response) {
            Delivery::Delivered => reject::empty(StatusCode::ACCEPTED),
            Delivery::NoSuchQuestion => reject::error(
                StatusCode::BAD_REQUEST,
                None,
                INVALID_REQUEST,
                format!(
                    "Bad Request: no question {shown} of this session is waiting for an answer (it was answered or withdrawn, timed out, or the server instance that asked it is gone)"
                ),
                None,
            ),
        }
    }

    /// GET and DELETE on the endpoint, which only sessions have.
    pub(crate) async fn session_method(
        &self,
        head: &Parts,
        facts: &RequestFacts,
    ) -> Response<McpBody> {
        let principal = facts.principal.as_deref();
        if !head.headers.contains_key(SESSION_HEADER) {
            // Without a session there is nothing to stream or end: as for 2026-07-28 clients.
            return reject::method_not_allowed();
        }
        let opened = match self.open_session(head, principal).await {
            Ok((opened, _)) => opened,
            Err(no) => return no.response(None),
        };
        let notes = &self.sessions.notes;
        if head.method == Method::DELETE {
            // Its calls running detached here stop; elsewhere they run to
            // their end (their questions can no longer be answered).
            self.sessions.resumable.end_session(&opened.key);
            return match notes.end(&opened.key, opened.expires_at).await {
                Ok(()) => reject::empty(StatusCode::OK),
                Err(e) => refuse_note(None, e),
            };
        }
        if let Some(last) = head.headers.get("last-event-id") {
            // Resuming a call's stream, not opening the standalone one.
            let counted = match self.listen_streams.open(
                head,
                facts.caller_key(),
                self.options().listen_streams_per_client,
            ) {
                Ok(counted) => counted,
                Err(refused) => return refused.response(None),
            };
            return self
                .resume(
                    &opened.key,
                    last.to_str().unwrap_or_default(),
                    Box::new(counted),
                )
                .await;
        }
        if self.options().task_runtime.is_none() {
            // The stream's claim is renewed on the runtime: without one it
            // would lapse while open, and a second stream could open.
            return reject::method_not_allowed();
        }
        let Some(holder) = tessera_state::random_id() else {
            return reject::unavailable(
                "Service Unavailable: no randomness to claim the session's stream; retry",
                1,
            );
        };
        let mut claim = StreamClaim {
            notes: Arc::clone(notes),
            key: opened.key.clone(),
            expires_at: opened.expires_at,
            holder,
            runtime: self.options().task_runtime.clone(),
            held: false,
        };
        match claim.renew().await {
            Ok(true) => claim.held = true,
            Ok(false) => {
                return reject::error(
                    StatusCode::CONFLICT,
                    None,
                    tessera_protocol::TRANSPORT_ERROR,
                    "Conflict: this session's standalone stream is open already (each message goes on one stream only)",
                    None,
                );
            }
            Err(e) => return refuse_note(None, e),
        }
        let counted = match self.listen_streams.open(
            head,
            facts.caller_key(),
            self.options().listen_streams_per_client,
        ) {
            Ok(counted) => counted,
            Err(refused) => return refused.response(None),
        };
        let server = Arc::clone(&self.server);
        let subscriptions = Arc::clone(notes);
        let key = opened.key;
        // The stream answers no request: it is logged under id 0 when it ends.
        let stream_id = RequestId::from(0);
        let log = RequestLog::new("GET", None, &stream_id, self.options().access_log.as_ref());
        let running = Running::new(move |sink| {
            Box::pin(async move {
                let _counted = counted;
                let wanted = move |change: &Change| match change {
                    Change::ResourceUpdated { uri } => {
                        let (notes, key, uri) =
                            (Arc::clone(&subscriptions), key.clone(), uri.clone());
                        Wanted::Ask(Box::pin(async move {
                            notes.is_subscribed(&key, &uri).await.unwrap_or_else(|e| {
                                tracing::warn!(error = %e, "a resource update left out: the session's subscriptions could not be read");
                                false
                            })
                        }))
                    }
                    _ => Wanted::Yes,
                };
                // The claim is renewed while the stream is open, and given up
                // when it ends (dropped, also when the client goes away).
                first_of(server.forward_changes(wanted, sink), claim.keep()).await;
                Handled {
                    id: stream_id,
                    result: Err(ServerError::Cancelled),
                }
            })
        });
        running
            .stream_now(log)
            .keeping_alive(self.keep_alive())
            .into_response()
    }
}

/// Why a request names no session this server serves.
enum NoSession {
    /// No `Mcp-Session-Id` header.
    Missing,
    /// One that is not a session of this server for this caller, and why.
    NotFound(String),
    /// Its notes could not be read (whether it was ended is unknown).
    Notes(NotesError),
}

impl NoSession {
    /// The refusal to send for request `id`.
    fn response(self, id: Option<RequestId>) -> Response<McpBody> {
        match self {
            Self::Missing => reject::error(
                StatusCode::BAD_REQUEST,
                id,
                INVALID_REQUEST,
                "Bad Request: the Mcp-Session-Id header is required; send initialize first to open a session",
                None,
            ),
            Self::NotFound(why) => reject::error(
                StatusCode::NOT_FOUND,
                id,
                SESSION_NOT_FOUND,
                format!("Session not found: {why}; send initialize to open a new session"),
                None,
            ),
            Self::Notes(e) => refuse_note(id, e),
        }
    }
}

/// A note that could not be taken: 503, or -32602 for a session at its subscription limit.
fn refuse_note(id: Option<RequestId>, e: NotesError) -> Response<McpBody> {
    match e {
        NotesError::Sessions => reject::unavailable(
            "Service Unavailable: the server keeps as many session notes as it can; retry later",
            60,
        ),
        NotesError::Unavailable(why) => {
            tracing::warn!(error = %why, "session notes unavailable");
            reject::unavailable(
                "Service Unavailable: the session's notes cannot be reached; retry",
                1,
            )
        }
        NotesError::Subscriptions => reject::error(
            StatusCode::OK,
            id,
            INVALID_PARAMS,
            format!(
                "Invalid resources/subscribe params: this session subscribes to {MAX_SUBSCRIPTIONS_PER_SESSION} resources already; unsubscribe from one first"
            ),
            None,
        ),
    }
}

/// This stream's claim on its session's standalone stream: renewed every
/// third of [`STREAM_LEASE`] while the stream is open, given up when dropped.
struct StreamClaim {
    notes: Arc<dyn SessionNotes>,
    key: String,
    expires_at: u64,
    holder: String,
    /// Where the renewals are timed (a stream is served only with one).
    runtime: Option<Arc<dyn tessera_server::TaskRuntime>>,
    /// Whether the claim was taken (only then is it given up).
    held: bool,
}

impl StreamClaim {
    /// Claims or renews; `false` while another stream holds the session.
    async fn renew(&self) -> Result<bool, NotesError> {
        self.notes
            .claim_stream(&self.key, self.expires_at, &self.holder)
            .await
    }

    /// Renews the claim until it is lost (another stream took over after a
    /// lapse, or the notes could not be reached in time): then completes,
    /// ending the stream.
    async fn keep(&self) {
        let Some(runtime) = &self.runtime else {
            return std::future::pending().await;
        };
        loop {
            runtime.sleep(STREAM_LEASE / 3).await;
            match self.renew().await {
                Ok(true) => {}
                Ok(false) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "a session's stream claim could not be renewed; the stream ends");
                    return;
                }
            }
        }
    }
}

impl Drop for StreamClaim {
    /// Gives the claim up: at once when the notes answer at once (memory),
    /// else on the task runtime; a failure, or no runtime, only delays
    /// another stream until the lease lapses.
    fn drop(&mut self) {
        if !self.held {
            return;
        }
        let notes = Arc::clone(&self.notes);
        let (key, holder) = (
            std::mem::take(&mut self.key),
            std::mem::take(&mut self.holder),
        );
        let mut release: tessera_server::BoxFuture<'static, ()> = Box::pin(async move {
            if let Err(e) = notes.release_stream(&key, &holder).await {
                tracing::debug!(error = %e, "a session's stream claim was not given up; it lapses");
            }
        });
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        if release.as_mut().poll(&mut cx).is_pending()
            && let Some(runtime) = &self.runtime
        {
            runtime.spawn(release);
        }
    }
}

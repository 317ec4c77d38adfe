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
mod remembered;

use std::sync::Arc;

use http::request::Parts;
use http::{HeaderValue, Method, Response, StatusCode};
use serde_json::{Value, json};
use tessera_protocol::{
    INITIALIZE, INVALID_PARAMS, INVALID_REQUEST, JsonRpcResponse, LoggingLevel, RequestId,
};
use tessera_server::bridge::{
    AnswerRelay, Bridge, LegacySession, OpenedSession, RelayedAnswer, SessionError, is_bridged,
    requested_log_level,
};
use tessera_server::intake::Request;
use tessera_server::{Change, Era, Handled, RequestFacts, Resolved, ServerError};

use questions::{Delivery, Questions, StreamAsker};
pub use questions::{MAX_QUESTIONS, MAX_QUESTIONS_PER_PRINCIPAL, MAX_QUESTIONS_PER_SESSION};
use remembered::{Full, Remembered};
pub use remembered::{
    MAX_REMEMBERED_SESSIONS, MAX_SUBSCRIPTION_URI_BYTES, MAX_SUBSCRIPTIONS_PER_SESSION,
};

use crate::stream::{RequestLog, Running};
use crate::{McpBody, McpEndpoint, reject};

/// The session header (the transport spells it `Mcp-Session-Id`; header names are case-insensitive).
pub(crate) const SESSION_HEADER: &str = "mcp-session-id";

/// The JSON-RPC code of a 404 for an unknown session (the one the other SDKs send).
pub const SESSION_NOT_FOUND: i32 = -32001;

/// The endpoint's session state: the questions waiting for answers, and
/// the notes on sessions taken here (ended, log level, subscriptions).
pub(crate) struct Sessions {
    questions: Arc<Questions>,
    remembered: Arc<Remembered>,
    relay: Option<Arc<dyn AnswerRelay>>,
}

impl Sessions {
    /// The session state of an endpoint; with a relay, question ids name
    /// this instance and answers forwarded to it reach its waiting calls.
    pub(crate) fn new(relay: Option<&Arc<dyn AnswerRelay>>) -> Self {
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
            remembered: Arc::default(),
            relay: relay.cloned(),
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
        let opened = match self.open_session(head, facts.principal.as_deref()) {
            Ok(opened) => opened,
            Err(no) => return no.response(Some(request.id.clone())),
        };
        facts.era = Era::Legacy {
            version: opened.session.version.clone(),
        };
        facts = facts.with_session(&opened.key);
        if let Some(answered) = self.take_note(&opened, &request, &facts) {
            return answered;
        }
        if !is_bridged(&request.method) {
            return self.dispatch(request, facts, resolved).await;
        }
        self.bridged(request, facts, opened, resolved).await
    }

    /// What this instance notes of a session's requests: the level of
    /// `logging/setLevel` (then answered by the server), and
    /// `resources/subscribe` and `unsubscribe`, answered here. A
    /// subscription is kept only to what the caller could read
    /// ([`McpServer::may_subscribe`](tessera_server::McpServer::may_subscribe)),
    /// by a URI of at most [`MAX_SUBSCRIPTION_URI_BYTES`].
    fn take_note(
        &self,
        opened: &OpenedSession,
        request: &Request,
        facts: &RequestFacts,
    ) -> Option<Response<McpBody>> {
        let remembered = &self.sessions.remembered;
        let id = request.id.clone();
        let noted = match request.method.as_str() {
            "logging/setLevel" => {
                let level = requested_log_level(request)?;
                remembered.set_log_level(&opened.key, opened.expires_at, level)
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
                    remembered.subscribe(&opened.key, opened.expires_at, uri)
                } else {
                    remembered.unsubscribe(&opened.key, uri);
                    Ok(())
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
        resolved: Resolved,
    ) -> Response<McpBody> {
        let questions = Arc::clone(&self.sessions.questions);
        let patience = self.options().question_timeout;
        let log_level = self
            .sessions
            .remembered
            .log_level(&opened.key)
            .unwrap_or(LoggingLevel::Debug);
        self.dispatch_with(
            request,
            facts,
            resolved,
            move |server, request, facts, _| async move {
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
            },
        )
        .await
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

    /// The session a request names, or why not: no id (400), or one that is
    /// not (or no longer) a session of this server for this caller (404).
    fn open_session(
        &self,
        head: &Parts,
        principal: Option<&str>,
    ) -> Result<OpenedSession, NoSession> {
        let header = head.headers.get(SESSION_HEADER).ok_or(NoSession::Missing)?;
        let token = header
            .to_str()
            .map_err(|_| NoSession::NotFound("the session id is not text".into()))?;
        match LegacySession::open(&self.server, token, principal) {
            Ok(opened) if self.sessions.remembered.is_ended(&opened.key) => {
                Err(NoSession::NotFound("the session was ended".into()))
            }
            Ok(opened) => Ok(opened),
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
        let opened = match self.open_session(head, principal) {
            Ok(opened) => opened,
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
    pub(crate) fn session_method(&self, head: &Parts, facts: &RequestFacts) -> Response<McpBody> {
        let principal = facts.principal.as_deref();
        if !head.headers.contains_key(SESSION_HEADER) {
            // Without a session there is nothing to stream or end: as for 2026-07-28 clients.
            return reject::method_not_allowed();
        }
        let opened = match self.open_session(head, principal) {
            Ok(opened) => opened,
            Err(no) => return no.response(None),
        };
        let remembered = &self.sessions.remembered;
        if head.method == Method::DELETE {
            return match remembered.end(&opened.key, opened.expires_at) {
                Ok(()) => reject::empty(StatusCode::OK),
                Err(full) => refuse_note(None, full),
            };
        }
        let guard = match remembered.open_stream(&opened.key, opened.expires_at) {
            Ok(Some(guard)) => guard,
            Ok(None) => {
                return reject::error(
                    StatusCode::CONFLICT,
                    None,
                    tessera_protocol::TRANSPORT_ERROR,
                    "Conflict: this session's standalone stream is open already (each message goes on one stream only)",
                    None,
                );
            }
            Err(full) => return refuse_note(None, full),
        };
        let counted = match self.listen_streams.open(
            head,
            facts.caller_key(),
            self.options().listen_streams_per_client,
        ) {
            Ok(counted) => counted,
            Err(refused) => return refused.response(None),
        };
        let server = Arc::clone(&self.server);
        let subscriptions = Arc::clone(remembered);
        let key = opened.key;
        // The stream answers no request: it is logged under id 0 when it ends.
        let stream_id = RequestId::from(0);
        let log = RequestLog::new("GET", None, &stream_id, self.options().access_log.as_ref());
        let running = Running::new(move |sink| {
            Box::pin(async move {
                let _open = (guard, counted);
                let wanted = move |change: &Change| match change {
                    Change::ResourceUpdated { uri } => subscriptions.is_subscribed(&key, uri),
                    _ => true,
                };
                server.forward_changes(wanted, sink).await;
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
        }
    }
}

/// A note this instance could not take: 503, or -32602 for a session at its subscription limit.
fn refuse_note(id: Option<RequestId>, full: Full) -> Response<McpBody> {
    match full {
        Full::Sessions => reject::unavailable(
            "Service Unavailable: the server keeps as many session notes as it can; retry later",
            60,
        ),
        Full::Subscriptions => reject::error(
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

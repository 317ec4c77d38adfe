//! The era bridge: an initialize-era client's call served by the same handler
//! a 2026-07-28 client reaches, with its questions pushed as real requests.
//!
//! The bridge turns the legacy call into the 2026-07-28 request it stands for
//! (the client's `initialize` capabilities as `clientCapabilities`), hands it
//! to [`McpServer::handle`], and while the result is `input_required` puts
//! each input request to the client through the transport's [`Asker`]
//! (`elicitation/create`, `sampling/createMessage`, `roots/list`), then
//! retries with the answers and the ticket exactly as a 2026-07-28 client
//! would. The ticket never leaves the server; the client sees one call and
//! one result in the old shape. Stdio and Streamable HTTP both serve
//! initialize-era calls through this one bridge.

mod asker;
mod changes;
mod relay;
mod session;
mod session_notes;
mod stream_log;

use serde_json::{Map, Value, json};
use tessera_protocol::rounds::{Reply, RoundDriver, Step};
use tessera_protocol::{
    ClientCapabilities, INPUT_KEY_META_KEY, INPUT_RESPONSES, InputRequest, LoggingLevel,
    REQUEST_STATE,
};

pub use asker::{Asker, PeerFailure};
pub use changes::{MAX_QUEUED_CHANGES, Wanted};
pub use relay::{AnswerRelay, AnswerSink, RelayError, RelayedAnswer};
pub use session::{
    LegacySession, MAX_SESSION_JSON_BYTES, OpenedSession, SESSION_LIFETIME, SessionError,
};
pub use session_notes::{
    MAX_REMEMBERED_SESSIONS, MAX_SUBSCRIPTION_URI_BYTES, MAX_SUBSCRIPTIONS_PER_SESSION,
    MemorySessionNotes, NotesError, NotesFuture, STREAM_LEASE, SessionNote, SessionNotes,
};
pub use stream_log::{
    LoggedEvents, MAX_LOGGED_STREAMS, MAX_STREAM_BYTES, MAX_STREAM_EVENTS, MemoryStreamLog,
    STREAM_LOG_TTL, StreamLog, StreamLogError, StreamLogFuture,
};

use crate::dispatch::{Json, check_capabilities};
use crate::intake::Request;
use crate::round_state::{KeptRound, TicketBody};
use crate::{Handled, McpServer, RequestFacts, ServerError};

/// Most rounds the bridge runs for one call unless told otherwise: 16.
pub const DEFAULT_MAX_ROUNDS: usize = 16;

/// The level an initialize-era `logging/setLevel` request asks for (`None`
/// for any other request, or a level that is not one).
pub fn requested_log_level(request: &Request) -> Option<LoggingLevel> {
    if request.method != "logging/setLevel" {
        return None;
    }
    serde_json::from_value(request.params.get("level")?.clone()).ok()
}

/// The error of a call whose handler kept asking past the round limit.
fn too_many(method: &str, max_rounds: usize) -> String {
    format!("{method}: the handler asked for input more than {max_rounds} times in one call")
}

/// Methods whose handlers may ask for input: the ones the bridge serves.
pub fn is_bridged(method: &str) -> bool {
    matches!(method, "tools/call" | "prompts/get" | "resources/read")
}

/// Everything one bridged call uses.
pub struct Bridge<'a> {
    /// The server whose handler answers.
    pub server: &'a McpServer,
    /// The client's handshake.
    pub session: &'a LegacySession,
    /// Where questions go.
    pub asker: &'a dyn Asker,
    /// The caller's facts (principal, notifications, task runtime); the
    /// bridge serves each round as a 2026-07-28 request.
    pub facts: RequestFacts,
    /// Most rounds for one call ([`DEFAULT_MAX_ROUNDS`]).
    pub max_rounds: usize,
    /// The least severe log message the client wants: what it last sent in
    /// `logging/setLevel`, else [`LoggingLevel::Debug`] (every message).
    pub log_level: LoggingLevel,
}

impl Bridge<'_> {
    /// Serves `request` to the end: its result in the old shape, or its
    /// error; `None` when the client went away mid-call.
    ///
    /// Each round is dispatched with its rounds kept: the questions come
    /// back as the handler asked them and the next round's state as a value
    /// the bridge holds (never sealed: it never leaves the server), on the
    /// round driver every client of the protocol uses.
    pub async fn serve(self, mut request: Request) -> Option<Handled> {
        let (id, method) = (request.id.clone(), request.method.clone());
        // The bridge owns the round trip: nothing of a client's own is retried.
        request.params.remove(REQUEST_STATE);
        request.params.remove(INPUT_RESPONSES);
        let capabilities: ClientCapabilities =
            serde_json::from_value(self.session.capabilities.clone()).unwrap_or_default();
        let client_info =
            (self.session.client_info.clone()).and_then(|info| serde_json::from_value(info).ok());
        let caps = capabilities.clone();
        request.stand_in_envelope(|meta| {
            crate::legacy::stand_in(meta, Some(caps), client_info);
            // The old era sets the level once per session; the handler reads it per request.
            meta.log_level.get_or_insert(self.log_level);
        });
        let (params, envelope) = request.into_parts();
        let failed = |message: String| {
            Some(Handled {
                id: id.clone(),
                result: Err(ServerError::Internal { message }),
            })
        };

        let mut driver = RoundDriver::<Box<TicketBody>>::new(self.max_rounds);
        loop {
            let Ok(retry) = driver.next_request() else {
                return failed(too_many(&method, self.max_rounds));
            };
            let mut round_params = params.clone();
            if let Some(answers) = retry.input_responses {
                round_params.insert(INPUT_RESPONSES.into(), Value::Object(answers));
            }
            let round =
                Request::with_envelope(id.clone(), method.clone(), round_params, envelope.clone());
            let mut resolved = self.server.resolve(&round, &self.facts);
            if let Some(body) = retry.request_state {
                resolved.keep(body);
            }
            let (_, out) = (self.server)
                .dispatch(round, self.facts.clone(), resolved, true)
                .await;
            let reply = match out {
                Ok(Json::Kept(kept)) => {
                    let KeptRound {
                        questions, body, ..
                    } = *kept;
                    if let Err(e) = check_capabilities(&questions, &capabilities) {
                        return Some(Handled { id, result: Err(e) });
                    }
                    Reply::InputRequired {
                        requests: questions
                            .into_iter()
                            .map(|(k, q)| (k, q.into_wire()))
                            .collect(),
                        state: Some(Box::new(body)),
                    }
                }
                Ok(done) => Reply::Complete(done),
                Err(e) => return Some(Handled { id, result: Err(e) }),
            };
            match driver.receive(reply) {
                Err(_) => return failed(too_many(&method, self.max_rounds)),
                Ok(Step::Done(done) | Step::Task(done)) => {
                    return Some(Handled {
                        id,
                        result: crate::legacy::legacy_raw(done),
                    });
                }
                Ok(Step::Pause(pause)) => {
                    // Nothing asked: the handler wants another round with its state.
                    if let Some(runtime) = &self.facts.tasks {
                        runtime.sleep(pause).await;
                    }
                }
                Ok(Step::Ask(requests)) => {
                    let mut answers = Map::new();
                    for (key, asked) in requests {
                        match self.ask(&key, asked).await {
                            Ok(answer) => {
                                answers.insert(key, answer);
                            }
                            Err(PeerFailure::Closed) => return None,
                            Err(PeerFailure::TimedOut(waited)) => {
                                return failed(format!(
                                    "the client did not answer input request '{key}' within {waited:?}"
                                ));
                            }
                            Err(PeerFailure::Malformed(problem)) => {
                                return failed(format!("{method}: {problem}"));
                            }
                            Err(PeerFailure::Error(e)) => {
                                return failed(format!(
                                    "the client failed input request '{key}' with error {}: {}",
                                    e.code, e.message
                                ));
                            }
                        }
                    }
                    driver.answer(answers);
                }
            }
        }
    }

    /// Puts one input request to the client as the request it is.
    async fn ask(&self, key: &str, asked: InputRequest) -> Result<Value, PeerFailure> {
        let method = asked.method();
        let params = match asked {
            InputRequest::Elicit(p) => serde_json::to_value(p),
            InputRequest::Sample(p) => serde_json::to_value(p),
            InputRequest::ListRoots(p) => Ok(Value::Object(p.unwrap_or_default())),
        };
        let mut params = match params {
            Ok(Value::Object(p)) => p,
            _ => {
                return Err(PeerFailure::Malformed(format!(
                    "input request '{key}' cannot be written"
                )));
            }
        };
        if method == tessera_protocol::ELICITATION_CREATE
            && !self.session.knows_elicitation_mode()
            && params.get("mode").and_then(Value::as_str) == Some("form")
        {
            // Before 2025-11-25 every elicitation was a form, and `mode` was not a member.
            params.remove("mode");
        }
        let meta = params
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(INPUT_KEY_META_KEY.into(), json!(key));
        }
        // Each pushed question is a CLIENT span inside the call's span.
        let span = tracing::info_span!(
            target: "tessera::mcp",
            "mcp.question",
            otel.name = method,
            otel.kind = "client",
            otel.status_code = tracing::field::Empty,
            mcp.method.name = method,
            mcp.mrtr.input_key = key,
            error.type = tracing::field::Empty,
        );
        #[cfg(feature = "otel")]
        if let Value::Object(meta) = meta {
            crate::telemetry::inject_into(&span, meta);
        }
        let transport = self.facts.transport.map_or("unknown", |t| t.as_str());
        let pending = crate::telemetry::metrics::PendingQuestion::new(transport);
        let asked = self.asker.ask(method, Value::Object(params));
        let answered = tracing::Instrument::instrument(asked, span.clone()).await;
        drop(pending);
        if let Err(failure) = &answered {
            span.record("otel.status_code", "error");
            span.record("error.type", failure.error_type().as_str());
        }
        answered
    }
}

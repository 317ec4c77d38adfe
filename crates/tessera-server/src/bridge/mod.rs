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

use std::time::Duration;

use serde_json::{Map, Value, json};
use tessera_protocol::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, INPUT_KEY_META_KEY, INPUT_REQUESTS, INPUT_RESPONSES,
    JsonRpcRequest, JsonRpcVersion, LATEST_PROTOCOL_VERSION, LOG_LEVEL_KEY, LoggingLevel,
    PROTOCOL_VERSION_KEY, REQUEST_STATE, ResultType,
};

pub use asker::{Asker, PeerFailure};
pub use relay::{AnswerRelay, AnswerSink, RelayError, RelayedAnswer};
pub use session::{
    LegacySession, MAX_SESSION_JSON_BYTES, OpenedSession, SESSION_LIFETIME, SessionError,
};

use crate::intake::Request;
use crate::{Handled, McpServer, RequestFacts, ServerError, to_legacy_shape};

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
    pub async fn serve(self, request: Request) -> Option<Handled> {
        let (id, method) = (request.id.clone(), request.method.clone());
        let mut params = match request.into_params() {
            Some(Value::Object(o)) => o,
            _ => Map::new(),
        };
        // The bridge owns the round trip: nothing of a client's own is retried.
        params.remove(REQUEST_STATE);
        params.remove(INPUT_RESPONSES);
        let mut meta = match params.remove("_meta") {
            Some(Value::Object(o)) => o,
            _ => Map::new(),
        };
        meta.insert(PROTOCOL_VERSION_KEY.into(), json!(LATEST_PROTOCOL_VERSION));
        meta.insert(
            CLIENT_CAPABILITIES_KEY.into(),
            self.session.capabilities.clone(),
        );
        if let Some(info) = &self.session.client_info {
            meta.insert(CLIENT_INFO_KEY.into(), info.clone());
        }
        // The old era sets the level once per session; the handler reads it per request.
        meta.entry(LOG_LEVEL_KEY)
            .or_insert_with(|| json!(self.log_level));
        params.insert("_meta".into(), Value::Object(meta));
        let mut facts = self.facts.clone();
        facts.era = crate::Era::Modern;
        let failed = |message: String| {
            Some(Handled {
                id: id.clone(),
                result: Err(ServerError::Internal { message }),
            })
        };

        let mut retry: Option<(Value, Map<String, Value>)> = None;
        for attempt in 1..=self.max_rounds {
            let mut round = params.clone();
            if let Some((state, answers)) = retry.take() {
                round.insert(REQUEST_STATE.into(), state);
                round.insert(INPUT_RESPONSES.into(), Value::Object(answers));
            }
            let handled = self
                .server
                .handle(
                    JsonRpcRequest {
                        jsonrpc: JsonRpcVersion,
                        id: id.clone(),
                        method: method.clone(),
                        params: Some(Value::Object(round)),
                    },
                    facts.clone(),
                )
                .await;
            let Some(mut result) = handled.result_value() else {
                // An error (or a result that does not parse back, which the server never sends).
                return Some(handled);
            };
            match ResultType::of(&result) {
                Ok(ResultType::InputRequired) => {}
                _ => {
                    to_legacy_shape(&mut result);
                    return Some(Handled {
                        id,
                        result: serde_json::value::to_raw_value(&result).map_err(|e| {
                            ServerError::Internal {
                                message: format!("result cannot be serialised: {e}"),
                            }
                        }),
                    });
                }
            }
            let state = result.get(REQUEST_STATE).cloned().unwrap_or(Value::Null);
            let mut answers = Map::new();
            let requests = match result.get_mut(INPUT_REQUESTS) {
                Some(Value::Object(r)) => std::mem::take(r),
                _ => Map::new(),
            };
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
            if answers.is_empty()
                && let Some(runtime) = &facts.tasks
            {
                // Nothing asked: the handler wants another round with its state; back off a little.
                runtime
                    .sleep(Duration::from_millis(50 * attempt as u64))
                    .await;
            }
            retry = Some((state, answers));
        }
        failed(format!(
            "{method}: the handler asked for input more than {} times in one call",
            self.max_rounds
        ))
    }

    /// Puts one input request (`{method, params}`) to the client as the request it is.
    async fn ask(&self, key: &str, asked: Value) -> Result<Value, PeerFailure> {
        let method = asked
            .get("method")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let (Value::Object(mut asked), Some(method)) = (asked, method) else {
            return Err(PeerFailure::Malformed(format!(
                "input request '{key}' has no method"
            )));
        };
        let mut params = match asked.remove("params") {
            Some(Value::Object(p)) => p,
            _ => Map::new(),
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
            otel.name = method.as_str(),
            otel.kind = "client",
            otel.status_code = tracing::field::Empty,
            mcp.method.name = method.as_str(),
            mcp.mrtr.input_key = key,
            error.type = tracing::field::Empty,
        );
        #[cfg(feature = "otel")]
        if let Value::Object(meta) = meta {
            crate::telemetry::inject_into(&span, meta);
        }
        let transport = self.facts.transport.map_or("unknown", |t| t.as_str());
        let pending = crate::telemetry::metrics::PendingQuestion::new(transport);
        let asked = self.asker.ask(&method, Value::Object(params));
        let answered = tracing::Instrument::instrument(asked, span.clone()).await;
        drop(pending);
        if let Err(failure) = &answered {
            span.record("otel.status_code", "error");
            span.record("error.type", failure.error_type().as_str());
        }
        answered
    }
}

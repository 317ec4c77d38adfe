//! The era bridge: an initialize-era client's call served by the same handler
//! a 2026-07-28 client reaches, with its questions pushed as real requests.
//!
//! The bridge turns the legacy call into the 2026-07-28 request it stands for
//! (the client's `initialize` capabilities as `clientCapabilities`), hands it
//! to [`McpServer::handle`], and while the result is `input_required` sends
//! each input request to the client over the same pipe (`elicitation/create`,
//! `sampling/createMessage`, `roots/list`), then retries with the answers and
//! the ticket exactly as a 2026-07-28 client would. The ticket never leaves
//! the process; the client sees one call and one result in the old shape.

use serde_json::{Map, Value, json};
use tessera_protocol::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, ErrorObject, INPUT_KEY_META_KEY, INTERNAL_ERROR,
    JsonRpcErrorResponse, JsonRpcRequest, JsonRpcVersion, LATEST_PROTOCOL_VERSION,
    PROTOCOL_VERSION_KEY, RequestId, ResultType,
};
use tessera_server::intake::Request;
use tessera_server::{McpServer, RequestFacts, to_legacy_shape};

use crate::legacy_session::LegacySession;
use crate::outbox::Outbox;
use crate::peer_requests::{PeerFailure, PeerRequests};

/// Methods whose handlers may ask for input: the ones the bridge serves.
pub(crate) fn is_bridged(method: &str) -> bool {
    matches!(method, "tools/call" | "prompts/get" | "resources/read")
}

/// Everything one bridged call uses.
pub(crate) struct Bridge<'a> {
    pub(crate) server: &'a McpServer,
    pub(crate) outbox: &'a Outbox,
    pub(crate) peer: &'a PeerRequests,
    pub(crate) session: &'a LegacySession,
    pub(crate) facts: RequestFacts,
    pub(crate) options: &'a crate::StdioOptions,
}

impl Bridge<'_> {
    /// Serves `request` to the end; `None` when the client went away mid-call.
    pub(crate) async fn serve(self, request: Request) -> Option<Vec<u8>> {
        let (id, method) = (request.id.clone(), request.method.clone());
        let mut params = match request.into_params() {
            Some(Value::Object(o)) => o,
            _ => Map::new(),
        };
        // The bridge owns the round trip: nothing of a client's own is retried.
        params.remove("requestState");
        params.remove("inputResponses");
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
        params.insert("_meta".into(), Value::Object(meta));

        let max_rounds = self.options.max_bridge_rounds;
        let mut retry: Option<(Value, Map<String, Value>)> = None;
        for attempt in 1..=max_rounds {
            let mut round = params.clone();
            if let Some((state, answers)) = retry.take() {
                round.insert("requestState".into(), state);
                round.insert("inputResponses".into(), Value::Object(answers));
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
                    self.facts.clone(),
                )
                .await;
            let Some(mut result) = handled.result_value() else {
                // An error (or a result that does not parse back, which the server never sends).
                return Some(handled.to_bytes());
            };
            match ResultType::of(&result) {
                Ok(ResultType::InputRequired) => {}
                _ => {
                    to_legacy_shape(&mut result);
                    return Some(response(&id, result));
                }
            }
            let state = result.get("requestState").cloned().unwrap_or(Value::Null);
            let mut answers = Map::new();
            let requests = match result.get_mut("inputRequests") {
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
                        return Some(error(
                            &id,
                            format!(
                                "the client did not answer input request '{key}' within {waited:?}"
                            ),
                        ));
                    }
                    Err(PeerFailure::Malformed(problem)) => {
                        return Some(error(&id, format!("{method}: {problem}")));
                    }
                    Err(PeerFailure::Error(e)) => {
                        return Some(error(
                            &id,
                            format!(
                                "the client failed input request '{key}' with error {}: {}",
                                e.code, e.message
                            ),
                        ));
                    }
                }
            }
            if answers.is_empty() {
                // Nothing asked: the handler wants another round with its state; back off a little.
                tokio::time::sleep(std::time::Duration::from_millis(50 * attempt as u64)).await;
            }
            retry = Some((state, answers));
        }
        Some(error(
            &id,
            format!(
                "{method}: the handler asked for input more than {max_rounds} times in one call"
            ),
        ))
    }

    /// Pushes one input request (`{method, params}`) to the client as the request it is.
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
        self.peer
            .ask(
                self.outbox,
                &method,
                Value::Object(params),
                self.options.question_timeout,
            )
            .await
    }
}

fn response(id: &RequestId, result: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": id, "result": result})).unwrap_or_default()
}

fn error(id: &RequestId, message: String) -> Vec<u8> {
    serde_json::to_vec(&JsonRpcErrorResponse::new(
        Some(id.clone()),
        ErrorObject::new(INTERNAL_ERROR, message),
    ))
    .unwrap_or_default()
}

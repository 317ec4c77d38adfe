//! Requests over Streamable HTTP: standard headers, and JSON or SSE responses;
//! for an initialize-era server also its session (`Mcp-Session-Id`) and the
//! requests it pushes on a response stream, answered by POSTing the answer.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use tessera_protocol::{JsonRpcErrorResponse, JsonRpcResultResponse, RequestId};

use crate::ClientError;
use crate::NotificationHandler;
use crate::mcp_headers::encode_header_value;
use crate::oauth::AccessToken;
use tessera_protocol::sse::{MAX_EVENT_BYTES, SseParser};

/// One MCP endpoint reached over HTTP.
#[derive(Clone)]
pub(crate) struct HttpTransport {
    pub(crate) http: reqwest::Client,
    pub(crate) url: reqwest::Url,
    pub(crate) bearer: Option<String>,
    /// The session an initialize-era server assigned (shared by clones).
    pub(crate) session: Arc<Mutex<Option<String>>>,
    /// Answers requests an initialize-era server pushes on a response stream.
    pub(crate) push: crate::stdio_transport::PushHandler,
}

/// What a request's headers mirror from its body.
pub(crate) struct Mirrored<'a> {
    pub(crate) version: &'a str,
    pub(crate) method: &'a str,
    pub(crate) name: Option<&'a str>,
    pub(crate) params: Vec<(String, String)>,
    /// A stream that lasts as long as the server keeps it (`subscriptions/listen`): no total time limit.
    pub(crate) open_ended: bool,
    /// An OAuth access token, sent instead of the configured bearer token.
    pub(crate) token: Option<&'a AccessToken>,
}

/// How answers to requests pushed on a response stream are sent: in the
/// request's version, with its credentials.
struct Answering<'a> {
    version: &'a str,
    token: Option<&'a AccessToken>,
    /// Whether the exchange has no time limit (a call a person may answer in).
    open_ended: bool,
}

/// Reconnections of one call's stream without a new event id, at most.
const MAX_RECONNECTIONS: usize = 5;
/// Reconnections of one call's stream in all, at most.
const MAX_RESUMPTIONS: usize = 100;
/// How long to wait before resuming a stream whose server sent no `retry`: 1 s.
const DEFAULT_RETRY_MS: u64 = 1000;
/// The longest `retry` honoured: 30 s (a server cannot park a call forever).
const MAX_RETRY_MS: u64 = 30_000;

/// The time limit of an open-ended stream: none to speak of.
const OPEN_ENDED: std::time::Duration = std::time::Duration::from_secs(10 * 365 * 24 * 3600);

impl HttpTransport {
    /// Posts one request; the response message (the final one on an event stream) and the HTTP status.
    pub(crate) async fn exchange(
        &self,
        body: &Value,
        id: i64,
        mirrored: Mirrored<'_>,
        on_notification: Option<&NotificationHandler>,
    ) -> Result<(Value, u16), ClientError> {
        let mut request = self
            .http
            .post(self.url.clone())
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", mirrored.version)
            .header("Mcp-Method", mirrored.method);
        if let Some(name) = mirrored.name {
            request = request.header("Mcp-Name", encode_header_value(name));
        }
        for (header, value) in mirrored.params {
            request = request.header(header, value);
        }
        if mirrored.open_ended {
            request = request.timeout(OPEN_ENDED);
        }
        if let Some(session) = self.session() {
            request = request.header("Mcp-Session-Id", session);
        }
        let request = request.body(serde_json::to_vec(body).unwrap_or_default());
        let response = self
            .send(mirrored.token, "POST", request)
            .await
            .map_err(ClientError::Transport)?;
        // A challenge: the caller may sign in and retry.
        let status = response.status().as_u16();
        // Every challenge counts (a server taking Bearer and DPoP sends both).
        let challenges: Vec<&str> = response
            .headers()
            .get_all("www-authenticate")
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        if matches!(status, 401 | 403) && !challenges.is_empty() {
            return Err(ClientError::Unauthorized {
                status,
                challenge: challenges.join(", "),
            });
        }
        if let Some(session) = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
        {
            *self.session.lock().unwrap_or_else(PoisonError::into_inner) = Some(session.to_owned());
        }
        let answering = Answering {
            version: mirrored.version,
            token: mirrored.token,
            open_ended: mirrored.open_ended,
        };
        self.read_response(response, id, answering, on_notification)
            .await
    }

    /// `request` with its credentials: the OAuth access token (with a DPoP
    /// proof for `method` when it is bound), else the configured bearer token.
    fn present(
        &self,
        token: Option<&AccessToken>,
        request: reqwest::RequestBuilder,
        method: &str,
    ) -> reqwest::RequestBuilder {
        match (token, &self.bearer) {
            (Some(token), _) => token.present(request, method, self.url.as_str()),
            (None, Some(bearer)) => request.bearer_auth(bearer),
            (None, None) => request,
        }
    }

    /// Sends `request` (a `method` one) with its credentials; a
    /// `use_dpop_nonce` refusal naming a nonce not tried yet is sent once
    /// more with it (RFC 9449 §9). Every `DPoP-Nonce` is kept for the next proof.
    async fn send(
        &self,
        token: Option<&AccessToken>,
        method: &str,
        request: reqwest::RequestBuilder,
    ) -> Result<reqwest::Response, reqwest::Error> {
        // Only a bound token's request may need sending again.
        let again = token
            .filter(|t| t.dpop.is_some())
            .and_then(|_| request.try_clone());
        let response = self.present(token, request, method).send().await?;
        match (token, again) {
            (Some(token), Some(again)) if token.note_nonce(&response) => {
                let response = self.present(Some(token), again, method).send().await?;
                token.note_nonce(&response);
                Ok(response)
            }
            _ => Ok(response),
        }
    }

    fn session(&self) -> Option<String> {
        self.session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// POSTs a message that gets no response (a notification, or the answer
    /// to a pushed request): the server acknowledges it with 202. `token` is
    /// an OAuth access token, sent instead of the configured bearer token.
    pub(crate) async fn post_message(
        &self,
        body: &Value,
        version: &str,
        token: Option<&AccessToken>,
    ) -> Result<(), ClientError> {
        let mut request = self
            .http
            .post(self.url.clone())
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", version);
        if let Some(session) = self.session() {
            request = request.header("Mcp-Session-Id", session);
        }
        let request = request.body(serde_json::to_vec(body).unwrap_or_default());
        let response = self
            .send(token, "POST", request)
            .await
            .map_err(ClientError::Transport)?;
        match response.status().as_u16() {
            200..=299 => Ok(()),
            status => Err(ClientError::Protocol(format!(
                "the server refused a message with HTTP {status}"
            ))),
        }
    }

    /// Ends an initialize-era session (`DELETE` with its id), if there is one;
    /// a server that does not allow it (405) or forgot it (404) is fine.
    pub(crate) async fn end_session(&self, version: &str, token: Option<&AccessToken>) {
        let Some(session) = self.session() else {
            return;
        };
        let request = self
            .http
            .delete(self.url.clone())
            .header("Mcp-Session-Id", session)
            .header("MCP-Protocol-Version", version);
        match self.send(token, "DELETE", request).await {
            Ok(r) if r.status().is_success() || matches!(r.status().as_u16(), 404 | 405) => {}
            Ok(r) => tracing::debug!(
                status = r.status().as_u16(),
                "the server refused to end the session"
            ),
            Err(e) => tracing::debug!(error = %e, "could not end the session"),
        }
        *self.session.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// Opens an initialize-era session's standalone stream (`GET` with its
    /// id) and hands each notification on it to `on_notification` until the
    /// server ends it; requests the server pushes there are answered.
    pub(crate) async fn standalone_stream(
        &self,
        version: &str,
        token: Option<&AccessToken>,
        on_notification: &NotificationHandler,
    ) -> Result<(), ClientError> {
        let response = self.open_standalone(version, token).await?;
        self.read_standalone(response, version, token, on_notification)
            .await
    }

    /// Opens the session's standalone stream: the server's answer, once it
    /// has accepted it (so that what it sends from then on arrives).
    pub(crate) async fn open_standalone(
        &self,
        version: &str,
        token: Option<&AccessToken>,
    ) -> Result<reqwest::Response, ClientError> {
        let mut request = self
            .http
            .get(self.url.clone())
            .header("Accept", "text/event-stream")
            .header("MCP-Protocol-Version", version)
            .timeout(OPEN_ENDED);
        if let Some(session) = self.session() {
            request = request.header("Mcp-Session-Id", session);
        }
        let response = self
            .send(token, "GET", request)
            .await
            .map_err(ClientError::Transport)?;
        match response.status().as_u16() {
            200..=299 => Ok(response),
            405 => Err(ClientError::UnsupportedServer(
                "this initialize-era server offers no standalone event stream (GET answered 405)"
                    .into(),
            )),
            status => Err(ClientError::Protocol(format!(
                "the server refused the standalone event stream with HTTP {status}"
            ))),
        }
    }

    /// Reads an open standalone stream until the server ends it.
    pub(crate) async fn read_standalone(
        &self,
        mut response: reqwest::Response,
        version: &str,
        token: Option<&AccessToken>,
        on_notification: &NotificationHandler,
    ) -> Result<(), ClientError> {
        let answering = Answering {
            version,
            token,
            open_ended: true,
        };
        let mut parser = SseParser::default();
        while let Some(bytes) = response.chunk().await.map_err(ClientError::Transport)? {
            for data in parser.feed(&bytes).map_err(ClientError::Protocol)? {
                let Ok(v) = serde_json::from_str::<Value>(&data) else {
                    continue;
                };
                match (v.get("method").is_some(), v.get("id").is_some()) {
                    (true, false) => on_notification(&v),
                    (true, true) => self.answer_pushed(&v, &answering).await,
                    _ => {}
                }
            }
        }
        Ok(())
    }

    /// A request the server pushed on a response stream (initialize era):
    /// answered through the push handler, the answer POSTed back with the
    /// request's own credentials.
    async fn answer_pushed(&self, message: &Value, answering: &Answering<'_>) {
        let Some(id) = message.get("id").and_then(RequestId::from_value) else {
            return;
        };
        let method = message
            .get("method")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_owned();
        let params = message.get("params").cloned().unwrap_or(json!({}));
        let answer = match (self.push)(method, params).await {
            Ok(result) => json!(JsonRpcResultResponse::new(id, result)),
            Err(error) => json!(JsonRpcErrorResponse::new(Some(id), error)),
        };
        if let Err(e) = self
            .post_message(&answer, answering.version, answering.token)
            .await
        {
            tracing::warn!(error = %e, "could not deliver the answer to a pushed request");
        }
    }

    /// Handles the events of a call's stream: notifications to
    /// `on_notification`, pushed requests answered; the response to request
    /// `id`, when it is among them.
    async fn take_events(
        &self,
        events: Vec<String>,
        id: i64,
        answering: &Answering<'_>,
        on_notification: Option<&NotificationHandler>,
    ) -> Option<Value> {
        for data in events {
            let Ok(v) = serde_json::from_str::<Value>(&data) else {
                continue;
            };
            if v.get("id").and_then(Value::as_i64) == Some(id)
                && (v.get("result").is_some() || v.get("error").is_some())
            {
                return Some(v);
            }
            if v.get("method").is_some() && v.get("id").is_none() {
                if let Some(handler) = on_notification {
                    handler(&v);
                }
            } else if v.get("method").is_some() {
                // The server waits for this answer before it goes on.
                self.answer_pushed(&v, answering).await;
            }
        }
        None
    }

    /// Resumes an initialize-era call's stream after event `last` (GET with
    /// `Last-Event-ID` and the session).
    async fn resume_stream(
        &self,
        last: &str,
        answering: &Answering<'_>,
    ) -> Result<Option<reqwest::Response>, ClientError> {
        let mut request = self
            .http
            .get(self.url.clone())
            .header("Accept", "text/event-stream")
            .header("MCP-Protocol-Version", answering.version)
            .header("Last-Event-ID", last);
        if answering.open_ended {
            request = request.timeout(OPEN_ENDED);
        }
        if let Some(session) = self.session() {
            request = request.header("Mcp-Session-Id", session);
        }
        let response = match self.send(answering.token, "GET", request).await {
            Ok(response) => response,
            Err(e) if e.is_timeout() => return Err(ClientError::Transport(e)),
            Err(_) => return Ok(None),
        };
        let status = response.status().as_u16();
        if status == 503 {
            return Ok(None);
        }
        let is_sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("text/event-stream"));
        if !(200..300).contains(&status) || !is_sse {
            return Err(ClientError::Protocol(format!(
                "the server did not resume the call's event stream after {last} (HTTP {status})"
            )));
        }
        Ok(Some(response))
    }

    async fn read_response(
        &self,
        mut response: reqwest::Response,
        id: i64,
        answering: Answering<'_>,
        on_notification: Option<&NotificationHandler>,
    ) -> Result<(Value, u16), ClientError> {
        let status = response.status().as_u16();
        let is_sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("text/event-stream"));
        if is_sse {
            let mut parser = SseParser::default();
            // Attempts since the last new event id, and in all.
            let (mut idle, mut attempts) = (0, 0);
            let mut resumed_after: Option<String> = None;
            loop {
                let ended = match response.chunk().await {
                    Ok(Some(bytes)) => {
                        let events = parser.feed(&bytes).map_err(ClientError::Protocol)?;
                        if let Some(answer) = self
                            .take_events(events, id, &answering, on_notification)
                            .await
                        {
                            return Ok((answer, status));
                        }
                        continue;
                    }
                    Ok(None) => {
                        // WHATWG: at the end of the stream, pending data is discarded.
                        parser.discard_pending();
                        None
                    }
                    // A time limit is not a broken connection: the call failed.
                    Err(e) if e.is_timeout() => return Err(ClientError::Transport(e)),
                    Err(e) => {
                        // WHATWG: an event cut off by a broken connection is discarded.
                        parser.discard_pending();
                        Some(e)
                    }
                };
                // Only an initialize-era call's stream is resumable (2026-07-28: "A
                // Last-Event-ID header: ignore it; streams are not resumable").
                let legacy = self.session().is_some()
                    && tessera_protocol::LEGACY_PROTOCOL_VERSIONS.contains(&answering.version);
                let last = parser.last_event_id().map(str::to_owned);
                if last.is_some() && last != resumed_after {
                    idle = 0;
                }
                let Some(last) = last
                    .filter(|_| legacy && idle < MAX_RECONNECTIONS && attempts < MAX_RESUMPTIONS)
                else {
                    return Err(match ended {
                        Some(e) => ClientError::Transport(e),
                        None => ClientError::Protocol(format!(
                            "the event stream ended without a response to request {id}"
                        )),
                    });
                };
                // The 2025-11-25 transport: wait `retry`, then resume with GET and Last-Event-ID.
                let wait = parser
                    .retry_ms()
                    .unwrap_or(DEFAULT_RETRY_MS)
                    .min(MAX_RETRY_MS);
                resumed_after = Some(last.clone());
                response = loop {
                    tokio::time::sleep(std::time::Duration::from_millis(wait)).await;
                    idle += 1;
                    attempts += 1;
                    match self.resume_stream(&last, &answering).await? {
                        Some(resumed) => break resumed,
                        // Not now (503, or the connection failed): again after `retry`.
                        None if idle < MAX_RECONNECTIONS && attempts < MAX_RESUMPTIONS => {}
                        None => {
                            return Err(ClientError::Protocol(format!(
                                "the server did not resume the event stream of request {id} after {last}"
                            )));
                        }
                    }
                };
                parser = parser.reconnected();
            }
        }
        let mut bytes = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(ClientError::Transport)? {
            if bytes.len() + chunk.len() > MAX_EVENT_BYTES {
                return Err(ClientError::Protocol(format!(
                    "the response exceeds {MAX_EVENT_BYTES} bytes"
                )));
            }
            bytes.extend_from_slice(&chunk);
        }
        match serde_json::from_slice::<Value>(&bytes) {
            Ok(v) => {
                if status < 400 && v.get("id").and_then(Value::as_i64) != Some(id) {
                    return Err(ClientError::Protocol(format!(
                        "the response answers id {} instead of {id}",
                        v.get("id").unwrap_or(&Value::Null)
                    )));
                }
                Ok((v, status))
            }
            Err(_) if status >= 400 => Err(ClientError::HttpStatus {
                status,
                body: String::from_utf8_lossy(&bytes)
                    .chars()
                    .take(200)
                    .collect::<String>(),
            }),
            Err(e) => Err(ClientError::Protocol(format!(
                "the response is not JSON: {e}"
            ))),
        }
    }
}

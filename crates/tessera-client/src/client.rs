//! The client: requests with `_meta` and headers, JSON/SSE responses, the MRTR loop.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tessera_protocol::{
    CallToolResult, DiscoverResult, ElicitRequestParams, ErrorObject, GetPromptResult,
    Implementation, InputRequest, InputRequests, InputRequiredResult, JsonObject,
    LATEST_PROTOCOL_VERSION, Prompt, ReadResourceResult, RequestMeta, Resource, ResultType,
    STATELESS_PROTOCOL_VERSIONS, Tool, UNSUPPORTED_PROTOCOL_VERSION,
};

use crate::mcp_headers::{encode_header_value, invalid_header_annotation, param_headers};
use crate::sse::SseParser;
use crate::{ClientError, Elicitor, InputKinds};

/// Called with every notification a server streams before its response.
pub type NotificationHandler = Arc<dyn Fn(&Value) + Send + Sync>;

/// Configures an [`McpClient`].
pub struct McpClientBuilder {
    url: String,
    client_info: Implementation,
    elicitor: Option<Arc<dyn Elicitor>>,
    max_rounds: usize,
    on_notification: Option<NotificationHandler>,
    bearer: Option<String>,
    timeout: Duration,
    extra_meta: JsonObject,
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

    /// Sends `Authorization: Bearer <token>`.
    pub fn bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// Time limit of one HTTP exchange (default 120 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// Adds a key to every request's `_meta` (e.g. `progressToken` or the log level).
    pub fn meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.extra_meta.insert(key.into(), value);
        self
    }

    /// Builds the client.
    pub fn build(self) -> Result<McpClient, ClientError> {
        let url = reqwest::Url::parse(&self.url)
            .map_err(|e| ClientError::Config(format!("invalid URL {:?}: {e}", self.url)))?;
        let http = reqwest::Client::builder()
            .timeout(self.timeout)
            .tcp_nodelay(true)
            .build()
            .map_err(|e| ClientError::Config(e.to_string()))?;
        Ok(McpClient {
            http,
            url,
            client_info: self.client_info,
            elicitor: self.elicitor,
            max_rounds: self.max_rounds,
            on_notification: self.on_notification,
            bearer: self.bearer,
            extra_meta: self.extra_meta,
            version: Mutex::new(LATEST_PROTOCOL_VERSION.to_owned()),
            next_id: AtomicI64::new(1),
            tool_schemas: Mutex::new(HashMap::new()),
            server_name: Mutex::new(None),
        })
    }
}

/// An MCP client for one server URL.
pub struct McpClient {
    http: reqwest::Client,
    url: reqwest::Url,
    client_info: Implementation,
    elicitor: Option<Arc<dyn Elicitor>>,
    max_rounds: usize,
    on_notification: Option<NotificationHandler>,
    bearer: Option<String>,
    extra_meta: JsonObject,
    version: Mutex<String>,
    next_id: AtomicI64,
    tool_schemas: Mutex<HashMap<String, Value>>,
    server_name: Mutex<Option<String>>,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl McpClient {
    /// Starts configuring a client for `url` (the MCP endpoint).
    pub fn builder(url: impl Into<String>) -> McpClientBuilder {
        McpClientBuilder {
            url: url.into(),
            client_info: Implementation::new("tessera-client", env!("CARGO_PKG_VERSION")),
            elicitor: None,
            max_rounds: 10,
            on_notification: None,
            bearer: None,
            timeout: Duration::from_secs(120),
            extra_meta: JsonObject::new(),
        }
    }

    /// The capabilities declared on every request: exactly what the elicitor can answer.
    pub fn capabilities(&self) -> tessera_protocol::ClientCapabilities {
        self.elicitor
            .as_ref()
            .map_or_else(InputKinds::default, |e| e.kinds())
            .capabilities()
    }

    /// The protocol version in use.
    pub fn protocol_version(&self) -> String {
        lock(&self.version).clone()
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

    /// Sends one request (with `_meta` added) and returns its result; on
    /// -32022 it switches to a mutually supported version once and retries.
    pub async fn request(&self, method: &str, params: JsonObject) -> Result<Value, ClientError> {
        match self.send(method, params.clone()).await {
            Err(ClientError::Rpc { error, .. }) if error.code == UNSUPPORTED_PROTOCOL_VERSION => {
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
                self.send(method, params).await
            }
            other => other,
        }
    }

    async fn send(&self, method: &str, mut params: JsonObject) -> Result<Value, ClientError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let mut meta = self.meta();
        if let (Some(m), Some(Value::Object(given))) =
            (meta.as_object_mut(), params.remove("_meta"))
        {
            m.extend(given);
        }
        params.insert("_meta".into(), meta);
        let version = self.protocol_version();
        let mut request = self
            .http
            .post(self.url.clone())
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", &version)
            .header("Mcp-Method", method);
        let name_field = tessera_protocol::name_param(method).and_then(|field| params.get(field));
        if let Some(name) = name_field.and_then(Value::as_str) {
            request = request.header("Mcp-Name", encode_header_value(name));
        }
        if method == "tools/call"
            && let (Some(name), Some(arguments)) = (
                params.get("name").and_then(Value::as_str),
                params.get("arguments"),
            )
            && let Some(schema) = lock(&self.tool_schemas).get(name).cloned()
        {
            for (header, value) in param_headers(&schema, arguments) {
                request = request.header(header, value);
            }
        }
        if let Some(token) = &self.bearer {
            request = request.bearer_auth(token);
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        let response = request
            .body(serde_json::to_vec(&body).unwrap_or_default())
            .send()
            .await
            .map_err(ClientError::Transport)?;
        self.read_response(response, id).await
    }

    async fn read_response(
        &self,
        mut response: reqwest::Response,
        id: i64,
    ) -> Result<Value, ClientError> {
        let status = response.status().as_u16();
        let is_sse = response
            .headers()
            .get("content-type")
            .and_then(|v| v.to_str().ok())
            .is_some_and(|ct| ct.starts_with("text/event-stream"));
        let message: Value = if is_sse {
            let mut parser = SseParser::default();
            let mut last = None;
            'read: loop {
                let chunk = response.chunk().await.map_err(ClientError::Transport)?;
                let events = match chunk {
                    Some(bytes) => parser.feed(&bytes).map_err(ClientError::Protocol)?,
                    None => {
                        let tail: Vec<String> =
                            std::mem::take(&mut parser).finish().into_iter().collect();
                        if tail.is_empty() {
                            break 'read;
                        }
                        tail
                    }
                };
                for data in events {
                    let Ok(v) = serde_json::from_str::<Value>(&data) else {
                        continue;
                    };
                    if v.get("id").and_then(Value::as_i64) == Some(id)
                        && (v.get("result").is_some() || v.get("error").is_some())
                    {
                        last = Some(v);
                        break 'read;
                    }
                    if v.get("method").is_some() && v.get("id").is_none() {
                        if let Some(handler) = &self.on_notification {
                            handler(&v);
                        }
                    } else if v.get("method").is_some() {
                        tracing::warn!(message = %v, "server sent a JSON-RPC request on a response stream; ignored");
                    }
                }
            }
            last.ok_or_else(|| {
                ClientError::Protocol(format!(
                    "the event stream ended without a response to request {id}"
                ))
            })?
        } else {
            let mut bytes = Vec::new();
            while let Some(chunk) = response.chunk().await.map_err(ClientError::Transport)? {
                if bytes.len() + chunk.len() > crate::sse::MAX_EVENT_BYTES {
                    return Err(ClientError::Protocol(format!(
                        "the response exceeds {} bytes",
                        crate::sse::MAX_EVENT_BYTES
                    )));
                }
                bytes.extend_from_slice(&chunk);
            }
            match serde_json::from_slice(&bytes) {
                Ok(v) => v,
                Err(_) if status >= 400 => {
                    return Err(ClientError::UnsupportedServer(format!(
                        "HTTP {status} without a JSON-RPC error: {} (an initialize-era or non-MCP server?)",
                        String::from_utf8_lossy(&bytes)
                            .chars()
                            .take(200)
                            .collect::<String>()
                    )));
                }
                Err(e) => {
                    return Err(ClientError::Protocol(format!(
                        "the response is not JSON: {e}"
                    )));
                }
            }
        };
        if !is_sse && status < 400 && message.get("id").and_then(Value::as_i64) != Some(id) {
            return Err(ClientError::Protocol(format!(
                "the response answers id {} instead of {id}",
                message.get("id").unwrap_or(&Value::Null)
            )));
        }
        if let Some(error) = message.get("error") {
            let error: ErrorObject = serde_json::from_value(error.clone())
                .map_err(|e| ClientError::Protocol(format!("malformed error: {e}")))?;
            return Err(ClientError::Rpc { status, error });
        }
        let result = message.get("result").cloned().ok_or_else(|| {
            ClientError::Protocol(format!(
                "HTTP {status}: the response has neither result nor error"
            ))
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

    /// `server/discover`.
    pub async fn discover(&self) -> Result<DiscoverResult, ClientError> {
        let v = self.request("server/discover", JsonObject::new()).await?;
        Self::parse("server/discover", v)
    }

    async fn list_all(&self, method: &str, field: &str) -> Result<Vec<Value>, ClientError> {
        let mut items = Vec::new();
        let mut cursor: Option<String> = None;
        for _ in 0..1000 {
            let mut params = JsonObject::new();
            if let Some(c) = &cursor {
                params.insert("cursor".into(), json!(c));
            }
            let v = self.request(method, params).await?;
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
    pub async fn call_tool_raw(&self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        let mut params = JsonObject::new();
        params.insert("name".into(), json!(name));
        params.insert("arguments".into(), arguments);
        self.run_rounds("tools/call", params).await
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

    async fn answer(&self, requests: &InputRequests) -> Result<JsonObject, ClientError> {
        // The host is who the user connected to; the name is only what the server says it is.
        let host = self.url.host_str().unwrap_or("the server").to_owned();
        let server = match lock(&self.server_name).as_deref() {
            Some(name) => format!(
                "{} (at {host})",
                name.chars().filter(|c| !c.is_control()).collect::<String>()
            ),
            None => host,
        };
        let mut answers = JsonObject::new();
        for (key, request) in requests {
            let unanswerable = || ClientError::Unanswerable {
                key: key.clone(),
                method: request.method().to_owned(),
            };
            let elicitor = self.elicitor.as_ref().ok_or_else(unanswerable)?;
            let kinds = elicitor.kinds();
            let value = match request {
                InputRequest::Elicit(ElicitRequestParams::Form(p)) if kinds.form => {
                    json!(elicitor.form(&server, key, p).await?)
                }
                InputRequest::Elicit(ElicitRequestParams::Url(p)) if kinds.url => {
                    json!(elicitor.url(&server, key, p).await?)
                }
                InputRequest::Sample(p) if kinds.sampling => json!(elicitor.sample(key, p).await?),
                InputRequest::ListRoots(_) if kinds.roots => json!(elicitor.roots(key).await?),
                _ => return Err(unanswerable()),
            };
            answers.insert(key.clone(), value);
        }
        Ok(answers)
    }
}

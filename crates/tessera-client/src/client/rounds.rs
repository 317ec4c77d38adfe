//! The multi round-trip loop: calls, prompts and resources retried with the
//! elicitor's answers until they complete; questions a server pushes.

use super::*;
use tessera_protocol::rounds::{RoundDriver, Step, TooManyRounds, reply_of};

impl McpClient {
    /// Calls a tool, answering input requests until the result is complete; returns the raw result.
    ///
    /// When the tool was listed with an `outputSchema`, a result that is not an
    /// error must carry `structuredContent` satisfying it
    /// ([`ClientError::StructuredContent`] otherwise).
    pub async fn call_tool_raw(&self, name: &str, arguments: Value) -> Result<Value, ClientError> {
        let result = self.call_tool_unchecked(name, arguments).await?;
        let check = lock(&self.output_checks).get(name).cloned();
        if let Some(check) = check {
            let is_error = result.get("isError") == Some(&Value::Bool(true));
            check
                .check_tool_result(is_error, result.get("structuredContent"))
                .map_err(|problem| ClientError::StructuredContent {
                    tool: name.to_owned(),
                    problem,
                })?;
        }
        Ok(result)
    }

    pub(super) async fn call_tool_unchecked(
        &self,
        name: &str,
        arguments: Value,
    ) -> Result<Value, ClientError> {
        let mut params = JsonObject::new();
        params.insert("name".into(), json!(name));
        params.insert("arguments".into(), arguments);
        match self.run_rounds("tools/call", params.clone()).await {
            // Refused before it ran: "the client SHOULD call tools/list to check
            // for changes to the tool's inputSchema, then retry the original
            // request with the appropriate headers".
            Err(ClientError::Rpc { error, .. })
                if error.code == tessera_protocol::HEADER_MISMATCH =>
            {
                self.cache
                    .notice(&json!({"method": "notifications/tools/list_changed"}));
                self.list_tools().await?;
                self.run_rounds("tools/call", params).await
            }
            other => other,
        }
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
            params.insert(tessera_protocol::INPUT_RESPONSES.into(), Value::Object(r));
        }
        if let Some(s) = request_state {
            params.insert(tessera_protocol::REQUEST_STATE.into(), json!(s));
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

    /// The multi round-trip loop, driven by the shared round driver: retry
    /// with a new id, the same params, the answers for exactly the keys
    /// asked, and the ticket echoed unchanged.
    pub(super) async fn run_rounds(
        &self,
        method: &str,
        base: JsonObject,
    ) -> Result<Value, ClientError> {
        let mut driver = RoundDriver::<String>::new(self.max_rounds);
        loop {
            let mut params = base.clone();
            driver
                .next_request()
                .map_err(|e| self.too_many(e))?
                .add_to(&mut params);
            let result = self.request(method, params).await?;
            let reply = reply_of(result).map_err(|e| ClientError::Protocol(e.to_string()))?;
            match driver.receive(reply).map_err(|e| self.too_many(e))? {
                Step::Done(result) => return Ok(result),
                Step::Task(result) if method == "tools/call" => {
                    return self.follow_task(result).await;
                }
                Step::Task(_) => {
                    return Err(ClientError::Protocol(format!(
                        "{method} answered with a task; only tools/call may"
                    )));
                }
                Step::Ask(requests) => driver.answer(self.answer(&requests).await?),
                Step::Pause(pause) => tokio::time::sleep(pause).await,
            }
        }
    }

    /// The round limit reached, with what the last round asked.
    fn too_many(&self, e: TooManyRounds) -> ClientError {
        ClientError::TooManyRounds {
            rounds: self.max_rounds,
            asked: (e.last.iter())
                .map(|(key, request)| (key.clone(), request.message().map(str::to_owned)))
                .collect(),
        }
    }

    pub(super) async fn answer(&self, requests: &InputRequests) -> Result<JsonObject, ClientError> {
        // Who asks: where the user connected, and the name the server gives itself.
        let place = match &self.transport {
            Transport::Http(http) => http.url.host_str().unwrap_or("the server").to_owned(),
            Transport::Stdio(stdio) => local_label(&stdio.program),
        };
        let server = match lock(&self.server_name).as_deref() {
            Some(name) => format!(
                "{} (at {place})",
                name.chars().filter(|c| !c.is_control()).collect::<String>()
            ),
            None => place,
        };
        let mut answers = JsonObject::new();
        for (key, request) in requests {
            let value = answer_one(self.elicitor.as_deref(), &server, key, request).await?;
            answers.insert(key.clone(), value);
        }
        Ok(answers)
    }
}

/// One input request answered by the elicitor, if it can answer its kind.
pub(super) async fn answer_one(
    elicitor: Option<&dyn Elicitor>,
    server: &str,
    key: &str,
    request: &InputRequest,
) -> Result<Value, ClientError> {
    let unanswerable = || ClientError::Unanswerable {
        key: key.to_owned(),
        method: request.method().to_owned(),
    };
    let elicitor = elicitor.ok_or_else(unanswerable)?;
    let kinds = elicitor.kinds();
    Ok(match request {
        InputRequest::Elicit(ElicitRequestParams::Form(p)) if kinds.form => {
            json!(elicitor.form(server, key, p).await?)
        }
        InputRequest::Elicit(ElicitRequestParams::Url(p)) if kinds.url => {
            json!(elicitor.url(server, key, p).await?)
        }
        InputRequest::Sample(p) if kinds.sampling => json!(elicitor.sample(key, p).await?),
        InputRequest::ListRoots(_) if kinds.roots => json!(elicitor.roots(key).await?),
        _ => return Err(unanswerable()),
    })
}

/// The key of a pushed question whose server does not name it (any server but Tessera's bridge).
pub(super) fn unnamed_key(method: &str) -> &'static str {
    match method {
        tessera_protocol::SAMPLING_CREATE_MESSAGE => "sampling",
        tessera_protocol::ROOTS_LIST => "roots",
        _ => "elicitation",
    }
}

/// Answers what an initialize-era server pushes: its questions through the
/// elicitor (the key from [`INPUT_KEY_META_KEY`] when the server names one,
/// else `elicitation`, `sampling` or `roots`), and `ping`.
pub(super) fn push_handler(
    elicitor: Option<Arc<dyn Elicitor>>,
    server: String,
    failure: Arc<Mutex<Option<ClientError>>>,
    bound: Arc<PushBound>,
) -> PushHandler {
    Arc::new(move |method: String, params: Value| {
        let (elicitor, server, failure) = (elicitor.clone(), server.clone(), Arc::clone(&failure));
        let bound = Arc::clone(&bound);
        Box::pin(async move {
            // A ping is no round, and answering it stops no clock.
            if method == "ping" {
                return Ok(json!({}));
            }
            let key = params
                .get("_meta")
                .and_then(|m| m.get(INPUT_KEY_META_KEY))
                .and_then(Value::as_str)
                .unwrap_or_else(|| unnamed_key(&method))
                .to_owned();
            let request: InputRequest =
                serde_json::from_value(json!({"method": method, "params": params})).map_err(
                    |e| ErrorObject::new(METHOD_NOT_FOUND, format!("cannot answer {method}: {e}")),
                )?;
            let Some(_answering) = bound.pushed(&key, request.message().map(str::to_owned)) else {
                return Err(ErrorObject::new(
                    INTERNAL_ERROR,
                    "the client answers no more pushed requests in this call (its round limit)",
                ));
            };
            match answer_one(elicitor.as_deref(), &server, &key, &request).await {
                Ok(answer) => Ok(answer),
                Err(e) => {
                    let error = ErrorObject::new(INTERNAL_ERROR, e.to_string());
                    *lock(&failure) = Some(e);
                    Err(error)
                }
            }
        })
    })
}

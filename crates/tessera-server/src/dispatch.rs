//! Dispatching one JSON-RPC request: envelope, method, the multi round-trip flow.

use std::sync::Arc;

use indexmap::IndexMap;
use serde::{Deserialize as _, Serialize};
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use tessera_protocol::{
    CallToolResult, ClientCapabilities, CompleteRequestParams, CompleteResult, DiscoverResult,
    ElicitationCapability, GetPromptResult, InputRequiredResult, JsonObject, JsonRpcErrorResponse,
    JsonRpcRequest, ListChangedCapability, ListPromptsResult, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, ReadResourceResult, RequestId, RequestMeta,
    ResourcesCapability, ResultMeta, SERVER_INFO_KEY, STATELESS_PROTOCOL_VERSIONS,
    ServerCapabilities,
};
use tessera_state::{Binding, TicketLedger};

use crate::answer::{Slot, collect};
use crate::context::RequestScope;
use crate::error::RequestStateFailure;
use crate::handler::{CallInput, ErasedReply};
use crate::input_required::Pending;
use crate::legacy::{needs_modern_message, to_legacy_shape};
use crate::pagination::{offset_of, page};
use crate::ticket::{Asked, FormCheck, TicketBody};
use crate::{BoxFuture, McpServer, Reply, RequestFacts, ServerError};

/// The outcome of one request: its id and its result (serialised) or error.
#[derive(Debug)]
pub struct Handled {
    /// The request's id, echoed.
    pub id: RequestId,
    /// The result as JSON text, or why the request failed.
    pub result: Result<Box<RawValue>, ServerError>,
}

impl Handled {
    /// `complete`, `input_required` or `error`: for logs and metrics.
    pub fn outcome(&self) -> &'static str {
        match &self.result {
            // Our InputRequiredResult serialises resultType first.
            Ok(raw) if raw.get().starts_with(r#"{"resultType":"input_required""#) => {
                "input_required"
            }
            Ok(_) => "complete",
            Err(_) => "error",
        }
    }

    /// The result as a JSON value (parses it; for tests and tools, not the hot path).
    pub fn result_value(&self) -> Option<Value> {
        self.result
            .as_ref()
            .ok()
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
    }

    /// The JSON-RPC response as a JSON value.
    pub fn to_json(&self) -> Value {
        serde_json::from_slice(&self.to_bytes()).unwrap_or(Value::Null)
    }

    /// The JSON-RPC response serialised.
    pub fn to_bytes(&self) -> Vec<u8> {
        #[derive(Serialize)]
        struct Ok<'a> {
            jsonrpc: &'static str,
            id: &'a RequestId,
            result: &'a RawValue,
        }
        match &self.result {
            Result::Ok(result) => {
                // Sized once: the result is most of the response.
                let mut out = Vec::with_capacity(result.get().len() + 64);
                serde_json::to_writer(
                    &mut out,
                    &Ok {
                        jsonrpc: "2.0",
                        id: &self.id,
                        result,
                    },
                )
                .map(|()| out)
            }
            Err(e) => serde_json::to_vec(&JsonRpcErrorResponse::new(
                Some(self.id.clone()),
                e.to_error_object(),
            )),
        }
        .unwrap_or_default()
    }
}

/// A result on its way out: built as a value (lists, discovery, legacy), or
/// already serialised with its `_meta` (the multi round-trip methods).
pub(crate) enum Json {
    Value(Value),
    Raw(Box<RawValue>),
}

/// Results that carry a `_meta` the server fills with its `serverInfo`.
pub(crate) trait ResultShape: Serialize {
    /// The result's `_meta`.
    fn meta_slot(&mut self) -> &mut Option<ResultMeta>;
}

macro_rules! result_shape {
    ($($t:ty),*) => {$(
        impl ResultShape for $t {
            fn meta_slot(&mut self) -> &mut Option<ResultMeta> {
                &mut self.meta
            }
        }
    )*};
}
result_shape!(
    CallToolResult,
    GetPromptResult,
    ReadResourceResult,
    InputRequiredResult
);

fn serialisation_failed(e: serde_json::Error) -> ServerError {
    ServerError::Internal {
        message: format!("result cannot be serialised: {e}"),
    }
}

/// A handler call waiting for its input.
type PendingRun<'a, R> = Box<
    dyn FnOnce(CallInput) -> BoxFuture<'static, Result<ErasedReply<R>, ServerError>> + Send + 'a,
>;

/// What an MRTR-capable method needs: its target, what tickets bind to, and its handler.
struct MrtrCall<'a, R> {
    kind: &'static str,
    target: &'a str,
    binding: Binding,
    single_use: bool,
    /// Forms an unasked answer is read against ([`ToolDef::expects_input`](crate::ToolDef::expects_input)).
    expected: Option<&'a IndexMap<String, crate::ElicitForm>>,
    run: PendingRun<'a, R>,
}

/// What a retry carries besides the original request: the echoed ticket and the answers.
struct Retry {
    request_state: Option<Value>,
    input_responses: Option<Value>,
}

impl Retry {
    /// Moves the retry fields out of `params` (nothing is copied).
    fn take(params: &mut Option<Value>) -> Self {
        Self {
            request_state: take(params, "requestState"),
            input_responses: take(params, "inputResponses"),
        }
    }
}

/// Moves `key` out of `params`, when `params` is an object that has it.
fn take(params: &mut Option<Value>, key: &str) -> Option<Value> {
    params
        .as_mut()
        .and_then(Value::as_object_mut)
        .and_then(|o| o.remove(key))
}

impl McpServer {
    /// Handles one JSON-RPC request and returns its response.
    pub async fn handle(&self, request: JsonRpcRequest<Value>, facts: RequestFacts) -> Handled {
        let legacy = facts.legacy_version().is_some();
        let JsonRpcRequest {
            id,
            method,
            mut params,
            ..
        } = request;
        // Initialize-era requests have no envelope to read.
        let meta = if legacy {
            Ok(Box::default())
        } else {
            crate::envelope::read_meta(params.as_mut()).map(Box::new)
        };
        let out = match meta {
            Ok(meta) => self.route(id.clone(), &method, meta, params, facts).await,
            Err(e) => Err(e),
        };
        self.handled(id, out, legacy)
    }

    /// Handles a modern request whose envelope is already read ([`EnvelopedRequest::parse`](crate::EnvelopedRequest::parse)).
    pub async fn handle_enveloped(
        &self,
        request: crate::EnvelopedRequest,
        facts: RequestFacts,
    ) -> Handled {
        let crate::EnvelopedRequest {
            id,
            method,
            meta,
            params,
        } = request;
        let legacy = facts.legacy_version().is_some();
        let out = self
            .route(
                id.clone(),
                &method,
                meta,
                Some(Value::Object(params)),
                facts,
            )
            .await;
        self.handled(id, out, legacy)
    }

    /// The response to request `id`: serialised, with `serverInfo` in a modern result's `_meta`.
    fn handled(&self, id: RequestId, out: Result<Json, ServerError>, legacy: bool) -> Handled {
        let result = out.and_then(|json| match json {
            Json::Raw(raw) => Ok(raw),
            Json::Value(mut value) => {
                if legacy {
                    to_legacy_shape(&mut value);
                } else if let Some(o) = value.as_object_mut() {
                    match o.get_mut("_meta").and_then(Value::as_object_mut) {
                        Some(meta) => {
                            meta.entry(SERVER_INFO_KEY)
                                .or_insert_with(|| self.result_meta[SERVER_INFO_KEY].clone());
                        }
                        None => {
                            o.insert("_meta".into(), self.result_meta.clone());
                        }
                    }
                }
                serde_json::value::to_raw_value(&value).map_err(serialisation_failed)
            }
        });
        Handled { id, result }
    }

    /// Handles a notification: nothing to answer; noted in the log.
    pub fn handle_notification(&self, method: &str) {
        tracing::debug!(method, "notification received");
    }

    /// One method table for both eras: modern requests carry `_meta` and may
    /// discover; initialize-era ones may `initialize` and `ping`.
    async fn route(
        &self,
        id: RequestId,
        method: &str,
        meta: Box<RequestMeta>,
        params: Option<Value>,
        facts: RequestFacts,
    ) -> Result<Json, ServerError> {
        let legacy = facts.legacy_version().is_some();
        let scope = move |target: &str| {
            Arc::new(RequestScope {
                id,
                target: target.to_owned(),
                meta,
                facts,
            })
        };
        let value = Json::Value;
        match (method, legacy) {
            ("server/discover", false) => Ok(value(json!(DiscoverResult {
                supported_versions: STATELESS_PROTOCOL_VERSIONS
                    .iter()
                    .map(|v| (*v).to_owned())
                    .collect(),
                capabilities: self.capabilities(),
                instructions: self.instructions.clone(),
                ttl_ms: self.discover_cache.ttl_ms,
                cache_scope: self.discover_cache.scope,
                ..DiscoverResult::default()
            }))),
            ("initialize", true) => Ok(value(self.initialize_result(params.as_ref()))),
            // Per-request serving keeps no session to store a level in; log
            // notifications reach legacy clients only through SSE, which they do not get here.
            ("ping" | "logging/setLevel", true) => Ok(value(json!({}))),
            ("tools/list", _) => self.list_tools(params.as_ref()).map(value),
            ("tools/call", _) => self.call_tool(params, scope).await,
            ("prompts/list", _) if !self.prompts.is_empty() => {
                self.list_prompts(params.as_ref()).map(value)
            }
            ("prompts/get", _) if !self.prompts.is_empty() => self.get_prompt(params, scope).await,
            ("resources/list", _) if self.has_resources() => {
                self.list_resources(params.as_ref()).map(value)
            }
            ("resources/templates/list", _) if self.has_resources() => {
                self.list_templates(params.as_ref()).map(value)
            }
            ("resources/read", _) if self.has_resources() => {
                self.read_resource(params, scope).await
            }
            ("completion/complete", _) if self.completion.is_some() => {
                self.complete(params.as_ref()).await.map(value)
            }
            (other, _) => Err(ServerError::MethodNotFound {
                method: other.to_owned(),
            }),
        }
    }

    fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    /// What `server/discover` (and `initialize`) report, derived from the registrations.
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            tools: (!self.tools.is_empty()).then_some(ListChangedCapability {
                list_changed: Some(false),
            }),
            prompts: (!self.prompts.is_empty()).then_some(ListChangedCapability {
                list_changed: Some(false),
            }),
            resources: self.has_resources().then_some(ResourcesCapability {
                list_changed: Some(false),
                subscribe: Some(false),
            }),
            completions: self.completion.as_ref().map(|_| JsonObject::new()),
            logging: Some(JsonObject::new()),
            ..ServerCapabilities::default()
        }
    }

    /// The page of `items` the request's cursor names, and the next cursor.
    fn page_of<'a, T: Clone + 'a>(
        &self,
        params: Option<&Value>,
        items: impl ExactSizeIterator<Item = &'a T>,
    ) -> Result<(Vec<T>, Option<String>), ServerError> {
        let len = items.len();
        let offset = offset_of(cursor(params)?, len)?;
        Ok(page(items.cloned(), offset, self.page_size, len))
    }

    fn list_tools(&self, params: Option<&Value>) -> Result<Value, ServerError> {
        let (tools, next_cursor) = self.page_of(params, self.tools.values().map(|t| &t.tool))?;
        Ok(json!(ListToolsResult {
            tools,
            next_cursor,
            ttl_ms: self.list_cache.ttl_ms,
            cache_scope: self.list_cache.scope,
            ..ListToolsResult::default()
        }))
    }

    fn list_prompts(&self, params: Option<&Value>) -> Result<Value, ServerError> {
        let (prompts, next_cursor) =
            self.page_of(params, self.prompts.values().map(|p| &p.prompt))?;
        Ok(json!(ListPromptsResult {
            prompts,
            next_cursor,
            ttl_ms: self.list_cache.ttl_ms,
            cache_scope: self.list_cache.scope,
            ..ListPromptsResult::default()
        }))
    }

    fn list_resources(&self, params: Option<&Value>) -> Result<Value, ServerError> {
        let (resources, next_cursor) =
            self.page_of(params, self.resources.values().map(|r| &r.resource))?;
        Ok(json!(ListResourcesResult {
            resources,
            next_cursor,
            ttl_ms: self.list_cache.ttl_ms,
            cache_scope: self.list_cache.scope,
            ..ListResourcesResult::default()
        }))
    }

    fn list_templates(&self, params: Option<&Value>) -> Result<Value, ServerError> {
        let (resource_templates, next_cursor) =
            self.page_of(params, self.templates.iter().map(|t| &t.template))?;
        Ok(json!(ListResourceTemplatesResult {
            resource_templates,
            next_cursor,
            ttl_ms: self.list_cache.ttl_ms,
            cache_scope: self.list_cache.scope,
            ..ListResourceTemplatesResult::default()
        }))
    }

    async fn complete(&self, params: Option<&Value>) -> Result<Value, ServerError> {
        let Some(handler) = &self.completion else {
            return Err(ServerError::MethodNotFound {
                method: "completion/complete".into(),
            });
        };
        let params: CompleteRequestParams =
            serde_json::from_value(params.cloned().unwrap_or(Value::Null)).map_err(|e| {
                ServerError::invalid_params(format!("Invalid completion/complete params: {e}"))
            })?;
        let mut completion = (handler.0)(params).await;
        if completion.values.len() > 100 {
            completion.values.truncate(100);
            completion.has_more = Some(true);
        }
        Ok(json!(CompleteResult {
            completion,
            ..CompleteResult::default()
        }))
    }

    async fn call_tool(
        &self,
        mut params: Option<Value>,
        scope: impl FnOnce(&str) -> Arc<RequestScope>,
    ) -> Result<Json, ServerError> {
        let retry = Retry::take(&mut params);
        let arguments = take(&mut params, "arguments");
        let (name, tool) = {
            let name = required_str(params.as_ref(), "name", "tools/call")?;
            self.tools
                .get_key_value(name)
                .ok_or_else(|| ServerError::invalid_params(format!("Tool {name} not found")))?
        };
        let arguments = match arguments {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(a @ Value::Object(_)) => a,
            Some(_) => {
                return Err(ServerError::invalid_params(
                    "Invalid tools/call params: arguments must be an object",
                ));
            }
        };
        let Some(handler) = tool.handler.clone() else {
            return Err(ServerError::Internal {
                message: format!("tool {name} has no handler"),
            });
        };
        let scope = scope(name);
        let call = MrtrCall {
            kind: "Tool",
            target: name,
            binding: self.binding("tools/call", name, &arguments, &scope),
            single_use: tool.single_use,
            expected: Some(&tool.expected),
            run: Box::new(move |input| handler(input, arguments)),
        };
        match self.run_mrtr(call, retry, scope).await {
            Err(ServerError::LegacyInputRequired { message }) => {
                Ok(Json::Value(json!(CallToolResult::error(message))))
            }
            other => other,
        }
    }

    async fn get_prompt(
        &self,
        mut params: Option<Value>,
        scope: impl FnOnce(&str) -> Arc<RequestScope>,
    ) -> Result<Json, ServerError> {
        let retry = Retry::take(&mut params);
        let arguments = match take(&mut params, "arguments") {
            None | Some(Value::Null) => Value::Object(Map::new()),
            Some(a) => a,
        };
        let (name, prompt) = {
            let name = required_str(params.as_ref(), "name", "prompts/get")?;
            self.prompts
                .get_key_value(name)
                .ok_or_else(|| ServerError::invalid_params(format!("Prompt {name} not found")))?
        };
        let args = IndexMap::<String, String>::deserialize(&arguments).map_err(|e| {
            ServerError::invalid_params(format!(
                "Invalid prompts/get arguments (a map of strings): {e}"
            ))
        })?;
        if let Some(missing) = prompt.missing_argument(&args) {
            return Err(ServerError::invalid_params(format!(
                "Missing required argument {missing:?} for prompt {name}"
            )));
        }
        let Some(handler) = prompt.handler.clone() else {
            return Err(ServerError::Internal {
                message: format!("prompt {name} has no handler"),
            });
        };
        let scope = scope(name);
        let call = MrtrCall {
            kind: "Prompt",
            target: name,
            binding: self.binding("prompts/get", name, &arguments, &scope),
            single_use: false,
            expected: None,
            run: Box::new(move |input| handler(input, args)),
        };
        self.run_mrtr(call, retry, scope).await
    }

    async fn read_resource(
        &self,
        mut params: Option<Value>,
        scope: impl FnOnce(&str) -> Arc<RequestScope>,
    ) -> Result<Json, ServerError> {
        let retry = Retry::take(&mut params);
        let uri = required_str(params.as_ref(), "uri", "resources/read")?;
        let (handler, vars) = if let Some(resource) = self.resources.get(uri) {
            (resource.handler.clone(), IndexMap::new())
        } else if let Some((template, vars)) = self
            .templates
            .iter()
            .find_map(|t| t.matches(uri).map(|v| (t, v)))
        {
            (template.handler.clone(), vars)
        } else {
            return Err(ServerError::ResourceNotFound {
                uri: uri.to_owned(),
            });
        };
        let Some(handler) = handler else {
            return Err(ServerError::Internal {
                message: format!("resource {uri} has no handler"),
            });
        };
        let hint = self.read_cache;
        let scope = scope(uri);
        let call = MrtrCall {
            kind: "Resource",
            target: uri,
            binding: self.binding("resources/read", uri, &Value::Object(Map::new()), &scope),
            single_use: false,
            expected: None,
            run: Box::new(move |input| {
                Box::pin(async move {
                    Ok(match handler(input, vars).await? {
                        // Caching hints the handler left out come from the server's defaults.
                        Reply::Complete(mut result) => {
                            result.ttl_ms.get_or_insert(hint.ttl_ms);
                            result.cache_scope.get_or_insert(hint.scope);
                            Reply::Complete(result)
                        }
                        other => other,
                    })
                })
            }),
        };
        self.run_mrtr(call, retry, scope).await
    }

    /// What a ticket for this request is bound to.
    fn binding(
        &self,
        method: &str,
        target: &str,
        arguments: &Value,
        scope: &RequestScope,
    ) -> Binding {
        Binding::new(
            method,
            target,
            arguments,
            scope.facts.principal.as_deref(),
            &self.audience,
        )
    }

    /// The multi round-trip flow shared by tools, prompts and resources:
    /// open the ticket, read the answers, run the handler, seal the next ticket.
    async fn run_mrtr<R: ResultShape>(
        &self,
        call: MrtrCall<'_, R>,
        retry: Retry,
        scope: Arc<RequestScope>,
    ) -> Result<Json, ServerError> {
        let mut body = match retry.request_state {
            None | Some(Value::Null) => {
                // First round: forms the tool declares up front may be answered already.
                let mut first = TicketBody::default();
                for (key, form) in call.expected.into_iter().flatten() {
                    first
                        .asked
                        .insert(key.clone(), Asked::Form(FormCheck::of(&form.schema)));
                }
                first
            }
            Some(token) => {
                self.open_ticket(&token, &call.binding, call.single_use)
                    .await?
            }
        };
        // A key asked again is answered again: an earlier acceptance under it no
        // longer counts (a decline now must not fall back to a yes from before).
        body.accepted.retain(|key, _| !body.asked.contains_key(key));
        let responses = match retry.input_responses {
            None | Some(Value::Null) => None,
            Some(Value::Object(o)) => Some(o),
            Some(_) => {
                return Err(ServerError::invalid_params(
                    "Invalid params: inputResponses must be an object keyed by input request",
                ));
            }
        };
        let answers = collect(&body.asked, responses);
        // Form answers accepted now join those of earlier rounds: the next ticket carries them all.
        let mut accepted = body.accepted;
        for (key, slot) in &answers {
            if let (Slot::Accepted(content), Some(Asked::Form(_))) = (slot, body.asked.get(key)) {
                accepted.insert(key.clone(), content.clone());
            }
        }
        let accepted = Arc::new(accepted);
        // Who asked: the handler takes `scope`; the reply is checked against it.
        let asker = Arc::clone(&scope);
        let legacy_version = asker.facts.legacy_version();
        let input = CallInput {
            scope,
            state: body.state,
            answers,
            earlier: Arc::clone(&accepted),
        };
        match (call.run)(input).await? {
            Reply::Complete(result) if legacy_version.is_some() => serde_json::to_value(result)
                .map(Json::Value)
                .map_err(serialisation_failed),
            Reply::Complete(result) => self.finish(result),
            Reply::InputRequired(ir) => {
                if let Some(version) = legacy_version {
                    let (key, method) = ir
                        .requests
                        .iter()
                        .next()
                        .map_or(("(state)", "requestState"), |(k, p)| {
                            (k.as_str(), p.method())
                        });
                    return Err(ServerError::LegacyInputRequired {
                        message: needs_modern_message(call.kind, call.target, key, method, version),
                    });
                }
                let none = ClientCapabilities::default();
                let capabilities = asker.meta.client_capabilities.as_ref().unwrap_or(&none);
                check_capabilities(&ir.requests, capabilities)?;
                let Some(codec) = &self.codec else {
                    return Err(ServerError::Internal {
                        message: "this server has no requestState key configured, so it cannot ask for input \
                                  (McpServerBuilder::request_state)"
                            .into(),
                    });
                };
                // The handler's context is gone by now, so this is the only reference.
                let accepted = Arc::try_unwrap(accepted).unwrap_or_else(|shared| (*shared).clone());
                let asked = ir
                    .requests
                    .iter()
                    .map(|(k, p)| {
                        let kind = match p {
                            Pending::Form(f) => Asked::Form(FormCheck::of(&f.schema)),
                            Pending::Url { .. } => Asked::Url,
                            Pending::Sample(_) => Asked::Sample,
                            Pending::Roots => Asked::Roots,
                        };
                        (k.clone(), kind)
                    })
                    .collect();
                let next = TicketBody {
                    state: ir.state,
                    asked,
                    accepted,
                };
                let token =
                    codec
                        .seal(&next, &call.binding)
                        .map_err(|e| ServerError::Internal {
                            message: format!("cannot seal requestState: {e}"),
                        })?;
                let input_requests = (!ir.requests.is_empty()).then(|| {
                    ir.requests
                        .into_iter()
                        .map(|(k, p)| (k, p.into_wire()))
                        .collect()
                });
                self.finish(InputRequiredResult {
                    input_requests,
                    request_state: Some(token),
                    meta: None,
                })
            }
        }
    }

    /// Serialises a modern result once, with `serverInfo` in its `_meta`.
    fn finish<R: ResultShape>(&self, mut result: R) -> Result<Json, ServerError> {
        let meta = result.meta_slot().get_or_insert_with(ResultMeta::default);
        if meta.server_info.is_none() {
            meta.server_info = Some(self.info.clone());
        }
        serde_json::value::to_raw_value(&result)
            .map(Json::Raw)
            .map_err(serialisation_failed)
    }

    async fn open_ticket(
        &self,
        token: &Value,
        binding: &Binding,
        single_use: bool,
    ) -> Result<TicketBody, ServerError> {
        let fail = |reason: RequestStateFailure| {
            tracing::info!(reason = reason.reason(), detail = ?reason, "requestState refused");
            ServerError::InvalidRequestState { reason }
        };
        let Value::String(token) = token else {
            return Err(fail(RequestStateFailure::NotAString));
        };
        let Some(codec) = &self.codec else {
            return Err(fail(RequestStateFailure::NoCodec));
        };
        let opened = codec
            .open::<TicketBody>(token, binding)
            .map_err(|e| fail(RequestStateFailure::Open(e)))?;
        if single_use && let Some(ledger) = &self.ledger {
            match ledger.consume(&opened.ticket_id, opened.expires_at).await {
                Ok(()) => {}
                Err(tessera_state::LedgerError::AlreadyUsed) => {
                    return Err(fail(RequestStateFailure::AlreadyUsed("already_used")));
                }
                // A full or failing ledger is the server's problem, not a bad ticket: fail closed, retryably.
                Err(e) => {
                    tracing::warn!(error = %e, "ticket ledger refused a redemption");
                    return Err(ServerError::Internal {
                        message:
                            "the server cannot record single-use tickets right now; try again later"
                                .into(),
                    });
                }
            }
        }
        Ok(opened.payload)
    }
}

/// Refuses input requests the client's capabilities do not cover (-32021), naming all of them.
fn check_capabilities(
    requests: &IndexMap<String, Pending>,
    caps: &ClientCapabilities,
) -> Result<(), ServerError> {
    let mut required = ClientCapabilities::default();
    let mut first: Option<(&str, &'static str)> = None;
    for (key, pending) in requests {
        let missing = match pending {
            Pending::Form(_) if !caps.supports_form_elicitation() => {
                required
                    .elicitation
                    .get_or_insert_with(ElicitationCapability::default)
                    .form = Some(JsonObject::new());
                true
            }
            Pending::Url { .. } if !caps.supports_url_elicitation() => {
                required
                    .elicitation
                    .get_or_insert_with(ElicitationCapability::default)
                    .url = Some(JsonObject::new());
                true
            }
            Pending::Sample(_) if !caps.supports_sampling() => {
                required.sampling = Some(Default::default());
                true
            }
            Pending::Roots if !caps.supports_roots() => {
                required.roots = Some(JsonObject::new());
                true
            }
            _ => false,
        };
        if missing && first.is_none() {
            first = Some((key, pending.method()));
        }
    }
    match first {
        None => Ok(()),
        Some((key, method)) => Err(ServerError::MissingCapability {
            key: key.to_owned(),
            method,
            required: Box::new(required),
        }),
    }
}

fn cursor(params: Option<&Value>) -> Result<Option<&str>, ServerError> {
    match params.and_then(|p| p.get("cursor")) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(ServerError::invalid_params(
            "Invalid cursor: must be a string",
        )),
    }
}

fn required_str<'a>(
    params: Option<&'a Value>,
    key: &str,
    method: &str,
) -> Result<&'a str, ServerError> {
    match params.and_then(|p| p.get(key)) {
        Some(Value::String(s)) => Ok(s),
        Some(_) => Err(ServerError::invalid_params(format!(
            "Invalid {method} request: params.{key} must be a string"
        ))),
        None => Err(ServerError::invalid_params(format!(
            "Invalid {method} request: params.{key} is required"
        ))),
    }
}

#[allow(dead_code)]
fn _assert_send_sync() {
    fn is<T: Send + Sync>() {}
    is::<McpServer>();
    is::<Arc<dyn TicketLedger>>();
}

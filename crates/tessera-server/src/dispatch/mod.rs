//! Dispatching one JSON-RPC request: envelope, method table, and the result on its way out.
//!
//! - [`handled`]: the response type, serialised once;
//! - [`lists`]: list methods, capabilities, completion;
//! - [`listen`]: `subscriptions/listen` streams;
//! - [`round_trip`]: tools, prompts and resources through the multi round-trip engine;
//! - [`tasks`]: calls that go on as tasks, and the `tasks/*` methods;
//! - [`ticket`]: what a ticket carries, and opening one;
//! - [`skills`]: `skills/list`, `skills/get`, `resources/directory/read`;
//! - [`capability_check`]: asking only what the client can answer;
//! - [`find_resource`]: which resource a URI names, for reads and subscriptions.

mod capability_check;
mod find_resource;
mod handled;
mod listen;
pub use listen::MAX_LISTENED_TASKS;
mod lists;
mod resolve;
mod round_trip;
mod skills;
mod tasks;
pub use tasks::MAX_ANNOUNCED_TASK_BYTES;
mod ticket;

pub(crate) use capability_check::check_capabilities;
pub use handled::Handled;
pub(crate) use handled::Json;
pub use resolve::Resolved;

use serde_json::{Value, json};
use tessera_protocol::{
    DiscoverResult, JsonRpcRequest, RequestId, SERVER_INFO_KEY, STATELESS_PROTOCOL_VERSIONS,
};

use crate::{McpServer, RequestFacts, ServerError};
pub(crate) use handled::serialisation_failed;

pub(crate) use crate::incoming::Incoming;

impl McpServer {
    /// Serves one request read by the [intake](crate::intake) and returns its
    /// response: the one entry every transport uses. A 2026-07-28 request's
    /// envelope is read here unless the transport read it already
    /// ([`Request::read_envelope`](crate::intake::Request::read_envelope)).
    pub async fn serve(&self, request: crate::intake::Request, facts: RequestFacts) -> Handled {
        let resolved = self.resolve(&request, &facts);
        self.serve_resolved(request, facts, resolved).await
    }

    /// [`serve`](McpServer::serve) for a request [resolved](McpServer::resolve)
    /// already: what it names is not looked up again. An initialize-era
    /// request goes through the era edge ([`crate::legacy`]); dispatch
    /// itself speaks 2026-07-28 only.
    pub async fn serve_resolved(
        &self,
        request: crate::intake::Request,
        facts: RequestFacts,
        resolved: Resolved,
    ) -> Handled {
        if facts.era.is_legacy() {
            return self.serve_initialize_era(request, facts, resolved).await;
        }
        let (id, out) = self.dispatch(request, facts, resolved, false).await;
        self.handled(id, out)
    }

    /// Dispatches a 2026-07-28 request: its envelope, the middleware, the
    /// method table. With `keep_rounds`, a round that asks comes back
    /// unsealed and a result as a value, for the era edge to reshape.
    pub(crate) async fn dispatch(
        &self,
        mut request: crate::intake::Request,
        facts: RequestFacts,
        resolved: Resolved,
        keep_rounds: bool,
    ) -> (RequestId, Result<Json, ServerError>) {
        let meta = request.modern_meta();
        let crate::intake::Request {
            id, method, params, ..
        } = request;
        let out = match meta {
            Ok(meta) => {
                let incoming = Incoming {
                    id: id.clone(),
                    meta,
                    facts,
                    keep_rounds,
                };
                if self.middleware.is_empty() {
                    self.route(&method, Some(Value::Object(params)), incoming, resolved)
                        .await
                } else {
                    self.through_middleware(method, params, incoming, resolved)
                        .await
                }
            }
            Err(e) => Err(e),
        };
        (id, out)
    }

    /// The request through the middleware chain, then the method table.
    async fn through_middleware(
        &self,
        method: String,
        params: tessera_protocol::JsonObject,
        incoming: Incoming,
        resolved: Resolved,
    ) -> Result<Json, ServerError> {
        let target = ["name", "uri", "taskId"]
            .iter()
            .find_map(|k| params.get(*k).and_then(Value::as_str))
            .map(str::to_owned);
        let offered = if method == "tools/call" {
            resolved.tool().is_some()
        } else {
            self.serves_method(&method)
        };
        let request = crate::middleware::McpRequest {
            method,
            target,
            offered,
            principal: incoming.facts.principal.clone(),
            caller: incoming.facts.caller_key(),
            auth: incoming.facts.auth.clone(),
            params: Value::Object(params),
            runtime: crate::middleware::Runtime(incoming.facts.tasks.clone()),
        };
        let end = Box::new(|| {
            Box::pin(self.route(
                &request.method,
                Some(request.params.clone()),
                incoming,
                resolved,
            )) as tessera_protocol::BoxFuture<'_, Result<Json, ServerError>>
        });
        crate::middleware::Next::new(&self.middleware, &request, end)
            .run()
            .await
            .map(|served| served.0)
    }

    /// [`serve`](McpServer::serve) for a request built in code (tests, bridges).
    pub async fn handle(&self, request: JsonRpcRequest<Value>, facts: RequestFacts) -> Handled {
        let JsonRpcRequest {
            id, method, params, ..
        } = request;
        self.serve(crate::intake::Request::new(id, method, params), facts)
            .await
    }

    /// The response to request `id`: serialised, with `serverInfo` in the result's `_meta`.
    fn handled(&self, id: RequestId, out: Result<Json, ServerError>) -> Handled {
        let result = out.and_then(|json| match json {
            Json::Raw(raw) => Ok(raw),
            Json::Value(mut value) => {
                if let Some(o) = value.as_object_mut() {
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
            // Only the era edge asks for rounds kept; it never hands them here.
            Json::Kept(round) => Err(ServerError::Internal {
                message: format!(
                    "{} {}: a kept round reached the wire",
                    round.kind, round.target
                ),
            }),
        });
        Handled { id, result }
    }

    /// Whether `method` is one [`route`](Self::route) serves: a method of the
    /// protocol or one registered with the builder's `.method(..)`.
    fn serves_method(&self, method: &str) -> bool {
        crate::protocol_methods::PROTOCOL_METHODS.contains(&method)
            || self.methods.contains_key(method)
    }

    /// The method table of 2026-07-28.
    async fn route(
        &self,
        method: &str,
        params: Option<Value>,
        incoming: Incoming,
        resolved: Resolved,
    ) -> Result<Json, ServerError> {
        let value = Json::Value;
        let offered = std::sync::Arc::clone(&resolved.0.catalog);
        match method {
            "server/discover" => Ok(value(json!(DiscoverResult {
                // The versions actually served, oldest first.
                supported_versions: incoming
                    .facts
                    .serves_initialize_era
                    .then_some(tessera_protocol::LEGACY_PROTOCOL_VERSIONS)
                    .into_iter()
                    .flat_map(|v| v.iter().rev())
                    .chain(STATELESS_PROTOCOL_VERSIONS)
                    .map(|v| (*v).to_owned())
                    .collect(),
                capabilities: self.capabilities_of(&offered),
                instructions: self.instructions.clone(),
                ttl_ms: self.discover_cache.ttl_ms,
                cache_scope: self.discover_cache.scope,
                ..DiscoverResult::default()
            }))),
            tessera_protocol::SUBSCRIPTIONS_LISTEN => self.listen(params, incoming).await,
            "tools/list" => self
                .list_tools(&offered, params.as_ref(), &incoming.facts)
                .map(value),
            "tools/call" => self.call_tool(params, incoming, resolved).await,
            "prompts/list" if !offered.prompts.is_empty() => self
                .list_prompts(&offered, params.as_ref(), &incoming.facts)
                .map(value),
            "prompts/get" if !offered.prompts.is_empty() => {
                self.get_prompt(params, incoming, resolved).await
            }
            "resources/list" if offered.has_resources() => self
                .list_resources(&offered, params.as_ref(), &incoming.facts)
                .map(value),
            "resources/templates/list" if offered.has_resources() => self
                .list_templates(&offered, params.as_ref(), &incoming.facts)
                .map(value),
            "resources/read" if offered.has_resources() => {
                self.read_resource(params, incoming, resolved).await
            }
            tessera_protocol::TASKS_GET
            | tessera_protocol::TASKS_UPDATE
            | tessera_protocol::TASKS_CANCEL => self.task_method(method, params, &incoming).await,
            tessera_protocol::SKILLS_LIST
            | tessera_protocol::SKILLS_GET
            | tessera_protocol::RESOURCES_DIRECTORY_READ
                if self.skills.is_some() =>
            {
                self.skill_method(method, params.as_ref(), &offered, &incoming.facts)
                    .map(value)
            }
            "completion/complete" if offered.completes() => {
                self.complete(&offered, params, incoming).await.map(value)
            }
            other => self.call_method(other, params, incoming).await.map(value),
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

fn required_str<'a>(
    params: Option<&'a Value>,
    key: &str,
    method: &str,
) -> Result<&'a str, ServerError> {
    match params.and_then(|p| p.get(key)) {
        Some(Value::String(s)) if s.chars().any(char::is_control) => {
            Err(ServerError::invalid_params(format!(
                "Invalid {method} request: params.{key} contains control characters"
            )))
        }
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
    is::<std::sync::Arc<dyn tessera_state::TicketLedger>>();
    is::<crate::Context>();
}

//! The list methods, discovery's capabilities, and completion.

use indexmap::IndexMap;
use serde_json::{Value, json};
use tessera_protocol::{
    CompleteRequestParams, CompleteResult, Completion, CompletionReference, JsonObject,
    ListChangedCapability, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, ResourcesCapability, ServerCapabilities,
};

use super::Incoming;
use crate::handler_error::Kind;
use crate::pagination::{offset_of, page};
use crate::{Context, HandlerError, McpServer, PartialArgument, ServerError};

impl McpServer {
    pub(super) fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    /// Whether any prompt argument or template variable has a completion handler.
    pub(super) fn completes(&self) -> bool {
        self.prompts.values().any(|p| !p.completers.is_empty())
            || self.templates.iter().any(|t| !t.completers.is_empty())
    }

    /// What `server/discover` (and `initialize`) report, derived from the registrations.
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        ServerCapabilities {
            // `subscriptions/listen` delivers each of these (dispatch/listen.rs).
            tools: (!self.tools.is_empty()).then_some(ListChangedCapability {
                list_changed: Some(true),
            }),
            prompts: (!self.prompts.is_empty()).then_some(ListChangedCapability {
                list_changed: Some(true),
            }),
            resources: self.has_resources().then_some(ResourcesCapability {
                list_changed: Some(true),
                subscribe: Some(true),
            }),
            completions: self.completes().then(JsonObject::new),
            extensions: self.tasks.as_ref().map(|_| {
                let mut extensions = JsonObject::new();
                extensions.insert(tessera_protocol::TASKS_EXTENSION.into(), json!({}));
                extensions
            }),
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

    pub(super) fn list_tools(&self, params: Option<&Value>) -> Result<Value, ServerError> {
        let (tools, next_cursor) = self.page_of(params, self.tools.values().map(|t| &t.tool))?;
        Ok(json!(ListToolsResult {
            tools,
            next_cursor,
            ttl_ms: self.list_cache.ttl_ms,
            cache_scope: self.list_cache.scope,
            ..ListToolsResult::default()
        }))
    }

    pub(super) fn list_prompts(&self, params: Option<&Value>) -> Result<Value, ServerError> {
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

    pub(super) fn list_resources(&self, params: Option<&Value>) -> Result<Value, ServerError> {
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

    pub(super) fn list_templates(&self, params: Option<&Value>) -> Result<Value, ServerError> {
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

    /// `completion/complete`: the handler of the prompt argument or template
    /// variable named, with the request's context and the arguments filled so far.
    pub(super) async fn complete(
        &self,
        params: Option<Value>,
        incoming: Incoming,
    ) -> Result<Value, ServerError> {
        let params: CompleteRequestParams = serde_json::from_value(params.unwrap_or(Value::Null))
            .map_err(|e| {
            ServerError::invalid_params(format!("Invalid completion/complete params: {e}"))
        })?;
        let argument = params.argument.name;
        let (target, declared, completers) = match &params.reference {
            CompletionReference::Prompt { name, .. } => {
                let prompt = self.prompts.get(name).ok_or_else(|| {
                    ServerError::invalid_params(format!("Prompt {name} not found"))
                })?;
                self.check_scopes(&incoming, &prompt.scopes, || format!("prompt {name}"))?;
                (name, prompt.declares(&argument), &prompt.completers)
            }
            CompletionReference::Resource { uri } => {
                let template = self
                    .templates
                    .iter()
                    .find(|t| &t.template.uri_template == uri)
                    .ok_or_else(|| {
                        ServerError::invalid_params(format!("Resource template {uri} not found"))
                    })?;
                self.check_scopes(&incoming, &template.scopes, || {
                    format!("resource template {uri}")
                })?;
                (uri, template.declares(&argument), &template.completers)
            }
        };
        if !declared {
            return Err(ServerError::invalid_params(format!(
                "{target} has no argument named {argument:?}"
            )));
        }
        // A declared argument without a handler has nothing to suggest.
        let mut completion = match completers.get(&argument) {
            None => Completion::default(),
            Some(completer) => {
                let ctx = Context::new(
                    incoming,
                    target,
                    &self.app_state,
                    IndexMap::new(),
                    IndexMap::new(),
                    None,
                    crate::context::TaskMode::Synchronous,
                );
                let partial = PartialArgument {
                    name: argument,
                    value: params.argument.value,
                    filled: params.context.and_then(|c| c.arguments).unwrap_or_default(),
                };
                (completer.0)(ctx, partial)
                    .await
                    .map_err(|e| completion_failed(target, e))?
            }
        };
        if completion.values.len() > 100 {
            completion.values.truncate(100);
            completion.has_more = Some(true);
        }
        Ok(json!(CompleteResult {
            completion,
            ..CompleteResult::default()
        }))
    }
}

/// A completion handler's error: not found and invalid params keep their
/// codes; asking for input is not possible in a completion.
fn completion_failed(target: &str, error: HandlerError) -> ServerError {
    match error.0 {
        Kind::NotFound => ServerError::invalid_params(format!("{target}: not found")),
        Kind::InvalidParams(message) => ServerError::InvalidParams { message },
        Kind::Interrupt(i) => ServerError::Internal {
            message: format!("the completion handler of {target} cannot ask for input ({i})"),
        },
        Kind::Failed(e) => ServerError::Internal {
            message: format!("the completion handler of {target} failed: {e}"),
        },
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

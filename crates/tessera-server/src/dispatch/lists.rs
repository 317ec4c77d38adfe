//! The list methods, discovery's capabilities, and completion.

use indexmap::IndexMap;
use serde_json::{Value, json};
use tessera_protocol::{
    CompleteRequestParams, CompleteResult, Completion, CompletionReference, JsonObject,
    ListChangedCapability, ListPromptsResult, ListResourceTemplatesResult, ListResourcesResult,
    ListToolsResult, ResourcesCapability, ServerCapabilities,
};

use super::Incoming;
use crate::catalog::Catalog;
use crate::pagination::{offset_of, page};
use crate::{Context, McpServer, Offered, PartialArgument, RequestFacts, ServerError};

impl McpServer {
    /// What `server/discover` (and `initialize`) report, derived from the registrations.
    pub(crate) fn capabilities(&self) -> ServerCapabilities {
        self.capabilities_of(&self.catalog())
    }

    /// [`capabilities`](Self::capabilities) of what `catalog` offers.
    pub(crate) fn capabilities_of(&self, catalog: &Catalog) -> ServerCapabilities {
        ServerCapabilities {
            // `subscriptions/listen` delivers each of these (dispatch/listen.rs).
            tools: (!catalog.tools.is_empty()).then_some(ListChangedCapability {
                list_changed: Some(true),
            }),
            prompts: (!catalog.prompts.is_empty()).then_some(ListChangedCapability {
                list_changed: Some(true),
            }),
            resources: catalog.has_resources().then_some(ResourcesCapability {
                list_changed: Some(true),
                subscribe: Some(true),
            }),
            completions: catalog.completes().then(JsonObject::new),
            extensions: {
                let mut extensions = self.extensions.clone();
                if self.tasks.is_some() {
                    extensions.insert(tessera_protocol::TASKS_EXTENSION.into(), json!({}));
                }
                if self.skills.is_some() {
                    extensions.insert(
                        tessera_protocol::SKILLS_EXTENSION.into(),
                        json!({ "directoryRead": true }),
                    );
                }
                (!extensions.is_empty()).then_some(extensions)
            },
            logging: Some(JsonObject::new()),
            ..ServerCapabilities::default()
        }
    }

    /// The page of `items` the request's cursor names, and the next cursor.
    pub(super) fn page_of<'a, T: Clone + 'a>(
        &self,
        params: Option<&Value>,
        items: impl ExactSizeIterator<Item = &'a T>,
    ) -> Result<(Vec<T>, Option<String>), ServerError> {
        let len = items.len();
        let offset = offset_of(cursor(params)?, len)?;
        Ok(page(items.cloned(), offset, self.page_size, len))
    }

    pub(super) fn list_tools(
        &self,
        catalog: &Catalog,
        params: Option<&Value>,
        facts: &RequestFacts,
    ) -> Result<Value, ServerError> {
        let (tools, next_cursor) = self.page_of(
            params,
            shown(
                catalog.tools.values(),
                |t| self.shows(facts, Offered::Tool(t)),
                |t| &t.tool,
            ),
        )?;
        Ok(json!(ListToolsResult {
            tools,
            next_cursor,
            ttl_ms: self.list_cache.ttl_ms,
            cache_scope: self.list_cache.scope,
            ..ListToolsResult::default()
        }))
    }

    pub(super) fn list_prompts(
        &self,
        catalog: &Catalog,
        params: Option<&Value>,
        facts: &RequestFacts,
    ) -> Result<Value, ServerError> {
        let (prompts, next_cursor) = self.page_of(
            params,
            shown(
                catalog.prompts.values(),
                |p| self.shows(facts, Offered::Prompt(p)),
                |p| &p.prompt,
            ),
        )?;
        Ok(json!(ListPromptsResult {
            prompts,
            next_cursor,
            ttl_ms: self.list_cache.ttl_ms,
            cache_scope: self.list_cache.scope,
            ..ListPromptsResult::default()
        }))
    }

    pub(super) fn list_resources(
        &self,
        catalog: &Catalog,
        params: Option<&Value>,
        facts: &RequestFacts,
    ) -> Result<Value, ServerError> {
        let (resources, next_cursor) = self.page_of(
            params,
            shown(
                catalog.resources.values(),
                |r| self.shows(facts, Offered::Resource(r)),
                |r| &r.resource,
            ),
        )?;
        Ok(json!(ListResourcesResult {
            resources,
            next_cursor,
            ttl_ms: self.list_cache.ttl_ms,
            cache_scope: self.list_cache.scope,
            ..ListResourcesResult::default()
        }))
    }

    pub(super) fn list_templates(
        &self,
        catalog: &Catalog,
        params: Option<&Value>,
        facts: &RequestFacts,
    ) -> Result<Value, ServerError> {
        let (resource_templates, next_cursor) = self.page_of(
            params,
            shown(
                catalog.templates.iter(),
                |t| self.shows(facts, Offered::Template(t)),
                |t| &t.template,
            ),
        )?;
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
        catalog: &Catalog,
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
                let prompt = catalog
                    .prompts
                    .get(name)
                    .filter(|p| self.shows(&incoming.facts, Offered::Prompt(p)))
                    .ok_or_else(|| {
                        ServerError::invalid_params(format!("Prompt {name} not found"))
                    })?;
                self.check_scopes(&incoming.facts, &prompt.scopes, || format!("prompt {name}"))?;
                (name, prompt.declares(&argument), &prompt.completers)
            }
            CompletionReference::Resource { uri } => {
                let template = catalog
                    .templates
                    .iter()
                    .find(|t| {
                        &t.template.uri_template == uri
                            && self.shows(&incoming.facts, Offered::Template(t))
                    })
                    .ok_or_else(|| {
                        ServerError::invalid_params(format!("Resource template {uri} not found"))
                    })?;
                self.check_scopes(&incoming.facts, &template.scopes, || {
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
                (completer.0)(ctx, partial).await.map_err(|e| {
                    e.into_request_error(target, &format!("the completion handler of {target}"))
                })?
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

/// The definitions of the `items` the caller is shown, in order.
fn shown<'a, D: 'a, T>(
    items: impl Iterator<Item = &'a std::sync::Arc<D>>,
    shows: impl Fn(&D) -> bool,
    definition: impl Fn(&'a D) -> &'a T,
) -> std::vec::IntoIter<&'a T> {
    items
        .filter(|d| shows(d))
        .map(|d| definition(d))
        .collect::<Vec<_>>()
        .into_iter()
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

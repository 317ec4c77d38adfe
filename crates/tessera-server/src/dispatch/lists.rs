//! The list methods, discovery's capabilities, and completion.

use serde_json::{Value, json};
use tessera_protocol::{
    CompleteRequestParams, CompleteResult, JsonObject, ListChangedCapability, ListPromptsResult,
    ListResourceTemplatesResult, ListResourcesResult, ListToolsResult, ResourcesCapability,
    ServerCapabilities,
};

use crate::pagination::{offset_of, page};
use crate::{McpServer, ServerError};

impl McpServer {
    pub(super) fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
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

    pub(super) async fn complete(&self, params: Option<&Value>) -> Result<Value, ServerError> {
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

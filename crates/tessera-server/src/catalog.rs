//! What the server offers: its tools, prompts, resources and resource
//! templates, checked when registered, and changed while serving.
//!
//! The server keeps the current [`Catalog`] behind a lock as an `Arc`: a
//! request takes the `Arc` once and serves from it to the end, so a change
//! never shows half-made to a request in flight. A change copies the
//! catalog's index (each definition is itself an `Arc`, not copied), swaps
//! it in, and tells listeners through the change bus — on every instance,
//! when the bus is shared.

use std::sync::{Arc, PoisonError, RwLock};

use indexmap::IndexMap;

use crate::app_state::{AppState, NeededState};
use crate::tool::is_valid_tool_name;
use crate::{
    BuildError, BusError, Change, McpServer, PromptDef, ResourceDef, ResourceTemplateDef,
    TaskSupport, ToolDef,
};

/// One version of what the server offers, in registration order.
#[derive(Default, Clone)]
pub(crate) struct Catalog {
    pub(crate) tools: IndexMap<String, Arc<ToolDef>>,
    pub(crate) prompts: IndexMap<String, Arc<PromptDef>>,
    pub(crate) resources: IndexMap<String, Arc<ResourceDef>>,
    pub(crate) templates: Vec<Arc<ResourceTemplateDef>>,
}

impl Catalog {
    pub(crate) fn has_resources(&self) -> bool {
        !self.resources.is_empty() || !self.templates.is_empty()
    }

    /// Whether any prompt argument or template variable has a completion handler.
    pub(crate) fn completes(&self) -> bool {
        self.prompts.values().any(|p| !p.completers.is_empty())
            || self.templates.iter().any(|t| !t.completers.is_empty())
    }
}

#[cfg(test)]
thread_local! {
    /// Snapshots taken on this thread (tests count them per request).
    pub(crate) static READS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// The catalog being served, and the rules every registration passes.
pub(crate) struct Registry {
    current: RwLock<Arc<Catalog>>,
    /// Every tool single-use ([`McpServerBuilder::single_use_tickets`](crate::McpServerBuilder::single_use_tickets)).
    all_single_use: bool,
    /// Scopes every tool requires besides its own.
    required_scopes: Vec<String>,
}

impl Registry {
    /// An empty registry with these rules.
    pub(crate) fn new(all_single_use: bool, required_scopes: Vec<String>) -> Self {
        Self {
            current: RwLock::default(),
            all_single_use,
            required_scopes,
        }
    }

    /// The registry serving `catalog` (its entries admitted already).
    pub(crate) fn serving(mut self, catalog: Catalog) -> Self {
        self.current = RwLock::new(Arc::new(catalog));
        self
    }

    /// The catalog as it is now.
    pub(crate) fn current(&self) -> Arc<Catalog> {
        #[cfg(test)]
        READS.with(|reads| reads.set(reads.get() + 1));
        Arc::clone(&self.current.read().unwrap_or_else(PoisonError::into_inner))
    }

    /// Applies `change` to a copy of the catalog and serves the copy; the
    /// catalog stays as it was when `change` refuses.
    fn change<T>(
        &self,
        change: impl FnOnce(&mut Catalog) -> Result<T, CatalogError>,
    ) -> Result<T, CatalogError> {
        let mut current = self.current.write().unwrap_or_else(PoisonError::into_inner);
        let mut next = Catalog::clone(&current);
        let out = change(&mut next)?;
        *current = Arc::new(next);
        Ok(out)
    }

    /// A tool as the server serves it: the server-wide rules applied, its
    /// name and schemas checked, its schemas compiled.
    pub(crate) fn admit_tool(
        &self,
        mut tool: ToolDef,
        state: &AppState,
    ) -> Result<ToolDef, BuildError> {
        let name = tool.tool.name.clone();
        tool.single_use |= self.all_single_use;
        for scope in &self.required_scopes {
            if !tool.scopes.contains(scope) {
                tool.scopes.push(scope.clone());
            }
        }
        check_icons("tool", &name, tool.tool.icons.as_deref())?;
        check_meta("tool", &name, tool.tool.meta.as_ref())?;
        if !is_valid_tool_name(&name) {
            return Err(BuildError(format!(
                "tool name {name:?} is invalid: use 1 to 128 characters of A-Z, a-z, 0-9, '_', '-' and '.'"
            )));
        }
        check_needs(state, "tool", &name, &tool.needs)?;
        if let Some(problem) = tool.problems.first() {
            return Err(BuildError(format!(
                "tool {name:?} asks for a form it cannot show: {problem}"
            )));
        }
        if tool.tool.input_schema.get("type").and_then(|t| t.as_str()) != Some("object") {
            return Err(BuildError(format!(
                "tool {name:?}: inputSchema must have type \"object\""
            )));
        }
        if let Some(output) = &tool.tool.output_schema {
            if output.get("type").and_then(|t| t.as_str()) != Some("object") {
                return Err(BuildError(format!(
                    "tool {name:?}: outputSchema must have type \"object\""
                )));
            }
            let check = tessera_protocol::SchemaValidator::new(output).map_err(|e| {
                BuildError(format!(
                    "tool {name:?}: its outputSchema cannot be checked: {e}"
                ))
            })?;
            tool.output_check = Some(check);
        }
        // The spec's tools page: servers MUST validate all tool inputs.
        let input =
            tessera_protocol::SchemaValidator::new(&tool.tool.input_schema).map_err(|e| {
                BuildError(format!(
                    "tool {name:?}: its inputSchema cannot be checked: {e}"
                ))
            })?;
        tool.input_check = Some(input);
        // Clients drop a tool whose x-mcp-header annotations are invalid: refuse to publish one.
        let schema = serde_json::Value::Object(tool.tool.input_schema.clone());
        tool.param_headers = tessera_protocol::param_headers(&schema)
            .map_err(|e| BuildError(format!("tool {name:?}: {e}")))?;
        Ok(tool)
    }
}

/// A prompt's icons, application state and completions checked.
pub(crate) fn admit_prompt(prompt: &PromptDef, state: &AppState) -> Result<(), BuildError> {
    let name = &prompt.prompt.name;
    check_icons("prompt", name, prompt.prompt.icons.as_deref())?;
    check_meta("prompt", name, prompt.prompt.meta.as_ref())?;
    check_needs(state, "prompt", name, &prompt.needs)?;
    if let Some(argument) = prompt.completers.keys().find(|a| !prompt.declares(a)) {
        return Err(BuildError(format!(
            "prompt {name:?} completes the argument {argument:?}, which it does not declare"
        )));
    }
    Ok(())
}

/// A resource's icons and application state checked.
pub(crate) fn admit_resource(resource: &ResourceDef, state: &AppState) -> Result<(), BuildError> {
    let uri = &resource.resource.uri;
    check_icons("resource", uri, resource.resource.icons.as_deref())?;
    check_meta("resource", uri, resource.resource.meta.as_ref())?;
    check_needs(state, "resource", uri, &resource.needs)
}

/// A resource template's icons, application state and completions checked.
pub(crate) fn admit_template(
    template: &ResourceTemplateDef,
    state: &AppState,
) -> Result<(), BuildError> {
    let uri = &template.template.uri_template;
    if let Err(e) = &template.parsed {
        return Err(BuildError(format!("resource template {uri:?}: {e}")));
    }
    check_icons("resource template", uri, template.template.icons.as_deref())?;
    check_meta("resource template", uri, template.template.meta.as_ref())?;
    check_needs(state, "resource template", uri, &template.needs)?;
    if let Some(variable) = template.completers.keys().find(|v| !template.declares(v)) {
        return Err(BuildError(format!(
            "resource template {uri:?} completes the variable {variable:?}, which it does not have"
        )));
    }
    Ok(())
}

/// Why the catalog did not change, or why listeners were not told it did.
#[derive(Debug, thiserror::Error)]
pub enum CatalogError {
    /// The definition was refused; nothing changed.
    #[error(transparent)]
    Refused(#[from] BuildError),
    /// The catalog changed, but the change bus failed, so listeners (here or
    /// on other instances) were not told.
    #[error("the catalog changed, but listeners were not told: {0}")]
    NotTold(#[from] BusError),
}

/// Changing what the server offers while it serves. Each change applies to
/// requests that start after it, and sends the matching list-changed
/// notification to `subscriptions/listen` streams (and initialize-era
/// sessions) through the server's [change bus](crate::McpServerBuilder::change_bus).
///
/// A change applies to this instance; behind a load balancer, each instance
/// makes it (from the same configuration, say), while a shared bus tells
/// every listener at once.
///
/// ```
/// use tessera_server::{Context, McpServer, ToolDef};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let server = McpServer::builder("demo", "1.0.0").build().unwrap();
/// server.add_tool(ToolDef::new("ping", |_: Context, _: ()| async { "pong" })).await.unwrap();
/// assert!(server.tool("ping").is_some());
/// assert!(server.remove_tool("ping").await.unwrap());
/// assert!(server.tool("ping").is_none());
/// # });
/// ```
impl McpServer {
    /// Adds `tool`, checked as the builder checks it; refused when a tool of
    /// that name is registered already.
    pub async fn add_tool(&self, tool: ToolDef) -> Result<(), CatalogError> {
        let tool = self.registry.admit_tool(tool, &self.app_state)?;
        let name = tool.tool.name.clone();
        if tool.single_use && self.ledger.is_none() {
            return Err(BuildError(format!(
                "tool {name:?} is single-use, but the server was built without a requestState \
                 codec and ticket ledger (McpServerBuilder::request_state, ::ticket_ledger)"
            ))
            .into());
        }
        if tool.task_support != TaskSupport::Forbidden && self.tasks.is_none() {
            return Err(BuildError(format!(
                "tool {name:?} may run as a task, but the server was built without a task store \
                 (McpServerBuilder::task_store)"
            ))
            .into());
        }
        self.registry.change(|catalog| {
            if catalog.tools.contains_key(&name) {
                return Err(BuildError(format!(
                    "tool {name:?} is registered already: remove it first"
                ))
                .into());
            }
            catalog.tools.insert(name, Arc::new(tool));
            Ok(())
        })?;
        self.tell(Change::ToolsListChanged).await
    }

    /// Removes the tool named `name`; `false` when there was none. Tickets
    /// issued for its calls no longer open a call.
    pub async fn remove_tool(&self, name: &str) -> Result<bool, CatalogError> {
        let removed = self
            .registry
            .change(|catalog| Ok(catalog.tools.shift_remove(name).is_some()))?;
        if removed {
            self.tell(Change::ToolsListChanged).await?;
        }
        Ok(removed)
    }

    /// Adds `prompt`; refused when a prompt of that name is registered already.
    pub async fn add_prompt(&self, prompt: PromptDef) -> Result<(), CatalogError> {
        admit_prompt(&prompt, &self.app_state)?;
        self.registry.change(|catalog| {
            let name = prompt.prompt.name.clone();
            if catalog.prompts.contains_key(&name) {
                return Err(BuildError(format!(
                    "prompt {name:?} is registered already: remove it first"
                ))
                .into());
            }
            catalog.prompts.insert(name, Arc::new(prompt));
            Ok(())
        })?;
        self.tell(Change::PromptsListChanged).await
    }

    /// Removes the prompt named `name`; `false` when there was none.
    pub async fn remove_prompt(&self, name: &str) -> Result<bool, CatalogError> {
        let removed = self
            .registry
            .change(|catalog| Ok(catalog.prompts.shift_remove(name).is_some()))?;
        if removed {
            self.tell(Change::PromptsListChanged).await?;
        }
        Ok(removed)
    }

    /// Adds `resource`; refused when a resource with that URI is registered already.
    pub async fn add_resource(&self, resource: ResourceDef) -> Result<(), CatalogError> {
        admit_resource(&resource, &self.app_state)?;
        self.registry.change(|catalog| {
            let uri = resource.resource.uri.clone();
            if catalog.resources.contains_key(&uri) {
                return Err(BuildError(format!(
                    "resource {uri:?} is registered already: remove it first"
                ))
                .into());
            }
            catalog.resources.insert(uri, Arc::new(resource));
            Ok(())
        })?;
        self.tell(Change::ResourcesListChanged).await
    }

    /// Removes the resource at `uri`; `false` when there was none.
    pub async fn remove_resource(&self, uri: &str) -> Result<bool, CatalogError> {
        let removed = self
            .registry
            .change(|catalog| Ok(catalog.resources.shift_remove(uri).is_some()))?;
        if removed {
            self.tell(Change::ResourcesListChanged).await?;
        }
        Ok(removed)
    }

    /// Adds `template`; refused when one with that URI template is registered already.
    pub async fn add_resource_template(
        &self,
        template: ResourceTemplateDef,
    ) -> Result<(), CatalogError> {
        admit_template(&template, &self.app_state)?;
        self.registry.change(|catalog| {
            let uri = &template.template.uri_template;
            if catalog
                .templates
                .iter()
                .any(|t| &t.template.uri_template == uri)
            {
                return Err(BuildError(format!(
                    "resource template {uri:?} is registered already: remove it first"
                ))
                .into());
            }
            catalog.templates.push(Arc::new(template));
            Ok(())
        })?;
        self.tell(Change::ResourcesListChanged).await
    }

    /// Removes the resource template `uri_template`; `false` when there was none.
    pub async fn remove_resource_template(&self, uri_template: &str) -> Result<bool, CatalogError> {
        let removed = self.registry.change(|catalog| {
            let before = catalog.templates.len();
            catalog
                .templates
                .retain(|t| t.template.uri_template != uri_template);
            Ok(catalog.templates.len() != before)
        })?;
        if removed {
            self.tell(Change::ResourcesListChanged).await?;
        }
        Ok(removed)
    }

    /// Tells listeners what changed.
    async fn tell(&self, change: Change) -> Result<(), CatalogError> {
        self.bus
            .publish(change)
            .await
            .map_err(CatalogError::NotTold)
    }
}

/// Refuses a handler whose application state was not given.
fn check_needs(
    state: &AppState,
    kind: &str,
    name: &str,
    needs: &[NeededState],
) -> Result<(), BuildError> {
    match needs.iter().find(|n| !state.contains(n.id)) {
        None => Ok(()),
        Some(n) => Err(BuildError(format!(
            "{kind} {name:?} needs application state of type {}: add it with McpServerBuilder::with_state",
            n.name
        ))),
    }
}

/// `_meta` keys must follow the schema's naming rules: clients may drop what does not.
fn check_meta(
    kind: &str,
    name: &str,
    meta: Option<&tessera_protocol::JsonObject>,
) -> Result<(), BuildError> {
    for key in meta.into_iter().flat_map(|m| m.keys()) {
        tessera_protocol::check_meta_key(key, false)
            .map_err(|problem| BuildError(format!("{kind} {name:?}: _meta key {problem}")))?;
    }
    Ok(())
}

/// Icons must be `https:` URLs or `data:` URIs: a client fetching any other
/// scheme (`http:`, `file:`, `javascript:`) would be unsafe, so none is published.
pub(crate) fn check_icons(
    kind: &str,
    name: &str,
    icons: Option<&[tessera_protocol::Icon]>,
) -> Result<(), BuildError> {
    for icon in icons.unwrap_or_default() {
        let scheme = icon
            .src
            .split_once(':')
            .map(|(s, _)| s.to_ascii_lowercase());
        let safe = match scheme.as_deref() {
            Some("https") => icon.src.len() > "https://".len() && icon.src[6..].starts_with("//"),
            Some("data") => true,
            _ => false,
        };
        if !safe {
            return Err(BuildError(format!(
                "{kind} {name:?}: icon {:?} must be an https: URL or a data: URI",
                icon.src
            )));
        }
    }
    Ok(())
}

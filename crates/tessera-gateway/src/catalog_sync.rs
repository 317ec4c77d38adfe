//! The gateway's catalog: every upstream's tools, prompts, resources and
//! resource templates, under the names [`crate::naming`] gives them, kept
//! current as upstreams change their lists, restart or come back.
//!
//! Each upstream has a task that lists what it offers, registers the
//! difference with the gateway's server (whose own change notifications
//! then tell the gateway's clients), and waits for the next change: a
//! list-changed notification from the upstream (through
//! `subscriptions/listen`, or an initialize-era server's own stream), a
//! reconnection, or every 30 seconds. What an unreachable upstream offered
//! stays listed; its calls get an error naming it until it is back.

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use serde_json::Value;
use tessera_client::{ClientError, ListenEvent};
use tessera_protocol::{
    CallToolResult, GetPromptResult, JsonObject, Prompt, ReadResourceResult, Resource,
    ResourceTemplate, SubscriptionFilter, Tool,
};
use tessera_server::{
    Context, HandlerError, McpServer, PromptDef, ResourceDef, ResourceTemplateDef, ToolDef,
};

use crate::Gateway;
use crate::forward::forward;
use crate::naming::offered_name;
use crate::upstream::{Upstream, UpstreamError};

/// How often an upstream's lists are read again without a notification.
const RESYNC: Duration = Duration::from_secs(30);

/// What one upstream offers, as last listed.
#[derive(Default, PartialEq)]
struct Lists {
    tools: Vec<Tool>,
    prompts: Vec<Prompt>,
    resources: Vec<Resource>,
    templates: Vec<ResourceTemplate>,
}

/// What the gateway offers for one upstream now, by the gateway's names
/// (tools and prompts) or URIs (resources and templates), with the
/// upstream's definitions they were made from.
#[derive(Default)]
struct Offered {
    tools: BTreeMap<String, Tool>,
    prompts: BTreeMap<String, Prompt>,
    resources: BTreeMap<String, Resource>,
    templates: BTreeMap<String, ResourceTemplate>,
}

/// Which upstream serves each resource URI and template (the first in the
/// configuration that offers it).
#[derive(Default)]
pub(crate) struct Owners(Mutex<HashMap<String, usize>>);

impl Owners {
    /// Whether upstream `index` serves `uri`, taking it when it is free or
    /// held by an upstream listed later.
    fn claim(&self, uri: &str, index: usize) -> bool {
        let mut owners = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        match owners.get(uri) {
            Some(&owner) if owner < index => false,
            _ => {
                owners.insert(uri.to_owned(), index);
                true
            }
        }
    }

    /// Whether upstream `index` serves `uri` now.
    fn owns(&self, uri: &str, index: usize) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(uri)
            == Some(&index)
    }

    /// Gives `uri` up; whether upstream `index` served it.
    fn release(&self, uri: &str, index: usize) -> bool {
        let mut owners = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let owned = owners.get(uri) == Some(&index);
        if owned {
            owners.remove(uri);
        }
        owned
    }
}

/// Keeps upstream `index`'s offer in `server`'s catalog, for as long as the
/// task runs; `first` is told once its lists were read (or could not be).
pub(crate) async fn keep_in_sync(
    gateway: Arc<Gateway>,
    index: usize,
    server: Arc<McpServer>,
    first: tokio::sync::oneshot::Sender<()>,
) {
    let upstream = Arc::clone(&gateway.upstreams[index]);
    let mut offered = Offered::default();
    let mut first = Some(first);
    let mut listening: Option<tokio::task::JoinHandle<()>> = None;
    loop {
        match list(&upstream).await {
            Ok(lists) => {
                apply(&gateway, index, &server, &mut offered, lists).await;
                if listening
                    .as_ref()
                    .is_none_or(tokio::task::JoinHandle::is_finished)
                {
                    listening = Some(tokio::spawn(listen(Arc::clone(&upstream))));
                }
            }
            Err(e) => {
                tracing::warn!(upstream = %upstream.name(), error = %e, "could not list what the upstream offers")
            }
        }
        if let Some(first) = first.take() {
            let _ = first.send(());
        }
        let _ = tokio::time::timeout(RESYNC, upstream.changed.notified()).await;
    }
}

/// Hears the upstream's list changes where it streams them, until its stream ends.
async fn listen(upstream: Arc<Upstream>) {
    let Ok(client) = upstream.client().await else {
        return;
    };
    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        prompts_list_changed: Some(true),
        resources_list_changed: Some(true),
        ..SubscriptionFilter::default()
    };
    match client.listen(filter).await {
        Ok(mut listener) => {
            while let Some(Ok(event)) = listener.next().await {
                if let ListenEvent::Notification(_) = event {
                    upstream.changed.notify_one();
                }
            }
        }
        // A stdio server of the initialize era sends its notifications on its own output.
        Err(ClientError::UnsupportedServer(_)) => {}
        Err(e) => {
            tracing::debug!(upstream = %upstream.name(), error = %e, "no change stream from the upstream")
        }
    }
}

/// Everything the upstream offers now; a list its server does not have is empty.
async fn list(upstream: &Upstream) -> Result<Lists, UpstreamError> {
    let client = upstream.client().await?;
    client.forget_cached_results();
    let failed = |e: ClientError| UpstreamError::Failed {
        upstream: upstream.name().to_owned(),
        reason: e.to_string(),
    };
    // Tools are what a gateway is for; the rest is optional.
    let tools = client.list_tools().await.map_err(failed)?;
    fn optional<T>(upstream: &Upstream, r: Result<Vec<T>, ClientError>, what: &str) -> Vec<T> {
        r.unwrap_or_else(|e| {
            tracing::debug!(upstream = %upstream.name(), error = %e, "the upstream lists no {what}");
            Vec::new()
        })
    }
    Ok(Lists {
        tools,
        prompts: optional(upstream, client.list_prompts().await, "prompts"),
        resources: optional(upstream, client.list_resources().await, "resources"),
        templates: optional(
            upstream,
            client.list_resource_templates().await,
            "resource templates",
        ),
    })
}

/// Registers the difference between what was offered and `lists`.
async fn apply(
    gateway: &Arc<Gateway>,
    index: usize,
    server: &McpServer,
    offered: &mut Offered,
    lists: Lists,
) {
    let upstream = &gateway.upstreams[index];
    let name = upstream.name();
    let owners = &gateway.owners;
    let named = |n: &str| offered_name(name, n);
    let report = |what: &str, id: &str, e: tessera_server::CatalogError| {
        tracing::warn!(upstream = %name, %what, %id, error = %e, "not offered through the gateway");
    };
    let always = |_: &str| true;

    let tools = lists.tools.into_iter().map(|t| (named(&t.name), t));
    let (gone, new) = plan(&mut offered.tools, tools.collect(), always, always);
    for key in gone {
        let _ = server.remove_tool(&key).await;
    }
    for (key, tool) in new {
        match server
            .add_tool(tool_def(gateway, upstream, &tool, key.clone()))
            .await
        {
            Ok(()) => drop(offered.tools.insert(key, tool)),
            Err(e) => report("tool", &key, e),
        }
    }

    let prompts = lists.prompts.into_iter().map(|p| (named(&p.name), p));
    let (gone, new) = plan(&mut offered.prompts, prompts.collect(), always, always);
    for key in gone {
        let _ = server.remove_prompt(&key).await;
    }
    for (key, prompt) in new {
        match server
            .add_prompt(prompt_def(gateway, upstream, &prompt, key.clone()))
            .await
        {
            Ok(()) => drop(offered.prompts.insert(key, prompt)),
            Err(e) => report("prompt", &key, e),
        }
    }

    // Resources and templates go by URI: the first upstream in the
    // configuration serves one, displacing an upstream listed later.
    let claim = |uri: &str| owners.claim(uri, index);
    let release = |uri: &str| owners.release(uri, index);
    // A URI an upstream listed earlier took over is tried again once it is free.
    offered.resources.retain(|uri, _| owners.owns(uri, index));
    offered.templates.retain(|uri, _| owners.owns(uri, index));

    let resources = lists.resources.into_iter().map(|r| (r.uri.clone(), r));
    let (gone, new) = plan(&mut offered.resources, resources.collect(), claim, release);
    for uri in gone {
        let _ = server.remove_resource(&uri).await;
    }
    for (uri, resource) in new {
        let _ = server.remove_resource(&uri).await;
        match server
            .add_resource(resource_def(gateway, upstream, &resource))
            .await
        {
            Ok(()) => drop(offered.resources.insert(uri, resource)),
            Err(e) => report("resource", &uri, e),
        }
    }

    let templates = lists
        .templates
        .into_iter()
        .map(|t| (t.uri_template.clone(), t));
    let (gone, new) = plan(&mut offered.templates, templates.collect(), claim, release);
    for uri in gone {
        let _ = server.remove_resource_template(&uri).await;
    }
    for (uri, template) in new {
        let _ = server.remove_resource_template(&uri).await;
        match (server.add_resource_template(template_def(gateway, upstream, &template))).await {
            Ok(()) => drop(offered.templates.insert(uri, template)),
            Err(e) => report("resource template", &uri, e),
        }
    }
}

/// The difference between `offered` (what the gateway offers for an
/// upstream, by key) and `now` (what the upstream lists): the keys to take
/// off the catalog (gone or changed, and `released` by this upstream), and
/// the definitions to add (new or changed, and `claim`ed by it). Keys gone
/// leave `offered` now; added ones join it once registered.
fn plan<T: PartialEq>(
    offered: &mut BTreeMap<String, T>,
    now: BTreeMap<String, T>,
    claim: impl Fn(&str) -> bool,
    release: impl Fn(&str) -> bool,
) -> (Vec<String>, Vec<(String, T)>) {
    let mut gone = Vec::new();
    for key in changed(offered, &now) {
        offered.remove(&key);
        if release(&key) {
            gone.push(key);
        }
    }
    let new = now
        .into_iter()
        .filter(|(key, _)| !offered.contains_key(key) && claim(key))
        .collect();
    (gone, new)
}

/// The keys offered before that are gone from `now`, or whose definition
/// changed (to be registered again).
fn changed<T: PartialEq>(before: &BTreeMap<String, T>, now: &BTreeMap<String, T>) -> Vec<String> {
    before
        .iter()
        .filter(|(key, def)| now.get(*key) != Some(def))
        .map(|(key, _)| key.clone())
        .collect()
}

/// The gateway's tool for `tool` of `upstream`, offered as `offered_as`.
fn tool_def(
    gateway: &Arc<Gateway>,
    upstream: &Arc<Upstream>,
    tool: &Tool,
    offered_as: String,
) -> ToolDef {
    let (gateway, upstream, original) =
        (Arc::clone(gateway), Arc::clone(upstream), tool.name.clone());
    let scopes = upstream.config.scopes.clone();
    let mut def = ToolDef::new(offered_as, move |ctx: Context, arguments: Value| {
        let (gateway, upstream, original) = (
            Arc::clone(&gateway),
            Arc::clone(&upstream),
            original.clone(),
        );
        async move {
            let mut params = JsonObject::new();
            params.insert("name".into(), Value::String(original));
            params.insert("arguments".into(), arguments);
            let result = forward(&gateway, &ctx, &upstream, "tools/call", params).await?;
            tessera_server::Result::<CallToolResult>::Ok(serde_json::from_value(result)?)
        }
    })
    .asks()
    .scopes(scopes)
    .input_schema(tool.input_schema.clone());
    if let Some(output) = &tool.output_schema {
        def = def.output_schema(output.clone());
    }
    if let Some(annotations) = &tool.annotations {
        def = def.annotations(annotations.clone());
    }
    if let Some(title) = &tool.title {
        def = def.title(title.clone());
    }
    if let Some(description) = &tool.description {
        def = def.description(description.clone());
    }
    if let Some(meta) = &tool.meta {
        def = def.meta(meta.clone());
    }
    for icon in tool.icons.iter().flatten() {
        def = def.icon(icon.clone());
    }
    def
}

/// The gateway's prompt for `prompt` of `upstream`, offered as `offered_as`.
fn prompt_def(
    gateway: &Arc<Gateway>,
    upstream: &Arc<Upstream>,
    prompt: &Prompt,
    offered_as: String,
) -> PromptDef {
    let (gateway, upstream, original) = (
        Arc::clone(gateway),
        Arc::clone(upstream),
        prompt.name.clone(),
    );
    let scopes = upstream.config.scopes.clone();
    let mut def = PromptDef::new(offered_as, move |ctx: Context, arguments: JsonObject| {
        let (gateway, upstream, original) = (
            Arc::clone(&gateway),
            Arc::clone(&upstream),
            original.clone(),
        );
        async move {
            let mut params = JsonObject::new();
            params.insert("name".into(), Value::String(original));
            params.insert("arguments".into(), Value::Object(arguments));
            let result = forward(&gateway, &ctx, &upstream, "prompts/get", params).await?;
            tessera_server::Result::<GetPromptResult>::Ok(serde_json::from_value(result)?)
        }
    })
    .asks()
    .scopes(scopes)
    .arguments(prompt.arguments.clone().unwrap_or_default());
    if let Some(title) = &prompt.title {
        def = def.title(title.clone());
    }
    if let Some(description) = &prompt.description {
        def = def.description(description.clone());
    }
    for icon in prompt.icons.iter().flatten() {
        def = def.icon(icon.clone());
    }
    def
}

/// Reads `uri` from `upstream`, its questions relayed.
async fn read(
    gateway: Arc<Gateway>,
    upstream: Arc<Upstream>,
    ctx: Context,
) -> Result<ReadResourceResult, HandlerError> {
    let mut params = JsonObject::new();
    params.insert("uri".into(), Value::String(ctx.target().to_owned()));
    let result = forward(&gateway, &ctx, &upstream, "resources/read", params).await?;
    Ok(serde_json::from_value(result)?)
}

/// The gateway's resource for `resource` of `upstream` (same URI, namespaced name).
fn resource_def(
    gateway: &Arc<Gateway>,
    upstream: &Arc<Upstream>,
    resource: &Resource,
) -> ResourceDef {
    let (gateway, upstream) = (Arc::clone(gateway), Arc::clone(upstream));
    let name = offered_name(upstream.name(), &resource.name);
    let scopes = upstream.config.scopes.clone();
    let mut def = ResourceDef::new(resource.uri.clone(), name, move |ctx: Context| {
        read(Arc::clone(&gateway), Arc::clone(&upstream), ctx)
    })
    .asks()
    .scopes(scopes);
    if let Some(mime) = &resource.mime_type {
        def = def.mime_type(mime.clone());
    }
    if let Some(title) = &resource.title {
        def = def.title(title.clone());
    }
    if let Some(description) = &resource.description {
        def = def.description(description.clone());
    }
    def
}

/// The gateway's template for `template` of `upstream` (same URI template, namespaced name).
fn template_def(
    gateway: &Arc<Gateway>,
    upstream: &Arc<Upstream>,
    template: &ResourceTemplate,
) -> ResourceTemplateDef {
    let (gateway, upstream) = (Arc::clone(gateway), Arc::clone(upstream));
    let name = offered_name(upstream.name(), &template.name);
    let scopes = upstream.config.scopes.clone();
    let mut def = ResourceTemplateDef::new(
        template.uri_template.clone(),
        name,
        move |ctx: Context, _: tessera_server::TemplateVariables| {
            read(Arc::clone(&gateway), Arc::clone(&upstream), ctx)
        },
    )
    .asks()
    .scopes(scopes);
    if let Some(mime) = &template.mime_type {
        def = def.mime_type(mime.clone());
    }
    if let Some(title) = &template.title {
        def = def.title(title.clone());
    }
    if let Some(description) = &template.description {
        def = def.description(description.clone());
    }
    def
}

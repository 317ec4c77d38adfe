//! The counter as an MCP App (the `io.modelcontextprotocol/ui` extension,
//! MCP Apps 2026-01-26): a tool whose `_meta.ui.resourceUri` names a `ui://`
//! HTML view, which a host that renders apps shows in a sandboxed frame and
//! hands the tool's result; hosts without apps show the result's text.
//!
//! - `counter-view` (model and app): the counter's value as text, and as
//!   `structuredContent` for the view;
//! - `counter-step` (app only, `visibility: ["app"]`): the view's "+1" button
//!   calls it; hosts keep it out of the model's tool list;
//! - `ui://counter/view`: the view, served as `text/html;profile=mcp-app`,
//!   with no network access asked for (an empty CSP allow-list).

use serde_json::{Value, json};
use tessera::protocol::{
    CallToolResult, JsonObject, ReadResourceResult, ResourceContents, TextResourceContents,
};
use tessera::{Arguments, BuildError, Context, McpServer, McpServerBuilder, ResourceDef};

/// The server name hosts show.
pub const SERVER_NAME: &str = "tessera-counter-app";

/// The extension's identifier.
pub const UI_EXTENSION: &str = "io.modelcontextprotocol/ui";

/// The MIME type of an MCP App's HTML view.
pub const APP_MIME_TYPE: &str = "text/html;profile=mcp-app";

/// The view's URI.
pub const VIEW_URI: &str = "ui://counter/view";

/// The view: plain HTML and script, speaking the apps' JSON-RPC over
/// `postMessage` with the host (`ui/initialize`, tool results, `tools/call`).
const VIEW_HTML: &str = include_str!("view.html");

/// The counter to show.
#[tessera::arguments]
pub struct ViewArgs {
    /// Current counter value
    current: f64,
}

/// The counter and the step.
#[tessera::arguments]
pub struct StepArgs {
    /// Current counter value
    current: f64,
    /// How much to add (default 1)
    #[serde(default = "one")]
    by: f64,
}

fn one() -> f64 {
    1.0
}

/// The result both tools answer with: text for the model and text-only
/// hosts ("Tools MUST return meaningful content array even when UI is
/// available"), the value for the view.
fn counter_result(value: f64) -> CallToolResult {
    let mut result = CallToolResult::text(format!("The counter is at {value}."));
    result.structured_content = Some(json!({ "value": value }));
    result
}

/// Shows the counter in an interactive view
#[tessera::tool(name = "counter-view")]
pub async fn counter_view(Arguments(ViewArgs { current }): Arguments<ViewArgs>) -> CallToolResult {
    counter_result(current)
}

/// Adds to the counter (called by the counter view)
#[tessera::tool(name = "counter-step")]
pub async fn counter_step(
    Arguments(StepArgs { current, by }): Arguments<StepArgs>,
) -> CallToolResult {
    counter_result(current + by)
}

/// A tool's `_meta.ui`: the view it renders in, and who may call it.
fn ui_meta(visibility: &[&str]) -> JsonObject {
    object(json!({ "ui": { "resourceUri": VIEW_URI, "visibility": visibility } }))
}

/// The view's `_meta.ui`: no external origins (the host's restrictive
/// default CSP stands), and a border around it.
fn view_meta() -> JsonObject {
    object(
        json!({ "ui": { "csp": { "connectDomains": [], "resourceDomains": [] }, "prefersBorder": true } }),
    )
}

fn object(value: Value) -> JsonObject {
    match value {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}

/// The app's tools and view on `builder` (from `tessera::launch`, or
/// [`McpServer::builder`]).
pub fn app_server_from(builder: McpServerBuilder) -> Result<McpServer, BuildError> {
    builder
        .extension(UI_EXTENSION, json!({}))
        .tool(counter_view_tool().meta(ui_meta(&["model", "app"])))
        .tool(counter_step_tool().meta(ui_meta(&["app"])))
        .resource(
            ResourceDef::new(VIEW_URI, "counter-view", |_: Context| async {
                ReadResourceResult {
                    contents: vec![ResourceContents::Text(TextResourceContents {
                        uri: VIEW_URI.to_owned(),
                        mime_type: Some(APP_MIME_TYPE.to_owned()),
                        text: VIEW_HTML.to_owned(),
                        meta: Some(view_meta()),
                    })],
                    ..ReadResourceResult::default()
                }
            })
            .title("Counter view")
            .description("The counter's interactive view (an MCP App)")
            .mime_type(APP_MIME_TYPE)
            .meta(view_meta()),
        )
        .build()
}

/// The app's server, stand-alone (tests, embedding).
pub fn app_server() -> Result<McpServer, BuildError> {
    app_server_from(McpServer::builder(SERVER_NAME, env!("CARGO_PKG_VERSION")))
}

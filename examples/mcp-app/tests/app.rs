//! The MCP App against the extension's published schema (the
//! `@modelcontextprotocol/ext-apps` package's `schema.json`) and a real host
//! tool, the MCP Inspector, which probes each tool's app.
//!
//! Quoted from the MCP Apps specification (2026-01-26): a UI resource "MUST
//! use the `ui://` URI scheme"; its contents' "`mimeType` MUST be
//! `text/html;profile=mcp-app`"; "Tools MUST return meaningful content array
//! even when UI is available".

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Map, Value, json};
use tessera::protocol::SchemaValidator;
use tessera::testing::TestClient;
use test_harness::{Listening, peers_dir};

/// One definition of the published schema, as a validator.
fn published(definition: &str) -> SchemaValidator {
    let path = peers_dir()
        .join("node_modules/@modelcontextprotocol/ext-apps/dist/src/generated/schema.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| {
        panic!(
            "{} cannot be read ({e}): run scripts/install-test-peers (scripts/test does)",
            path.display()
        )
    });
    let schema: Value = serde_json::from_str(&text).unwrap();
    let def = schema["$defs"][definition]
        .as_object()
        .unwrap_or_else(|| panic!("the published schema has no {definition}"));
    SchemaValidator::new(def).unwrap()
}

#[tokio::test]
async fn tools_and_view_follow_the_published_schema() {
    let tool_meta = published("McpUiToolMeta");
    let resource_meta = published("McpUiResourceMeta");
    // The check can fail: a resourceUri that is not a string is refused.
    assert!(tool_meta.check(&json!({"resourceUri": 7})).is_err());
    assert!(
        tool_meta
            .check(&json!({"visibility": ["everyone"]}))
            .is_err()
    );

    let client = TestClient::new(mcp_app::app_server().unwrap());
    let discover = client.request("server/discover", Map::new()).await.unwrap();
    assert_eq!(
        discover["capabilities"]["extensions"]["io.modelcontextprotocol/ui"],
        json!({})
    );
    let tools = client.list_tools().await.unwrap();
    let mut uris = Vec::new();
    for tool in &tools {
        let ui = &tool.meta.as_ref().expect("every tool of the app has _meta")["ui"];
        tool_meta
            .check(ui)
            .unwrap_or_else(|e| panic!("{}: _meta.ui {ui}: {e}", tool.name));
        uris.push(ui["resourceUri"].as_str().unwrap().to_owned());
    }
    assert_eq!(tools[0].name, "counter-view");
    assert_eq!(
        tools[1].meta.as_ref().unwrap()["ui"]["visibility"],
        json!(["app"])
    );

    let listed = client.list_resources().await.unwrap();
    assert_eq!(listed[0].uri, "ui://counter/view");
    assert_eq!(
        listed[0].mime_type.as_deref(),
        Some("text/html;profile=mcp-app")
    );
    for uri in uris {
        assert!(uri.starts_with("ui://"), "{uri}");
        let read = client.read_resource(&uri).run().await.unwrap();
        let contents = serde_json::to_value(&read.result.contents).unwrap();
        let view = &contents[0];
        assert_eq!(view["uri"], uri.as_str());
        assert_eq!(view["mimeType"], "text/html;profile=mcp-app");
        assert!(
            view["text"]
                .as_str()
                .unwrap()
                .starts_with("<!DOCTYPE html>"),
            "an HTML5 document"
        );
        resource_meta
            .check(&view["_meta"]["ui"])
            .unwrap_or_else(|e| panic!("{uri}: _meta.ui: {e}"));
    }

    let done = client
        .call("counter-view", json!({"current": 10}))
        .run()
        .await
        .unwrap();
    assert_eq!(done.text(), "The counter is at 10.");
    assert_eq!(done.result.structured_content, Some(json!({"value": 10.0})));
    let stepped = client
        .call("counter-step", json!({"current": 10}))
        .run()
        .await
        .unwrap();
    assert_eq!(
        stepped.result.structured_content,
        Some(json!({"value": 11.0}))
    );
}

fn inspector() -> PathBuf {
    let bin = peers_dir().join("node_modules/.bin/mcp-inspector");
    assert!(
        bin.exists(),
        "the MCP Inspector is not installed: run scripts/install-test-peers (scripts/test does)"
    );
    bin
}

#[test]
fn the_mcp_inspector_finds_each_tools_app_and_its_view() {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcp-app"));
    command
        .args(["--addr", "127.0.0.1:0"])
        .env(
            "MRTR_REQUEST_STATE_KEY",
            "an example secret of at least 32 bytes!",
        )
        .env("RUST_LOG", "info");
    let server = Listening::start(command);
    let out = Command::new(test_harness::node())
        .arg(inspector())
        .args(["--cli", &server.url, "--method", "tools/list"])
        .args(["--app-info", "--advertise-apps"])
        .current_dir(peers_dir())
        .env(
            "MCP_CATALOG_PATH",
            std::env::temp_dir().join("tessera-inspector-catalog.json"),
        )
        .output()
        .expect("the inspector runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "mcp-inspector failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    let apps: Vec<Value> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect();
    // The inspector read each tool's view (`resources/read`) for its CSP and MIME type.
    let view = |tool: &str, visibility: Value| {
        json!({"hasApp": true, "toolName": tool, "resourceUri": "ui://counter/view",
            "visibility": visibility, "csp": {"connectDomains": [], "resourceDomains": []},
            "prefersBorder": true, "resourceMimeType": "text/html;profile=mcp-app"})
    };
    assert_eq!(
        apps,
        [
            view("counter-view", json!(["model", "app"])),
            view("counter-step", json!(["app"]))
        ],
        "one line per tool:\n{stdout}"
    );
}

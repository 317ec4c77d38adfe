//! Tools, prompts and resources added and removed while serving, and what
//! each caller is shown.
//!
//! The tools page (2026-07-28): "When the list of available tools changes,
//! servers that declared the `listChanged` capability SHOULD send a
//! notification" — here delivered on `subscriptions/listen`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Map, Value, json};
use tessera_protocol::JsonRpcRequest;
use tessera_server::testing::TestClient;
use tessera_server::{
    AuthInfo, CatalogError, Context, McpServer, NotificationSink, Offered, PromptDef, RequestFacts,
    ResourceDef, ShowPermitted, ToolDef, Viewer,
};

fn ping() -> ToolDef {
    ToolDef::new("ping", |_: Context, _: ()| async { "pong" })
}

fn token(subject: &str, scopes: &[&str]) -> AuthInfo {
    AuthInfo {
        issuer: "https://idp.example".into(),
        subject: subject.into(),
        scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
        client_id: None,
        bound_key: None,
    }
}

async fn tool_names(client: &TestClient) -> Vec<String> {
    client
        .list_tools()
        .await
        .unwrap()
        .into_iter()
        .map(|t| t.name)
        .collect()
}

/// Starts `subscriptions/listen` for tool and prompt list changes; returns
/// what it has been sent so far.
fn listen(server: &Arc<McpServer>) -> Arc<Mutex<Vec<Value>>> {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&sent);
    let facts = RequestFacts::modern()
        .with_notifications(NotificationSink::new(move |n| into.lock().unwrap().push(n)));
    let request: JsonRpcRequest<Value> = serde_json::from_value(json!({
        "jsonrpc": "2.0", "id": "l", "method": "subscriptions/listen",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}},
            "notifications": {"toolsListChanged": true, "promptsListChanged": true}}
    }))
    .unwrap();
    let server = Arc::clone(server);
    tokio::spawn(async move { server.handle(request, facts).await });
    sent
}

fn methods(sent: &Mutex<Vec<Value>>) -> Vec<String> {
    sent.lock()
        .unwrap()
        .iter()
        .map(|n| n["method"].as_str().unwrap_or_default().to_owned())
        .collect()
}

#[tokio::test]
async fn a_tool_added_while_serving_is_listed_callable_and_announced_then_removed() {
    let server = Arc::new(
        McpServer::builder("catalog", "1.0.0")
            .tool(ToolDef::new("first", |_: Context, _: ()| async { "1" }))
            .build()
            .unwrap(),
    );
    let client = TestClient::new(Arc::clone(&server));
    let sent = listen(&server);
    tokio::time::sleep(Duration::from_millis(50)).await;

    server.add_tool(ping()).await.unwrap();
    assert_eq!(tool_names(&client).await, ["first", "ping"]);
    let done = client.call("ping", json!({})).run().await.unwrap();
    assert_eq!(done.text(), "pong");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        methods(&sent),
        [
            "notifications/subscriptions/acknowledged",
            "notifications/tools/list_changed"
        ]
    );

    // Refusals name the problem and change nothing.
    let twice = server.add_tool(ping()).await.unwrap_err();
    assert!(
        matches!(&twice, CatalogError::Refused(e) if e.0.contains("\"ping\" is registered already")),
        "{twice}"
    );
    let bad = server
        .add_tool(ToolDef::new("no spaces", |_: Context, _: ()| async { "" }))
        .await
        .unwrap_err();
    assert!(
        bad.to_string()
            .contains("tool name \"no spaces\" is invalid"),
        "{bad}"
    );
    let single_use = server.add_tool(ping().single_use()).await.unwrap_err();
    assert!(
        single_use.to_string().contains("ticket ledger"),
        "{single_use}"
    );
    assert_eq!(tool_names(&client).await, ["first", "ping"]);

    assert!(server.remove_tool("ping").await.unwrap());
    assert!(!server.remove_tool("ping").await.unwrap(), "gone already");
    assert_eq!(tool_names(&client).await, ["first"]);
    let e = client.call("ping", json!({})).run().await.unwrap_err();
    assert!(e.to_string().contains("Tool ping not found"), "{e}");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert_eq!(
        methods(&sent).len(),
        3,
        "one notification per change that happened"
    );
}

#[tokio::test]
async fn prompts_and_resources_change_too_and_capabilities_follow() {
    let server = Arc::new(McpServer::builder("catalog", "1.0.0").build().unwrap());
    let client = TestClient::new(Arc::clone(&server));
    let e = client.list_prompts().await.unwrap_err();
    assert_eq!(e.code, -32601, "no prompts: the method is not offered");

    server
        .add_prompt(PromptDef::new("greet", |_: Context, _: ()| async {
            "Say hello.".to_owned()
        }))
        .await
        .unwrap();
    server
        .add_resource(ResourceDef::new("notes://all", "all", |_: Context| async {
            "[]".to_owned()
        }))
        .await
        .unwrap();
    assert_eq!(client.list_prompts().await.unwrap()[0].name, "greet");
    assert_eq!(client.list_resources().await.unwrap()[0].uri, "notes://all");
    let caps = client.request("server/discover", Map::new()).await.unwrap();
    assert_eq!(caps["capabilities"]["prompts"]["listChanged"], true);
    assert_eq!(caps["capabilities"]["resources"]["listChanged"], true);

    assert!(server.remove_prompt("greet").await.unwrap());
    assert!(server.remove_resource("notes://all").await.unwrap());
    assert!(client.list_prompts().await.is_err());
    let e = client.read_resource("notes://all").run().await.unwrap_err();
    assert!(
        e.to_string().contains("(-32601)"),
        "no resources left: the method is not offered: {e}"
    );
}

#[tokio::test]
async fn show_permitted_hides_what_a_token_does_not_grant_and_refuses_calling_it() {
    let server = Arc::new(
        McpServer::builder("catalog", "1.0.0")
            .tool(ping())
            .tool(ToolDef::new("reset", |_: Context, _: ()| async { "reset" }).scopes(["admin"]))
            .prompt(
                PromptDef::new("audit", |_: Context, _: ()| async { "Audit.".to_owned() })
                    .scopes(["admin"]),
            )
            .visibility(ShowPermitted)
            .build()
            .unwrap(),
    );
    let reader = TestClient::new(Arc::clone(&server)).auth(token("ann", &["read"]));
    let admin = TestClient::new(Arc::clone(&server)).auth(token("root", &["read", "admin"]));
    assert_eq!(tool_names(&reader).await, ["ping"]);
    assert_eq!(tool_names(&admin).await, ["ping", "reset"]);

    // Hidden means absent: the same error as a tool that does not exist, not a 403.
    let hidden = reader.call("reset", json!({})).run().await.unwrap_err();
    let missing = reader.call("nothing", json!({})).run().await.unwrap_err();
    assert_eq!(
        hidden.to_string().replace("reset", "X"),
        missing.to_string().replace("nothing", "X")
    );
    assert_eq!(
        admin.call("reset", json!({})).run().await.unwrap().text(),
        "reset"
    );
    assert!(reader.list_prompts().await.unwrap().is_empty());
    let e = reader
        .get_prompt("audit", json!({}))
        .run()
        .await
        .unwrap_err();
    assert!(e.to_string().contains("Prompt audit not found"), "{e}");
    assert_eq!(admin.list_prompts().await.unwrap()[0].name, "audit");

    // A tool added later is filtered the same way.
    server
        .add_tool(ToolDef::new("purge", |_: Context, _: ()| async { "purged" }).scopes(["admin"]))
        .await
        .unwrap();
    assert_eq!(tool_names(&reader).await, ["ping"]);
    assert_eq!(tool_names(&admin).await, ["ping", "reset", "purge"]);
}

#[tokio::test]
async fn a_filter_of_the_servers_own_sees_the_principal() {
    let server = Arc::new(
        McpServer::builder("catalog", "1.0.0")
            .tool(ping())
            .tool(ToolDef::new("ann.notes", |_: Context, _: ()| async {
                "mine"
            }))
            .visibility(|viewer: &Viewer<'_>, item: Offered<'_>| match item {
                Offered::Tool(t) if t.definition().name.starts_with("ann.") => {
                    viewer.principal == Some("https://idp.example ann")
                }
                _ => true,
            })
            .build()
            .unwrap(),
    );
    let ann = TestClient::new(Arc::clone(&server)).auth(token("ann", &[]));
    let bob = TestClient::new(Arc::clone(&server)).auth(token("bob", &[]));
    assert_eq!(tool_names(&ann).await, ["ping", "ann.notes"]);
    assert_eq!(tool_names(&bob).await, ["ping"]);
    assert!(bob.call("ann.notes", json!({})).run().await.is_err());
    assert_eq!(
        ann.call("ann.notes", json!({})).run().await.unwrap().text(),
        "mine"
    );
}

//! Extensions: declared in the capabilities, methods of the server's own,
//! `_meta` on definitions.
//!
//! The schema's `ServerCapabilities.extensions`: "Keys are extension
//! identifiers … values are per-extension settings objects. An empty object
//! indicates support with no settings. Keys MUST follow the `_meta` key
//! naming rules, with a mandatory prefix."

use std::sync::{Arc, Mutex};

use serde_json::{Map, Value, json};
use tessera_protocol::JsonRpcRequest;
use tessera_server::testing::TestClient;
use tessera_server::{
    Context, HandlerError, McpServer, MethodDef, PromptDef, RequestFacts, ResourceDef, ToolDef,
};

#[derive(serde::Deserialize)]
struct Search {
    query: String,
    #[serde(default)]
    limit: Option<u32>,
}

#[derive(serde::Deserialize)]
struct Seen {
    item: String,
}

fn server(seen: Arc<Mutex<Vec<String>>>) -> McpServer {
    McpServer::builder("ext", "1.0.0")
        .extension("com.example/search", json!({"maxResults": 50}))
        .method(MethodDef::request(
            "com.example/search",
            |_: Context, p: Search| async move {
                if p.query.is_empty() {
                    return Err(HandlerError::invalid_params("query must not be empty"));
                }
                Ok(json!({"hits": [format!("{} (limit {})", p.query, p.limit.unwrap_or(10))]}))
            },
        ))
        .method(MethodDef::notification(
            "com.example/seen",
            move |p: Seen| {
                let seen = Arc::clone(&seen);
                async move { seen.lock().unwrap().push(p.item) }
            },
        ))
        .tool(
            ToolDef::new("show", |_: Context, _: ()| async { "shown" })
                .meta(obj(json!({"ui": {"resourceUri": "ui://ext/show"}}))),
        )
        .prompt(
            PromptDef::new("p", |_: Context, _: ()| async { "p".to_owned() })
                .meta(obj(json!({"com.example/kind": "demo"}))),
        )
        .resource(
            ResourceDef::new("ui://ext/show", "show", |_: Context| async {
                "<html></html>".to_owned()
            })
            .meta(obj(json!({"ui": {"prefersBorder": true}}))),
        )
        .build()
        .unwrap()
}

fn obj(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn params(v: Value) -> Map<String, Value> {
    obj(v)
}

#[tokio::test]
async fn extensions_are_declared_and_definitions_carry_meta() {
    let client = TestClient::new(server(Arc::default()));
    let discover = client.request("server/discover", Map::new()).await.unwrap();
    assert_eq!(
        discover["capabilities"]["extensions"],
        json!({"com.example/search": {"maxResults": 50}})
    );
    let tools = client.list_tools().await.unwrap();
    assert_eq!(
        tools[0].meta.as_ref().unwrap()["ui"]["resourceUri"],
        "ui://ext/show"
    );
    let prompts = client.list_prompts().await.unwrap();
    assert_eq!(
        prompts[0].meta.as_ref().unwrap()["com.example/kind"],
        "demo"
    );
    let resources = client.list_resources().await.unwrap();
    assert_eq!(
        resources[0].meta.as_ref().unwrap()["ui"]["prefersBorder"],
        true
    );
}

#[tokio::test]
async fn a_method_of_the_servers_own_answers_with_typed_params_and_clear_errors() {
    let client = TestClient::new(server(Arc::default()));
    let result = client
        .request(
            "com.example/search",
            params(json!({"query": "otters", "limit": 3})),
        )
        .await
        .unwrap();
    assert_eq!(result["hits"], json!(["otters (limit 3)"]));
    assert_eq!(
        result["resultType"], "complete",
        "2026-07-28 results say their type"
    );
    assert_eq!(
        result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "ext"
    );

    let e = client
        .request("com.example/search", params(json!({"limit": 3})))
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
    assert!(
        e.message
            .contains("Invalid com.example/search params: missing field `query`"),
        "{}",
        e.message
    );
    let e = client
        .request("com.example/search", params(json!({"query": ""})))
        .await
        .unwrap_err();
    assert_eq!(
        (e.code, e.message.as_str()),
        (-32602, "query must not be empty")
    );
    let e = client
        .request("com.example/other", Map::new())
        .await
        .unwrap_err();
    assert_eq!(e.code, -32601);
}

#[tokio::test]
async fn an_initialize_era_client_gets_the_method_too() {
    let server = server(Arc::default());
    let request: JsonRpcRequest<Value> = serde_json::from_value(json!({
        "jsonrpc": "2.0", "id": 1, "method": "com.example/search", "params": {"query": "x"}
    }))
    .unwrap();
    let out = server
        .handle(request, RequestFacts::legacy("2025-11-25"))
        .await
        .to_json();
    assert_eq!(out["result"]["hits"], json!(["x (limit 10)"]));
    assert!(
        out["result"].get("resultType").is_none(),
        "not in that era's results"
    );
}

#[tokio::test]
async fn a_notification_of_the_servers_own_runs_its_handler() {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let server = server(Arc::clone(&seen));
    server
        .handle_notification(
            "com.example/seen",
            Some(json!({"_meta": {}, "item": "otter"})),
        )
        .await;
    // Params that do not fit are dropped (logged), never a panic.
    server
        .handle_notification("com.example/seen", Some(json!([1, 2])))
        .await;
    server
        .handle_notification("com.example/unknown", None)
        .await;
    assert_eq!(*seen.lock().unwrap(), ["otter"]);
}

#[tokio::test]
async fn names_and_keys_that_break_the_rules_are_refused_at_build() {
    let noop = |_: Context, _: Value| async { Ok::<_, HandlerError>(json!({})) };
    let refused = |b: tessera_server::McpServerBuilder| b.build().unwrap_err().0;
    let e = refused(McpServer::builder("x", "1").method(MethodDef::request("tools/secret", noop)));
    assert!(
        e.contains("namespace MCP defines") && e.contains("com.example/secret"),
        "{e}"
    );
    let e = refused(McpServer::builder("x", "1").method(MethodDef::notification(
        "notifications/progress",
        |_: Value| async {},
    )));
    assert!(e.contains("namespace MCP defines"), "{e}");
    let e = refused(
        McpServer::builder("x", "1")
            .method(MethodDef::request("com.example/a", noop))
            .method(MethodDef::request("com.example/a", noop)),
    );
    assert!(e.contains("registered twice"), "{e}");
    let e = refused(McpServer::builder("x", "1").extension("search", json!({})));
    assert!(e.contains("needs a prefix"), "{e}");
    let e = refused(McpServer::builder("x", "1").extension("com.example/s", json!(true)));
    assert!(e.contains("must be a JSON object"), "{e}");
    let e =
        refused(McpServer::builder("x", "1").tool(
            ToolDef::new("t", |_: Context, _: ()| async { "" }).meta(obj(json!({"-bad": 1}))),
        ));
    assert!(e.contains("tool \"t\": _meta key"), "{e}");
}

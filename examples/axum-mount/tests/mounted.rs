//! The counter nested in axum, over real sockets: its three rounds through
//! the router and its layers, the body limit, and the other routes untouched.

use std::time::Duration;

use serde_json::{Value, json};
use tessera::state::{KeyRing, RequestStateCodec, StateKey};
use tessera::{Context, McpServer, ToolDef};

fn codec() -> RequestStateCodec {
    let key = StateKey::from_secret_str("axum-mount-test-key-0123456789abcdef").unwrap();
    RequestStateCodec::new(KeyRing::new("k1", key).unwrap())
}

async fn start() -> String {
    serve(
        counter_tool::counter_server(codec()).unwrap(),
        Duration::from_secs(10),
    )
    .await
}

async fn serve(server: McpServer, timeout: Duration) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(tessera::http::serve(
        listener,
        axum_mount::app(
            std::sync::Arc::new(server),
            tessera::http::EndpointOptions::default(),
            timeout,
        ),
        std::future::pending(),
    ));
    format!("http://{addr}")
}

async fn call(base: &str, id: u32, extra: Value) -> (u16, Value) {
    let mut params = json!({
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        },
        "name": "increase-counter",
        "arguments": {"current": 10}
    });
    for (k, v) in extra.as_object().unwrap() {
        params[k] = v.clone();
    }
    let response = reqwest::Client::new()
        .post(format!("{base}/api/mcp"))
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "increase-counter")
        .json(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
        .send()
        .await
        .unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

#[tokio::test]
async fn the_counter_completes_through_the_router_and_its_layers() {
    let base = start().await;
    let (status, r1) = call(&base, 1, json!({})).await;
    assert_eq!(status, 200, "{r1}");
    let s1 = r1["result"]["requestState"].clone();
    let (_, r2) = call(
        &base,
        2,
        json!({"requestState": s1, "inputResponses": {"amount": {"action": "accept", "content": {"amount": 5}}}}),
    )
    .await;
    let s2 = r2["result"]["requestState"].clone();
    let (_, r3) = call(
        &base,
        3,
        json!({"requestState": s2, "inputResponses": {"confirmation": {"action": "accept", "content": {"confirm": true}}}}),
    )
    .await;
    assert_eq!(
        r3["result"]["content"][0]["text"],
        "Counter increased by 5; next value is 15"
    );
}

#[tokio::test]
async fn the_application_layers_and_routes_apply() {
    let base = start().await;
    let health = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(health.status(), 200);
    assert_eq!(health.text().await.unwrap(), "ok");
    // tower-http's body limit answers before the endpoint reads anything.
    let big = "x".repeat(axum_mount::BODY_LIMIT + 1);
    let (status, _) = call(&base, 4, json!({"arguments": {"current": 10, "pad": big}})).await;
    assert_eq!(status, 413);
    // A path the router does not know is the router's 404, not the endpoint's.
    let missing = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .send()
        .await
        .unwrap();
    assert_eq!(missing.status(), 404);
}

#[tokio::test]
async fn a_request_slower_than_the_timeout_layer_gets_408() {
    let server = McpServer::builder("slow", "1")
        .request_state(codec())
        .tool(ToolDef::new(
            "increase-counter",
            |_ctx: Context, _: ()| async {
                tokio::time::sleep(Duration::from_secs(5)).await;
                "too late"
            },
        ))
        .build()
        .unwrap();
    let base = serve(server, Duration::from_millis(200)).await;
    let started = std::time::Instant::now();
    let (status, _) = call(&base, 5, json!({"arguments": {}})).await;
    assert_eq!(status, 408);
    assert!(started.elapsed() < Duration::from_secs(3));
}

#[tokio::test]
async fn tower_http_answers_cors_for_the_endpoint() {
    let base = start().await;
    let client = reqwest::Client::new();
    let preflight = client
        .request(reqwest::Method::OPTIONS, format!("{base}/api/mcp"))
        .header("Origin", axum_mount::APP_ORIGIN)
        .header("Access-Control-Request-Method", "POST")
        .header(
            "Access-Control-Request-Headers",
            "content-type, mcp-protocol-version",
        )
        .send()
        .await
        .unwrap();
    assert_eq!(preflight.status(), 200);
    assert_eq!(
        preflight.headers()["access-control-allow-origin"],
        axum_mount::APP_ORIGIN
    );
    // The endpoint still refuses an Origin the application does not allow.
    let foreign = client
        .post(format!("{base}/api/mcp"))
        .header("Origin", "https://evil.example")
        .header("Content-Type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(foreign.status(), 403);
}

//! A tool added on one instance is announced to a listener on another,
//! through a real `redis-server`.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tessera_protocol::JsonRpcRequest;
use tessera_redis::Redis;
use tessera_server::{Context, McpServer, NotificationSink, RequestFacts, ToolDef};
use test_harness::RedisServer;

async fn instance(url: &str) -> Arc<McpServer> {
    let bus = Redis::connect(url).await.unwrap().bus("catalog");
    for _ in 0..100 {
        if bus.is_connected() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(bus.is_connected(), "the bus did not connect within 5 s");
    Arc::new(
        McpServer::builder("catalog", "1.0.0")
            .tool(ToolDef::new("first", |_: Context, _: ()| async { "1" }))
            .change_bus(Arc::new(bus))
            .build()
            .unwrap(),
    )
}

fn request(id: &str, method: &str, extra: Value) -> JsonRpcRequest<Value> {
    let mut params = json!({"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}}});
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    serde_json::from_value(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        .unwrap()
}

#[tokio::test]
async fn a_tool_added_on_one_instance_is_announced_to_a_listener_on_another() {
    let redis = RedisServer::start();
    let one = instance(&redis.url()).await;
    let two = instance(&redis.url()).await;

    let sent = Arc::new(Mutex::new(Vec::<Value>::new()));
    let into = Arc::clone(&sent);
    let facts = RequestFacts::modern()
        .with_notifications(NotificationSink::new(move |n| into.lock().unwrap().push(n)));
    let listen = request(
        "listen",
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    let listener = Arc::clone(&two);
    tokio::spawn(async move { listener.handle(listen, facts).await });
    tokio::time::sleep(Duration::from_millis(200)).await;

    one.add_tool(ToolDef::new("ping", |_: Context, _: ()| async { "pong" }))
        .await
        .unwrap();
    let listed = one
        .handle(
            request("1", "tools/list", json!({})),
            RequestFacts::modern(),
        )
        .await
        .to_json();
    let names: Vec<&str> = listed["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["first", "ping"]);

    let mut heard = Vec::new();
    for _ in 0..50 {
        heard = sent.lock().unwrap().clone();
        if heard.len() >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let methods: Vec<&str> = heard
        .iter()
        .map(|n| n["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/subscriptions/acknowledged",
            "notifications/tools/list_changed"
        ],
        "the listener on the other instance heard the change within 2.5 s"
    );
    assert_eq!(
        heard[1]["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "listen"
    );
    two.end_subscriptions();
}

//! `subscriptions/listen` on the server: acknowledgement first, only what
//! was asked, the subscription id on everything, a result at shutdown.
//!
//! Rules quoted from `basic/patterns/subscriptions.mdx` (2026-07-28).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tessera_protocol::JsonRpcRequest;
use tessera_server::{
    BusEvent, Context, McpServer, MemoryBus, NotificationSink, RequestFacts, ResourceDef, ToolDef,
};

fn server(bus: Arc<MemoryBus>) -> Arc<McpServer> {
    Arc::new(
        McpServer::builder("listen-test", "1.0.0")
            .tool(ToolDef::new("noop", |_: Context, _: ()| async { "ok" }))
            .resource(ResourceDef::new(
                "notes://list",
                "list",
                |_: Context| async { "[]".to_owned() },
            ))
            .change_bus(bus)
            .build()
            .unwrap(),
    )
}

fn listen(id: i64, filter: Value) -> JsonRpcRequest<Value> {
    serde_json::from_value(
        json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
        "params": {
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            },
            "notifications": filter
        }}),
    )
    .unwrap()
}

/// A listen request running, and what it has sent so far.
struct Listening {
    sent: Arc<Mutex<Vec<Value>>>,
    task: tokio::task::JoinHandle<Value>,
}

fn start(server: &Arc<McpServer>, id: i64, filter: Value) -> Listening {
    let sent = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&sent);
    let facts = RequestFacts::modern()
        .with_notifications(NotificationSink::new(move |n| into.lock().unwrap().push(n)));
    let server = Arc::clone(server);
    let request = listen(id, filter);
    let task = tokio::spawn(async move { server.handle(request, facts).await.to_json() });
    Listening { sent, task }
}

async fn settle() {
    tokio::time::sleep(Duration::from_millis(50)).await;
}

#[tokio::test]
async fn acknowledged_first_then_only_what_was_asked_then_a_result_at_shutdown() {
    let bus = Arc::new(MemoryBus::default());
    let server = server(Arc::clone(&bus));
    let l = start(
        &server,
        1,
        json!({"toolsListChanged": true, "promptsListChanged": true,
            "resourceSubscriptions": ["notes://list"]}),
    );
    settle().await;
    let notifier = server.notifier();
    notifier.resource_updated("notes://list").await.unwrap();
    notifier.resource_updated("notes://other").await.unwrap();
    notifier.resources_list_changed().await.unwrap();
    notifier.tools_list_changed().await.unwrap();
    server.end_subscriptions();
    let result = tokio::time::timeout(Duration::from_secs(5), l.task)
        .await
        .unwrap()
        .unwrap();
    let sent = l.sent.lock().unwrap().clone();
    // "The notifications field in the acknowledgment reflects the subset the server agreed to honor."
    // The server has no prompts, so promptsListChanged is left out.
    assert_eq!(
        sent[0],
        json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
            "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": 1},
                "notifications": {"toolsListChanged": true, "resourceSubscriptions": ["notes://list"]}}})
    );
    // "The server MUST NOT send notification types the client has not explicitly requested."
    let methods: Vec<&str> = sent[1..]
        .iter()
        .map(|n| n["method"].as_str().unwrap())
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/resources/updated",
            "notifications/tools/list_changed"
        ]
    );
    assert_eq!(sent[1]["params"]["uri"], "notes://list");
    for n in &sent {
        assert_eq!(
            n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            1
        );
    }
    // Graceful closure: a result carrying the subscription id.
    assert_eq!(result["id"], 1);
    assert_eq!(result["result"]["resultType"], "complete");
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    assert_eq!(
        bus.listener_count(),
        0,
        "the listener is gone with its subscription"
    );
}

#[tokio::test]
async fn a_lost_bus_ends_listeners_gracefully_and_a_dropped_listen_unsubscribes() {
    let bus = Arc::new(MemoryBus::default());
    let server = server(Arc::clone(&bus));
    let a = start(&server, 1, json!({"resourcesListChanged": true}));
    let b = start(&server, 2, json!({}));
    settle().await;
    assert_eq!(bus.listener_count(), 2);
    b.task.abort();
    settle().await;
    assert_eq!(
        bus.listener_count(),
        1,
        "a client that goes away leaves nothing behind"
    );
    bus.deliver(BusEvent::Lost);
    let result = tokio::time::timeout(Duration::from_secs(5), a.task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        result["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
}

#[tokio::test]
async fn capabilities_say_so_and_bad_filters_are_named() {
    let server = server(Arc::new(MemoryBus::default()));
    let discover: JsonRpcRequest<Value> = serde_json::from_value(json!({"jsonrpc": "2.0", "id": 1,
        "method": "server/discover", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}}}}))
    .unwrap();
    let caps = server
        .handle(discover, RequestFacts::modern())
        .await
        .to_json()["result"]["capabilities"]
        .clone();
    assert_eq!(caps["tools"]["listChanged"], true);
    assert_eq!(caps["resources"]["subscribe"], true);
    assert_eq!(caps["resources"]["listChanged"], true);

    let mut request = listen(3, json!({}));
    request
        .params
        .as_mut()
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove("notifications");
    let e = server
        .handle(request, RequestFacts::modern())
        .await
        .to_json();
    assert_eq!(e["error"]["code"], -32602);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("notifications is required")
    );
    let e = server
        .handle(
            listen(4, json!({"toolsListChanged": "yes"})),
            RequestFacts::modern(),
        )
        .await
        .to_json();
    assert_eq!(e["error"]["code"], -32602);
    // Without a way to stream, the transport is told plainly.
    let e = server
        .handle(listen(5, json!({})), RequestFacts::modern())
        .await
        .to_json();
    assert_eq!(e["error"]["code"], -32603);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cannot stream")
    );
}

/// `taskIds` (the tasks extension): "If a client requests task status
/// notifications but does not declare the `io.modelcontextprotocol/tasks`
/// extension capability, the server MUST return a JSON-RPC error specifying
/// the missing capabilities"; "In its acknowledgement notification, the
/// server includes the list of task IDs it has agreed to send task status
/// notifications for"; and a task's state goes only to its own principal.
#[tokio::test]
async fn task_notifications_need_the_extension_and_reach_only_the_tasks_principal() {
    let bus = Arc::new(MemoryBus::default());
    let server = Arc::new(
        McpServer::builder("listen-test", "1.0.0")
            .tool(
                ToolDef::new("noop", |_: Context, _: ()| async { "ok" })
                    .task_support(tessera_server::TaskSupport::Optional),
            )
            .task_store(Arc::new(tessera_server::MemoryTaskStore::default()))
            .change_bus(Arc::clone(&bus) as Arc<dyn tessera_server::ChangeBus>)
            .build()
            .unwrap(),
    );
    let id = "0123456789abcdef0123456789abcdef";

    // Not declared: -32021 naming the extension.
    let refused = start(&server, 1, json!({"taskIds": [id]}));
    let refused = tokio::time::timeout(Duration::from_secs(5), refused.task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(refused["error"]["code"], -32021, "{refused}");
    assert!(
        refused["error"]["data"]["requiredCapabilities"]["extensions"]
            ["io.modelcontextprotocol/tasks"]
            .is_object(),
        "{refused}"
    );

    // Declared: the acknowledgement names the well-formed ids it will follow.
    let declaring = |n: i64, principal: &str| {
        let sent = Arc::new(Mutex::new(Vec::new()));
        let into = Arc::clone(&sent);
        let facts = RequestFacts::modern()
            .with_principal(principal)
            .with_notifications(NotificationSink::new(move |n| into.lock().unwrap().push(n)));
        let mut request = listen(n, json!({"taskIds": [id, "../etc", "0123"]}));
        request.params.as_mut().unwrap()["_meta"]["io.modelcontextprotocol/clientCapabilities"] =
            json!({"extensions": {"io.modelcontextprotocol/tasks": {}}});
        let server = Arc::clone(&server);
        let task = tokio::spawn(async move { server.handle(request, facts).await.to_json() });
        Listening { sent, task }
    };
    let alice = declaring(2, "alice");
    let bob = declaring(3, "bob");
    settle().await;
    let status = |principal: &str, task: &str, status: &str| tessera_server::Change::TaskStatus {
        principal: Some(principal.into()),
        task: serde_json::from_value(json!({"taskId": task, "status": status})).unwrap(),
    };
    use tessera_server::ChangeBus;
    bus.publish(status("alice", id, "working")).await.unwrap();
    bus.publish(status(
        "alice",
        "ffffffffffffffffffffffffffffffff",
        "working",
    ))
    .await
    .unwrap();
    bus.publish(status("alice", id, "completed")).await.unwrap();
    server.end_subscriptions();
    for l in [&alice, &bob] {
        while !l.task.is_finished() {
            settle().await;
        }
    }
    let alice = alice.sent.lock().unwrap().clone();
    assert_eq!(
        alice[0]["params"]["notifications"],
        json!({"taskIds": [id]}),
        "{alice:?}"
    );
    let heard: Vec<Value> = alice[1..]
        .iter()
        .map(|n| {
            json!([
                n["method"],
                n["params"]["taskId"],
                n["params"]["status"],
                n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"]
            ])
        })
        .collect();
    assert_eq!(
        heard,
        vec![
            json!(["notifications/tasks", id, "working", 2]),
            json!(["notifications/tasks", id, "completed", 2])
        ]
    );
    let bob = bob.sent.lock().unwrap().clone();
    assert_eq!(
        bob.len(),
        1,
        "another principal hears nothing of alice's task: {bob:?}"
    );
}

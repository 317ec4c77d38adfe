//! The tasks extension (SEP-2663): a tool call that goes on as a task the
//! client polls (`tasks/get`), answers (`tasks/update`) and cancels
//! (`tasks/cancel`). Rules quoted from seps/2663-tasks-extension.md.

use std::time::Duration;

use serde_json::{Value, json};
use tessera_protocol::{JsonRpcRequest, RequestId};
use tessera_server::{Context, Form, HandlerError, McpServer, RequestFacts, TaskSupport, ToolDef};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    confirm: bool,
}
impl Form for Confirm {
    const KEY: &'static str = "confirm";
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}
impl Form for Name {
    const KEY: &'static str = "name";
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Work {
    millis: u64,
}

fn server() -> McpServer {
    let ring = KeyRing::new("k1", StateKey::generate().unwrap()).unwrap();
    McpServer::builder("tasks", "1")
        .request_state(RequestStateCodec::new(ring))
        .tool(
            ToolDef::new("work", |ctx: Context, w: Work| async move {
                if w.millis > 0 {
                    ctx.begin_task()?;
                    tokio::time::sleep(Duration::from_millis(w.millis)).await;
                }
                Ok::<_, HandlerError>(format!("worked {} ms (task: {})", w.millis, ctx.in_task()))
            })
            .task_support(TaskSupport::Optional),
        )
        .tool(
            ToolDef::new("delete", |ctx: Context, _: ()| async move {
                ctx.begin_task()?;
                let name = ctx.ask::<Name>("Which file?");
                let confirm = ctx.ask::<Confirm>("Sure?");
                let (Name { name }, Confirm { confirm }) = (name?, confirm?);
                Ok::<_, HandlerError>(format!("{name}: {confirm}"))
            })
            .task_support(TaskSupport::Required),
        )
        .tool(
            ToolDef::new("greet_later", |ctx: Context, _: ()| async move {
                let Name { name } = ctx.ask("Your name?")?;
                ctx.begin_task()?;
                Ok::<_, HandlerError>(format!("Hello, {name}!"))
            })
            .task_support(TaskSupport::Required),
        )
        .tool(
            ToolDef::new("broken", |ctx: Context, _: ()| async move {
                ctx.begin_task()?;
                Err::<String, _>(HandlerError::msg("disk on fire"))
            })
            .task_support(TaskSupport::Required),
        )
        .tool(
            ToolDef::new("lying", |ctx: Context, _: ()| async move {
                ctx.begin_task()?;
                Ok::<_, HandlerError>(tessera_protocol::CallToolResult::structured(
                    json!({"n": "one"}),
                ))
            })
            .task_support(TaskSupport::Required)
            .output_schema(
                json!({"type": "object", "properties": {"n": {"type": "integer"}}})
                    .as_object()
                    .unwrap()
                    .clone(),
            ),
        )
        .tool(ToolDef::new("plain", |_ctx: Context, _: ()| async {
            "plain"
        }))
        .build()
        .unwrap()
}

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn meta(declares: bool) -> Value {
    let mut caps = json!({"elicitation": {"form": {}}});
    if declares {
        caps["extensions"] = json!({TASKS: {}});
    }
    json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
           "io.modelcontextprotocol/clientCapabilities": caps})
}

async fn send(
    server: &McpServer,
    method: &str,
    mut params: Value,
    declares: bool,
    who: Option<&str>,
) -> Value {
    params["_meta"] = meta(declares);
    let request = JsonRpcRequest::new(RequestId::from(1), method, Some(params));
    let facts = match who {
        Some(p) => RequestFacts::modern().with_principal(p),
        None => RequestFacts::modern(),
    };
    let facts = facts.with_task_runtime(std::sync::Arc::new(Tokio));
    server.handle(request, facts).await.to_json()
}

/// The runtime tasks run on, as a tokio transport gives it.
struct Tokio;

impl tessera_server::TaskRuntime for Tokio {
    fn spawn(&self, work: tessera_server::BoxFuture<'static, ()>) {
        tokio::spawn(work);
    }

    fn sleep(&self, duration: std::time::Duration) -> tessera_server::BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

async fn call(server: &McpServer, name: &str, arguments: Value) -> Value {
    send(
        server,
        "tools/call",
        json!({"name": name, "arguments": arguments}),
        true,
        None,
    )
    .await["result"]
        .clone()
}

async fn get(server: &McpServer, id: &str) -> Value {
    send(server, "tasks/get", json!({"taskId": id}), true, None).await["result"].clone()
}

/// Polls until the task's status is `want` (or 5 s pass).
async fn wait_for(server: &McpServer, id: &str, want: &str) -> Value {
    for _ in 0..250 {
        let task = get(server, id).await;
        if task["status"] == want {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} never reached {want}: {}", get(server, id).await);
}

#[tokio::test]
async fn the_extension_is_advertised() {
    let discovered = send(&server(), "server/discover", json!({}), false, None).await;
    assert_eq!(
        discovered["result"]["capabilities"]["extensions"],
        json!({TASKS: {}})
    );
    assert!(discovered["result"]["capabilities"].get("tasks").is_none());
    let plain = McpServer::builder("p", "1")
        .tool(ToolDef::new("plain", |_ctx: Context, _: ()| async {
            "plain"
        }))
        .build()
        .unwrap();
    let discovered = send(&plain, "server/discover", json!({}), false, None).await;
    assert!(
        discovered["result"]["capabilities"]
            .get("extensions")
            .is_none()
    );
}

#[tokio::test]
async fn a_client_without_the_extension_gets_no_task() {
    let server = server();
    // "A server MUST NOT return CreateTaskResult to a client that did not include the extension capability on its request"
    let sync = send(
        &server,
        "tools/call",
        json!({"name": "work", "arguments": {"millis": 10}}),
        false,
        None,
    )
    .await;
    assert_eq!(sync["result"]["resultType"], "complete");
    assert_eq!(
        sync["result"]["content"][0]["text"],
        "worked 10 ms (task: false)"
    );
    // "... the server MUST return an error with the code -32021"
    let required = send(
        &server,
        "tools/call",
        json!({"name": "delete"}),
        false,
        None,
    )
    .await;
    assert_eq!(required["error"]["code"], -32021);
    assert_eq!(
        required["error"]["data"],
        json!({"requiredCapabilities": {"extensions": {TASKS: {}}}})
    );
    // "Servers MUST return this error for non-declaring clients issuing tasks/get, tasks/update, and tasks/cancel"
    for method in ["tasks/get", "tasks/update", "tasks/cancel"] {
        let r = send(
            &server,
            method,
            json!({"taskId": "gate-test", "inputResponses": {}}),
            false,
            None,
        )
        .await;
        assert_eq!(r["error"]["code"], -32021, "{method}: {r}");
    }
}

#[tokio::test]
async fn a_task_is_created_polled_and_completed() {
    let server = server();
    let created = call(&server, "work", json!({"millis": 300})).await;
    assert_eq!(created["resultType"], "task");
    for absent in [
        "result",
        "error",
        "inputRequests",
        "requestState",
        "task",
        "ttl",
        "pollInterval",
    ] {
        assert!(created.get(absent).is_none(), "{absent} in {created}");
    }
    let id = created["taskId"].as_str().unwrap().to_owned();
    assert_eq!(created["status"], "working");
    assert!(created["ttlMs"].as_u64().unwrap() > 0);
    assert!(created["createdAt"].as_str().unwrap().ends_with('Z'));
    // "A server MUST NOT return CreateTaskResult until ... a tasks/get for the returned taskId would resolve."
    let working = get(&server, &id).await;
    assert_eq!(
        (working["resultType"].as_str(), working["status"].as_str()),
        (Some("complete"), Some("working"))
    );
    let done = wait_for(&server, &id, "completed").await;
    assert_eq!(
        done["result"]["content"][0]["text"],
        "worked 300 ms (task: true)"
    );
    assert!(done.get("error").is_none());
    // A call that does not reach begin_task answers in the request.
    let instant = call(&server, "work", json!({"millis": 0})).await;
    assert_eq!(instant["resultType"], "complete");
    // "tasks/result" and "tasks/list" are gone.
    for method in ["tasks/result", "tasks/list"] {
        let r = send(&server, method, json!({"taskId": id}), true, None).await;
        assert_eq!(r["error"]["code"], -32601);
    }
}

#[tokio::test]
async fn input_inside_a_task_goes_through_tasks_update_one_answer_at_a_time() {
    let server = server();
    let created = call(&server, "delete", json!({})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let waiting = wait_for(&server, &id, "input_required").await;
    let mut keys: Vec<&str> = waiting["inputRequests"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    keys.sort();
    assert_eq!(
        keys,
        ["confirm", "name"],
        "both questions are outstanding at once"
    );
    assert_eq!(
        waiting["inputRequests"]["name"]["method"],
        "elicitation/create"
    );
    assert!(waiting.get("requestState").is_none());
    // Unknown keys are ignored and acked.
    let ack = send(
        &server,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"nope": {"x": 1}}}),
        true,
        None,
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete");
    // "A server MAY accept a partial set of responses ... the task remains in input_required"
    let ack = send(
        &server,
        "tasks/update",
        json!({"taskId": id,
        "inputResponses": {"name": {"action": "accept", "content": {"name": "a.txt"}}}}),
        true,
        None,
    )
    .await;
    for absent in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(ack["result"].get(absent).is_none(), "{absent} in {ack}");
    }
    let still = get(&server, &id).await;
    assert_eq!(still["status"], "input_required");
    assert_eq!(
        still["inputRequests"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        ["confirm"]
    );
    send(
        &server,
        "tasks/update",
        json!({"taskId": id,
        "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}),
        true,
        None,
    )
    .await;
    let done = wait_for(&server, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "a.txt: true");
}

#[tokio::test]
async fn questions_before_begin_task_are_the_calls_own_rounds() {
    // "SHOULD resolve all MRTR exchanges synchronously before responding with a CreateTaskResult"
    let server = server();
    let first = call(&server, "greet_later", json!({})).await;
    assert_eq!(first["resultType"], "input_required");
    assert!(first.get("taskId").is_none());
    let retry = send(
        &server,
        "tools/call",
        json!({"name": "greet_later", "arguments": {},
        "requestState": first["requestState"],
        "inputResponses": {"name": {"action": "accept", "content": {"name": "Alice"}}}}),
        true,
        None,
    )
    .await;
    let created = &retry["result"];
    assert_eq!(created["resultType"], "task", "{retry}");
    assert!(created.get("requestState").is_none() && created.get("inputRequests").is_none());
    let done = wait_for(&server, created["taskId"].as_str().unwrap(), "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "Hello, Alice!");
}

#[tokio::test]
async fn cancel_stops_the_handler_and_a_finished_task_stays_finished() {
    let server = server();
    let created = call(&server, "work", json!({"millis": 60_000})).await;
    let id = created["taskId"].as_str().unwrap().to_owned();
    let ack = send(&server, "tasks/cancel", json!({"taskId": id}), true, None).await;
    assert_eq!(ack["result"]["resultType"], "complete");
    for absent in ["taskId", "status", "result", "error", "inputRequests"] {
        assert!(ack["result"].get(absent).is_none(), "{absent} in {ack}");
    }
    assert_eq!(get(&server, &id).await["status"], "cancelled");
    let quick = call(&server, "work", json!({"millis": 1})).await;
    let quick_id = quick["taskId"].as_str().unwrap().to_owned();
    wait_for(&server, &quick_id, "completed").await;
    let ack = send(
        &server,
        "tasks/cancel",
        json!({"taskId": quick_id}),
        true,
        None,
    )
    .await;
    assert_eq!(ack["result"]["resultType"], "complete");
    assert_eq!(get(&server, &quick_id).await["status"], "completed");
}

#[tokio::test]
async fn tool_errors_complete_and_protocol_errors_fail() {
    let server = server();
    // "completed ... including tool results with isError: true"
    let broken = call(&server, "broken", json!({})).await;
    let done = wait_for(&server, broken["taskId"].as_str().unwrap(), "completed").await;
    assert_eq!(done["result"]["isError"], true);
    // "failed: ... due to a JSON-RPC error during execution"
    let lying = call(&server, "lying", json!({})).await;
    let failed = wait_for(&server, lying["taskId"].as_str().unwrap(), "failed").await;
    assert_eq!(failed["error"]["code"], -32603);
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("/n: \"one\" is not of type \"integer\"")
    );
    assert!(failed.get("result").is_none());
}

#[tokio::test]
async fn tasks_are_private_to_their_caller_and_unknown_ids_are_invalid_params() {
    let server = server();
    let created = send(
        &server,
        "tools/call",
        json!({"name": "work", "arguments": {"millis": 60_000}}),
        true,
        Some("alice"),
    )
    .await;
    let id = created["result"]["taskId"].as_str().unwrap().to_owned();
    let mine = send(
        &server,
        "tasks/get",
        json!({"taskId": id}),
        true,
        Some("alice"),
    )
    .await;
    assert_eq!(mine["result"]["status"], "working");
    for who in [Some("bob"), None] {
        let other = send(&server, "tasks/get", json!({"taskId": id}), true, who).await;
        assert_eq!(other["error"]["code"], -32602, "{other}");
        let cancel = send(&server, "tasks/cancel", json!({"taskId": id}), true, who).await;
        assert_eq!(cancel["error"]["code"], -32602);
    }
    assert_eq!(
        send(
            &server,
            "tasks/get",
            json!({"taskId": id}),
            true,
            Some("alice")
        )
        .await["result"]["status"],
        "working"
    );
    let unknown = send(
        &server,
        "tasks/get",
        json!({"taskId": "nonexistent"}),
        true,
        None,
    )
    .await;
    assert_eq!(unknown["error"]["code"], -32602);
    send(
        &server,
        "tasks/cancel",
        json!({"taskId": id}),
        true,
        Some("alice"),
    )
    .await;
}

#[tokio::test]
async fn a_plain_tool_never_becomes_a_task() {
    let server = server();
    let r = call(&server, "plain", json!({})).await;
    assert_eq!(r["resultType"], "complete");
    // The v1 `task` param is ignored.
    let r = send(
        &server,
        "tools/call",
        json!({"name": "plain", "task": {"ttl": 60000}}),
        true,
        None,
    )
    .await;
    assert_eq!(r["result"]["content"][0]["text"], "plain");
}

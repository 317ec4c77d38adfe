//! Driving the tasks extension over HTTP: a tool call started as a task,
//! polled until it reaches a status.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{McpReply, mcp_post_declaring};

/// The capabilities of a client that answers forms and polls tasks.
pub fn tasks_declared() -> Value {
    json!({"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// A request `method` with `params` to `url`, from a client declaring the
/// tasks extension ([`tasks_declared`]).
pub async fn post(
    http: &reqwest::Client,
    url: &str,
    id: i64,
    method: &str,
    params: Value,
) -> McpReply {
    mcp_post_declaring(http, url, None, id, method, params, tasks_declared()).await
}

/// Calls `tool` with `arguments` at `url`, expecting a task: its id.
pub async fn start_task(http: &reqwest::Client, url: &str, tool: &str, arguments: Value) -> String {
    let reply = post(
        http,
        url,
        1,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["result"]["resultType"], "task", "{}", reply.body);
    reply.body["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned()
}

/// Task `id` as `tasks/get` at `url` shows it.
pub async fn task(http: &reqwest::Client, url: &str, id: &str) -> Value {
    let reply = post(http, url, 2, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["result"].clone()
}

/// Polls task `id` at `url` every 50 ms until its status is `want`; fails
/// after `within`.
pub async fn until_status(
    http: &reqwest::Client,
    url: &str,
    id: &str,
    want: &str,
    within: Duration,
) -> Value {
    let started = Instant::now();
    loop {
        let seen = task(http, url, id).await;
        if seen["status"] == want {
            return seen;
        }
        assert!(
            started.elapsed() < within,
            "task {id} is not {want} after {within:?} through {url}: {seen}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

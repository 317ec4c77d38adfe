//! Tasks on Workers, under `wrangler dev` (workerd): the Durable Object task
//! store keeps the `TaskStore` contract inside the runtime it is built for,
//! and a Worker's tasks are polled, answered, cancelled, outlive a restart,
//! and end `failed` when the process running them dies.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_harness::task_flows::{self, start_task, until_status};
use test_harness::{TempDir, WorkerDev, free_port};

const KEY: &str = "tasks-worker-tests-key-0123456789abcdef";

/// Builds and starts the Worker on `port`, its Durable Objects' storage in
/// `state` (kept across starts) or a fresh directory.
fn start(port: u16, state: Option<&TempDir>) -> WorkerDev {
    WorkerDev::start_at(
        "tests/tasks-worker",
        port,
        Some(KEY),
        state.map(|s| s.0.as_path()),
        &[],
    )
}

#[tokio::test(flavor = "multi_thread")]
async fn the_durable_object_store_keeps_the_task_store_contract_inside_workerd() {
    let worker = tokio::task::spawn_blocking(|| start(free_port(), None))
        .await
        .unwrap();
    let url = worker.url.replace("/mcp", "/check-task-store");
    let reply = reqwest::Client::new()
        .get(&url)
        .timeout(Duration::from_secs(120))
        .send()
        .await;
    let (status, body) = match reply {
        Ok(r) => (r.status().as_u16(), r.text().await.unwrap_or_default()),
        Err(e) => (0, e.to_string()),
    };
    assert!(
        status == 200 && body.starts_with("kept: 8 checks"),
        "the contract failed inside workerd (HTTP {status}: {body}); the Worker's log:\n{}",
        worker.log_tail(60)
    );
}

/// A request declaring the tasks extension, answered 200: its body.
async fn post(http: &reqwest::Client, url: &str, method: &str, params: Value) -> Value {
    let reply = task_flows::post(http, url, 1, method, params).await;
    assert_eq!(reply.status, 200, "{method}: {}", reply.body);
    reply.body
}

#[tokio::test(flavor = "multi_thread")]
async fn a_workers_tasks_are_answered_cancelled_kept_across_a_restart_and_fail_when_their_runner_dies()
 {
    let state = TempDir::new("tasks-worker-state");
    let port = free_port();
    let (worker, state) = tokio::task::spawn_blocking(move || (start(port, Some(&state)), state))
        .await
        .unwrap();
    let url = worker.url.clone();
    let http = reqwest::Client::new();

    // Asked inside the task, answered with tasks/update, completed.
    let id = start_task(
        &http,
        &url,
        "confirm-delete",
        json!({"filename": "notes.txt"}),
    )
    .await;
    let asking = until_status(&http, &url, &id, "input_required", Duration::from_secs(10)).await;
    assert!(asking["inputRequests"]["confirm"].is_object(), "{asking}");
    post(
        &http,
        &url,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}),
    )
    .await;
    let done = until_status(&http, &url, &id, "completed", Duration::from_secs(10)).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Deleted notes.txt.",
        "{done}"
    );

    // Cancelled while it works.
    let cancelled = start_task(&http, &url, "slow", json!({"seconds": 20})).await;
    until_status(&http, &url, &cancelled, "working", Duration::from_secs(5)).await;
    post(&http, &url, "tasks/cancel", json!({"taskId": cancelled})).await;
    until_status(&http, &url, &cancelled, "cancelled", Duration::from_secs(2)).await;

    // Its process killed while a task works: after a restart on the same
    // storage, the finished tasks are still there and the orphan fails.
    let orphan = start_task(&http, &url, "slow", json!({"seconds": 20})).await;
    until_status(&http, &url, &orphan, "working", Duration::from_secs(5)).await;
    drop(worker);
    let killed_at = Instant::now();
    let (worker, _state) = tokio::task::spawn_blocking(move || (start(port, Some(&state)), state))
        .await
        .unwrap();
    let restarted_in = killed_at.elapsed();
    let url = worker.url.clone();
    let kept = task_flows::task(&http, &url, &id).await;
    assert_eq!(kept["status"], "completed", "{kept}");
    // The runner's lease (3 s) from the kill, plus a poll.
    let failed = until_status(&http, &url, &orphan, "failed", Duration::from_secs(5)).await;
    eprintln!(
        "restarted in {restarted_in:?}; the orphan failed {:?} after the kill",
        killed_at.elapsed()
    );
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap_or_default()
            .contains("stopped"),
        "{failed}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_worker_runs_no_task_kept_in_one_isolates_memory() {
    let worker = tokio::task::spawn_blocking(|| {
        WorkerDev::start_at(
            "tests/tasks-worker",
            free_port(),
            Some(KEY),
            None,
            &[("WORKER_VARS", "TASKS_IN_MEMORY:true")],
        )
    })
    .await
    .unwrap();
    let reply = task_flows::post(
        &reqwest::Client::new(),
        &worker.url,
        1,
        "tools/call",
        json!({"name": "confirm-delete", "arguments": {"filename": "notes.txt"}}),
    )
    .await;
    assert_eq!(reply.body["error"]["code"], -32603, "{}", reply.body);
    let message = reply.body["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("runs no tasks"), "{message}");
}

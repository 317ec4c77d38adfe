//! Tasks any instance can answer: three `everything-server --redis`
//! processes sharing one real `redis-server` (issue: tasks in one process).
//!
//! A task started on one instance is polled, answered (`tasks/update`) and
//! fetched through the other two; cancelled through another instance, its
//! runner stops within a second; its instance killed, it ends `failed`
//! within the runner's lease (3 s) plus one poll interval (0.5 s) of the
//! kill, bounded here at 4.5 s. The first flows again with three
//! `everything-server --redis-cluster` processes on a three-master Redis Cluster.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::json;
use test_harness::task_flows::{TaskListener, post, start_task, task, until_status};
use test_harness::{RedisCluster, RedisServer, SharedRedis};

/// One `everything-server --redis` process; its standard error kept.
struct Instance {
    child: Child,
    url: String,
    log: Arc<Mutex<Vec<String>>>,
}

impl Instance {
    fn start(redis: &SharedRedis) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_everything-server"))
            .args(["--addr", "127.0.0.1:0"])
            .args(redis.flags())
            .env(
                "MRTR_REQUEST_STATE_KEY",
                "a shared key of at least thirty-two bytes",
            )
            .env("RUST_LOG", "tessera_server=info")
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("everything-server starts");
        let mut stdout = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("not a listening line: {line:?}"))
            .to_owned();
        let log = Arc::new(Mutex::new(Vec::new()));
        let kept = Arc::clone(&log);
        let stderr = child.stderr.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                kept.lock().unwrap().push(line);
            }
        });
        Self { child, url, log }
    }

    /// Whether a line of its log names task `id` and says `what`.
    fn logged_about(&self, id: &str, what: &str) -> bool {
        self.log
            .lock()
            .unwrap()
            .iter()
            .any(|l| l.contains(id) && l.contains(what))
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_started_on_one_instance_is_answered_fetched_and_cancelled_through_the_others() {
    answered_fetched_and_cancelled_through_the_others(SharedRedis::One(RedisServer::start())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_same_on_a_redis_cluster() {
    answered_fetched_and_cancelled_through_the_others(SharedRedis::Cluster(RedisCluster::start()))
        .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_on_one_instance_hears_a_task_run_on_another() {
    task_notifications_across_instances(SharedRedis::One(RedisServer::start())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_listener_hears_a_task_across_instances_on_a_redis_cluster() {
    task_notifications_across_instances(SharedRedis::Cluster(RedisCluster::start())).await;
}

/// `notifications/tasks` (the tasks extension page: "Servers MAY push
/// status updates via `notifications/tasks` notifications"; each "carries a
/// complete `DetailedTask` for the current status, identical to what
/// `tasks/get` would have returned"): a task started on A, listened to on B
/// by its id, answered through C; B hears it ask, resume and complete,
/// each with the listen request's id in `_meta`.
async fn task_notifications_across_instances(redis: SharedRedis) {
    let [a, b, c] = [(); 3].map(|()| Instance::start(&redis));
    let http = reqwest::Client::new();
    let id = start_task(
        &http,
        &a.url,
        "confirm_delete",
        json!({"filename": "notes.txt"}),
    )
    .await;
    // Listening first, then waiting until it asks (a notification sent
    // before the listener came is not replayed: polling covers that).
    let url = b.url.clone();
    let listened = id.clone();
    let mut listener = tokio::task::spawn_blocking(move || {
        let mut listener = TaskListener::open(&url, &[&listened, "not-a-task-id"]);
        let ack = listener.next_message();
        assert_eq!(
            ack["method"], "notifications/subscriptions/acknowledged",
            "{ack}"
        );
        assert_eq!(
            ack["params"]["notifications"],
            json!({"taskIds": [listened]}),
            "{ack}"
        );
        listener
    })
    .await
    .unwrap();
    until_status(&http, &c.url, &id, "input_required", Duration::from_secs(5)).await;
    let answered = post(&http, &c.url,
        3,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}),
    )
    .await;
    assert_eq!(answered.status, 200, "{}", answered.body);
    let heard = tokio::task::spawn_blocking(move || {
        let mut statuses = Vec::new();
        loop {
            let n = listener.next_message();
            assert_eq!(n["method"], "notifications/tasks", "{n}");
            assert_eq!(
                n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], 70,
                "{n}"
            );
            let status = n["params"]["status"].as_str().unwrap().to_owned();
            statuses.push(status.clone());
            if status == "completed" {
                return (statuses, n);
            }
        }
    })
    .await
    .unwrap();
    let (statuses, done) = heard;
    assert_eq!(
        statuses.last().map(String::as_str),
        Some("completed"),
        "{statuses:?}"
    );
    assert!(
        statuses.contains(&"working".to_owned()),
        "resumed: {statuses:?}"
    );
    assert_eq!(done["params"]["taskId"], id.as_str());
    assert_eq!(
        done["params"]["result"]["content"][0]["text"], "Deleted notes.txt.",
        "the full task, as tasks/get answers it: {done}"
    );
}

async fn answered_fetched_and_cancelled_through_the_others(redis: SharedRedis) {
    let [a, b, c] = [(); 3].map(|()| Instance::start(&redis));
    let http = reqwest::Client::new();

    // Started on A, polled on B until it asks, answered on C, fetched on B and C.
    let id = start_task(
        &http,
        &a.url,
        "confirm_delete",
        json!({"filename": "notes.txt"}),
    )
    .await;
    let asking = until_status(&http, &b.url, &id, "input_required", Duration::from_secs(5)).await;
    assert!(asking["inputRequests"]["confirm"].is_object(), "{asking}");
    let answered = post(&http, &c.url,
        3,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}),
    )
    .await;
    assert_eq!(answered.status, 200, "{}", answered.body);
    let done = until_status(&http, &b.url, &id, "completed", Duration::from_secs(5)).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "Deleted notes.txt.",
        "{done}"
    );
    assert_eq!(task(&http, &c.url, &id).await["status"], "completed");
    assert_eq!(task(&http, &a.url, &id).await["status"], "completed");

    // Another caller's view: an unknown id is the same -32602 everywhere.
    let unknown = post(
        &http,
        &b.url,
        4,
        "tasks/get",
        json!({"taskId": "0123456789abcdef0123456789abcdef"}),
    )
    .await;
    assert_eq!(unknown.body["error"]["code"], -32602, "{}", unknown.body);

    // Cancelled through B while it works on A: A's runner stops within a second.
    let id = start_task(&http, &a.url, "slow_compute", json!({"seconds": 30})).await;
    until_status(&http, &c.url, &id, "working", Duration::from_secs(5)).await;
    let cancelled_at = Instant::now();
    let cancel = post(&http, &b.url, 5, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(cancel.status, 200, "{}", cancel.body);
    while !a.logged_about(&id, "task stopped") {
        assert!(
            cancelled_at.elapsed() < Duration::from_secs(1),
            "A's runner did not stop within a second of the cancel on B"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    eprintln!(
        "A's runner stopped {:?} after the cancel on B",
        cancelled_at.elapsed()
    );
    assert_eq!(task(&http, &c.url, &id).await["status"], "cancelled");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_whose_instance_died_ends_failed_within_the_lease_and_a_poll() {
    let redis = SharedRedis::One(RedisServer::start());
    let mut a = Instance::start(&redis);
    let b = Instance::start(&redis);
    let http = reqwest::Client::new();
    let id = start_task(&http, &a.url, "slow_compute", json!({"seconds": 30})).await;
    let working = until_status(&http, &b.url, &id, "working", Duration::from_secs(5)).await;
    let poll = Duration::from_millis(working["pollIntervalMs"].as_u64().unwrap());
    let _ = a.child.kill();
    let _ = a.child.wait();
    let killed_at = Instant::now();
    let failed = until_status(&http, &b.url, &id, "failed", Duration::from_millis(4500)).await;
    let took = killed_at.elapsed();
    assert!(
        failed["statusMessage"]
            .as_str()
            .unwrap_or_default()
            .contains("stopped"),
        "{failed}"
    );
    assert_eq!(failed["error"]["code"], -32603, "{failed}");
    assert!(
        took <= Duration::from_secs(3) + poll + Duration::from_secs(1),
        "failed after {took:?}"
    );
    eprintln!("a task whose instance was killed ended failed {took:?} after the kill");
}

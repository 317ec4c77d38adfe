//! The second hostile review: 150 `slow_compute` tasks from one caller, each
//! with a 900 kB label, grew the server by 87 MB — a running task's
//! arguments were outside the caller's budget. Now the arguments one
//! caller's running tasks hold are bounded (16 MiB), past it 503 saying so,
//! and the server stays within the caller's 64 MB budget.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

use serde_json::json;
use test_harness::task_flows::post;

struct Server {
    child: Child,
    url: String,
}

impl Server {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_everything-server"))
            .args(["--addr", "127.0.0.1:0"])
            .env(
                "MRTR_REQUEST_STATE_KEY",
                "a shared key of at least thirty-two bytes",
            )
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("everything-server starts");
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("not a listening line: {line:?}"))
            .to_owned();
        Self { child, url }
    }

    fn rss_kib(&self) -> u64 {
        test_harness::rss_kib(self.child.id())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn labelled_tasks_stay_within_the_callers_budget() {
    let server = Server::start();
    let http = reqwest::Client::new();
    // Warm it with one small task.
    let r = post(
        &http,
        &server.url,
        1,
        "tools/call",
        json!({"name": "slow_compute", "arguments": {"seconds": 0.01}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let before = server.rss_kib();

    let label = "x".repeat(900_000);
    let (mut started, mut refused) = (0, 0);
    for id in 0..150 {
        let r = post(
            &http,
            &server.url,
            id + 2,
            "tools/call",
            json!({"name": "slow_compute", "arguments": {"seconds": 120, "label": label}}),
        )
        .await;
        match r.status {
            200 => {
                assert_eq!(r.body["result"]["resultType"], "task", "{}", r.body);
                started += 1;
            }
            503 => {
                let message = r.body["error"]["message"].as_str().unwrap_or_default();
                assert!(message.contains("your running tasks hold"), "{}", r.body);
                refused += 1;
            }
            other => panic!("{other}: {}", r.body),
        }
    }
    let after = server.rss_kib();
    assert_eq!(started + refused, 150);
    assert!(
        // tessera_server::MAX_RUNNING_ARGUMENT_BYTES_PER_CALLER: 16 MiB.
        started * 900_000 <= 16 * 1024 * 1024,
        "{started} tasks started"
    );
    assert!(refused > 0);
    assert!(
        after.saturating_sub(before) < 64 * 1024,
        "the server grew from {before} KiB to {after} KiB with {started} tasks running"
    );
}

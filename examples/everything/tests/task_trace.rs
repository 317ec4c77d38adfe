//! A task's requests are one story: the span of the `tasks/update` that
//! answers a task, and of the `tasks/cancel` that ends one, link to the span
//! of the `tools/call` that started it (its span context kept with the task,
//! `NewTask::trace`). Checked with a real OTLP/HTTP receiver
//! (`tests/peers/otlp_receiver.py`).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use test_harness::OtlpReceiver;
use test_harness::task_flows::{post, start_task, until_status};

/// `everything-server` exporting to `otlp`; killed when dropped.
struct Server {
    child: Child,
    url: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn server(otlp: &OtlpReceiver) -> Server {
    let mut child = Command::new(env!("CARGO_BIN_EXE_everything-server"))
        .args(["--addr", "127.0.0.1:0"])
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        .env("OTEL_SERVICE_NAME", "everything-under-test")
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
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
    Server { child, url }
}

/// The SERVER span named `name` whose `jsonrpc.request.id` is `id`.
fn span<'a>(spans: &'a [Value], name: &str, id: &str) -> Option<&'a Value> {
    spans.iter().find(|s| {
        s["kind"] == "SERVER" && s["name"] == name && s["attributes"]["jsonrpc.request.id"] == id
    })
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tasks_update_and_cancel_link_to_the_call_that_started_the_task() {
    let otlp = OtlpReceiver::start();
    let server = server(&otlp);
    let url = server.url.clone();
    let http = reqwest::Client::new();

    let id = start_task(&http, &url, "confirm_delete", json!({"filename": "a.txt"})).await;
    until_status(&http, &url, &id, "input_required", Duration::from_secs(5)).await;
    let answered = post(&http, &url, 3, "tasks/update",
        json!({"taskId": id, "inputResponses": {"confirm": {"action": "accept", "content": {"confirm": true}}}}),
    )
    .await;
    assert_eq!(answered.status, 200, "{}", answered.body);
    let slow = start_task(&http, &url, "slow_compute", json!({"seconds": 30})).await;
    let cancelled = post(&http, &url, 5, "tasks/cancel", json!({"taskId": slow})).await;
    assert_eq!(cancelled.status, 200, "{}", cancelled.body);

    let spans = otlp.wait_for(Duration::from_secs(20), |spans| {
        span(spans, "tasks/update", "3").is_some() && span(spans, "tasks/cancel", "5").is_some()
    });
    let calls: Vec<&Value> = spans
        .iter()
        .filter(|s| {
            s["kind"] == "SERVER"
                && (s["name"] == "tools/call confirm_delete"
                    || s["name"] == "tools/call slow_compute")
        })
        .collect();
    for (method, request, tool) in [
        ("tasks/update", "3", "tools/call confirm_delete"),
        ("tasks/cancel", "5", "tools/call slow_compute"),
    ] {
        let call = calls
            .iter()
            .find(|s| s["name"] == tool)
            .unwrap_or_else(|| panic!("no {tool} span: {spans:#?}"));
        let later = span(&spans, method, request).unwrap();
        let links: Vec<(&str, &str)> = later["links"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|l| {
                (
                    l["trace_id"].as_str().unwrap(),
                    l["span_id"].as_str().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            links,
            vec![(
                call["trace_id"].as_str().unwrap(),
                call["span_id"].as_str().unwrap()
            )],
            "{method} links to the call that started its task: {later}"
        );
    }
}

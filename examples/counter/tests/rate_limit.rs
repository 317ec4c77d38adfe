//! `counter --rate-limit N/WINDOW`: tool calls past the limit refused per
//! caller and per tool, over HTTP (429 with Retry-After) and stdio, then
//! let through again as the bucket refills; with `--redis` the limit holds
//! across instances. (The tools page: servers "MUST rate limit tool
//! invocations".)

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use test_harness::{Listening, RedisServer, mcp_post};

const KEY: &str = "rate-limit-test-key-0123456789abcdef0123";

fn counter(args: &[&str]) -> Listening {
    let mut command = Command::new(env!("CARGO_BIN_EXE_counter"));
    command
        .args(["--addr", "127.0.0.1:0"])
        .args(args)
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        // The listening line is logged at info.
        .env("RUST_LOG", "info");
    Listening::start(command)
}

fn first_round() -> Value {
    json!({"name": "increase-counter", "arguments": {"current": 10}})
}

async fn call(http: &reqwest::Client, url: &str, id: i64) -> test_harness::McpReply {
    mcp_post(http, url, None, id, "tools/call", first_round()).await
}

#[tokio::test(flavor = "multi_thread")]
async fn over_http_the_call_past_the_limit_gets_429_then_the_bucket_refills() {
    // 2 per second: a token back every 500 ms.
    let counter = tokio::task::spawn_blocking(|| counter(&["--rate-limit", "2/s"]))
        .await
        .unwrap();
    let http = reqwest::Client::new();
    for id in 1..=2 {
        let r = call(&http, &counter.url, id).await;
        assert_eq!(
            r.body["result"]["resultType"], "input_required",
            "{}",
            r.body
        );
    }
    let r = call(&http, &counter.url, 3).await;
    assert_eq!(r.status, 429, "{}", r.body);
    assert_eq!(r.header("retry-after"), "1");
    assert_eq!(r.body["error"]["code"], -32000, "{}", r.body);
    assert_eq!(
        r.body["error"]["message"],
        "Rate limited: tool increase-counter allows 2 per second per caller; try again in 1 s"
    );
    // Only tool calls count.
    let r = mcp_post(&http, &counter.url, None, 4, "tools/list", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    tokio::time::sleep(Duration::from_millis(600)).await;
    let r = call(&http, &counter.url, 5).await;
    assert_eq!(
        r.body["result"]["resultType"], "input_required",
        "{}",
        r.body
    );
}

#[test]
fn over_stdio_the_call_past_the_limit_is_refused() {
    let mut child = Command::new(env!("CARGO_BIN_EXE_counter"))
        .args(["--stdio", "--rate-limit", "2/min"])
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let mut answers = Vec::new();
    for id in 1..=3 {
        let mut params = first_round();
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}});
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        let mut line = String::new();
        stdout.read_line(&mut line).unwrap();
        answers.push(serde_json::from_str::<Value>(&line).unwrap());
    }
    drop(stdin);
    let _ = child.wait();
    assert_eq!(
        answers[0]["result"]["resultType"], "input_required",
        "{}",
        answers[0]
    );
    assert_eq!(
        answers[1]["result"]["resultType"], "input_required",
        "{}",
        answers[1]
    );
    assert_eq!(answers[2]["error"]["code"], -32000, "{}", answers[2]);
    assert_eq!(
        answers[2]["error"]["data"]["retryAfterSeconds"], 30,
        "{}",
        answers[2]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn with_redis_the_limit_holds_across_two_instances() {
    let redis = tokio::task::spawn_blocking(RedisServer::start)
        .await
        .unwrap();
    let url = redis.url();
    let [a, b] = tokio::task::spawn_blocking(move || {
        [(); 2].map(|_| counter(&["--redis", &url, "--rate-limit", "3/min"]))
    })
    .await
    .unwrap();
    let http = reqwest::Client::new();
    for (id, instance) in [(1, &a), (2, &b), (3, &a)] {
        let r = call(&http, &instance.url, id).await;
        assert_eq!(
            r.body["result"]["resultType"], "input_required",
            "{}",
            r.body
        );
    }
    // The fourth call, on either instance, finds the shared bucket empty.
    for (id, instance) in [(4, &b), (5, &a)] {
        let r = call(&http, &instance.url, id).await;
        assert_eq!(r.status, 429, "{}", r.body);
        assert_eq!(r.header("retry-after"), "20", "{}", r.body);
    }
}

/// The hostile review's finding 3: 120,000 made-up tool names from a caller
/// that has used up its limit neither give it a fresh bucket nor slow anyone
/// down — unknown names share one bucket, so they make up no keys — and a
/// caller from another address is served as usual. (Two an hour: no token
/// comes back while the test runs.)
#[tokio::test(flavor = "multi_thread")]
async fn made_up_tool_names_neither_reset_a_limit_nor_starve_a_fresh_caller() {
    let counter = tokio::task::spawn_blocking(|| counter(&["--rate-limit", "2/h"]))
        .await
        .unwrap();
    let limited = reqwest::Client::new();
    for id in 1..=2 {
        let r = call(&limited, &counter.url, id).await;
        assert_eq!(r.status, 200, "{}", r.body);
    }
    assert_eq!(call(&limited, &counter.url, 3).await.status, 429);

    const NAMES: usize = 120_000;
    const WORKERS: usize = 16;
    let mut workers = tokio::task::JoinSet::new();
    for worker in 0..WORKERS {
        let (http, url) = (limited.clone(), counter.url.clone());
        workers.spawn(async move {
            let mut limited = 0;
            for i in (worker..NAMES).step_by(WORKERS) {
                let params = json!({"name": format!("made-up-{i}"), "arguments": {}});
                let r = mcp_post(&http, &url, None, i as i64, "tools/call", params).await;
                match r.status {
                    429 => limited += 1,
                    // The shared bucket's first two tokens: an unknown tool.
                    200 => assert_eq!(r.body["error"]["code"], -32602, "{}", r.body),
                    other => panic!("{other}: {}", r.body),
                }
            }
            limited
        });
    }
    let limited_names: usize = workers.join_all().await.into_iter().sum();
    assert_eq!(
        limited_names,
        NAMES - 2,
        "all but two share one empty bucket"
    );
    let r = mcp_post(
        &limited,
        &counter.url,
        None,
        4,
        "tools/call",
        json!({"name": "made-up-0", "arguments": {}}),
    )
    .await;
    let message = r.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Rate limited: tool (unknown) allows 2 per hour per caller"),
        "{}",
        r.body
    );

    // Still limited on the real tool...
    let r = call(&limited, &counter.url, 5).await;
    assert_eq!(r.status, 429, "{}", r.body);
    // ...while a caller from another address is served.
    let fresh = reqwest::Client::builder()
        .local_address("127.0.0.2".parse::<std::net::IpAddr>().unwrap())
        .build()
        .unwrap();
    for id in 6..=7 {
        let r = call(&fresh, &counter.url, id).await;
        assert_eq!(
            r.body["result"]["resultType"], "input_required",
            "{}",
            r.body
        );
    }
}

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

/// A client on `from` (a loopback address), sending `X-Forwarded-For: spoof` when given.
fn client_on(from: &str, spoof: Option<&str>) -> reqwest::Client {
    let mut headers = reqwest::header::HeaderMap::new();
    if let Some(spoof) = spoof {
        headers.insert("x-forwarded-for", spoof.parse().unwrap());
    }
    reqwest::Client::builder()
        .local_address(from.parse::<std::net::IpAddr>().unwrap())
        .default_headers(headers)
        .build()
        .unwrap()
}

/// The second hostile review's finding 8: behind a load balancer every
/// anonymous caller was one caller. Behind nginx, with `--trust-proxy`, two
/// clients each get their own limit; a client's own `X-Forwarded-For`,
/// through nginx or sent straight to the server, changes nothing.
#[tokio::test(flavor = "multi_thread")]
async fn behind_nginx_with_trust_proxy_each_client_has_its_own_limit() {
    let counter = tokio::task::spawn_blocking(|| {
        counter(&["--rate-limit", "2/h", "--trust-proxy", "127.0.0.1/32"])
    })
    .await
    .unwrap();
    let conf = format!(
        "worker_processes 1;
error_log {{DIR}}/error.log warn;
pid {{DIR}}/nginx.pid;
events {{ worker_connections 256; }}
http {{
    access_log off;
    client_body_temp_path {{DIR}}/body;
    proxy_temp_path {{DIR}}/proxy;
    fastcgi_temp_path {{DIR}}/fastcgi;
    uwsgi_temp_path {{DIR}}/uwsgi;
    scgi_temp_path {{DIR}}/scgi;
    server {{
        listen 127.0.0.1:{{PORT}};
        location /mcp {{
            proxy_pass http://{};
            proxy_http_version 1.1;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
        }}
    }}
}}",
        counter.addr
    );
    let nginx = tokio::task::spawn_blocking(move || test_harness::Nginx::start(&conf))
        .await
        .unwrap();
    let front = format!("http://127.0.0.1:{}/mcp", nginx.port);
    let status = |r: test_harness::McpReply| r.status;

    let alice = client_on("127.0.0.2", None);
    let bob = client_on("127.0.0.3", None);
    for id in 1..=2 {
        assert_eq!(status(call(&alice, &front, id).await), 200);
    }
    assert_eq!(status(call(&alice, &front, 3).await), 429);
    // Bob, through the same proxy, has a limit of his own.
    for id in 4..=5 {
        assert_eq!(status(call(&bob, &front, id).await), 200);
    }
    assert_eq!(status(call(&bob, &front, 6).await), 429);

    // Alice claiming another address through nginx: nginx appends hers, and
    // the rightmost hop that is not the proxy is what counts.
    let spoofing = client_on("127.0.0.2", Some("127.0.0.77"));
    assert_eq!(status(call(&spoofing, &front, 7).await), 429);
    // Straight to the server, from an address that is no proxy, the header is ignored.
    let direct = client_on("127.0.0.2", Some("127.0.0.1, 127.0.0.88"));
    assert_eq!(status(call(&direct, &counter.url, 8).await), 429);
    // A third client, directly, has its own limit too.
    let carol = client_on("127.0.0.4", Some("127.0.0.2"));
    assert_eq!(status(call(&carol, &counter.url, 9).await), 200);
}

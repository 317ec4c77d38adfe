//! `tessera-gateway` with real processes: the Python SDK (2.3) server over
//! stdio whose tool pushes `elicitation/create` in a 2025-11-25 session, and
//! the TypeScript SDK (2.4) server over HTTP whose tool asks with multi
//! round-trip requests, behind the gateway; the official Python SDK client
//! in 2026-07-28 mode, raw HTTP rounds, and the `tessera` CLI in a terminal
//! as the gateway's clients.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use test_harness::{Listening, McpReply, RedisServer, TempDir, TsMrtrServer, mcp_post};

const KEY: &str = "gateway-test-key-0123456789abcdef0123456789";

fn python() -> PathBuf {
    test_harness::peers_dir().join(".venv/bin/python")
}

/// The gateway's configuration: the Python SDK server (a copy of it named
/// `script`, so that a test can find its process) and the TypeScript one.
fn config(dir: &Path, ts_url: &str, script: &str, limits: &str) -> PathBuf {
    let peer = test_harness::peers_dir().join("python_elicit_server.py");
    let copy = dir.join(script);
    std::fs::copy(&peer, &copy).expect("the Python peer is in tests/peers");
    let path = dir.join("gateway.toml");
    std::fs::write(
        &path,
        format!(
            r#"{limits}
[[upstream]]
name = "py"
command = [{python:?}, {copy:?}]
# The SDK serves both eras; its tool asks only in the initialize era.
era = "initialize"

[[upstream]]
name = "ts"
url = "{ts_url}"
"#,
            python = python().display().to_string(),
            copy = copy.display().to_string(),
        ),
    )
    .unwrap();
    path
}

/// A gateway process on a free port, with `args` besides the configuration.
fn gateway(config: &Path, args: &[&str]) -> Listening {
    assert!(
        python().exists(),
        "the Python SDK is not installed: run scripts/install-test-peers (scripts/test does)"
    );
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tessera-gateway"));
    cmd.arg("--config")
        .arg(config)
        .args(["--addr", "127.0.0.1:0"])
        .args(args)
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .env("RUST_LOG", "info");
    Listening::start(cmd)
}

/// Runs the Python SDK client in `mode` through the gateway for `tool`.
fn python_client(url: &str, mode: &str, scenario: &str, tool: &str) -> Value {
    test_harness::run_peer(
        &python(),
        "python_client.py",
        &[mode, scenario, url],
        &[("MCP_TOOL", tool)],
    )
}

/// The counter's flows, in 2026-07-28 mode: three rounds, a decline at the
/// first question, a cancel at the second — through the gateway to an
/// upstream that pushes its questions and to one that asks in rounds.
#[test]
fn the_python_sdk_client_completes_both_upstreams_flows() {
    let ts = TsMrtrServer::start();
    let dir = TempDir::new("gateway-flows");
    let gw = gateway(&config(&dir.0, &ts.url, "py-flows.py", ""), &[]);
    for tool in ["py__increase-counter", "ts__increase-counter"] {
        let done = python_client(&gw.url, "2026-07-28", "accept", tool);
        assert_eq!(done["protocolVersion"], "2026-07-28", "{done}");
        assert_eq!(
            done["text"], "Counter increased by 5; next value is 15",
            "{tool}: {done}"
        );
        assert_eq!(done["asked"].as_array().unwrap().len(), 2, "{done}");
        assert_eq!(done["asked"][1]["message"], "Increase 10 by 5?", "{done}");
        let tools = done["tools"].as_array().unwrap();
        assert!(
            tools.contains(&json!("py__increase-counter"))
                && tools.contains(&json!("ts__increase-counter")),
            "{done}"
        );

        let declined = python_client(&gw.url, "2026-07-28", "decline", tool);
        assert_eq!(
            declined["text"], "Counter increase cancelled.",
            "{tool}: {declined}"
        );
        assert_eq!(declined["asked"].as_array().unwrap().len(), 1, "{declined}");

        let cancelled = python_client(&gw.url, "2026-07-28", "cancel", tool);
        assert_eq!(
            cancelled["text"], "Counter increase cancelled.",
            "{tool}: {cancelled}"
        );
        assert_eq!(
            cancelled["asked"].as_array().unwrap().len(),
            2,
            "{cancelled}"
        );
    }
    // An initialize-era client through the gateway's own session lane, to the pushing upstream.
    let legacy = python_client(&gw.url, "legacy", "accept", "py__increase-counter");
    assert_eq!(legacy["protocolVersion"], "2025-11-25", "{legacy}");
    assert_eq!(
        legacy["text"], "Counter increased by 5; next value is 15",
        "{legacy}"
    );
}

/// One raw 2026-07-28 round of `tool` at `url`.
async fn round(http: &reqwest::Client, url: &str, id: i64, tool: &str, extra: Value) -> McpReply {
    let mut params = json!({"name": tool, "arguments": {"current": 10}});
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().cloned().unwrap_or_default());
    mcp_post(http, url, None, id, "tools/call", params).await
}

/// Accepts the one question `reply` asks (its key is the upstream's: a
/// server that pushes names none, so it is the kind, `elicitation`).
fn accept(reply: &McpReply, content: Value) -> Value {
    json!({ asked_key(reply): {"action": "accept", "content": content} })
}

fn asked_key(reply: &McpReply) -> String {
    let asked = reply.body["result"]["inputRequests"].as_object();
    let key = asked.and_then(|a| a.keys().next());
    key.unwrap_or_else(|| panic!("nothing asked: {}", reply.body))
        .clone()
}

fn state(reply: &McpReply) -> Value {
    let state = &reply.body["result"]["requestState"];
    assert!(state.is_string(), "no requestState: {}", reply.body);
    state.clone()
}

/// Two gateway instances sharing Redis, every round of a flow on the other
/// instance than the round before: the held call's answers are relayed to
/// the instance holding it, the relayed upstream's rounds need nothing; the
/// ticket is single use, and what the gateway's ticket carries is not the
/// upstream's `requestState` as it is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_round_on_the_other_instance() {
    let redis = RedisServer::start();
    let ts = TsMrtrServer::start();
    let dir = TempDir::new("gateway-instances");
    let config = config(&dir.0, &ts.url, "py-instances.py", "");
    let a = gateway(&config, &["--redis", &redis.url()]);
    let b = gateway(&config, &["--redis", &redis.url()]);
    let http = reqwest::Client::new();
    for tool in ["py__increase-counter", "ts__increase-counter"] {
        let first = round(&http, &a.url, 1, tool, json!({})).await;
        assert_eq!(
            first.body["result"]["resultType"], "input_required",
            "{tool}: {}",
            first.body
        );
        let ticket = state(&first);
        assert!(
            !ticket.as_str().unwrap().starts_with("v1."),
            "the upstream's own state is not shown: {ticket}"
        );
        let second = round(
            &http,
            &b.url,
            2,
            tool,
            json!({
                "requestState": ticket,
                "inputResponses": accept(&first, json!({"amount": 5})),
            }),
        )
        .await;
        assert_eq!(
            second.body["result"]["inputRequests"][asked_key(&second)]["params"]["message"],
            "Increase 10 by 5?",
            "{tool}: {}",
            second.body
        );
        // The ticket of round one is spent.
        let replayed = round(
            &http,
            &a.url,
            3,
            tool,
            json!({
                "requestState": ticket,
                "inputResponses": accept(&first, json!({"amount": 7})),
            }),
        )
        .await;
        assert_eq!(
            replayed.body["error"]["code"], -32602,
            "{tool}: {}",
            replayed.body
        );
        let done = round(
            &http,
            &a.url,
            4,
            tool,
            json!({
                "requestState": state(&second),
                "inputResponses": accept(&second, json!({"confirm": true})),
            }),
        )
        .await;
        assert_eq!(
            done.body["result"]["content"][0]["text"], "Counter increased by 5; next value is 15",
            "{tool}: {}",
            done.body
        );
    }
    // A call held by an instance that is gone: the retry is told so, at once.
    let first = round(&http, &a.url, 10, "py__increase-counter", json!({})).await;
    let ticket = state(&first);
    drop(a);
    let orphan = round(
        &http,
        &b.url,
        11,
        "py__increase-counter",
        json!({
            "requestState": ticket,
            "inputResponses": accept(&first, json!({"amount": 5})),
        }),
    )
    .await;
    let message = orphan.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("is gone") && message.contains("start the call again"),
        "{}",
        orphan.body
    );
}

/// The stdio upstream's process killed mid-flow: the waiting call gets an
/// error naming the upstream, and the next call is served by the process
/// the gateway started again.
#[tokio::test]
async fn a_stdio_upstream_killed_mid_flow_is_restarted() {
    let ts = TsMrtrServer::start();
    let dir = TempDir::new("gateway-kill");
    let script = format!("py-kill-{}.py", std::process::id());
    let gw = gateway(&config(&dir.0, &ts.url, &script, ""), &[]);
    let http = reqwest::Client::new();
    let tool = "py__increase-counter";
    let first = round(&http, &gw.url, 1, tool, json!({})).await;
    let ticket = state(&first);
    let killed = Command::new("pkill")
        .args(["-f", &script])
        .status()
        .unwrap();
    assert!(killed.success(), "the upstream process runs");
    let after = round(
        &http,
        &gw.url,
        2,
        tool,
        json!({
            "requestState": ticket,
            "inputResponses": accept(&first, json!({"amount": 5})),
        }),
    )
    .await;
    let message = after.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"py\""),
        "the error names the upstream: {}",
        after.body
    );
    // The other upstream never noticed.
    let ts_first = round(&http, &gw.url, 3, "ts__increase-counter", json!({})).await;
    assert_eq!(
        ts_first.body["result"]["resultType"], "input_required",
        "{}",
        ts_first.body
    );
    // The next call is served once the process is back (within its backoff).
    let started = Instant::now();
    let again = loop {
        let again = round(&http, &gw.url, 4, tool, json!({})).await;
        if again.body["result"]["resultType"] == "input_required" {
            break again;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "not served again: {}",
            again.body
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    // A decline ends that call, and frees the stdio server's one-call lane.
    let declined = round(
        &http,
        &gw.url,
        5,
        tool,
        json!({
            "requestState": state(&again),
            "inputResponses": {asked_key(&again): {"action": "decline"}},
        }),
    )
    .await;
    assert_eq!(
        declined.body["result"]["content"][0]["text"], "Counter increase cancelled.",
        "{}",
        declined.body
    );
    // An HTTP upstream that is down gets the same: an error naming it, the others serving.
    drop(ts);
    let down = round(&http, &gw.url, 5, "ts__increase-counter", json!({})).await;
    let message = down.body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("\"ts\""),
        "the error names the upstream: {}",
        down.body
    );
    let still = round(&http, &gw.url, 6, tool, json!({})).await;
    assert_eq!(
        still.body["result"]["resultType"], "input_required",
        "{}",
        still.body
    );
}

/// An upstream's `rate_limit` counts calls of each of its tools per caller;
/// the other upstream's tools are not counted.
#[tokio::test]
async fn an_upstreams_rate_limit_applies_to_its_tools_only() {
    let ts = TsMrtrServer::start();
    let dir = TempDir::new("gateway-rate");
    let path = config(&dir.0, &ts.url, "py-rate.py", "");
    let text = std::fs::read_to_string(&path).unwrap();
    std::fs::write(&path, format!("{text}rate_limit = \"1/h\"\n")).unwrap();
    let gw = gateway(&path, &[]);
    let http = reqwest::Client::new();
    let first = round(&http, &gw.url, 1, "ts__increase-counter", json!({})).await;
    assert_eq!(
        first.body["result"]["resultType"], "input_required",
        "{}",
        first.body
    );
    let limited = round(&http, &gw.url, 2, "ts__increase-counter", json!({})).await;
    assert_eq!(limited.status, 429, "{}", limited.body);
    let other = round(&http, &gw.url, 3, "py__increase-counter", json!({})).await;
    assert_eq!(
        other.body["result"]["resultType"], "input_required",
        "{}",
        other.body
    );
}

/// Held calls are bounded per caller: past the bound a call is refused
/// before anything happens upstream, with a message that says why; an
/// answered call frees its place.
#[tokio::test]
async fn held_calls_are_bounded_per_caller() {
    let ts = TsMrtrServer::start();
    let dir = TempDir::new("gateway-bounds");
    let limits = "[limits]\nheld_calls_per_caller = 1\n";
    let gw = gateway(&config(&dir.0, &ts.url, "py-bounds.py", limits), &[]);
    let http = reqwest::Client::new();
    let tool = "py__increase-counter";
    let first = round(&http, &gw.url, 1, tool, json!({})).await;
    let ticket = state(&first);
    let refused = round(&http, &gw.url, 2, tool, json!({})).await;
    let message = refused.body["error"]["message"]
        .as_str()
        .unwrap_or_default();
    assert!(
        message.contains("as many as one caller may"),
        "{}",
        refused.body
    );
    // A decline ends the first call: its place is free again.
    let declined = round(
        &http,
        &gw.url,
        3,
        tool,
        json!({
            "requestState": ticket,
            "inputResponses": {asked_key(&first): {"action": "decline"}},
        }),
    )
    .await;
    assert_eq!(
        declined.body["result"]["content"][0]["text"], "Counter increase cancelled.",
        "{}",
        declined.body
    );
    let again = round(&http, &gw.url, 4, tool, json!({})).await;
    assert_eq!(
        again.body["result"]["resultType"], "input_required",
        "{}",
        again.body
    );
}

/// The `tessera` CLI draws the forms the stdio upstream pushes, through the
/// gateway, in a terminal.
#[test]
fn the_cli_draws_the_pushed_forms() {
    let tessera = Path::new(env!("CARGO_BIN_EXE_tessera-gateway")).with_file_name("tessera");
    assert!(
        tessera.exists(),
        "{} is not built: run cargo build --workspace --bins (scripts/test does)",
        tessera.display()
    );
    let ts = TsMrtrServer::start();
    let dir = TempDir::new("gateway-cli");
    let gw = gateway(&config(&dir.0, &ts.url, "py-cli.py", ""), &[]);
    let mut cmd = Command::new(tessera);
    cmd.args(["call", &gw.url, "py__increase-counter", "current=10"]);
    test_harness::counter_forms_in_a_terminal(cmd);
}

/// An upstream's list change is the gateway's: the stdio server adds a tool
/// and says so, and the gateway offers it.
#[tokio::test]
async fn an_upstreams_list_change_is_the_gateways() {
    let ts = TsMrtrServer::start();
    let dir = TempDir::new("gateway-lists");
    let gw = gateway(&config(&dir.0, &ts.url, "py-lists.py", ""), &[]);
    let http = reqwest::Client::new();
    let names = |reply: &McpReply| -> Vec<String> {
        let tools = reply.body["result"]["tools"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        tools
            .iter()
            .filter_map(|t| t["name"].as_str().map(str::to_owned))
            .collect()
    };
    let before = mcp_post(&http, &gw.url, None, 1, "tools/list", json!({})).await;
    assert!(
        !names(&before).contains(&"py__grown".to_owned()),
        "{}",
        before.body
    );
    let grew = mcp_post(
        &http,
        &gw.url,
        None,
        2,
        "tools/call",
        json!({"name": "py__grow", "arguments": {}}),
    )
    .await;
    assert_eq!(
        grew.body["result"]["content"][0]["text"], "added grown",
        "{}",
        grew.body
    );
    let started = Instant::now();
    loop {
        let now = mcp_post(&http, &gw.url, None, 3, "tools/list", json!({})).await;
        if names(&now).contains(&"py__grown".to_owned()) {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "not offered: {}",
            now.body
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let called = mcp_post(
        &http,
        &gw.url,
        None,
        4,
        "tools/call",
        json!({"name": "py__grown", "arguments": {}}),
    )
    .await;
    assert_eq!(
        called.body["result"]["content"][0]["text"], "grown",
        "{}",
        called.body
    );
}

/// Every flag `tessera-gateway --help` prints is in the guide: the Gateway
/// chapter or the Startup chapter it refers to.
#[test]
fn every_flag_of_the_help_is_in_the_guide() {
    const GATEWAY: &str = include_str!("../../tessera/docs/gateway.md");
    const STARTUP: &str = include_str!("../../tessera/docs/startup.md");
    let gateway = Path::new(env!("CARGO_BIN_EXE_tessera-gateway"));
    let missing = test_harness::undocumented_flags(gateway, &[GATEWAY, STARTUP], 10);
    assert!(missing.is_empty(), "not in the guide: {missing:?}");
}

/// A question the caller cannot answer (it declared no elicitation) is
/// refused to the upstream at once instead of held: the call ends, and its
/// place is free for the caller's next call.
#[tokio::test]
async fn a_pushed_question_the_caller_cannot_answer_is_not_held() {
    let ts = TsMrtrServer::start();
    let dir = TempDir::new("gateway-caps");
    let limits = "[limits]\nheld_calls_per_caller = 1\n";
    let gw = gateway(&config(&dir.0, &ts.url, "py-caps.py", limits), &[]);
    let http = reqwest::Client::new();
    let params = json!({"name": "py__increase-counter", "arguments": {"current": 10}});
    let unable =
        test_harness::mcp_post_declaring(&http, &gw.url, None, 1, "tools/call", params, json!({}))
            .await;
    assert_ne!(
        unable.body["result"]["resultType"], "input_required",
        "{}",
        unable.body
    );
    let able = round(&http, &gw.url, 2, "py__increase-counter", json!({})).await;
    assert_eq!(
        able.body["result"]["resultType"], "input_required",
        "{}",
        able.body
    );
}

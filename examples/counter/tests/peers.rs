//! The counter driven by the official SDK clients, over stdio and over
//! Streamable HTTP, in both protocol eras: the Python SDK 2.x, the
//! TypeScript SDK 2.x client and, over HTTP, the TypeScript SDK 1.x client
//! (initialize era only). Installed by `scripts/install-test-peers` (which
//! `scripts/test` runs first).
//!
//! Over HTTP the initialize-era clients reach `counter --legacy serve`: the
//! sessionful transport of 2025-11-25, where "the server MAY send JSON-RPC
//! requests and notifications before sending the JSON-RPC response" on the
//! call's stream; each form is such an `elicitation/create` request.

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

const KEY: &str = "stdio-peer-test-key-0123456789abcdef0123";

fn peers() -> PathBuf {
    test_harness::peers_dir()
}

/// Where a peer reaches the counter: a child it starts (`--stdio`), or a URL.
#[derive(Clone, Copy)]
enum Target<'a> {
    Stdio,
    Http(&'a str),
}

/// Runs one peer script with `args` against `target`.
fn run_peer(program: PathBuf, script: &str, args: &[&str], target: Target<'_>) -> Value {
    let mut args = args.to_vec();
    match target {
        Target::Stdio => args.extend([env!("CARGO_BIN_EXE_counter"), "--stdio"]),
        Target::Http(url) => args.push(url),
    }
    test_harness::run_peer(&program, script, &args, &[("MRTR_REQUEST_STATE_KEY", KEY)])
}

/// A peer client: runs one scenario in one mode against a target.
type Peer = fn(&str, &str, Target<'_>) -> Value;

fn python(mode: &str, scenario: &str, target: Target<'_>) -> Value {
    run_peer(
        peers().join(".venv/bin/python"),
        "python_client.py",
        &[mode, scenario],
        target,
    )
}

fn require_node_package(package: &str) {
    assert!(
        peers().join("node_modules").join(package).exists(),
        "{package} is not installed: run scripts/install-test-peers (scripts/test does)"
    );
}

fn typescript(mode: &str, scenario: &str, target: Target<'_>) -> Value {
    require_node_package("@modelcontextprotocol/client");
    run_peer(
        test_harness::node(),
        "ts_client.mjs",
        &[mode, scenario],
        target,
    )
}

/// The TypeScript SDK 1.x client: initialize era, Streamable HTTP only.
fn typescript_v1(mode: &str, scenario: &str, target: Target<'_>) -> Value {
    assert_eq!(
        mode, "legacy",
        "the 1.x client speaks only the initialize era"
    );
    require_node_package("@modelcontextprotocol/sdk");
    run_peer(
        test_harness::node(),
        "ts_sdk1_client.mjs",
        &[scenario],
        target,
    )
}

/// The three rounds, then decline at round one, cancel at round two and
/// `confirm: false`, in one era.
fn counter_flows(client: Peer, mode: &str, version: &str, target: Target<'_>) {
    let done = client(mode, "accept", target);
    assert_eq!(done["protocolVersion"], version, "{done}");
    assert_eq!(done["tools"], json!(["increase-counter"]));
    assert_eq!(done["text"], "Counter increased by 5; next value is 15");
    assert_eq!(done["isError"], false);
    let amount =
        json!({"message": "By how much should the counter increase?", "fields": ["amount"]});
    let confirm = json!({"message": "Increase 10 by 5?", "fields": ["confirm"]});
    assert_eq!(done["asked"], json!([amount, confirm]));
    for (scenario, asked) in [
        ("decline", json!([amount])),
        ("cancel", json!([amount, confirm])),
        ("confirm-false", json!([amount, confirm])),
    ] {
        let done = client(mode, scenario, target);
        assert_eq!(
            done["text"], "Counter increase cancelled.",
            "{scenario}: {done}"
        );
        assert_eq!(done["asked"], asked, "{scenario}: {done}");
    }
}

/// `counter --legacy serve` on a free port.
fn http_counter() -> test_harness::Listening {
    let mut command = Command::new(env!("CARGO_BIN_EXE_counter"));
    command
        .args(["--addr", "127.0.0.1:0", "--legacy", "serve"])
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .env("RUST_LOG", "info");
    test_harness::Listening::start(command)
}

#[test]
fn python_sdk_initialize_era_gets_the_forms_as_pushed_requests() {
    counter_flows(python, "legacy", "2025-11-25", Target::Stdio);
}

#[test]
fn python_sdk_2026_07_28_completes_the_rounds() {
    counter_flows(python, "2026-07-28", "2026-07-28", Target::Stdio);
}

#[test]
fn python_sdk_auto_negotiates_2026_07_28() {
    assert_eq!(
        python("auto", "accept", Target::Stdio)["protocolVersion"],
        "2026-07-28"
    );
}

#[test]
fn typescript_sdk_initialize_era_gets_the_forms_as_pushed_requests() {
    counter_flows(typescript, "legacy", "2025-11-25", Target::Stdio);
}

#[test]
fn typescript_sdk_2026_07_28_completes_the_rounds() {
    counter_flows(typescript, "2026-07-28", "2026-07-28", Target::Stdio);
}

#[test]
fn typescript_sdk_auto_negotiates_2026_07_28() {
    assert_eq!(
        typescript("auto", "accept", Target::Stdio)["protocolVersion"],
        "2026-07-28"
    );
}

#[test]
fn over_http_every_sdk_client_gets_the_forms_from_one_process() {
    let counter = http_counter();
    let url = Target::Http(&counter.url);
    counter_flows(python, "legacy", "2025-11-25", url);
    counter_flows(typescript, "legacy", "2025-11-25", url);
    counter_flows(typescript_v1, "legacy", "2025-11-25", url);
    // The same process serves 2026-07-28 clients their rounds.
    counter_flows(python, "2026-07-28", "2026-07-28", url);
    assert_eq!(
        typescript("auto", "accept", url)["protocolVersion"],
        "2026-07-28"
    );
}

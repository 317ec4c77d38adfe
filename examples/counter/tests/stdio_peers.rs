//! `counter --stdio` driven by the official Python SDK 2.x and TypeScript SDK
//! clients, in both protocol eras: installed by `scripts/install-test-peers`
//! (which `scripts/test` runs first).

use std::path::PathBuf;
use std::process::Command;

use serde_json::{Value, json};

const KEY: &str = "stdio-peer-test-key-0123456789abcdef0123";

fn peers() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers")
}

/// Runs one peer script; a missing peer fails with the command that installs it.
fn run_peer(program: PathBuf, script: &str, mode: &str, scenario: &str) -> Value {
    assert!(
        program.exists(),
        "{} is not installed: run scripts/install-test-peers (scripts/test does)",
        program.display()
    );
    let out = Command::new(&program)
        .arg(peers().join(script))
        .args([mode, scenario, env!("CARGO_BIN_EXE_counter"), "--stdio"])
        .current_dir(peers())
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .env("RUST_LOG", "warn")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script} {mode} {scenario} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{script} printed no result ({e}):\n{stdout}"))
}

fn python(mode: &str, scenario: &str) -> Value {
    run_peer(
        peers().join(".venv/bin/python"),
        "python_stdio_client.py",
        mode,
        scenario,
    )
}

fn typescript(mode: &str, scenario: &str) -> Value {
    let node = PathBuf::from(
        String::from_utf8(
            Command::new("sh")
                .args(["-c", "command -v node"])
                .output()
                .unwrap()
                .stdout,
        )
        .unwrap()
        .trim(),
    );
    assert!(
        peers()
            .join("node_modules/@modelcontextprotocol/client")
            .exists(),
        "the TypeScript SDK client is not installed: run scripts/install-test-peers (scripts/test does)"
    );
    run_peer(node, "ts_stdio_client.mjs", mode, scenario)
}

/// The three rounds, then decline, cancel and `confirm: false`, in one era.
fn counter_flows(client: fn(&str, &str) -> Value, mode: &str, version: &str) {
    let done = client(mode, "accept");
    assert_eq!(done["protocolVersion"], version, "{done}");
    assert_eq!(done["tools"], json!(["increase-counter"]));
    assert_eq!(done["text"], "Counter increased by 5; next value is 15");
    assert_eq!(done["isError"], false);
    assert_eq!(
        done["asked"],
        json!([
            {"message": "By how much should the counter increase?", "fields": ["amount"]},
            {"message": "Increase 10 by 5?", "fields": ["confirm"]}
        ])
    );
    for scenario in ["decline", "cancel", "confirm-false"] {
        let done = client(mode, scenario);
        assert_eq!(
            done["text"], "Counter increase cancelled.",
            "{scenario}: {done}"
        );
    }
}

#[test]
fn python_sdk_initialize_era_gets_the_forms_as_pushed_requests() {
    counter_flows(python, "legacy", "2025-11-25");
}

#[test]
fn python_sdk_2026_07_28_completes_the_rounds() {
    counter_flows(python, "2026-07-28", "2026-07-28");
}

#[test]
fn python_sdk_auto_negotiates_2026_07_28() {
    assert_eq!(python("auto", "accept")["protocolVersion"], "2026-07-28");
}

#[test]
fn typescript_sdk_initialize_era_gets_the_forms_as_pushed_requests() {
    counter_flows(typescript, "legacy", "2025-11-25");
}

#[test]
fn typescript_sdk_2026_07_28_completes_the_rounds() {
    counter_flows(typescript, "2026-07-28", "2026-07-28");
}

#[test]
fn typescript_sdk_auto_negotiates_2026_07_28() {
    assert_eq!(
        typescript("auto", "accept")["protocolVersion"],
        "2026-07-28"
    );
}

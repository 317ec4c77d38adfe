//! `counter --stdio` driven by Tessera's own client, in both protocol eras.

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;
use tessera::client::{ConnectMode, McpClient, ScriptedAnswer, ScriptedElicitor};

const KEY: &str = "stdio-client-test-key-0123456789abcdef01";

fn client(mode: ConnectMode, answers: &[(&str, ScriptedAnswer)]) -> McpClient {
    let answers: HashMap<String, ScriptedAnswer> = answers
        .iter()
        .map(|(k, a)| ((*k).to_owned(), a.clone()))
        .collect();
    McpClient::stdio(env!("CARGO_BIN_EXE_counter"), ["--stdio"])
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .env("RUST_LOG", "warn")
        .connect_mode(mode)
        .elicitor(Arc::new(ScriptedElicitor::new(answers)))
        .build()
        .unwrap()
}

fn accept(content: serde_json::Value) -> ScriptedAnswer {
    ScriptedAnswer::Accept(content.as_object().unwrap().clone())
}

async fn text_of(c: &McpClient) -> String {
    let result = c
        .call_tool("increase-counter", json!({"current": 10}))
        .await
        .unwrap();
    c.close().await;
    match &result.content[0] {
        tessera::protocol::ContentBlock::Text(t) => t.text.clone(),
        other => panic!("not text: {other:?}"),
    }
}

async fn flows(mode: ConnectMode, legacy: bool, version: &str) {
    let c = client(
        mode,
        &[
            ("amount", accept(json!({"amount": 5}))),
            ("confirmation", accept(json!({"confirm": true}))),
        ],
    );
    assert_eq!(c.is_initialize_era().await.unwrap(), legacy);
    assert_eq!(c.protocol_version(), version);
    let tools = c.list_tools().await.unwrap();
    assert_eq!(tools[0].name, "increase-counter");
    assert_eq!(
        text_of(&c).await,
        "Counter increased by 5; next value is 15"
    );

    for answers in [
        vec![("amount", ScriptedAnswer::Decline)],
        vec![("amount", ScriptedAnswer::Cancel)],
        vec![
            ("amount", accept(json!({"amount": 5}))),
            ("confirmation", ScriptedAnswer::Decline),
        ],
        vec![
            ("amount", accept(json!({"amount": 5}))),
            ("confirmation", accept(json!({"confirm": false}))),
        ],
    ] {
        let c = client(mode, &answers);
        assert_eq!(
            text_of(&c).await,
            "Counter increase cancelled.",
            "{answers:?}"
        );
    }
}

#[tokio::test]
async fn auto_settles_on_2026_07_28_and_completes_the_flows() {
    flows(ConnectMode::Auto, false, "2026-07-28").await;
}

#[tokio::test]
async fn the_initialize_era_completes_the_same_flows_with_pushed_questions() {
    flows(ConnectMode::Legacy, true, "2025-11-25").await;
}

#[tokio::test]
async fn discover_in_the_initialize_era_reports_the_handshake() {
    let c = client(ConnectMode::Legacy, &[]);
    let d = c.discover().await.unwrap();
    assert_eq!(d.supported_versions, vec!["2025-11-25".to_owned()]);
    assert!(d.capabilities.tools.is_some());
    c.close().await;
}

#[tokio::test]
async fn an_unanswered_pushed_question_is_reported_as_such() {
    // No scripted answer for `amount`: the client says so instead of inventing a decline.
    let c = client(
        ConnectMode::Legacy,
        &[("confirmation", ScriptedAnswer::Decline)],
    );
    let e = c
        .call_tool("increase-counter", json!({"current": 10}))
        .await
        .unwrap_err();
    assert!(
        e.to_string()
            .contains("no scripted answer for input request 'amount'"),
        "{e}"
    );
    c.close().await;
}

#[tokio::test]
async fn a_server_that_exits_is_an_error_naming_the_process() {
    let c = McpClient::stdio(env!("CARGO_BIN_EXE_counter"), ["--no-such-flag"])
        .build()
        .unwrap();
    let e = c.list_tools().await.unwrap_err();
    // Whichever the client notices first, the pipe closing or its write failing, it names the process.
    assert!(matches!(e, tessera::client::ClientError::Process(_)), "{e}");
    assert!(e.to_string().contains("/counter\" "), "{e}");
}

#[tokio::test]
async fn auto_falls_back_to_initialize_for_a_server_that_only_speaks_it() {
    // "The server returns any other error, or does not respond within a reasonable timeout:
    // the server is legacy. Fall back to the initialize handshake."
    let script = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/peers/ts_legacy_server.mjs");
    assert!(
        script
            .with_file_name("node_modules/@modelcontextprotocol/sdk")
            .exists(),
        "the TypeScript SDK 1.x server is not installed: run scripts/install-test-peers (scripts/test does)"
    );
    for (answer, text) in [
        (accept(json!({"name": "Ada"})), "Hello, Ada!"),
        (ScriptedAnswer::Decline, "No greeting."),
    ] {
        let c = McpClient::stdio("node", [script.to_str().unwrap()])
            .elicitor(Arc::new(ScriptedElicitor::new(HashMap::from([(
                "elicitation".to_owned(),
                answer,
            )]))))
            .build()
            .unwrap();
        assert!(c.is_initialize_era().await.unwrap());
        assert_eq!(c.protocol_version(), "2025-11-25");
        let result = c.call_tool("greet", json!({})).await.unwrap();
        c.close().await;
        match &result.content[0] {
            tessera::protocol::ContentBlock::Text(t) => assert_eq!(t.text, text),
            other => panic!("not text: {other:?}"),
        }
    }
}

#[tokio::test]
async fn lines_that_are_not_json_are_skipped() {
    // A server whose launcher prints a banner on stdout first (a common mistake) still works.
    let script = format!(
        "printf 'starting up\\n\\377\\376 not utf-8\\n'; exec '{}' --stdio",
        env!("CARGO_BIN_EXE_counter")
    );
    let c = McpClient::stdio("sh", ["-c", script.as_str()])
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .env("RUST_LOG", "warn")
        .build()
        .unwrap();
    assert_eq!(c.list_tools().await.unwrap()[0].name, "increase-counter");
    c.close().await;
}

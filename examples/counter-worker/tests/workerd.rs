//! The counter Worker under `wrangler dev` (workerd, the runtime Cloudflare
//! deploys to), driven over HTTP like any MCP client would.

use serde_json::json;
use test_harness::counter_flows::CounterCalls;
use test_harness::{CounterWorker, mcp_post};

const KEY: &str = "workerd-tests-key-0123456789abcdef0123";

#[tokio::test(flavor = "multi_thread")]
async fn the_counter_flows_and_refusals_under_workerd() {
    let worker = tokio::task::spawn_blocking(|| CounterWorker::start_with(Some(KEY), true))
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let url = worker.url.as_str();
    let mut calls = CounterCalls::new(&http, url, None);
    calls.check_flows().await;

    // Started with SINGLE_USE=true, every ticket is single-use (the
    // TICKET_LEDGER Durable Object): the final round replayed is refused.
    calls.check_replay_refused().await;

    calls.check_serverless_refusals().await;

    // Another path.
    let other = url.replace("/mcp", "/other");
    assert_eq!(
        http.post(&other).send().await.unwrap().status().as_u16(),
        404
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_missing_or_short_key_answers_500_naming_the_fix() {
    let http = reqwest::Client::new();
    for (key, expected) in [
        (None, "MRTR_REQUEST_STATE_KEY must be configured"),
        (Some("too-short"), "at least 32"),
    ] {
        let worker = tokio::task::spawn_blocking(move || CounterWorker::start(key))
            .await
            .unwrap();
        let r = mcp_post(&http, &worker.url, None, 1, "tools/list", json!({})).await;
        assert_eq!(r.status, 500, "{}", r.body);
        assert_eq!(r.body["error"]["code"], -32603, "{}", r.body);
        let message = r.body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(expected), "{message}");
    }
}

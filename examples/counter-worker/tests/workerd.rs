//! The counter Worker under `wrangler dev` (workerd, the runtime Cloudflare
//! deploys to), driven over HTTP like any MCP client would.

use serde_json::{Value, json};
use test_harness::{CounterWorker, McpReply, mcp_post};

const KEY: &str = "workerd-tests-key-0123456789abcdef0123";

/// Posts `increase-counter` with `current`, a ticket and answers.
async fn counter(
    http: &reqwest::Client,
    url: &str,
    id: &mut i64,
    current: f64,
    state: Option<&str>,
    responses: Option<Value>,
) -> McpReply {
    *id += 1;
    let mut params = json!({"name": "increase-counter", "arguments": {"current": current}});
    if let Some(s) = state {
        params["requestState"] = json!(s);
    }
    if let Some(r) = responses {
        params["inputResponses"] = r;
    }
    mcp_post(http, url, None, *id, "tools/call", params).await
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

fn state(r: &McpReply) -> String {
    r.body["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState in {}", r.body))
        .to_owned()
}

fn text(r: &McpReply) -> String {
    r.body["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {}", r.body))
        .to_owned()
}

/// A new flow taken to its confirmation question; its ticket.
async fn round_two(http: &reqwest::Client, url: &str, id: &mut i64) -> String {
    let s1 = state(&counter(http, url, id, 10.0, None, None).await);
    let amount = json!({"amount": accept(json!({"amount": 5}))});
    state(&counter(http, url, id, 10.0, Some(&s1), Some(amount)).await)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_counter_flows_and_refusals_under_workerd() {
    let worker = tokio::task::spawn_blocking(|| CounterWorker::start_with(Some(KEY), true))
        .await
        .unwrap();
    let http = reqwest::Client::new();
    let url = worker.url.as_str();
    let mut id = 0;

    // Three rounds: 10 + 5 -> 15.
    let r1 = counter(&http, url, &mut id, 10.0, None, None).await;
    assert_eq!(r1.status, 200, "{}", r1.body);
    assert_eq!(r1.body["result"]["resultType"], "input_required");
    assert!(r1.body["result"]["inputRequests"]["amount"].is_object());
    let s1 = state(&r1);
    let r2 = counter(
        &http,
        url,
        &mut id,
        10.0,
        Some(&s1),
        Some(json!({"amount": accept(json!({"amount": 5}))})),
    )
    .await;
    assert_eq!(
        r2.body["result"]["inputRequests"]["confirmation"]["params"]["message"],
        "Increase 10 by 5?"
    );
    let s2 = state(&r2);
    let confirmed = json!({"confirmation": accept(json!({"confirm": true}))});
    let r3 = counter(
        &http,
        url,
        &mut id,
        10.0,
        Some(&s2),
        Some(confirmed.clone()),
    )
    .await;
    assert_eq!(text(&r3), "Counter increased by 5; next value is 15");

    // Started with SINGLE_USE=true, every ticket is single-use (the
    // TICKET_LEDGER Durable Object): the final round replayed is refused.
    let replay = counter(
        &http,
        url,
        &mut id,
        10.0,
        Some(&s2),
        Some(confirmed.clone()),
    )
    .await;
    assert_eq!(replay.body["error"]["code"], -32602, "{}", replay.body);
    // (A replay is not told apart from a forgery: the same error for both.)
    assert_eq!(
        replay.body["error"]["message"],
        "Invalid or expired requestState"
    );

    // A fresh ticket for each case from here on.
    // Decline at round one's form.
    let s1 = state(&counter(&http, url, &mut id, 10.0, None, None).await);
    let r = counter(
        &http,
        url,
        &mut id,
        10.0,
        Some(&s1),
        Some(json!({"amount": {"action": "decline"}})),
    )
    .await;
    assert_eq!(text(&r), "Counter increase cancelled.");
    // Cancel at the confirmation.
    let s2 = round_two(&http, url, &mut id).await;
    let r = counter(
        &http,
        url,
        &mut id,
        10.0,
        Some(&s2),
        Some(json!({"confirmation": {"action": "cancel"}})),
    )
    .await;
    assert_eq!(text(&r), "Counter increase cancelled.");
    // confirm: false.
    let s2 = round_two(&http, url, &mut id).await;
    let r = counter(
        &http,
        url,
        &mut id,
        10.0,
        Some(&s2),
        Some(json!({"confirmation": accept(json!({"confirm": false}))})),
    )
    .await;
    assert_eq!(text(&r), "Counter increase cancelled.");

    // A tampered ticket.
    let s2 = round_two(&http, url, &mut id).await;
    let mut t = s2.clone().into_bytes();
    let i = t.len() - 5;
    t[i] = if t[i] == b'x' { b'y' } else { b'x' };
    let tampered = String::from_utf8(t).unwrap();
    let r = counter(
        &http,
        url,
        &mut id,
        10.0,
        Some(&tampered),
        Some(confirmed.clone()),
    )
    .await;
    assert_eq!(r.body["error"]["code"], -32602, "{}", r.body);
    assert_eq!(
        r.body["error"]["message"],
        "Invalid or expired requestState"
    );
    // The same ticket with other arguments.
    let r = counter(
        &http,
        url,
        &mut id,
        999.0,
        Some(&s2),
        Some(confirmed.clone()),
    )
    .await;
    assert_eq!(r.body["error"]["code"], -32602, "{}", r.body);

    // GET: no stream to open.
    let r = http
        .get(url)
        .header("accept", "text/event-stream")
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 405);

    // An initialize-era request.
    let r = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "old", "version": "1"}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    let body: Value = r.json().await.unwrap();
    assert_eq!(body["error"]["code"], -32022, "{body}");

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

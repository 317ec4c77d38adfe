//! A counter flow as a client sends it, for the endpoint bench and the
//! `flow_cost` example: request heads, bodies, and the three rounds with
//! real tickets.

use std::sync::Arc;

use bytes::Bytes;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use tessera::http::{EndpointOptions, McpEndpoint};

use crate::support::{block, call_params, server};

/// A `tools/call` body for `increase-counter` with `extra` params merged in.
pub fn body(id: u64, extra: Value) -> Bytes {
    Bytes::from(
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": call_params(extra)})
            .to_string(),
    )
}

/// The request head every round carries (built once: a server receives
/// heads parsed, and building one is the harness's cost, not the endpoint's).
pub fn head() -> http::request::Parts {
    thread_local! {
        static HEAD: http::request::Parts = build_head();
    }
    HEAD.with(Clone::clone)
}

fn build_head() -> http::request::Parts {
    http::Request::post("/mcp")
        .header("Host", "127.0.0.1:8787")
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "increase-counter")
        .body(())
        .expect("a valid request head")
        .into_parts()
        .0
}

/// The counter behind the endpoint, with a fixed key.
pub fn endpoint() -> McpEndpoint {
    McpEndpoint::new(Arc::new(server()), EndpointOptions::default())
}

/// Sends one body through `endpoint` and returns the response body.
pub fn send(endpoint: &McpEndpoint, body: Bytes) -> Bytes {
    let response = block(endpoint.handle(head(), body));
    block(response.into_body().collect())
        .expect("an in-memory body")
        .to_bytes()
}

/// The bodies of a whole flow (amount 5, confirmed), each round carrying
/// the ticket the previous one returned; checks the flow ends as it should.
pub fn rounds(endpoint: &McpEndpoint) -> [Bytes; 3] {
    let ticket = |response: &Bytes| -> Value {
        let v: Value = serde_json::from_slice(response).expect("JSON");
        v["result"]["requestState"].clone()
    };
    let b1 = body(1, json!({}));
    let s1 = ticket(&send(endpoint, b1.clone()));
    let b2 = body(
        2,
        json!({"requestState": s1, "inputResponses": {"amount": {"action": "accept", "content": {"amount": 5}}}}),
    );
    let s2 = ticket(&send(endpoint, b2.clone()));
    let b3 = body(
        3,
        json!({"requestState": s2, "inputResponses": {"confirmation": {"action": "accept", "content": {"confirm": true}}}}),
    );
    let done: Value = serde_json::from_slice(&send(endpoint, b3.clone())).expect("JSON");
    assert_eq!(
        done["result"]["content"][0]["text"],
        "Counter increased by 5; next value is 15"
    );
    [b1, b2, b3]
}

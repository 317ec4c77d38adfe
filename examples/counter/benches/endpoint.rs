//! The counter's rounds through the HTTP endpoint logic (head checks, body
//! parse, envelope, dispatch, framing), without sockets.

use std::sync::Arc;

use bytes::Bytes;
use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support.rs"]
mod support;
use http_body_util::BodyExt;
use serde_json::{Value, json};
use support::block;
use tessera_http::{EndpointOptions, McpEndpoint};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};

fn body(id: u64, extra: Value) -> Bytes {
    let mut params = json!({
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "bench", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
        },
        "name": "increase-counter",
        "arguments": {"current": 10}
    });
    if let (Some(p), Value::Object(e)) = (params.as_object_mut(), extra) {
        p.extend(e);
    }
    Bytes::from(
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string(),
    )
}

fn head() -> http::request::Parts {
    http::Request::post("/mcp")
        .header("Host", "127.0.0.1:8787")
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "increase-counter")
        .body(())
        .unwrap()
        .into_parts()
        .0
}

fn send(endpoint: &McpEndpoint, body: Bytes) -> Value {
    let response = block(endpoint.handle(head(), body));
    let bytes = block(response.into_body().collect()).unwrap().to_bytes();
    serde_json::from_slice(&bytes).unwrap()
}

fn rounds(c: &mut Criterion) {
    let key = StateKey::from_secret_str("bench-key-0123456789abcdef0123456789ab").unwrap();
    let server =
        counter::counter_server(RequestStateCodec::new(KeyRing::new("k1", key).unwrap())).unwrap();
    let endpoint = McpEndpoint::new(Arc::new(server), EndpointOptions::default());
    let r1 = send(&endpoint, body(1, json!({})));
    let s1 = r1["result"]["requestState"].as_str().unwrap().to_owned();
    let b2 = body(
        2,
        json!({"requestState": s1, "inputResponses": {"amount": {"action": "accept", "content": {"amount": 5}}}}),
    );
    let r2 = send(&endpoint, b2.clone());
    let s2 = r2["result"]["requestState"].as_str().unwrap().to_owned();
    let b3 = body(
        3,
        json!({"requestState": s2, "inputResponses": {"confirmation": {"action": "accept", "content": {"confirm": true}}}}),
    );
    let b1 = body(1, json!({}));
    for (name, b) in [
        ("endpoint round 1", b1),
        ("endpoint round 2", b2),
        ("endpoint round 3", b3),
    ] {
        c.bench_function(name, |bench| {
            bench.iter(|| {
                let response = block(endpoint.handle(head(), b.clone()));
                block(response.into_body().collect()).unwrap().to_bytes()
            })
        });
    }
}

criterion_group!(benches, rounds);
criterion_main!(benches);

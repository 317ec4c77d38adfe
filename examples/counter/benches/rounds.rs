//! Dispatch of each counter round without HTTP: envelope, ticket, handler, result.

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support.rs"]
mod support;
use serde_json::{Value, json};
use support::block;
use tessera_protocol::JsonRpcRequest;
use tessera_server::{McpServer, RequestFacts};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};

fn server() -> McpServer {
    let key = StateKey::from_secret_str("bench-key-0123456789abcdef0123456789ab").unwrap();
    counter::counter_server(RequestStateCodec::new(KeyRing::new("k1", key).unwrap())).unwrap()
}

fn request(extra: Value) -> JsonRpcRequest<Value> {
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
    JsonRpcRequest {
        jsonrpc: Default::default(),
        id: 1.into(),
        method: "tools/call".into(),
        params: Some(params),
    }
}

fn rounds(c: &mut Criterion) {
    let server = server();
    let r1 = block(server.handle(request(json!({})), RequestFacts::modern()));
    let s1 = r1.result_value().unwrap()["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let round2 = request(
        json!({"requestState": s1, "inputResponses": {"amount": {"action": "accept", "content": {"amount": 5}}}}),
    );
    let r2 = block(server.handle(round2.clone(), RequestFacts::modern()));
    let s2 = r2.result_value().unwrap()["requestState"]
        .as_str()
        .unwrap()
        .to_owned();
    let round3 = request(
        json!({"requestState": s2, "inputResponses": {"confirmation": {"action": "accept", "content": {"confirm": true}}}}),
    );
    let round1 = request(json!({}));

    c.bench_function("counter round 1 (ask amount)", |b| {
        b.iter(|| block(server.handle(round1.clone(), RequestFacts::modern())).to_bytes())
    });
    c.bench_function("counter round 2 (open, ask confirmation)", |b| {
        b.iter(|| block(server.handle(round2.clone(), RequestFacts::modern())).to_bytes())
    });
    c.bench_function("counter round 3 (open, complete)", |b| {
        b.iter(|| block(server.handle(round3.clone(), RequestFacts::modern())).to_bytes())
    });
}

criterion_group!(benches, rounds);
criterion_main!(benches);

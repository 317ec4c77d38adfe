//! Dispatch of each counter round without HTTP: envelope, ticket, handler, result.

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "support.rs"]
mod support;
use serde_json::{Value, json};
use support::{block, call_params, server};
use tessera::RequestFacts;
use tessera::protocol::JsonRpcRequest;

fn request(extra: Value) -> JsonRpcRequest<Value> {
    JsonRpcRequest {
        jsonrpc: Default::default(),
        id: 1.into(),
        method: "tools/call".into(),
        params: Some(call_params(extra)),
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

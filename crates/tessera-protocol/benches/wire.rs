//! Parsing a typical `tools/call` request and serialising a typical answer.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};
use tessera_protocol::{
    CallToolRequestParams, CallToolResult, InputRequiredResult, JsonRpcMessage, JsonRpcRequest,
    JsonRpcResultResponse, Outcome, RequestId,
};

const ROUND_TWO: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"curl","version":"8"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}},"name":"increase-counter","arguments":{"current":10},"inputResponses":{"amount":{"action":"accept","content":{"amount":5}}},"requestState":"t1e.k1.9n9xqLJ5uYfAYRGPmKdBEhPtkxp2hxctnP7RFE_ppFUQt_x5t0gM9h4d9QEgCtS4vKdrU3bw9x9coFSo5OnnNDw6Mvba2b2ppfDL9VnZGQfbwhsczXAO-HX8M34HGcuCHqx2wXoQsBEE0SOw5cf_HNfDrjRpmGLOLRnDlchJ7EPqQkNgDYzC81iCu6q6EbJynvIAAGWqKPopb_j6F6K3Q"}}"#;

fn wire(c: &mut Criterion) {
    c.bench_function("parse tools/call into a classified message", |b| {
        b.iter(|| {
            let v: Value = serde_json::from_str(black_box(ROUND_TWO)).unwrap();
            JsonRpcMessage::from_value(v).unwrap()
        })
    });
    c.bench_function("parse tools/call into typed params", |b| {
        b.iter(|| {
            serde_json::from_str::<JsonRpcRequest<CallToolRequestParams>>(black_box(ROUND_TWO))
                .unwrap()
        })
    });
    let ask: InputRequiredResult = serde_json::from_value(json!({
        "resultType": "input_required",
        "inputRequests": {"confirmation": {"method": "elicitation/create", "params": {"mode": "form", "message": "Increase 10 by 5?",
            "requestedSchema": {"type": "object", "properties": {"confirm": {"type": "boolean", "title": "Confirm increase"}}, "required": ["confirm"]}}}},
        "requestState": "t1e.k1.9n9xqLJ5uYfAYRGPmKdBEhPtkxp2hxctnP7RFE_ppFUQt_x5t0gM9h4d9QEgCtS4vKdrU3bw9x9coFSo5OnnNDw6Mvba2b2ppfDL9"
    }))
    .unwrap();
    let response = JsonRpcResultResponse::new(
        RequestId::from(2),
        Outcome::<CallToolResult>::InputRequired(ask),
    );
    c.bench_function("serialise an input_required response", |b| {
        b.iter(|| serde_json::to_vec(black_box(&response)).unwrap())
    });
    let done = JsonRpcResultResponse::new(
        RequestId::from(3),
        CallToolResult::text("Counter increased by 5; next value is 15"),
    );
    c.bench_function("serialise a complete response", |b| {
        b.iter(|| serde_json::to_vec(black_box(&done)).unwrap())
    });
}

criterion_group!(benches, wire);
criterion_main!(benches);

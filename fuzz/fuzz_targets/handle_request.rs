//! The request path, fed arbitrary bytes: the HTTP endpoint (envelope,
//! `_meta`, params, answers to a form the tool accepts up front), the one
//! intake every transport reads messages through (with its era and envelope
//! rules), and the form schema and content checks. Nothing may panic; every input gets an answer.
//!
//! Run with `cargo +nightly fuzz run handle_request` from the repository root.

#![no_main]

use std::future::Future;
use std::sync::{Arc, LazyLock};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use tessera_http::{EndpointOptions, McpEndpoint};
use tessera_protocol::{ElicitationSchema, JsonObject};
use tessera_server::{Context as ToolContext, Form, McpServer, ToolDef};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Details {
    name: String,
    age: Option<u32>,
    ok: bool,
}

impl Form for Details {
    const KEY: &'static str = "details";
}

static ENDPOINT: LazyLock<McpEndpoint> = LazyLock::new(|| {
    let key = StateKey::from_secret_str("fuzzing secret, at least thirty-two bytes").expect("key");
    let server = McpServer::builder("fuzz", "1")
        .request_state(RequestStateCodec::new(KeyRing::new("k1", key).expect("ring")))
        .tool(
            ToolDef::new("ask", |ctx: ToolContext, _args: Value| async move {
                let d = ctx.ask::<Details>("Details?")?;
                Ok::<_, tessera_server::HandlerError>(format!("{} {:?} {}", d.name, d.age, d.ok))
            })
            .accepts_upfront::<Details>(),
        )
        .build()
        .expect("server");
    McpEndpoint::new(Arc::new(server), EndpointOptions::default())
});

/// Polls `future` a few times without a runtime (the handlers here never wait).
fn settle<F: Future>(future: F) -> Option<F::Output> {
    let mut future = std::pin::pin!(future);
    let mut cx = Context::from_waker(Waker::noop());
    (0..8).find_map(|_| match future.as_mut().poll(&mut cx) {
        Poll::Ready(out) => Some(out),
        Poll::Pending => None,
    })
}

fuzz_target!(|data: &[u8]| {
    let Some((&selector, rest)) = data.split_first() else {
        return;
    };
    match selector % 3 {
        0 => {
            let request = http::Request::post("/mcp")
                .header("host", "localhost")
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-protocol-version", "2026-07-28")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "ask")
                .body(())
                .expect("request");
            let (head, ()) = request.into_parts();
            let response = settle(ENDPOINT.handle(head, Bytes::copy_from_slice(rest)));
            if let Some(response) = response {
                assert!(response.status().as_u16() >= 200);
            }
        }
        1 => {
            let limits = tessera_server::intake::Limits {
                max_json_values: 2_000,
                ..Default::default()
            };
            if let Ok(tessera_server::intake::Message::Request(mut request)) =
                tessera_server::intake::read(rest, &limits)
            {
                let _ = request.era(Some("2025-11-25"));
                let _ = request.era(None);
                let _ = request.read_envelope();
            }
        }
        _ => {
            let Ok(value) = serde_json::from_slice::<Value>(rest) else {
                return;
            };
            if let Ok(schema) = ElicitationSchema::from_value(&value) {
                let _ = schema.to_value();
                let content: JsonObject = value
                    .get("example")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                let _ = schema.check_content(&content);
            }
        }
    }
});

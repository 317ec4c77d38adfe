//! Shared by the counter benches and the `flow_cost` example: the binary's
//! allocator, the counter with a fixed key, the params of a counter call,
//! and driving a future that never waits on I/O.

use serde_json::{Value, json};
use tessera::McpServer;
use tessera::state::{KeyRing, RequestStateCodec, StateKey};

/// The same allocator as the `counter` binary, so the benches measure what it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The counter server, sealing with a fixed key.
pub fn server() -> McpServer {
    let key = StateKey::from_secret_str("bench-key-0123456789abcdef0123456789ab").expect("key");
    let codec = RequestStateCodec::new(KeyRing::new("k1", key).expect("ring"));
    counter::counter_server(codec).expect("server")
}

/// The params of an `increase-counter` call as a client sends them, with `extra` merged in.
pub fn call_params(extra: Value) -> Value {
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
    params
}

/// Polls `f` to completion with a no-op waker (the handlers never wait on I/O).
pub fn block<T>(f: impl std::future::Future<Output = T>) -> T {
    let waker = std::task::Waker::noop();
    let mut cx = std::task::Context::from_waker(waker);
    let mut f = std::pin::pin!(f);
    loop {
        if let std::task::Poll::Ready(v) = f.as_mut().poll(&mut cx) {
            return v;
        }
    }
}

//! Middleware around every request: order, refusals, narrowing to tools
//! and methods, the outcome seen after, and the rate limit.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tessera_protocol::JsonRpcRequest;
use tessera_server::middleware::{
    McpRequest, Middleware, Next, Outcome, RateLimit, Served, for_methods, for_tools,
};
use tessera_server::{BoxFuture, Context, McpServer, RequestFacts, ServerError, ToolDef};

/// Records `NAME>` before and `<NAME outcome` after the rest of the chain.
struct Record {
    name: &'static str,
    log: Arc<Mutex<Vec<String>>>,
}

impl Middleware for Record {
    fn handle<'a>(
        &'a self,
        request: &'a McpRequest,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Served, ServerError>> {
        Box::pin(async move {
            let target = request.target.as_deref().unwrap_or("-");
            self.log
                .lock()
                .unwrap()
                .push(format!("{}> {} {target}", self.name, request.method));
            let result = next.run().await;
            self.log.lock().unwrap().push(format!(
                "<{} {}",
                self.name,
                Outcome::of(&result).as_str()
            ));
            result
        })
    }
}

/// Refuses every request it sees with its own JSON-RPC error.
struct Refuse;

impl Middleware for Refuse {
    fn handle<'a>(
        &'a self,
        _request: &'a McpRequest,
        _next: Next<'a>,
    ) -> BoxFuture<'a, Result<Served, ServerError>> {
        Box::pin(async {
            Err(ServerError::Refused(tessera_protocol::ErrorObject::new(
                -32042,
                "refused by policy",
            )))
        })
    }
}

fn request(method: &str, params: Value) -> JsonRpcRequest<Value> {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}});
    serde_json::from_value(json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}))
        .unwrap()
}

fn call(tool: &str) -> JsonRpcRequest<Value> {
    request("tools/call", json!({"name": tool, "arguments": {}}))
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Sure {
    sure: bool,
}

impl tessera_server::Form for Sure {
    const KEY: &'static str = "sure";
}

fn tools() -> [ToolDef; 3] {
    [
        ToolDef::new("hello", |_: Context, _: ()| async { "Hello!" }),
        ToolDef::new("secret", |_: Context, _: ()| async { "the secret" }),
        ToolDef::new("ask", |ctx: Context, _: ()| async move {
            let sure: Sure = ctx.ask("Sure?")?;
            Ok::<_, tessera_server::HandlerError>(format!("{}", sure.sure))
        }),
    ]
}

#[tokio::test]
async fn layers_run_in_the_order_added_and_see_the_outcome() {
    let log = Arc::new(Mutex::new(Vec::new()));
    let [hello, secret, ask] = tools();
    let ring = tessera_state::KeyRing::new(
        "k1",
        tessera_state::StateKey::from_bytes(&[7u8; 32]).unwrap(),
    )
    .unwrap();
    let server = McpServer::builder("mw", "1.0.0")
        .request_state(tessera_state::RequestStateCodec::new(ring))
        .middleware(Record {
            name: "a",
            log: Arc::clone(&log),
        })
        .middleware(Record {
            name: "b",
            log: Arc::clone(&log),
        })
        .middleware(for_tools(["secret"], Refuse))
        .tool(hello)
        .tool(secret)
        .tool(ask)
        .build()
        .unwrap();
    let facts = RequestFacts::modern;

    let r = server.handle(call("hello"), facts()).await.to_json();
    assert_eq!(r["result"]["content"][0]["text"], "Hello!", "{r}");
    let r = server.handle(call("secret"), facts()).await.to_json();
    assert_eq!(r["error"]["code"], -32042, "{r}");
    assert_eq!(r["error"]["message"], "refused by policy");
    let r = server.handle(call("ask"), facts()).await.to_json();
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    let r = server.handle(call("nope"), facts()).await.to_json();
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = server
        .handle(request("tools/list", json!({})), facts())
        .await
        .to_json();
    assert!(r["result"]["tools"].is_array(), "{r}");

    assert_eq!(
        *log.lock().unwrap(),
        [
            "a> tools/call hello",
            "b> tools/call hello",
            "<b complete",
            "<a complete",
            "a> tools/call secret",
            "b> tools/call secret",
            "<b refused",
            "<a refused",
            "a> tools/call ask",
            "b> tools/call ask",
            "<b input_required",
            "<a input_required",
            "a> tools/call nope",
            "b> tools/call nope",
            "<b refused",
            "<a refused",
            "a> tools/list -",
            "b> tools/list -",
            "<b complete",
            "<a complete",
        ]
    );
}

#[tokio::test]
async fn for_methods_narrows_a_layer_to_those_methods() {
    let [hello, ..] = tools();
    let server = McpServer::builder("mw", "1.0.0")
        .middleware(for_methods(["tools/list"], Refuse))
        .tool(hello)
        .build()
        .unwrap();
    let r = server
        .handle(request("tools/list", json!({})), RequestFacts::modern())
        .await
        .to_json();
    assert_eq!(r["error"]["code"], -32042, "{r}");
    let r = server
        .handle(call("hello"), RequestFacts::modern())
        .await
        .to_json();
    assert_eq!(r["result"]["content"][0]["text"], "Hello!", "{r}");
}

#[tokio::test]
async fn a_rate_limit_refuses_past_the_limit_per_caller_and_per_tool_then_recovers() {
    let [hello, secret, _] = tools();
    // 3 calls per 600 ms: a token back every 200 ms.
    let server = McpServer::builder("mw", "1.0.0")
        .middleware(RateLimit::new(3, Duration::from_millis(600)))
        .tool(hello)
        .tool(secret)
        .build()
        .unwrap();
    let alice = || RequestFacts::modern().with_principal("alice");
    for _ in 0..3 {
        let r = server.handle(call("hello"), alice()).await.to_json();
        assert_eq!(r["result"]["content"][0]["text"], "Hello!", "{r}");
    }
    let r = server.handle(call("hello"), alice()).await.to_json();
    assert_eq!(r["error"]["code"], -32000, "{r}");
    assert_eq!(r["error"]["data"]["retryAfterSeconds"], 1, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(
        message.starts_with("Rate limited: tool hello allows 3 per 600 ms per caller"),
        "{message}"
    );
    // Another caller, and another tool, have buckets of their own.
    let bob = RequestFacts::modern().with_principal("bob");
    let r = server.handle(call("hello"), bob).await.to_json();
    assert!(r["result"].is_object(), "{r}");
    let r = server.handle(call("secret"), alice()).await.to_json();
    assert!(r["result"].is_object(), "{r}");
    // A token comes back after 200 ms.
    tokio::time::sleep(Duration::from_millis(250)).await;
    let r = server.handle(call("hello"), alice()).await.to_json();
    assert!(r["result"].is_object(), "{r}");
}

/// tokio as the transports hand it over (`tessera-tokio` is not a dependency here).
struct Tokio;

impl tessera_server::TaskRuntime for Tokio {
    fn spawn(&self, work: BoxFuture<'static, ()>) {
        tokio::spawn(work);
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

#[tokio::test]
async fn a_timeout_ends_a_slow_request_and_lets_a_quick_one_through() {
    let dropped = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let flag = Arc::clone(&dropped);
    let server = McpServer::builder("timeouts", "1.0.0")
        .middleware(tessera_server::middleware::Timeout::new(
            Duration::from_millis(200),
        ))
        .tool(ToolDef::new("hello", |_: Context, _: ()| async {
            "Hello!"
        }))
        .tool(ToolDef::new("slow", move |_: Context, _: ()| {
            let flag = Arc::clone(&flag);
            async move {
                /// Marks the handler dropped when the timeout drops it.
                struct Guard(Arc<std::sync::atomic::AtomicBool>);
                impl Drop for Guard {
                    fn drop(&mut self) {
                        self.0.store(true, std::sync::atomic::Ordering::SeqCst);
                    }
                }
                let _guard = Guard(flag);
                tokio::time::sleep(Duration::from_secs(30)).await;
                "late"
            }
        }))
        .build()
        .unwrap();
    let timed = || RequestFacts::modern().with_task_runtime(Arc::new(Tokio));
    let started = std::time::Instant::now();
    let out = server.handle(call("slow"), timed()).await.to_json();
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(out["error"]["code"], -32603, "{out}");
    assert_eq!(
        out["error"]["message"],
        "tools/call slow did not finish within 200 ms"
    );
    assert!(
        dropped.load(std::sync::atomic::Ordering::SeqCst),
        "the handler was dropped"
    );
    let out = server.handle(call("hello"), timed()).await.to_json();
    assert_eq!(out["result"]["content"][0]["text"], "Hello!");
}

#[tokio::test]
async fn audit_records_who_called_what_and_how_it_ended() {
    use tessera_server::middleware::{Audit, AuditRecord};
    let records = Arc::new(Mutex::new(Vec::<AuditRecord>::new()));
    let into = Arc::clone(&records);
    let key = tessera_state::StateKey::generate().unwrap();
    let codec =
        tessera_state::RequestStateCodec::new(tessera_state::KeyRing::new("k1", key).unwrap());
    let [hello, _, ask] = tools();
    let server = McpServer::builder("audited", "1.0.0")
        .request_state(codec)
        .middleware(Audit::new(move |r: &AuditRecord| {
            into.lock().unwrap().push(r.clone())
        }))
        .middleware(for_tools(["secret"], Refuse))
        .tool(hello)
        .tool(ask)
        .build()
        .unwrap();
    let facts = || RequestFacts::modern().with_principal("https://idp.example ann");
    server.handle(call("hello"), facts()).await;
    server.handle(call("ask"), facts()).await;
    server.handle(call("secret"), facts()).await;
    server.handle(call("missing"), RequestFacts::modern()).await;
    let seen: Vec<(String, Option<String>, &str, Option<i32>)> = records
        .lock()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r.target.clone().unwrap_or_default(),
                r.principal.clone(),
                r.outcome.as_str(),
                r.error_code,
            )
        })
        .collect();
    let ann = Some("https://idp.example ann".to_owned());
    assert_eq!(
        seen,
        [
            ("hello".into(), ann.clone(), "complete", None),
            ("ask".into(), ann.clone(), "input_required", None),
            ("secret".into(), ann, "refused", Some(-32042)),
            ("missing".into(), None, "refused", Some(-32602)),
        ]
    );
    assert!(
        records
            .lock()
            .unwrap()
            .iter()
            .all(|r| r.method == "tools/call")
    );
}

//! Client flows over real HTTP: against the counter server, a server that
//! always asks, and a recording server that checks the wire byte for byte.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tessera_client::{ClientError, McpClient, ScriptedAnswer, ScriptedElicitor};
use tessera_http::{EndpointOptions, McpEndpoint};
use tessera_protocol::CallToolResult;
use tessera_server::{Context, Form, HandlerError, McpServer, ToolDef};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

fn codec() -> RequestStateCodec {
    RequestStateCodec::new(
        KeyRing::new(
            "k1",
            StateKey::from_secret_str("client-tests-key-0123456789abcdef").unwrap(),
        )
        .unwrap(),
    )
}

async fn serve(server: McpServer) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(tessera_http::serve(
        listener,
        McpEndpoint::new(Arc::new(server), EndpointOptions::default()),
        std::future::pending(),
    ));
    format!("http://{addr}/mcp")
}

fn answers(pairs: &[(&str, ScriptedAnswer)]) -> Arc<ScriptedElicitor> {
    Arc::new(ScriptedElicitor::new(
        pairs
            .iter()
            .cloned()
            .map(|(k, v)| (k.to_owned(), v))
            .collect::<HashMap<_, _>>(),
    ))
}

fn accept(v: Value) -> ScriptedAnswer {
    ScriptedAnswer::Accept(v.as_object().unwrap().clone())
}

fn text(r: &CallToolResult) -> &str {
    r.content[0].as_text().unwrap()
}

#[tokio::test]
async fn counter_accept_decline_cancel() {
    let url = serve(counter::counter_server(codec()).unwrap()).await;
    let client = McpClient::builder(&url)
        .elicitor(answers(&[
            ("amount", accept(json!({"amount": 5}))),
            ("confirmation", accept(json!({"confirm": true}))),
        ]))
        .build()
        .unwrap();
    let tools = client.list_tools().await.unwrap();
    assert_eq!(tools[0].name, "increase-counter");
    let r = client
        .call_tool("increase-counter", json!({"current": 10}))
        .await
        .unwrap();
    assert_eq!(text(&r), "Counter increased by 5; next value is 15");

    let declining = McpClient::builder(&url)
        .elicitor(answers(&[("amount", ScriptedAnswer::Decline)]))
        .build()
        .unwrap();
    let r = declining
        .call_tool("increase-counter", json!({"current": 10}))
        .await
        .unwrap();
    assert_eq!(text(&r), "Counter increase cancelled.");

    let cancelling = McpClient::builder(&url)
        .elicitor(answers(&[
            ("amount", accept(json!({"amount": 5}))),
            ("confirmation", ScriptedAnswer::Cancel),
        ]))
        .build()
        .unwrap();
    let r = cancelling
        .call_tool("increase-counter", json!({"current": 10}))
        .await
        .unwrap();
    assert_eq!(text(&r), "Counter increase cancelled.");
}

#[tokio::test]
async fn no_elicitor_means_no_capability_and_no_invented_answer() {
    let url = serve(counter::counter_server(codec()).unwrap()).await;
    let client = McpClient::builder(&url).build().unwrap();
    assert_eq!(client.capabilities(), Default::default());
    // The server refuses to ask a client that declared nothing (-32021): no fabricated decline anywhere.
    match client
        .call_tool("increase-counter", json!({"current": 1}))
        .await
    {
        Err(ClientError::Rpc { status: 400, error }) => assert_eq!(error.code, -32021),
        other => panic!("expected -32021, got {other:?}"),
    }
    // An elicitor without the asked key is an error naming it.
    let partial = McpClient::builder(&url)
        .elicitor(answers(&[]))
        .build()
        .unwrap();
    match partial
        .call_tool("increase-counter", json!({"current": 1}))
        .await
    {
        Err(ClientError::Elicitation(msg)) => assert!(msg.contains("'amount'"), "{msg}"),
        other => panic!("expected an elicitation error, got {other:?}"),
    }
}

#[tokio::test]
async fn the_round_bound_is_enforced() {
    let server = McpServer::builder("nagging", "1")
        .request_state(codec())
        .tool(ToolDef::new("nag", |ctx: Context, _a: Empty| async move {
            // The scripted answer never fits the form, so it is asked again each round.
            ctx.ask::<Again>("Again?")?;
            Ok::<_, HandlerError>("never")
        }))
        .build()
        .unwrap();
    let url = serve(server).await;
    let client = McpClient::builder(&url)
        .elicitor(answers(&[("again", accept(json!({"x": "y"})))]))
        .max_rounds(3)
        .build()
        .unwrap();
    match client.call_tool("nag", json!({})).await {
        // The message names the key and, from the question asked again, why.
        Err(e @ ClientError::TooManyRounds { rounds: 3, .. }) => {
            let message = e.to_string();
            assert!(
                message.contains("last asked \"again\"") && message.contains("not accepted"),
                "{message}"
            );
        }
        other => panic!("expected TooManyRounds {{ rounds: 3, .. }}, got {other:?}"),
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Again {
    #[allow(dead_code)]
    x: u32,
}
impl Form for Again {
    const KEY: &'static str = "again";
}

/// A server that records each request body and headers and answers from a script.
async fn recording(script: Vec<(u16, Value)>) -> (String, Arc<Mutex<Vec<(String, Value)>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr: SocketAddr = listener.local_addr().unwrap();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        for (status, reply) in script {
            let (mut s, _) = listener.accept().await.unwrap();
            let mut buf = Vec::new();
            let mut chunk = [0u8; 8192];
            let (head, body) = loop {
                let n = s.read(&mut chunk).await.unwrap();
                buf.extend_from_slice(&chunk[..n]);
                let text = String::from_utf8_lossy(&buf).into_owned();
                if let Some((head, body)) = text.split_once("\r\n\r\n") {
                    let len: usize = head
                        .lines()
                        .find_map(|l| {
                            l.to_ascii_lowercase()
                                .strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap())
                        })
                        .unwrap_or(0);
                    if body.len() >= len {
                        break (head.to_owned(), body.to_owned());
                    }
                }
            };
            let request: Value = serde_json::from_str(&body).unwrap();
            let mut reply = reply;
            if let Some(o) = reply.as_object_mut() {
                o.insert("id".into(), request["id"].clone());
            }
            log.lock().unwrap().push((head, request));
            let payload = reply.to_string();
            let response = format!(
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{payload}",
                payload.len()
            );
            s.write_all(response.as_bytes()).await.unwrap();
        }
    });
    (format!("http://{addr}/mcp"), seen)
}

#[tokio::test]
async fn tickets_are_echoed_byte_for_byte_with_fresh_ids() {
    let ticket = "opaque \"ticket\" ✓ with \\ escapes and spaces ";
    let ask = json!({"jsonrpc": "2.0", "result": {"resultType": "input_required", "requestState": ticket,
        "inputRequests": {"confirm": {"method": "elicitation/create", "params": {"message": "ok?", "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}}}}}});
    let done = json!({"jsonrpc": "2.0", "result": {"content": [{"type": "text", "text": "done"}]}});
    let (url, seen) = recording(vec![(200, ask), (200, done)]).await;
    let client = McpClient::builder(&url)
        .elicitor(answers(&[("confirm", accept(json!({"ok": true})))]))
        .build()
        .unwrap();
    let r = client.call_tool("t", json!({"x": 1})).await.unwrap();
    assert_eq!(text(&r), "done", "a result without resultType is complete");
    let seen = seen.lock().unwrap();
    let (first_head, first) = &seen[0];
    let (_, second) = &seen[1];
    assert_ne!(first["id"], second["id"]);
    assert_eq!(second["params"]["requestState"].as_str(), Some(ticket));
    assert_eq!(second["params"]["arguments"], first["params"]["arguments"]);
    assert_eq!(
        second["params"]["inputResponses"],
        json!({"confirm": {"action": "accept", "content": {"ok": true}}})
    );
    assert!(
        first["params"].get("requestState").is_none()
            && first["params"].get("inputResponses").is_none()
    );
    let meta = &first["params"]["_meta"];
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {"form": {}, "url": {}},
               "extensions": {"io.modelcontextprotocol/tasks": {}}}),
        "a tool call may go on as a task, which the client follows"
    );
    let head = first_head.to_ascii_lowercase();
    for h in [
        "mcp-protocol-version: 2026-07-28",
        "mcp-method: tools/call",
        "mcp-name: t",
        "accept: application/json, text/event-stream",
    ] {
        assert!(head.contains(h), "{h} missing in {first_head}");
    }
}

#[tokio::test]
async fn state_only_rounds_send_no_responses_and_unsupported_version_is_retried() {
    let unsupported = json!({"jsonrpc": "2.0", "error": {"code": -32022, "message": "Unsupported", "data": {"supported": ["2026-07-28"], "requested": "2026-07-28"}}});
    let state_only =
        json!({"jsonrpc": "2.0", "result": {"resultType": "input_required", "requestState": "s1"}});
    let no_state = json!({"jsonrpc": "2.0", "result": {"resultType": "input_required",
        "inputRequests": {"k": {"method": "elicitation/create", "params": {"message": "?", "requestedSchema": {"type": "object", "properties": {}}}}}}});
    let done = json!({"jsonrpc": "2.0", "result": {"resultType": "complete", "content": []}});
    let (url, seen) = recording(vec![
        (400, unsupported),
        (200, state_only),
        (200, no_state),
        (200, done),
    ])
    .await;
    let client = McpClient::builder(&url)
        .elicitor(answers(&[(
            "k",
            ScriptedAnswer::Accept(Default::default()),
        )]))
        .build()
        .unwrap();
    client.call_tool("t", json!({})).await.unwrap();
    let seen = seen.lock().unwrap();
    assert_eq!(seen.len(), 4);
    assert_eq!(seen[2].1["params"]["requestState"], "s1");
    assert!(seen[2].1["params"].get("inputResponses").is_none());
    assert!(
        seen[3].1["params"].get("requestState").is_none(),
        "no state was given, none is sent"
    );
    assert!(seen[3].1["params"]["inputResponses"]["k"].is_object());
}

#[tokio::test]
async fn a_server_that_names_only_initialize_era_versions_is_spoken_to_the_old_way() {
    // A recognized -32022 whose supported versions are all initialize-era:
    // the server is legacy, so the client falls back to initialize and sends
    // the same request again the old way.
    let unsupported = json!({"jsonrpc": "2.0", "error": {"code": -32022, "message": "no",
        "data": {"supported": ["2025-11-25"]}}});
    let initialized = json!({"jsonrpc": "2.0", "result": {"protocolVersion": "2025-11-25",
        "capabilities": {"tools": {}}, "serverInfo": {"name": "old", "version": "1"}}});
    let ack = json!({});
    let tools = json!({"jsonrpc": "2.0", "result": {"tools": [{"name": "t", "inputSchema": {"type": "object"}}]}});
    let (url, seen) = recording(vec![
        (400, unsupported),
        (200, initialized),
        (202, ack),
        (200, tools),
    ])
    .await;
    let client = McpClient::builder(&url).build().unwrap();
    assert_eq!(client.list_tools().await.unwrap()[0].name, "t");
    assert!(client.is_initialize_era().await.unwrap());
    let seen = seen.lock().unwrap();
    let methods: Vec<&str> = seen
        .iter()
        .map(|(_, body)| body["method"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(
        methods,
        [
            "tools/list",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
    assert_eq!(seen[1].1["params"]["protocolVersion"], "2025-11-25");
    assert!(
        seen[3].1["params"].get("_meta").is_none(),
        "no modern envelope"
    );
    assert!(
        seen[3]
            .0
            .to_ascii_lowercase()
            .contains("mcp-protocol-version: 2025-11-25")
    );
}

#[tokio::test]
async fn a_recognized_modern_error_is_not_a_reason_to_fall_back() {
    // "If the body contains a recognized modern JSON-RPC error, the server speaks
    // a modern version of MCP ... rather than falling back."
    let mismatch =
        json!({"jsonrpc": "2.0", "error": {"code": -32020, "message": "header mismatch"}});
    let (url, seen) = recording(vec![(400, mismatch)]).await;
    let client = McpClient::builder(&url).build().unwrap();
    match client.list_tools().await {
        Err(ClientError::Rpc { error, status: 400 }) => assert_eq!(error.code, -32020),
        other => panic!("{other:?}"),
    }
    assert!(!client.is_initialize_era().await.unwrap_or(true));
    assert_eq!(seen.lock().unwrap().len(), 1, "no initialize was sent");
}

/// Counts the requests the endpoint served, by method.
#[derive(Default)]
struct Served(Mutex<HashMap<String, usize>>);

impl tessera_http::AccessLog for Served {
    fn record(&self, record: tessera_http::AccessRecord) {
        *self.0.lock().unwrap().entry(record.method).or_default() += 1;
    }
}

async fn serve_counted(server: McpServer, served: Arc<Served>) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let options = EndpointOptions::default().access_log(served);
    tokio::spawn(tessera_http::serve(
        listener,
        McpEndpoint::new(Arc::new(server), options),
        std::future::pending(),
    ));
    format!("http://{addr}/mcp")
}

/// "If ttlMs is positive, the client SHOULD consider the result fresh for
/// that many milliseconds"; "If ttlMs is 0, the response SHOULD be considered
/// immediately stale".
#[tokio::test]
async fn discover_and_lists_are_reused_while_fresh() {
    let tool = || ToolDef::new("noop", |_ctx: Context, _a: ()| async { "ok" });
    for (ttl_ms, expected) in [(60_000, 1), (0, 2)] {
        let served = Arc::new(Served::default());
        let hint = tessera_server::CacheHint::new(ttl_ms, tessera_protocol::CacheScope::Private);
        let server = McpServer::builder("cached", "1")
            .discover_cache(hint)
            .list_cache(hint)
            .tool(tool())
            .build()
            .unwrap();
        let url = serve_counted(server, Arc::clone(&served)).await;
        let client = McpClient::builder(url).build().unwrap();
        for _ in 0..2 {
            assert_eq!(client.list_tools().await.unwrap().len(), 1);
            client.discover().await.unwrap();
        }
        let counts = served.0.lock().unwrap().clone();
        assert_eq!(
            counts.get("tools/list"),
            Some(&expected),
            "ttlMs {ttl_ms}: {counts:?}"
        );
        assert_eq!(
            counts.get("server/discover"),
            Some(&expected),
            "ttlMs {ttl_ms}: {counts:?}"
        );
        // Forgetting makes the next call ask again.
        client.forget_cached_results();
        client.list_tools().await.unwrap();
        assert_eq!(
            served.0.lock().unwrap().get("tools/list"),
            Some(&(expected + 1))
        );
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Region {
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
}

/// "If the server rejects a request with a HeaderMismatch error because
/// required Mcp-Param-* headers are missing ..., the client SHOULD call
/// tools/list ..., then retry the original request with the appropriate headers."
#[tokio::test]
async fn a_call_refused_for_missing_mirrored_headers_is_retried_after_listing() {
    let served = Arc::new(Served::default());
    let server = McpServer::builder("regions", "1")
        .tool(ToolDef::new(
            "where",
            |_ctx: Context, r: Region| async move { format!("in {}", r.region) },
        ))
        .build()
        .unwrap();
    let url = serve_counted(server, Arc::clone(&served)).await;
    let client = McpClient::builder(url).build().unwrap();
    // No tools/list yet: the first attempt carries no Mcp-Param-Region.
    let result = client
        .call_tool("where", json!({"region": "us-west1"}))
        .await
        .unwrap();
    assert_eq!(text(&result), "in us-west1");
    // The refused attempt never reached a handler (nor the access log): one
    // call served, after the one tools/list the refusal prompted.
    let counts = served.0.lock().unwrap().clone();
    assert_eq!(counts.get("tools/call"), Some(&1), "{counts:?}");
    assert_eq!(counts.get("tools/list"), Some(&1), "{counts:?}");
}

#[tokio::test]
async fn structured_content_is_checked_against_the_listed_output_schema() {
    // Spec (server/tools.mdx): "Clients SHOULD validate structured results against this schema."
    let list = json!({"jsonrpc": "2.0", "result": {"tools": [{"name": "sum",
        "inputSchema": {"type": "object"},
        "outputSchema": {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}}]}});
    let good =
        json!({"jsonrpc": "2.0", "result": {"content": [], "structuredContent": {"total": 3}}});
    let bad =
        json!({"jsonrpc": "2.0", "result": {"content": [], "structuredContent": {"total": "3"}}});
    let bare = json!({"jsonrpc": "2.0", "result": {"content": [{"type": "text", "text": "3"}]}});
    let failed = json!({"jsonrpc": "2.0", "result": {"content": [], "isError": true}});
    let (url, _) = recording(vec![
        (200, bad.clone()),
        (200, list),
        (200, good),
        (200, bad),
        (200, bare),
        (200, failed),
    ])
    .await;
    let client = McpClient::builder(&url).build().unwrap();
    // Before the tool is listed there is no schema to check against.
    client.call_tool("sum", json!({})).await.unwrap();
    client.list_tools().await.unwrap();
    client.call_tool("sum", json!({})).await.unwrap();
    match client.call_tool("sum", json!({})).await {
        Err(e @ ClientError::StructuredContent { .. }) => assert_eq!(
            e.to_string(),
            "tool sum returned a result that does not match its outputSchema: \
             structuredContent at /total: \"3\" is not of type \"number\""
        ),
        other => panic!("{other:?}"),
    }
    match client.call_tool("sum", json!({})).await {
        Err(ClientError::StructuredContent { problem, .. }) => {
            assert_eq!(problem, "it has no structuredContent")
        }
        other => panic!("{other:?}"),
    }
    let error = client.call_tool("sum", json!({})).await.unwrap();
    assert_eq!(error.is_error, Some(true), "error results need not conform");
}

/// Set when the long task's handler is dropped (its task was cancelled).
static LONG_TASK_DROPPED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

struct SetOnDrop;
impl Drop for SetOnDrop {
    fn drop(&mut self) {
        LONG_TASK_DROPPED.store(true, std::sync::atomic::Ordering::SeqCst);
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Colour {
    colour: String,
}
impl Form for Colour {
    const KEY: &'static str = "colour";
}

fn task_server() -> McpServer {
    use tessera_server::TaskSupport;
    McpServer::builder("tasks", "1")
        .request_state(codec())
        .tool(
            ToolDef::new("paint", |ctx: Context, _: ()| async move {
                ctx.begin_task()?;
                let Colour { colour } = ctx.ask("Which colour?")?;
                tokio::time::sleep(std::time::Duration::from_millis(50)).await;
                Ok::<_, HandlerError>(format!("painted {colour} (task: {})", ctx.in_task()))
            })
            .task_support(TaskSupport::Required),
        )
        .tool(
            ToolDef::new("long", |ctx: Context, _: ()| async move {
                ctx.begin_task()?;
                let _flag = SetOnDrop;
                tokio::time::sleep(std::time::Duration::from_secs(600)).await;
                Ok::<_, HandlerError>("never")
            })
            .task_support(TaskSupport::Required),
        )
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_tool_call_that_becomes_a_task_is_polled_answered_and_fetched() {
    let url = serve(task_server()).await;
    let client = McpClient::builder(&url)
        .elicitor(answers(&[("colour", accept(json!({"colour": "teal"})))]))
        .build()
        .unwrap();
    let features = client.server_features().await.unwrap();
    assert!(features.tasks && features.listen, "{features:?}");
    let r = client.call_tool("paint", json!({})).await.unwrap();
    assert_eq!(text(&r), "painted teal (task: true)");
}

/// A server that sends `notifications/tasks` is not polled: the client
/// listens for its task (`taskIds`), looks once (what happened before it
/// listened), then follows the notifications — the question, and the result.
#[tokio::test]
async fn a_task_is_followed_by_notification_when_the_server_sends_them() {
    let served = Arc::new(Served::default());
    let url = serve_counted(task_server(), Arc::clone(&served)).await;
    let client = McpClient::builder(&url)
        .elicitor(answers(&[("colour", accept(json!({"colour": "teal"})))]))
        .build()
        .unwrap();
    let r = client.call_tool("paint", json!({})).await.unwrap();
    assert_eq!(text(&r), "painted teal (task: true)");
    let counts = served.0.lock().unwrap().clone();
    assert_eq!(
        counts.get("tasks/get"),
        Some(&1),
        "one look, then notifications: {counts:?}"
    );
    assert_eq!(counts.get("tasks/update"), Some(&1), "{counts:?}");
}

#[tokio::test]
async fn a_caller_that_gives_up_on_a_task_cancels_it() {
    let url = serve(task_server()).await;
    let client = McpClient::builder(&url).build().unwrap();
    let gave_up = tokio::time::timeout(
        std::time::Duration::from_millis(700),
        client.call_tool("long", json!({})),
    )
    .await;
    assert!(gave_up.is_err(), "the call should still be running");
    for _ in 0..100 {
        if LONG_TASK_DROPPED.load(std::sync::atomic::Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("the task's handler still runs 5 s after its caller gave up");
}

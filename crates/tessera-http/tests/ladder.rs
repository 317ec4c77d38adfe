//! The endpoint over real HTTP (127.0.0.1:0): one test per rung of the check
//! ladder, eras, SSE, cancellation on disconnect, bearer auth, concurrency.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use serde_json::{Value, json};
use tessera_http::{BearerTokens, EndpointOptions, Legacy};
use tessera_server::{Context, Form, HandlerError, McpServer, ToolDef};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};

mod support;
use support::{Reply, body, raw, start_with};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Counter {
    current: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Empty {}

static CANCELLED: AtomicBool = AtomicBool::new(false);

struct SetOnDrop;
impl Drop for SetOnDrop {
    fn drop(&mut self) {
        CANCELLED.store(true, Ordering::SeqCst);
    }
}

static STOPPED_BY_NOTICE: AtomicBool = AtomicBool::new(false);

struct StopOnDrop;
impl Drop for StopOnDrop {
    fn drop(&mut self) {
        STOPPED_BY_NOTICE.store(true, Ordering::SeqCst);
    }
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Amount {
    amount: f64,
}
impl Form for Amount {
    const KEY: &'static str = "amount";
}

async fn start(options: EndpointOptions) -> SocketAddr {
    start_with(server(), options).await
}

fn server() -> McpServer {
    let key = StateKey::from_secret_str("0123456789abcdef0123456789abcdef!").unwrap();
    McpServer::builder("test-server", "1.0.0")
        .request_state(RequestStateCodec::new(KeyRing::new("k1", key).unwrap()))
        .tool(ToolDef::new(
            "increase-counter",
            |ctx: Context, args: Counter| async move {
                let Amount { amount } = ctx.ask("How much?")?;
                Ok::<_, HandlerError>(format!("next {}", args.current + amount))
            },
        ))
        .tool(ToolDef::new(
            "progress",
            |ctx: Context, _a: Empty| async move {
                ctx.progress(1.0, Some(2.0), Some("half"));
                ctx.progress(2.0, Some(2.0), None);
                "done"
            },
        ))
        .tool(ToolDef::new(
            "quiet",
            |_ctx: Context, _a: Empty| async move {
                let _guard = StopOnDrop;
                tokio::time::sleep(Duration::from_secs(30)).await;
                "too late"
            },
        ))
        .tool(ToolDef::new("slow", |ctx: Context, _a: Empty| async move {
            let _guard = SetOnDrop;
            ctx.progress(0.0, None, Some("started"));
            tokio::time::sleep(Duration::from_secs(30)).await;
            "too late"
        }))
        .build()
        .unwrap()
}

const STD: &[(&str, &str)] = &[
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
    ("MCP-Protocol-Version", "2026-07-28"),
];

fn with<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    let mut h: Vec<(&str, &str)> = STD.to_vec();
    for (k, v) in extra {
        h.retain(|(hk, _)| !hk.eq_ignore_ascii_case(k));
        h.push((k, v));
    }
    h
}

async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &str) -> Reply {
    raw(addr, "POST", "/mcp", headers, body).await
}

fn list(id: i64) -> String {
    body(id, "tools/list", json!({}))
}

#[tokio::test]
async fn the_happy_path_and_flow() {
    let addr = start(EndpointOptions::default()).await;
    let r = post(addr, &with(&[("Mcp-Method", "tools/list")]), &list(1)).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json")
    );
    assert!(r.header("mcp-session-id").is_none());
    assert_eq!(r.json()["id"], 1);
    let call = |state: Option<&str>| {
        let mut p = json!({"name": "increase-counter", "arguments": {"current": 10}});
        if let Some(s) = state {
            p["requestState"] = json!(s);
            p["inputResponses"] = json!({"amount": {"action": "accept", "content": {"amount": 5}}});
        }
        body(2, "tools/call", p)
    };
    let h = with(&[
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "increase-counter"),
    ]);
    let r1 = post(addr, &h, &call(None)).await.json();
    assert_eq!(r1["result"]["resultType"], "input_required");
    let s = r1["result"]["requestState"].as_str().unwrap().to_owned();
    let r2 = post(addr, &h, &call(Some(&s))).await.json();
    assert_eq!(r2["result"]["content"][0]["text"], "next 15");
    // Base64 sentinel form of the name is decoded before comparing.
    let h = with(&[
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "=?base64?aW5jcmVhc2UtY291bnRlcg==?="),
    ]);
    assert_eq!(post(addr, &h, &call(None)).await.status, 200);
    // Stale session ids and Last-Event-ID are ignored (2026-07-28 transport:
    // "A `Last-Event-ID` header: ignore it; streams are not resumable").
    let h = with(&[
        ("Mcp-Method", "tools/list"),
        ("Mcp-Session-Id", "stale-123"),
        ("Last-Event-ID", "9"),
    ]);
    assert_eq!(post(addr, &h, &list(3)).await.status, 200);
}

#[tokio::test]
async fn ladder_head_checks() {
    let addr = start(EndpointOptions::default()).await;
    let h = with(&[("Mcp-Method", "tools/list")]);
    // Path is not the route.
    let r = raw(addr, "POST", "/other", &h, &list(1)).await;
    assert_eq!(r.status, 404);
    assert_eq!(raw(addr, "POST", "/mcp/", &h, &list(1)).await.status, 404);
    // A query string is still the route.
    assert_eq!(
        raw(addr, "POST", "/mcp?x=1", &h, &list(1)).await.status,
        200
    );
    // OPTIONS preflight.
    let r = raw(
        addr,
        "OPTIONS",
        "/mcp",
        &[("Origin", "http://localhost:5173")],
        "",
    )
    .await;
    assert_eq!(r.status, 204);
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some("http://localhost:5173")
    );
    // GET, DELETE, PUT.
    for m in ["GET", "DELETE", "PUT"] {
        let r = raw(addr, m, "/mcp", &h, "").await;
        assert_eq!(r.status, 405, "{m}");
        assert_eq!(r.header("allow").as_deref(), Some("POST"));
        let j = r.json();
        assert_eq!(j["error"]["code"], -32000);
        assert_eq!(j["error"]["message"], "Method not allowed.");
        assert_eq!(j["id"], Value::Null);
    }
    // Host not allowed.
    let r = post(
        addr,
        &with(&[("Mcp-Method", "tools/list"), ("Host", "evil.example")]),
        &list(1),
    )
    .await;
    assert_eq!(r.status, 403);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("evil.example")
    );
    // Origin not allowed.
    let r = post(
        addr,
        &with(&[
            ("Mcp-Method", "tools/list"),
            ("Origin", "http://evil.example"),
        ]),
        &list(1),
    )
    .await;
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["error"]["code"], -32000);
    assert!(
        r.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains("http://evil.example")
    );
    // Allowed origin gets CORS headers.
    let r = post(
        addr,
        &with(&[
            ("Mcp-Method", "tools/list"),
            ("Origin", "http://localhost:5173"),
        ]),
        &list(1),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("access-control-allow-origin").as_deref(),
        Some("http://localhost:5173")
    );
    // Content-Type.
    for ct in ["text/plain", "application/x-www-form-urlencoded"] {
        let r = post(
            addr,
            &with(&[("Mcp-Method", "tools/list"), ("Content-Type", ct)]),
            &list(1),
        )
        .await;
        assert_eq!(r.status, 415, "{ct}");
    }
    let r = post(
        addr,
        &with(&[
            ("Mcp-Method", "tools/list"),
            ("Content-Type", "APPLICATION/JSON; charset=utf-8"),
        ]),
        &list(1),
    )
    .await;
    assert_eq!(r.status, 200);
    // Accept.
    for accept in ["application/json", "text/event-stream", "text/html"] {
        let r = post(
            addr,
            &with(&[("Mcp-Method", "tools/list"), ("Accept", accept)]),
            &list(1),
        )
        .await;
        assert_eq!(r.status, 406, "{accept}");
    }
    let r = post(
        addr,
        &with(&[("Mcp-Method", "tools/list"), ("Accept", "*/*")]),
        &list(1),
    )
    .await;
    assert_eq!(r.status, 200);
}

#[tokio::test]
async fn ladder_body_checks() {
    let addr = start(EndpointOptions::default().body_limit(1024)).await;
    let h = with(&[("Mcp-Method", "tools/list")]);
    // Over the limit.
    let big = format!("{{\"pad\":\"{}\"}}", "x".repeat(2000));
    assert_eq!(post(addr, &h, &big).await.status, 413);
    // Invalid JSON and empty body.
    for b in ["{\"jsonrpc\":", ""] {
        let r = post(addr, &h, b).await;
        assert_eq!(r.status, 400, "{b:?}");
        assert_eq!(r.json()["error"]["code"], -32700);
        assert_eq!(r.json()["id"], Value::Null);
    }
    // Batches and non-objects.
    for b in [
        "[]",
        "[{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\"}]",
        "42",
    ] {
        let r = post(addr, &h, b).await;
        assert_eq!(r.status, 400, "{b}");
        assert_eq!(r.json()["error"]["code"], -32600);
    }
    // Not JSON-RPC: the id is echoed when it can be read.
    let r = post(
        addr,
        &h,
        r#"{"jsonrpc":"1.0","id":141,"method":"tools/list"}"#,
    )
    .await;
    assert_eq!((r.status, r.json()["id"].clone()), (400, json!(141)));
    // A posted response.
    let r = post(addr, &h, r#"{"jsonrpc":"2.0","id":5,"result":{}}"#).await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], -32600);
    // A notification.
    let r = post(
        addr,
        &h,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
    )
    .await;
    assert_eq!(r.status, 202);
    assert!(r.body.is_empty());
}

#[tokio::test]
async fn ladder_version_and_header_checks() {
    let addr = start(EndpointOptions::default().legacy(Legacy::Reject)).await;
    // No version header and no _meta: an initialize-era request, refused with the supported versions.
    let bare = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list"}).to_string();
    let r = post(
        addr,
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
        ],
        &bare,
    )
    .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["error"]["code"], -32022);
    assert_eq!(
        r.json()["error"]["data"]["supported"],
        json!(["2026-07-28"])
    );
    // Full _meta but no version header: the required header is missing (-32020).
    let r = post(
        addr,
        &[
            ("Content-Type", "application/json"),
            ("Accept", "application/json, text/event-stream"),
            ("Mcp-Method", "tools/list"),
        ],
        &list(8),
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // Missing _meta is checked before the header comparison.
    let no_meta =
        json!({"jsonrpc": "2.0", "id": 101, "method": "server/discover", "params": {}}).to_string();
    let r = post(addr, &with(&[("Mcp-Method", "server/discover")]), &no_meta).await;
    assert_eq!(
        (
            r.status,
            r.json()["error"]["code"].clone(),
            r.json()["id"].clone()
        ),
        (400, json!(-32602), json!(101))
    );
    // Header and _meta versions differ.
    let mut b: Value = serde_json::from_str(&list(9)).unwrap();
    b["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    let r = post(addr, &with(&[("Mcp-Method", "tools/list")]), &b.to_string()).await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32020))
    );
    // Both say an unsupported version.
    let r = post(
        addr,
        &with(&[
            ("Mcp-Method", "tools/list"),
            ("MCP-Protocol-Version", "2099-01-01"),
        ]),
        &b.to_string(),
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32022))
    );
    assert_eq!(r.json()["error"]["data"]["requested"], "2099-01-01");
    // Mcp-Method missing, different, different case; Mcp-Name missing or different.
    let call = body(
        10,
        "tools/call",
        json!({"name": "increase-counter", "arguments": {"current": 1}}),
    );
    for extra in [
        vec![("Mcp-Name", "increase-counter")],
        vec![
            ("Mcp-Method", "tools/list"),
            ("Mcp-Name", "increase-counter"),
        ],
        vec![
            ("Mcp-Method", "TOOLS/CALL"),
            ("Mcp-Name", "increase-counter"),
        ],
        vec![("Mcp-Method", "tools/call")],
        vec![("Mcp-Method", "tools/call"), ("Mcp-Name", "other-tool")],
    ] {
        let r = post(addr, &with(&extra), &call).await;
        assert_eq!(
            (r.status, r.json()["error"]["code"].clone()),
            (400, json!(-32020)),
            "{extra:?}"
        );
    }
    // Unknown method.
    let r = post(
        addr,
        &with(&[("Mcp-Method", "foo/bar")]),
        &body(11, "foo/bar", json!({})),
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (404, json!(-32601))
    );
    // Missing capability.
    let mut c: Value = serde_json::from_str(&call).unwrap();
    c["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"] = json!({});
    let r = post(
        addr,
        &with(&[
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "increase-counter"),
        ]),
        &c.to_string(),
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (400, json!(-32021))
    );
    // Invalid ticket: a JSON-RPC error with 200.
    let mut t: Value = serde_json::from_str(&call).unwrap();
    t["params"]["requestState"] = json!("garbage");
    let r = post(
        addr,
        &with(&[
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "increase-counter"),
        ]),
        &t.to_string(),
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (200, json!(-32602))
    );
}

fn initialize(id: i64, version: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize", "params": {"protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "old", "version": "1"}}}).to_string()
}

const LEGACY: &[(&str, &str)] = &[
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
];

#[tokio::test]
async fn eras_reject() {
    let addr = start(EndpointOptions::default().legacy(Legacy::Reject)).await;
    for v in ["2025-11-25", "2025-06-18"] {
        let r = post(addr, LEGACY, &initialize(100, v)).await;
        assert_eq!(r.status, 400);
        let j = r.json();
        assert_eq!(j["error"]["code"], -32022);
        assert_eq!(
            j["error"]["data"],
            json!({"supported": ["2026-07-28"], "requested": v})
        );
        assert!(
            j["error"]["message"]
                .as_str()
                .unwrap()
                .contains("2026-07-28")
        );
    }
    let r = post(
        addr,
        LEGACY,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert_eq!(r.status, 202);
    // A modern-headed initialize is just an unknown method.
    let r = post(
        addr,
        &with(&[("Mcp-Method", "initialize")]),
        &body(104, "initialize", json!({})),
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (404, json!(-32601))
    );
}

#[tokio::test]
async fn eras_stateless() {
    let addr = start(EndpointOptions::default().legacy(Legacy::Stateless)).await;
    for v in ["2025-11-25", "2025-06-18"] {
        let r = post(addr, LEGACY, &initialize(100, v)).await;
        assert_eq!(r.status, 200, "{}", r.body);
        assert!(r.header("mcp-session-id").is_none());
        assert_eq!(r.json()["result"]["protocolVersion"], v);
    }
    let old = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let r = post(addr, &old, r#"{"jsonrpc":"2.0","id":121,"method":"ping"}"#).await;
    assert_eq!(r.json()["result"], json!({}));
    let r = post(
        addr,
        &old,
        r#"{"jsonrpc":"2.0","id":110,"method":"tools/list"}"#,
    )
    .await;
    assert!(r.json()["result"].get("resultType").is_none());
    assert!(r.json()["result"]["tools"].is_array());
    let r = post(addr, &old, r#"{"jsonrpc":"2.0","id":111,"method":"tools/call","params":{"name":"increase-counter","arguments":{"current":10}}}"#).await;
    let j = r.json();
    assert_eq!(j["result"]["isError"], true, "{j}");
    assert!(
        j["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .contains("2026-07-28")
    );
}

#[tokio::test]
async fn progress_streams_as_sse() {
    let addr = start(EndpointOptions::default()).await;
    let mut p: Value = serde_json::from_str(&body(
        20,
        "tools/call",
        json!({"name": "progress", "arguments": {}}),
    ))
    .unwrap();
    p["params"]["_meta"]["progressToken"] = json!("tok");
    let r = post(
        addr,
        &with(&[("Mcp-Method", "tools/call"), ("Mcp-Name", "progress")]),
        &p.to_string(),
    )
    .await;
    assert_eq!(r.status, 200);
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("text/event-stream")
    );
    assert_eq!(r.header("x-accel-buffering").as_deref(), Some("no"));
    let events: Vec<Value> = r
        .body
        .lines()
        .filter_map(|l| l.strip_prefix("data: "))
        .map(|d| serde_json::from_str(d).unwrap())
        .collect();
    assert_eq!(events.len(), 3, "{}", r.body);
    assert_eq!(events[0]["method"], "notifications/progress");
    assert_eq!(
        events[0]["params"],
        json!({"progressToken": "tok", "progress": 1, "total": 2, "message": "half"})
    );
    assert_eq!(events[2]["id"], 20);
    assert_eq!(events[2]["result"]["content"][0]["text"], "done");
    // Without a progress token the same tool answers plain JSON.
    let r = post(
        addr,
        &with(&[("Mcp-Method", "tools/call"), ("Mcp-Name", "progress")]),
        &body(
            21,
            "tools/call",
            json!({"name": "progress", "arguments": {}}),
        ),
    )
    .await;
    assert_eq!(
        r.header("content-type").as_deref(),
        Some("application/json")
    );
}

#[tokio::test]
async fn notifications_cancelled_on_another_post_stops_the_request_by_its_id() {
    // cancellation.mdx: servers receiving cancellation notifications SHOULD
    // "Stop processing the cancelled request"; "Invalid cancellation
    // notifications SHOULD be ignored: Unknown request IDs ...". Requests are
    // found by authenticated caller and id: another caller, or an anonymous
    // one, cannot cancel them.
    let addr = start(EndpointOptions::default().authenticate(BearerTokens::new([
        ("alice-token", "alice"),
        ("bob-token", "bob"),
    ])))
    .await;
    let call = tokio::spawn(async move {
        let headers = with(&[
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", "quiet"),
            ("Authorization", "Bearer alice-token"),
        ]);
        let payload = body(41, "tools/call", json!({"name": "quiet", "arguments": {}}));
        post(addr, &headers, &payload).await
    });
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!STOPPED_BY_NOTICE.load(Ordering::SeqCst));
    let notice = |id: Value| {
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
               "params": {"requestId": id, "reason": "the user gave up"}})
        .to_string()
    };
    let as_alice = with(&[
        ("Mcp-Method", "notifications/cancelled"),
        ("Authorization", "Bearer alice-token"),
    ]);
    let as_bob = with(&[
        ("Mcp-Method", "notifications/cancelled"),
        ("Authorization", "Bearer bob-token"),
    ]);
    // Another id, a string "41", or another caller's notice find nothing: the call goes on.
    for (h, other) in [
        (&as_alice, json!(42)),
        (&as_alice, json!("41")),
        (&as_bob, json!(41)),
    ] {
        assert_eq!(post(addr, h, &notice(other)).await.status, 202);
    }
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!STOPPED_BY_NOTICE.load(Ordering::SeqCst));
    assert_eq!(post(addr, &as_alice, &notice(json!(41))).await.status, 202);
    let answered = tokio::time::timeout(Duration::from_secs(5), call)
        .await
        .expect("the cancelled call answers at once")
        .unwrap();
    assert!(
        STOPPED_BY_NOTICE.load(Ordering::SeqCst),
        "the handler was dropped"
    );
    let v = answered.json();
    assert_eq!(
        (v["id"].clone(), v["error"]["code"].clone()),
        (json!(41), json!(-32800))
    );
}

#[tokio::test]
async fn a_client_that_disconnects_mid_stream_cancels_the_handler() {
    let addr = start(EndpointOptions::default()).await;
    let mut p: Value = serde_json::from_str(&body(
        30,
        "tools/call",
        json!({"name": "slow", "arguments": {}}),
    ))
    .unwrap();
    p["params"]["_meta"]["progressToken"] = json!(1);
    let payload = p.to_string();
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let mut req = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n",
        payload.len()
    );
    for (k, v) in with(&[("Mcp-Method", "tools/call"), ("Mcp-Name", "slow")]) {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(&payload);
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut buf = vec![0u8; 4096];
    let mut seen = String::new();
    while !seen.contains("started") {
        let n = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut buf))
            .await
            .unwrap()
            .unwrap();
        assert!(n > 0, "closed early: {seen}");
        seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    }
    assert!(!CANCELLED.load(Ordering::SeqCst));
    drop(stream);
    for _ in 0..50 {
        if CANCELLED.load(Ordering::SeqCst) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("the handler was not cancelled within 5 s of the disconnect");
}

#[tokio::test]
async fn bearer_auth() {
    let addr = start(EndpointOptions::default().authenticate(BearerTokens::new([
        ("good-token", "alice"),
        ("other-token", "bob"),
    ])))
    .await;
    let h = with(&[("Mcp-Method", "tools/list")]);
    let r = post(addr, &h, &list(1)).await;
    assert_eq!(r.status, 401);
    assert_eq!(r.header("www-authenticate").as_deref(), Some("Bearer"));
    let r = post(
        addr,
        &with(&[
            ("Mcp-Method", "tools/list"),
            ("Authorization", "Bearer wrong"),
        ]),
        &list(1),
    )
    .await;
    assert_eq!(r.status, 401);
    let r = post(
        addr,
        &with(&[
            ("Mcp-Method", "tools/list"),
            ("Authorization", "Bearer good-token"),
        ]),
        &list(1),
    )
    .await;
    assert_eq!(r.status, 200);
    // A ticket minted for alice does not open for bob.
    let call = |state: Option<&str>| {
        let mut p = json!({"name": "increase-counter", "arguments": {"current": 1}});
        if let Some(s) = state {
            p["requestState"] = json!(s);
            p["inputResponses"] = json!({"amount": {"action": "accept", "content": {"amount": 1}}});
        }
        body(2, "tools/call", p)
    };
    let alice = with(&[
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "increase-counter"),
        ("Authorization", "Bearer good-token"),
    ]);
    let bob = with(&[
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "increase-counter"),
        ("Authorization", "Bearer other-token"),
    ]);
    let r1 = post(addr, &alice, &call(None)).await.json();
    let s = r1["result"]["requestState"].as_str().unwrap().to_owned();
    let r = post(addr, &bob, &call(Some(&s))).await.json();
    assert_eq!(r["error"]["code"], -32602);
    let r = post(addr, &alice, &call(Some(&s))).await.json();
    assert_eq!(r["result"]["content"][0]["text"], "next 2");
}

#[tokio::test]
async fn two_hundred_concurrent_requests_all_answered() {
    let addr = start(EndpointOptions::default()).await;
    let mut tasks = Vec::new();
    for i in 0..200 {
        tasks.push(tokio::spawn(async move {
            let r = post(addr, &with(&[("Mcp-Method", "tools/list")]), &list(i)).await;
            (r.status, r.json()["id"].clone(), i)
        }));
    }
    for t in tasks {
        let (status, id, i) = t.await.unwrap();
        assert_eq!((status, id), (200, json!(i)));
    }
}

/// An MCP header sent twice with different values is refused (-32020), as a
/// repeated Host is, instead of the first one winning; the same value twice is
/// one value.
#[tokio::test]
async fn an_mcp_header_repeated_with_another_value_is_refused() {
    let addr = start(EndpointOptions::default()).await;
    for name in ["Mcp-Method", "MCP-Protocol-Version"] {
        let other = if name == "Mcp-Method" {
            "tools/call"
        } else {
            "2025-11-25"
        };
        let own = if name == "Mcp-Method" {
            "tools/list"
        } else {
            "2026-07-28"
        };
        let mut headers = with(&[("Mcp-Method", "tools/list")]);
        headers.push((name, other));
        let r = post(addr, &headers, &list(31)).await;
        assert_eq!(r.status, 400, "{name}: {}", r.body);
        assert_eq!(r.json()["error"]["code"], -32020, "{name}: {}", r.body);
        assert!(r.body.contains("more than once"), "{name}: {}", r.body);
        let mut twice = with(&[("Mcp-Method", "tools/list")]);
        twice.push((name, own));
        let r = post(addr, &twice, &list(32)).await;
        assert_eq!(r.status, 200, "{name}: {}", r.body);
    }
}

//! The endpoint against hostile clients, over real sockets on 127.0.0.1:
//! every loop bounded in count and time. Each test names the hardening rule it
//! checks (issue #14's list).

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tessera_http::{EndpointOptions, ServeOptions};
use tessera_server::{Context, Form, HandlerError, McpServer, ToolDef};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod support;
use support::{Reply, body, raw, start_serving, start_with};

/// A `tools/call` of `tool` over raw HTTP, with `extra` params.
async fn call(addr: std::net::SocketAddr, id: i64, tool: &str, extra: Value) -> Reply {
    let mut params = json!({"name": tool, "arguments": {}});
    for (k, v) in extra.as_object().into_iter().flatten() {
        params[k] = v.clone();
    }
    let headers = [
        JSON,
        ACCEPT,
        VERSION,
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", tool),
    ];
    raw(
        addr,
        "POST",
        "/mcp",
        &headers,
        &body(id, "tools/call", params),
    )
    .await
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Note {
    #[allow(dead_code)]
    text: String,
}
impl Form for Note {
    const KEY: &'static str = "note";
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct First {
    #[allow(dead_code)]
    text: String,
}
impl Form for First {
    const KEY: &'static str = "first";
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Second {
    #[allow(dead_code)]
    text: String,
}
impl Form for Second {
    const KEY: &'static str = "second";
}

fn codec() -> RequestStateCodec {
    let key = StateKey::from_secret_str("hostile-tests-key-0123456789abcdef").unwrap();
    RequestStateCodec::new(KeyRing::new("k1", key).unwrap())
}

fn server() -> McpServer {
    McpServer::builder("hostile", "1.0.0")
        .request_state(codec())
        .tool(ToolDef::new(
            "echo",
            |_ctx: Context, args: Value| async move { args.to_string() },
        ))
        .tool(ToolDef::new("note", |ctx: Context, _: ()| async move {
            ctx.ask::<Note>("A note?")?;
            Ok::<_, HandlerError>("noted")
        }))
        .tool(ToolDef::new(
            "slow",
            |_ctx: Context, _args: Value| async move {
                tokio::time::sleep(Duration::from_millis(800)).await;
                "slept"
            },
        ))
        .tool(ToolDef::new("three", |ctx: Context, _: ()| async move {
            ctx.ask::<Note>("A note?")?;
            ctx.ask::<First>("More?")?;
            ctx.ask::<Second>("Even more?")?;
            Ok::<_, HandlerError>("all noted")
        }))
        .build()
        .unwrap()
}

const JSON: (&str, &str) = ("Content-Type", "application/json");
const ACCEPT: (&str, &str) = ("Accept", "application/json, text/event-stream");
const VERSION: (&str, &str) = ("MCP-Protocol-Version", "2026-07-28");

/// 8. Host and Origin are RFC 3986 authorities: no userinfo, brackets only
/// around IPv6 literals, digits-only ports; two Host headers are refused; the
/// Host check comes before a CORS preflight.
#[tokio::test]
async fn hosts_and_origins_are_parsed_strictly() {
    let addr = start_with(server(), EndpointOptions::default()).await;
    let list = body(1, "tools/list", json!({}));
    let headers = |host: &'static str| {
        vec![
            ("Host", host),
            JSON,
            ACCEPT,
            VERSION,
            ("Mcp-Method", "tools/list"),
        ]
    };
    for host in [
        "localhost:80@evil.example",
        "[::1]evil.example",
        "localhost:8o",
        "user@127.0.0.1",
    ] {
        let r = raw(addr, "POST", "/mcp", &headers(host), &list).await;
        assert_eq!(r.status, 403, "Host {host:?}: {}", r.body);
    }
    let r = raw(addr, "POST", "/mcp", &headers("localhost:1"), &list).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let mut two = headers("localhost");
    two.push(("Host", "evil.example"));
    let r = raw(addr, "POST", "/mcp", &two, &list).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("more than one Host"), "{}", r.body);
    // A preflight for a foreign Host is refused, not answered.
    let preflight = [
        ("Host", "evil.example"),
        ("Origin", "http://localhost:5173"),
        ("Access-Control-Request-Method", "POST"),
    ];
    let r = raw(addr, "OPTIONS", "/mcp", &preflight, "").await;
    assert_eq!(r.status, 403);
    assert!(r.header("access-control-allow-methods").is_none());
    let r = raw(
        addr,
        "POST",
        "/mcp",
        &[
            JSON,
            ACCEPT,
            VERSION,
            ("Mcp-Method", "tools/list"),
            ("Origin", "http://localhost:80@evil.example"),
        ],
        &list,
    )
    .await;
    assert_eq!(r.status, 403, "{}", r.body);
}

/// 3. A tool name with control characters is refused before it reaches a log
/// or a handler, even when `Mcp-Name: =?base64?…?=` mirrors it exactly.
#[tokio::test]
async fn names_with_control_characters_are_refused() {
    let addr = start_with(server(), EndpointOptions::default()).await;
    let forged = "echo\n\u{1b}[31mINFO request finished method=tools/call";
    let header = tessera_protocol::encode_header_value(forged);
    let call = body(
        3,
        "tools/call",
        json!({"name": forged, "arguments": {"a": 1}}),
    );
    let r = raw(
        addr,
        "POST",
        "/mcp",
        &[
            JSON,
            ACCEPT,
            VERSION,
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", &header),
        ],
        &call,
    )
    .await;
    let reply = r.json();
    assert_eq!(reply["id"], 3, "{reply}");
    assert_eq!(reply["error"]["code"], -32602, "{reply}");
    assert!(
        reply["error"]["message"]
            .as_str()
            .unwrap()
            .contains("params.name contains control characters"),
        "{reply}"
    );
}

/// 8. Duplicate keys in the JSON-RPC envelope (-32600) or in `params`
/// (-32602) are refused, not resolved "last one wins".
#[tokio::test]
async fn duplicate_members_are_refused() {
    let addr = start_with(server(), EndpointOptions::default()).await;
    let meta = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let headers = [
        JSON,
        ACCEPT,
        VERSION,
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];
    let cases = [
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","method":"tools/list","params":{{"name":"echo",{meta}}}}}"#
            ),
            -32600,
            "\"method\"",
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"note","name":"echo",{meta}}}}}"#
            ),
            -32602,
            "\"name\"",
        ),
        (
            format!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{{"name":"echo","requestState":"a","requestState":"b",{meta}}}}}"#
            ),
            -32602,
            "\"requestState\"",
        ),
    ];
    for (body, code, named) in cases {
        let r = raw(addr, "POST", "/mcp", &headers, &body).await;
        assert_eq!(r.status, 400, "{body}: {}", r.body);
        let reply = r.json();
        assert_eq!(reply["error"]["code"], code, "{reply}");
        assert_eq!(reply["id"], 4, "{reply}");
        assert!(
            reply["error"]["message"].as_str().unwrap().contains(named),
            "{reply}"
        );
    }
}

/// 6. Answers are capped at intake (an oversized one is asked again), and a
/// ticket that would exceed its budget is the client's fault: -32602 with a
/// reason a person can act on, never -32603.
#[tokio::test]
async fn answers_cannot_inflate_tickets_into_a_server_error() {
    let addr = start_with(server(), EndpointOptions::default()).await;
    let accept = |text: String| json!({"action": "accept", "content": {"text": text}});
    let r1 = call(addr, 1, "three", json!({})).await.json();
    let s1 = r1["result"]["requestState"].clone();
    // One answer over the per-answer cap: not taken, asked again.
    let big = call(
        addr,
        2,
        "three",
        json!({"requestState": s1, "inputResponses": {"note": accept("x".repeat(9000))}}),
    )
    .await
    .json();
    assert!(big["result"]["inputRequests"]["note"].is_object(), "{big}");
    // Answers under the cap that together outgrow the ticket: -32602, named.
    let r2 = call(
        addr,
        3,
        "three",
        json!({"requestState": s1, "inputResponses": {"note": accept("a".repeat(7000))}}),
    )
    .await
    .json();
    let s2 = r2["result"]["requestState"].clone();
    assert!(s2.is_string(), "{r2}");
    let r3 = call(
        addr,
        4,
        "three",
        json!({"requestState": s2, "inputResponses": {"first": accept("b".repeat(7000))}}),
    )
    .await
    .json();
    assert_eq!(r3["error"]["code"], -32602, "{r3}");
    let message = r3["error"]["message"].as_str().unwrap();
    assert!(message.contains("too large to carry"), "{message}");
    assert!(message.contains("Give shorter answers"), "{message}");
}

/// 7. A flood of single-use redemptions cannot turn the ledger against other
/// users: when a redemption cannot be recorded the answer is 503 with
/// `Retry-After`, never a second acceptance and never -32603.
#[tokio::test]
async fn a_full_ledger_answers_503_with_retry_after() {
    let server = McpServer::builder("ledger", "1.0.0")
        .request_state(codec())
        .ticket_ledger(std::sync::Arc::new(tessera_state::MemoryLedger::new(2)))
        .tool(
            ToolDef::new("redeem", |ctx: Context, _: ()| async move {
                if ctx.carried::<u8>().is_some() {
                    return Ok("redeemed");
                }
                ctx.carry(&1u8)?;
                Err::<&str, HandlerError>(ctx.come_back().into())
            })
            .single_use(),
        )
        .build()
        .unwrap();
    let addr = start_with(server, EndpointOptions::default()).await;
    let mut tickets = Vec::new();
    for id in 0..3 {
        let r = call(addr, id, "redeem", json!({})).await.json();
        tickets.push(r["result"]["requestState"].clone());
    }
    for (i, ticket) in tickets.iter().take(2).enumerate() {
        let r = call(
            addr,
            10 + i as i64,
            "redeem",
            json!({"requestState": ticket}),
        )
        .await;
        assert_eq!(r.json()["result"]["content"][0]["text"], "redeemed");
    }
    let full = call(addr, 20, "redeem", json!({"requestState": tickets[2]})).await;
    assert_eq!(full.status, 503, "{}", full.body);
    let retry: u64 = full.header("retry-after").unwrap().parse().unwrap();
    assert!((1..=660).contains(&retry), "{retry}");
    let error = &full.json()["error"];
    assert_eq!(error["code"], -32000, "{error}");
    assert!(
        error["message"].as_str().unwrap().contains("retry in"),
        "{error}"
    );
    // The redeemed tickets stay redeemed.
    let replay = call(addr, 21, "redeem", json!({"requestState": tickets[0]})).await;
    assert_eq!(replay.json()["error"]["code"], -32602);
}

/// The head of a `tools/call` to `tool` whose body is `len` bytes (the connection closes after the answer).
fn head(addr: std::net::SocketAddr, tool: &str, len: usize) -> String {
    keep_alive_head(addr, tool, len).replace("\r\n\r\n", "\r\nConnection: close\r\n\r\n")
}

/// The head of a `tools/call` to `tool` whose body is `len` bytes, on a kept-alive connection.
fn keep_alive_head(addr: std::net::SocketAddr, tool: &str, len: usize) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {len}\r\n\r\n"
    )
}

/// Reads what the server sends until it closes, within `limit`; `None` if it did not close.
async fn read_until_closed(stream: &mut TcpStream, limit: Duration) -> Option<String> {
    let mut out = Vec::new();
    match tokio::time::timeout(limit, stream.read_to_end(&mut out)).await {
        Ok(_) => Some(String::from_utf8_lossy(&out).into_owned()),
        Err(_) => None,
    }
}

/// 1. A body that stalls after its headers is answered 408 when the body
/// deadline passes, and its connection freed; an idle connection is closed
/// after the header deadline.
#[tokio::test]
async fn stalled_bodies_and_idle_connections_are_timed_out() {
    let serving = ServeOptions::default()
        .header_timeout(Duration::from_millis(600))
        .body_timeout(Duration::from_millis(600));
    let addr = start_serving(server(), EndpointOptions::default(), serving).await;
    let mut stalled = TcpStream::connect(addr).await.unwrap();
    stalled
        .write_all(head(addr, "echo", 100).as_bytes())
        .await
        .unwrap();
    stalled.write_all(b"{\"jsonrpc\"").await.unwrap();
    let started = Instant::now();
    let answer = read_until_closed(&mut stalled, Duration::from_secs(5))
        .await
        .expect("the server closes a stalled upload");
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.contains("not received within"), "{answer}");
    assert!(started.elapsed() < Duration::from_secs(3));
    let mut idle = TcpStream::connect(addr).await.unwrap();
    let closed = read_until_closed(&mut idle, Duration::from_secs(5)).await;
    assert!(closed.is_some(), "an idle connection is closed");
}

/// 1. Past the connection cap, a new connection takes the place of a stalled
/// upload (see per_client.rs for the whole order) while an established,
/// well-behaved client on a kept-alive connection keeps being served.
#[tokio::test]
async fn connections_past_the_cap_replace_stalled_ones_and_established_ones_are_served() {
    let serving = ServeOptions::default()
        .max_connections(4)
        .header_timeout(Duration::from_secs(30))
        .body_timeout(Duration::from_secs(30));
    let addr = start_serving(server(), EndpointOptions::default(), serving).await;
    // One well-behaved client on a keep-alive connection.
    let mut client = TcpStream::connect(addr).await.unwrap();
    let request = |id: i64| {
        let b = body(
            id,
            "tools/call",
            json!({"name": "echo", "arguments": {"a": id}}),
        );
        format!("{}{b}", keep_alive_head(addr, "echo", b.len()))
    };
    let mut buf = vec![0u8; 4096];
    client.write_all(request(1).as_bytes()).await.unwrap();
    let n = client.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    // Three stalled uploads fill the cap.
    let mut stalled = Vec::new();
    for _ in 0..3 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(head(addr, "echo", 1000).as_bytes())
            .await
            .unwrap();
        stalled.push(s);
    }
    // Past the grace a body gets before its rate is judged.
    tokio::time::sleep(Duration::from_millis(300)).await;
    // A fifth connection is served; the oldest stalled upload gave way.
    let b = body(9, "tools/call", json!({"name": "echo", "arguments": {}}));
    let mut fifth = TcpStream::connect(addr).await.unwrap();
    fifth
        .write_all(format!("{}{b}", head(addr, "echo", b.len())).as_bytes())
        .await
        .unwrap();
    let answer = read_until_closed(&mut fifth, Duration::from_secs(2)).await;
    assert!(answer.is_some_and(|a| a.starts_with("HTTP/1.1 200")));
    let gave_way = read_until_closed(&mut stalled[0], Duration::from_secs(2)).await;
    assert_eq!(gave_way.as_deref(), Some(""), "closed without an answer");
    // The established client is still served, promptly.
    let started = Instant::now();
    client.write_all(request(2).as_bytes()).await.unwrap();
    let n = client.read(&mut buf).await.unwrap();
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
    assert!(started.elapsed() < Duration::from_secs(1));
    drop(stalled);
}

/// 2. Memory is bounded by design: a 1 MiB default body limit, a cap on the
/// JSON values a body may hold, an endpoint-wide budget of body bytes being
/// received, and a bound on large bodies served at once.
#[tokio::test]
async fn bodies_cannot_amplify_into_memory_or_starve_small_requests() {
    let addr = start_with(
        server(),
        EndpointOptions::default()
            .body_bytes_in_flight(200 * 1024)
            .large_bodies_at_once(1),
    )
    .await;
    // Over the 1 MiB limit: refused from its Content-Length, before it is read.
    let mut big = TcpStream::connect(addr).await.unwrap();
    big.write_all(head(addr, "echo", 1024 * 1024 + 1).as_bytes())
        .await
        .unwrap();
    let answer = read_until_closed(&mut big, Duration::from_secs(5))
        .await
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 413"), "{answer}");
    // Small JSON, many values: refused before a tree is built.
    let objects = vec![json!({"a": 0}); 25_000];
    let r = call(addr, 5, "echo", json!({"arguments": {"items": objects}})).await;
    assert_eq!(r.status, 413, "{}", r.body);
    assert!(r.body.contains("at most 20000 JSON values"), "{}", r.body);
    // Bytes in flight: a stalled 150 KiB upload leaves no room for another.
    let mut first = TcpStream::connect(addr).await.unwrap();
    first
        .write_all(head(addr, "echo", 300 * 1024).as_bytes())
        .await
        .unwrap();
    first.write_all(&vec![b' '; 150 * 1024]).await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut second = TcpStream::connect(addr).await.unwrap();
    second
        .write_all(head(addr, "echo", 100 * 1024).as_bytes())
        .await
        .unwrap();
    second.write_all(&vec![b' '; 100 * 1024]).await.unwrap();
    let answer = read_until_closed(&mut second, Duration::from_secs(5))
        .await
        .unwrap();
    assert!(answer.starts_with("HTTP/1.1 503"), "{answer}");
    assert!(
        answer.to_ascii_lowercase().contains("retry-after: 1"),
        "{answer}"
    );
    // Small bodies stay out of that budget: an ordinary request is served meanwhile.
    let small = call(addr, 9, "echo", json!({"arguments": {"a": 1}})).await;
    assert_eq!(small.status, 200, "{}", small.body);
    drop(first);
    tokio::time::sleep(Duration::from_millis(200)).await;
    // One large body at a time: a second one meanwhile gets 503, a small one is served.
    let pad = "x".repeat(70 * 1024);
    let slow =
        tokio::spawn(
            async move { call(addr, 6, "slow", json!({"arguments": {"pad": pad}})).await },
        );
    tokio::time::sleep(Duration::from_millis(300)).await;
    let pad = "y".repeat(70 * 1024);
    let busy = call(addr, 7, "slow", json!({"arguments": {"pad": pad}})).await;
    assert_eq!(busy.status, 503, "{}", busy.body);
    let small = call(addr, 8, "echo", json!({"arguments": {"a": 1}})).await;
    assert_eq!(small.status, 200, "{}", small.body);
    assert_eq!(slow.await.unwrap().status, 200);
}

/// 5. The server's own TTL bounds every ticket at open (`iat` + TTL + a skew
/// no longer than the TTL), whatever `exp` says: two instances share a key,
/// one mints with 600 s, the one with 1 s refuses the ticket 2 s later.
#[tokio::test]
async fn an_instance_ttl_bounds_tickets_minted_elsewhere() {
    let with_ttl = |secs: u64| {
        let key = StateKey::from_secret_str("hostile-tests-key-0123456789abcdef").unwrap();
        let codec = RequestStateCodec::builder(KeyRing::new("k1", key).unwrap())
            .ttl(Duration::from_secs(secs))
            .build()
            .unwrap();
        McpServer::builder("hostile", "1.0.0")
            .request_state(codec)
            .tool(ToolDef::new("note", |ctx: Context, _: ()| async move {
                ctx.ask::<Note>("A note?")?;
                Ok::<_, HandlerError>("noted")
            }))
            .build()
            .unwrap()
    };
    let long = start_with(with_ttl(600), EndpointOptions::default()).await;
    let short = start_with(with_ttl(1), EndpointOptions::default()).await;
    let r1 = call(long, 1, "note", json!({})).await.json();
    let retry = json!({
        "requestState": r1["result"]["requestState"],
        "inputResponses": {"note": {"action": "accept", "content": {"text": "hi"}}}
    });
    tokio::time::sleep(Duration::from_millis(2200)).await;
    let refused = call(short, 2, "note", retry.clone()).await.json();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    let accepted = call(long, 3, "note", retry).await.json();
    assert_eq!(
        accepted["result"]["content"][0]["text"], "noted",
        "{accepted}"
    );
}

/// Issue #27, finding 6: an initialize-era request that sends `Mcp-Method`,
/// `Mcp-Name` or `Mcp-Param-*` has them compared with its body like any
/// other (so it cannot tell a proxy one tool and the server another); one
/// that sends none is served as its era allows.
#[tokio::test]
async fn initialize_era_requests_have_the_headers_they_send_checked() {
    let options = EndpointOptions::default().legacy(tessera_http::Legacy::Stateless);
    let addr = start_with(server(), options).await;
    let legacy_call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "echo", "arguments": {"a": 1}}})
    .to_string();
    // The call, with these MCP headers beside the era's own.
    let send = |mirrors: &'static [(&'static str, &'static str)]| {
        let mut headers = vec![JSON, ACCEPT, ("MCP-Protocol-Version", "2025-11-25")];
        headers.extend_from_slice(mirrors);
        let body = legacy_call.clone();
        async move { raw(addr, "POST", "/mcp", &headers, &body).await }
    };
    let plain = send(&[]).await;
    assert_eq!(plain.status, 200, "{}", plain.body);
    assert!(plain.body.contains(r#"\"a\":1"#), "{}", plain.body);
    let lying = send(&[("Mcp-Method", "tools/call"), ("Mcp-Name", "note")]).await;
    assert_eq!(lying.status, 400, "{}", lying.body);
    assert_eq!(lying.json()["error"]["code"], -32020);
    let wrong_method = send(&[("Mcp-Method", "tools/list")]).await;
    assert_eq!(wrong_method.status, 400, "{}", wrong_method.body);
    let truthful = send(&[("Mcp-Method", "tools/call"), ("Mcp-Name", "echo")]).await;
    assert_eq!(truthful.status, 200, "{}", truthful.body);
}

/// Finding 7 of the second hostile review: the audit layer records a request
/// whose client went away mid-call, as `abandoned`, with who sent it — the
/// requests an attacker abandons are in the trail like the rest.
#[tokio::test]
async fn an_abandoned_request_still_gets_its_audit_record() {
    use std::sync::{Arc, Mutex};
    use tessera_server::middleware::{Audit, AuditRecord, Outcome};

    let records = Arc::new(Mutex::new(Vec::<AuditRecord>::new()));
    let into = Arc::clone(&records);
    let server = McpServer::builder("audited", "1.0.0")
        .middleware(Audit::new(move |r: &AuditRecord| {
            into.lock().unwrap().push(r.clone())
        }))
        .tool(ToolDef::new("hang", |_: Context, _: Value| async {
            std::future::pending::<()>().await;
            "never"
        }))
        .build()
        .unwrap();
    let addr = start_with(server, EndpointOptions::default()).await;

    let payload = body(7, "tools/call", json!({"name": "hang", "arguments": {}}));
    let mut request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n",
        payload.len()
    );
    for (k, v) in [
        JSON,
        ACCEPT,
        VERSION,
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "hang"),
    ] {
        request.push_str(&format!("{k}: {v}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&payload);
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(
        records.lock().unwrap().is_empty(),
        "no record while it runs"
    );
    drop(stream);

    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        if let Some(r) = records.lock().unwrap().first() {
            assert_eq!(r.method, "tools/call");
            assert_eq!(r.target.as_deref(), Some("hang"));
            assert_eq!(r.outcome, Outcome::Abandoned);
            assert_eq!(r.outcome.as_str(), "abandoned");
            assert_eq!(r.error_code, None);
            assert!(
                r.caller.as_deref().is_some_and(|c| c.contains("127.0.0.1")),
                "{:?}",
                r.caller
            );
            // The server's clock starts once the request is read, a little
            // after the client's 300 ms began.
            assert!(r.duration >= Duration::from_millis(250), "{:?}", r.duration);
            break;
        }
        assert!(
            Instant::now() < deadline,
            "no audit record within 5 s of the client going away"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    // The server keeps serving, and a finished request has its record too.
    let r = call(addr, 8, "missing", json!({})).await;
    assert_eq!(r.status, 200, "{}", r.body);
    let records = records.lock().unwrap();
    assert_eq!(records.len(), 2, "{records:?}");
    assert_eq!(records[1].outcome, Outcome::Refused);
}

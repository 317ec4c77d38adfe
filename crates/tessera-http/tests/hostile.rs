//! The endpoint against hostile clients, over real sockets on 127.0.0.1:
//! every loop bounded in count and time. Each test names the hardening rule it
//! checks (issue #14's list).

use serde_json::{Value, json};
use tessera_http::EndpointOptions;
use tessera_server::{Context, Form, HandlerError, McpServer, ToolDef};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};

mod support;
use support::{Reply, body, raw, start_with};

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

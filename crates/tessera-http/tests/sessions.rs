//! Initialize-era sessions over Streamable HTTP (`Legacy::Serve`), over real
//! sockets: the session id's rules, pushed questions and their answers, the
//! standalone stream, and what one session cannot do to another.
//!
//! The 2025-11-25 transport: "Servers that require a session ID SHOULD
//! respond to requests without an MCP-Session-Id header (other than
//! initialization) with HTTP 400 Bad Request"; "The server MAY terminate the
//! session at any time, after which it MUST respond to requests containing
//! that session ID with HTTP 404 Not Found"; "The server MUST send each of
//! its JSON-RPC messages on only one of the connected streams".

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tessera_http::{BearerTokens, EndpointOptions};
use tessera_server::{
    ChangeBus, Context, Form, HandlerError, McpServer, MemoryBus, Notifier, ResourceDef, ToolDef,
};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod support;
use support::{Reply, raw, start_with};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Counter {
    current: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Amount {
    amount: f64,
}
impl Form for Amount {
    const KEY: &'static str = "amount";
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    confirm: bool,
}
impl Form for Confirm {
    const KEY: &'static str = "confirm";
}

fn server(bus: Arc<MemoryBus>) -> McpServer {
    let key = StateKey::from_secret_str("0123456789abcdef0123456789abcdef!").unwrap();
    McpServer::builder("session-test", "1.0.0")
        .request_state(RequestStateCodec::new(KeyRing::new("k1", key).unwrap()))
        .change_bus(bus)
        .tool(ToolDef::new(
            "increase-counter",
            |ctx: Context, args: Counter| async move {
                let Amount { amount } = ctx.ask("How much?")?;
                Ok::<_, HandlerError>(format!("next {}", args.current + amount))
            },
        ))
        .tool(ToolDef::new(
            "add-confirmed",
            |ctx: Context, args: Counter| async move {
                let Amount { amount } = ctx.ask("How much?")?;
                let Confirm { confirm } = ctx.ask(format!("Add {amount}?"))?;
                Ok::<_, HandlerError>(if confirm {
                    format!("next {}", args.current + amount)
                } else {
                    "cancelled".to_owned()
                })
            },
        ))
        .tool(ToolDef::new(
            "panics",
            |_ctx: Context, _: Counter| async move {
                if true {
                    panic!("a handler that panics");
                }
                "never"
            },
        ))
        .resource(ResourceDef::new(
            "test://watched",
            "watched",
            |_ctx: Context| async { "watched".to_owned() },
        ))
        .build()
        .unwrap()
}

const HEADERS: &[(&str, &str)] = &[
    ("Content-Type", "application/json"),
    ("Accept", "application/json, text/event-stream"),
    ("MCP-Protocol-Version", "2025-11-25"),
];

fn with<'a>(extra: &[(&'a str, &'a str)]) -> Vec<(&'a str, &'a str)> {
    HEADERS
        .iter()
        .copied()
        .chain(extra.iter().copied())
        .collect()
}

async fn post(addr: SocketAddr, headers: &[(&str, &str)], body: &Value) -> Reply {
    raw(addr, "POST", "/mcp", headers, &body.to_string()).await
}

/// `initialize` as `token`'s holder (or anonymously): the session id.
async fn initialize(addr: SocketAddr, token: Option<&str>) -> String {
    let bearer = token.map(|t| format!("Bearer {t}"));
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    if let Some(b) = &bearer {
        headers.push(("Authorization", b.as_str()));
    }
    let r = post(
        addr,
        &headers,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["result"]["protocolVersion"], "2025-11-25");
    r.header("mcp-session-id")
        .expect("initialize gives a session id")
}

/// An open event stream, read as it comes.
struct Stream {
    tcp: TcpStream,
    seen: String,
}

impl Stream {
    async fn open(addr: SocketAddr, method: &str, headers: &[(&str, &str)], body: &str) -> Self {
        let mut tcp = TcpStream::connect(addr).await.unwrap();
        let mut req = format!(
            "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        tcp.write_all(req.as_bytes()).await.unwrap();
        Self {
            tcp,
            seen: String::new(),
        }
    }

    /// Reads until `needle` has arrived; the text read so far.
    async fn until(&mut self, needle: &str) -> &str {
        let mut buf = [0u8; 4096];
        while !self.seen.contains(needle) {
            let n = tokio::time::timeout(Duration::from_secs(10), self.tcp.read(&mut buf))
                .await
                .unwrap_or_else(|_| panic!("no {needle:?} within 10 s; read:\n{}", self.seen))
                .unwrap();
            assert!(
                n > 0,
                "the stream ended before {needle:?}; read:\n{}",
                self.seen
            );
            self.seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        &self.seen
    }

    /// The last event id read so far.
    fn last_event_id(&self) -> Option<String> {
        self.seen
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("id: "))
            .map(str::to_owned)
    }

    /// The JSON-RPC messages (`data:` lines) read so far.
    fn messages(&self) -> Vec<Value> {
        self.seen
            .lines()
            .filter_map(|l| l.strip_prefix("data: "))
            .filter_map(|d| serde_json::from_str(d).ok())
            .collect()
    }
}

#[tokio::test]
async fn a_call_asks_on_its_stream_and_the_answer_comes_by_post() {
    let addr = start_with(
        server(Arc::new(MemoryBus::default())),
        EndpointOptions::default(),
    )
    .await;
    let sid = initialize(addr, None).await;
    let session = with(&[("Mcp-Session-Id", sid.as_str())]);
    let r = post(
        addr,
        &session,
        &json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
    )
    .await;
    assert_eq!(r.status, 202);

    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "increase-counter", "arguments": {"current": 10}}});
    let mut stream = Stream::open(addr, "POST", &session, &call.to_string()).await;
    stream.until("elicitation/create").await;
    let question = stream.messages().pop().unwrap();
    assert_eq!(question["method"], "elicitation/create");
    assert_eq!(question["params"]["message"], "How much?");
    let qid = question["id"].clone();

    // Another session cannot answer it.
    let other = initialize(addr, None).await;
    let answer = json!({"jsonrpc": "2.0", "id": qid, "result": {"action": "accept", "content": {"amount": 5}}});
    let r = post(addr, &with(&[("Mcp-Session-Id", other.as_str())]), &answer).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("no question"), "{}", r.body);

    // Its own session can, once.
    let r = post(addr, &session, &answer).await;
    assert_eq!(r.status, 202, "{}", r.body);
    stream.until("next 15").await;
    let done = stream.messages().pop().unwrap();
    assert_eq!(done["id"], 2);
    assert_eq!(done["result"]["content"][0]["text"], "next 15");
    assert!(
        done["result"].get("resultType").is_none(),
        "the old shape: {done}"
    );
    let r = post(addr, &session, &answer).await;
    assert_eq!(r.status, 400, "answered already: {}", r.body);
}

#[tokio::test]
async fn session_ids_are_required_checked_and_ended() {
    let addr = start_with(
        server(Arc::new(MemoryBus::default())),
        EndpointOptions::default(),
    )
    .await;
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping"});
    let r = post(addr, HEADERS, &ping).await;
    assert_eq!(r.status, 400, "{}", r.body);
    assert!(r.body.contains("Mcp-Session-Id"), "{}", r.body);

    let r = post(
        addr,
        &with(&[("Mcp-Session-Id", "t1e.k1.not-a-session")]),
        &ping,
    )
    .await;
    assert_eq!(
        (r.status, r.json()["error"]["code"].clone()),
        (404, json!(-32001))
    );

    let sid = initialize(addr, None).await;
    let session = with(&[("Mcp-Session-Id", sid.as_str())]);
    assert_eq!(
        post(addr, &session, &ping).await.json()["result"],
        json!({})
    );
    let r = raw(
        addr,
        "DELETE",
        "/mcp",
        &[("Mcp-Session-Id", sid.as_str())],
        "",
    )
    .await;
    assert_eq!(r.status, 200, "{}", r.body);
    let r = post(addr, &session, &ping).await;
    assert_eq!(r.status, 404, "an ended session: {}", r.body);
}

#[tokio::test]
async fn a_session_is_bound_to_its_principal() {
    let tokens = BearerTokens::new([("alice-token", "alice"), ("bob-token", "bob")]);
    let addr = start_with(
        server(Arc::new(MemoryBus::default())),
        EndpointOptions::default().authenticate(tokens),
    )
    .await;
    let sid = initialize(addr, Some("alice-token")).await;
    let ping = json!({"jsonrpc": "2.0", "id": 4, "method": "ping"});
    let alice = with(&[
        ("Mcp-Session-Id", sid.as_str()),
        ("Authorization", "Bearer alice-token"),
    ]);
    assert_eq!(post(addr, &alice, &ping).await.status, 200);
    let bob = with(&[
        ("Mcp-Session-Id", sid.as_str()),
        ("Authorization", "Bearer bob-token"),
    ]);
    assert_eq!(
        post(addr, &bob, &ping).await.status,
        404,
        "another user's session id"
    );
}

#[tokio::test]
async fn the_standalone_stream_carries_what_the_session_subscribed_to() {
    let bus = Arc::new(MemoryBus::default());
    let notifier = Notifier::new(Arc::clone(&bus) as Arc<dyn ChangeBus>);
    let addr = start_with(server(Arc::clone(&bus)), EndpointOptions::default()).await;
    let sid = initialize(addr, None).await;
    let session = with(&[("Mcp-Session-Id", sid.as_str())]);
    let subscribe = json!({"jsonrpc": "2.0", "id": 5, "method": "resources/subscribe",
        "params": {"uri": "test://watched"}});
    assert_eq!(
        post(addr, &session, &subscribe).await.json()["result"],
        json!({})
    );

    let get = [
        ("Accept", "text/event-stream"),
        ("Mcp-Session-Id", sid.as_str()),
    ];
    let mut stream = Stream::open(addr, "GET", &get, "").await;
    stream.until(": stream open").await;
    // One standalone stream per session: a second is refused.
    let second = raw(addr, "GET", "/mcp", &get, "").await;
    assert_eq!(second.status, 409, "{}", second.body);

    notifier.resource_updated("test://other").await.unwrap();
    notifier.resource_updated("test://watched").await.unwrap();
    notifier.tools_list_changed().await.unwrap();
    stream.until("tools/list_changed").await;
    let methods: Vec<Value> = stream
        .messages()
        .iter()
        .map(|m| json!([m["method"], m["params"]["uri"]]))
        .collect();
    assert_eq!(
        methods,
        vec![
            json!(["notifications/resources/updated", "test://watched"]),
            json!(["notifications/tools/list_changed", null])
        ],
        "only what was subscribed to, in the old shape"
    );
    let unsubscribe = json!({"jsonrpc": "2.0", "id": 6, "method": "resources/unsubscribe",
        "params": {"uri": "test://watched"}});
    assert_eq!(
        post(addr, &session, &unsubscribe).await.json()["result"],
        json!({})
    );

    // The client goes away: its stream's claim is given up at once, so a
    // reconnecting client opens it again (not 409 until a lease lapses).
    drop(stream);
    let mut reopened = None;
    for _ in 0..50 {
        let mut again = Stream::open(addr, "GET", &get, "").await;
        let head = again.until("\r\n").await.to_owned();
        if head.starts_with("HTTP/1.1 200") {
            reopened = Some(again);
            break;
        }
        assert!(head.starts_with("HTTP/1.1 409"), "{head}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(reopened.is_some(), "the stream opens again within a second");
}

#[tokio::test]
async fn discovery_lists_the_versions_actually_served() {
    let modern = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "server/discover"),
    ];
    let discover = support::body(9, "server/discover", json!({}));
    for (options, versions) in [
        (
            EndpointOptions::default(),
            json!([
                "2024-11-05",
                "2025-03-26",
                "2025-06-18",
                "2025-11-25",
                "2026-07-28"
            ]),
        ),
        (
            EndpointOptions::default().legacy(tessera_http::Legacy::Reject),
            json!(["2026-07-28"]),
        ),
    ] {
        let addr = start_with(server(Arc::new(MemoryBus::default())), options).await;
        let r = raw(addr, "POST", "/mcp", &modern, &discover).await;
        assert_eq!(
            r.json()["result"]["supportedVersions"],
            versions,
            "{}",
            r.body
        );
    }
}

/// The second hostile review's finding 2: a subscription is kept only to
/// what the caller could read, by a URI of bounded size; the refusals say why.
#[tokio::test]
async fn a_subscription_is_kept_only_to_a_resource_the_caller_could_read() {
    let addr = start_with(
        server(Arc::new(MemoryBus::default())),
        EndpointOptions::default(),
    )
    .await;
    let sid = initialize(addr, None).await;
    let session = with(&[("Mcp-Session-Id", sid.as_str())]);
    let subscribe = |id: i64, uri: &str| json!({"jsonrpc": "2.0", "id": id, "method": "resources/subscribe", "params": {"uri": uri}});
    let r = post(addr, &session, &subscribe(1, "test://missing")).await;
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], -32602, "{}", r.body);
    assert!(r.body.contains("test://missing"), "{}", r.body);

    let long = format!(
        "test://watched?{}",
        "x".repeat(tessera_http::MAX_SUBSCRIPTION_URI_BYTES)
    );
    let r = post(addr, &session, &subscribe(2, &long)).await;
    assert_eq!(r.json()["error"]["code"], -32602, "{}", r.body);
    assert_eq!(
        r.json()["error"]["message"],
        "Invalid resources/subscribe params: uri is longer than 2048 bytes"
    );

    let r = post(addr, &session, &subscribe(3, "test://watched")).await;
    assert_eq!(r.json()["result"], json!({}), "{}", r.body);
}

/// The 2025-11-25 transport, *Resumability and Redelivery*: "If the client
/// wishes to resume after a disconnection … it SHOULD issue an HTTP GET to
/// the MCP endpoint, and include the Last-Event-ID header"; "The server MAY
/// use this header to replay messages that would have been sent after the
/// last event ID, on the stream that was disconnected"; and for the POST's
/// stream, "Disconnection SHOULD NOT be interpreted as the client
/// cancelling its request."
#[tokio::test]
async fn a_cut_call_stream_resumes_with_last_event_id_and_the_call_goes_on() {
    let addr = start_with(
        server(Arc::new(MemoryBus::default())),
        EndpointOptions::default(),
    )
    .await;
    let sid = initialize(addr, None).await;
    let session = with(&[("Mcp-Session-Id", sid.as_str())]);
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "add-confirmed", "arguments": {"current": 10}}});
    let mut stream = Stream::open(addr, "POST", &session, &call.to_string()).await;
    // "The server SHOULD immediately send an SSE event consisting of an event
    // ID and an empty data field in order to prime the client to reconnect."
    stream.until("retry: ").await;
    assert!(stream.seen.contains("\nid: "), "{}", stream.seen);
    stream.until("How much?").await;
    let question = stream.messages().pop().unwrap();
    let last = stream.last_event_id().expect("events carry ids");
    let primed = format!("{}.0", last.rsplit_once('.').unwrap().0);
    drop(stream); // the connection breaks after the question

    // The answer still reaches the call, which goes on to its next question.
    let answer = json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": {"amount": 5}}});
    let r = post(addr, &session, &answer).await;
    assert_eq!(r.status, 202, "{}", r.body);

    let resume = with(&[
        ("Mcp-Session-Id", sid.as_str()),
        ("Last-Event-ID", last.as_str()),
    ]);
    let mut resumed = Stream::open(addr, "GET", &resume, "").await;
    resumed.until("Add 5?").await;
    let messages = resumed.messages();
    assert_eq!(
        messages.len(),
        1,
        "only what came after {last}: {}",
        resumed.seen
    );
    let confirm = messages[0].clone();
    let r = post(
        addr,
        &session,
        &json!({"jsonrpc": "2.0", "id": confirm["id"], "result": {"action": "accept", "content": {"confirm": true}}}),
    )
    .await;
    assert_eq!(r.status, 202, "{}", r.body);
    resumed.until("next 15").await;
    let done = resumed.messages().pop().unwrap();
    assert_eq!(done["id"], 7);
    assert_eq!(done["result"]["content"][0]["text"], "next 15");

    // From the priming event, the whole stream is replayed, in order, once.
    let again = with(&[
        ("Mcp-Session-Id", sid.as_str()),
        ("Last-Event-ID", primed.as_str()),
    ]);
    let mut replay = Stream::open(addr, "GET", &again, "").await;
    replay.until("next 15").await;
    let texts: Vec<String> = replay
        .messages()
        .iter()
        .map(|m| {
            m["params"]["message"]
                .as_str()
                .map_or_else(|| m["id"].to_string(), str::to_owned)
        })
        .collect();
    assert_eq!(texts, ["How much?", "Add 5?", "7"]);

    // "The server MUST NOT replay messages that would have been delivered on a
    // different stream": another session's client gets nothing of it.
    let other = initialize(addr, None).await;
    let stolen = with(&[
        ("Mcp-Session-Id", other.as_str()),
        ("Last-Event-ID", last.as_str()),
    ]);
    let r = raw(addr, "GET", "/mcp", &stolen, "").await;
    // 400, not 404: "a 404 on a request with a session ID means the session is gone".
    assert_eq!(r.status, 400, "{}", r.body);
    for made_up in ["1", "zz.1", "0123456789abcdef0123456789abcdef.1"] {
        let h = with(&[("Mcp-Session-Id", sid.as_str()), ("Last-Event-ID", made_up)]);
        let r = raw(addr, "GET", "/mcp", &h, "").await;
        assert_eq!(r.status, 400, "{made_up}: {}", r.body);
        assert!(
            r.body.contains("names no stream of this session"),
            "{}",
            r.body
        );
    }
}

/// A call whose handler panics while it runs detached from its connection
/// is still answered (an internal error), and the session goes on.
#[tokio::test]
async fn a_detached_call_that_panics_is_answered_and_the_session_goes_on() {
    let addr = start_with(
        server(Arc::new(MemoryBus::default())),
        EndpointOptions::default(),
    )
    .await;
    let sid = initialize(addr, None).await;
    let session = with(&[("Mcp-Session-Id", sid.as_str())]);
    let call = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "panics", "arguments": {"current": 1}}});
    let r = tokio::time::timeout(Duration::from_secs(10), post(addr, &session, &call))
        .await
        .expect("answered, not left waiting");
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], -32603, "{}", r.body);
    let list = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"});
    assert_eq!(post(addr, &session, &list).await.status, 200);
}

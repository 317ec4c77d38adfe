//! What one client can hold, over real sockets on 127.0.0.1 (issue #27's
//! list): at the connection cap the connection that made the least progress
//! gives way to a newcomer, listen streams are bounded per client and kept
//! alive. Every loop is bounded in count and time.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tessera_http::{BearerTokens, EndpointOptions, ServeOptions};
use tessera_server::{Context, HandlerError, McpServer, TaskSupport, ToolDef};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

mod support;
use support::{body, start_serving};

fn server() -> McpServer {
    McpServer::builder("per-client", "1.0.0")
        .tool(ToolDef::new(
            "echo",
            |_ctx: Context, args: Value| async move { args.to_string() },
        ))
        .tool(ToolDef::new(
            "slow",
            |_ctx: Context, _args: Value| async move {
                tokio::time::sleep(Duration::from_secs(3)).await;
                "slept"
            },
        ))
        .tool(ToolDef::new(
            "progress",
            |ctx: Context, _args: Value| async move {
                for step in 0..3 {
                    ctx.progress(f64::from(step), Some(3.0), None);
                }
                "reported"
            },
        ))
        .tool(ToolDef::new(
            "big",
            |_ctx: Context, _args: Value| async move { "x".repeat(48 * 1024 * 1024) },
        ))
        .tool(
            ToolDef::new("slow-task", |ctx: Context, _args: Value| async move {
                ctx.begin_task()?;
                tokio::time::sleep(Duration::from_secs(30)).await;
                Ok::<_, HandlerError>("done")
            })
            .task_support(TaskSupport::Required),
        )
        .build()
        .unwrap()
}

/// Generous deadlines, so that only the cap policy frees a connection.
fn patient(cap: usize) -> ServeOptions {
    ServeOptions::default()
        .max_connections(cap)
        .header_timeout(Duration::from_secs(60))
        .body_timeout(Duration::from_secs(60))
}

/// A `tools/call` of `tool` (with `token`, when given), head and body, closing after the answer.
fn call(addr: std::net::SocketAddr, tool: &str, token: Option<&str>) -> String {
    let b = body(1, "tools/call", json!({"name": tool, "arguments": {}}));
    format!(
        "{}{b}",
        head(addr, "tools/call", Some(tool), b.len(), token)
    )
}

fn head(
    addr: std::net::SocketAddr,
    method: &str,
    name: Option<&str>,
    len: usize,
    token: Option<&str>,
) -> String {
    let name = name
        .map(|n| format!("Mcp-Name: {n}\r\n"))
        .unwrap_or_default();
    let auth = token
        .map(|t| format!("Authorization: Bearer {t}\r\n"))
        .unwrap_or_default();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: {method}\r\n{name}{auth}Connection: close\r\nContent-Length: {len}\r\n\r\n"
    )
}

/// A `subscriptions/listen` for tool list changes (with `token`, when given).
fn listen(addr: std::net::SocketAddr, token: Option<&str>) -> String {
    let b = body(
        7,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    );
    format!(
        "{}{b}",
        head(addr, "subscriptions/listen", None, b.len(), token)
    )
}

/// Sends `request` on a new connection and reads until the server closes it (within 5 s).
async fn exchange(addr: std::net::SocketAddr, request: &str) -> String {
    exchange_from([127, 0, 0, 1], addr, request).await
}

/// A `tools/call` of `slow-task` declaring the tasks extension (with `token`, when given).
fn start_task(addr: std::net::SocketAddr, token: Option<&str>) -> String {
    let mut params = json!({"name": "slow-task", "arguments": {}});
    params["_meta"] = support::meta(json!({"extensions": {"io.modelcontextprotocol/tasks": {}}}));
    let b =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}).to_string();
    format!(
        "{}{b}",
        head(addr, "tools/call", Some("slow-task"), b.len(), token)
    )
}

async fn read_to_close(stream: &mut TcpStream, limit: Duration) -> Option<String> {
    let mut out = Vec::new();
    match tokio::time::timeout(limit, stream.read_to_end(&mut out)).await {
        Ok(_) => Some(String::from_utf8_lossy(&out).into_owned()),
        Err(_) => None,
    }
}

/// Reads until `needle` has arrived (within 5 s): what arrived.
async fn read_until(stream: &mut TcpStream, needle: &str) -> String {
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(5);
    while !String::from_utf8_lossy(&seen).contains(needle) {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(n)) if n > 0 => seen.extend_from_slice(&buf[..n]),
            _ => panic!(
                "{needle:?} did not arrive; got {:?}",
                String::from_utf8_lossy(&seen)
            ),
        }
    }
    String::from_utf8_lossy(&seen).into_owned()
}

/// A listen stream, open once its acknowledgement arrived.
async fn open_listen(addr: std::net::SocketAddr, token: Option<&str>) -> TcpStream {
    let mut stream = TcpStream::connect(addr).await.unwrap();
    stream
        .write_all(listen(addr, token).as_bytes())
        .await
        .unwrap();
    read_until(&mut stream, "notifications/subscriptions/acknowledged").await;
    stream
}

/// Whether the server closed `stream` (within 2 s).
async fn closed(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 4096];
    let deadline = Instant::now() + Duration::from_secs(2);
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match tokio::time::timeout(left, stream.read(&mut buf)).await {
            Ok(Ok(0) | Err(_)) => return true,
            Ok(Ok(_)) => continue,
            Err(_) => return false,
        }
    }
}

/// Finding 1: stalled uploads filling the cap do not keep new clients out:
/// each new client takes the place of a stalled upload (no body byte since
/// its head, past the quarter-second grace), and an attacker that keeps
/// reopening them still cannot.
#[tokio::test]
async fn at_the_cap_a_stalled_upload_gives_way_to_a_new_client() {
    let addr = start_serving(server(), EndpointOptions::default(), patient(4)).await;
    let mut stalled = Vec::new();
    for _ in 0..4 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(head(addr, "tools/call", Some("echo"), 1000, None).as_bytes())
            .await
            .unwrap();
        stalled.push(s);
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Past the grace a body gets before its rate is judged.
    tokio::time::sleep(Duration::from_millis(300)).await;
    for round in 0..5 {
        let started = Instant::now();
        let answer = exchange(addr, &call(addr, "echo", None)).await;
        assert!(
            answer.starts_with("HTTP/1.1 200"),
            "round {round}: {answer}"
        );
        assert!(started.elapsed() < Duration::from_secs(2), "round {round}");
        // The attacker opens another stalled upload at once.
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(head(addr, "tools/call", Some("echo"), 1000, None).as_bytes())
            .await
            .unwrap();
        stalled.push(s);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    // The oldest stalled uploads were the ones closed.
    assert!(
        closed(&mut stalled[0]).await,
        "the oldest stalled upload was closed"
    );
}

/// Finding 1: A connection that never sent a request head goes before a stalled upload.
#[tokio::test]
async fn at_the_cap_a_connection_without_a_head_goes_before_a_stalled_upload() {
    let addr = start_serving(server(), EndpointOptions::default(), patient(2)).await;
    let mut upload = TcpStream::connect(addr).await.unwrap();
    upload
        .write_all(head(addr, "tools/call", Some("echo"), 1000, None).as_bytes())
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let mut idle = TcpStream::connect(addr).await.unwrap();
    tokio::time::sleep(Duration::from_millis(50)).await;
    let answer = exchange(addr, &call(addr, "echo", None)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(closed(&mut idle).await, "the idle connection gave way");
    assert!(!closed(&mut upload).await, "the upload is still held");
}

/// Finding 1: A connection serving a request never gives way: when every connection
/// is one, the newcomer is closed at once (shed).
#[tokio::test]
async fn when_every_connection_is_serving_the_newcomer_is_shed() {
    let addr = start_serving(server(), EndpointOptions::default(), patient(2)).await;
    let mut slow = Vec::new();
    for _ in 0..2 {
        let mut s = TcpStream::connect(addr).await.unwrap();
        s.write_all(call(addr, "slow", None).as_bytes())
            .await
            .unwrap();
        slow.push(s);
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let mut newcomer = TcpStream::connect(addr).await.unwrap();
    let shed = read_to_close(&mut newcomer, Duration::from_secs(2)).await;
    assert_eq!(shed.as_deref(), Some(""), "shed at once");
    for mut s in slow {
        let answer = read_to_close(&mut s, Duration::from_secs(5)).await.unwrap();
        assert!(answer.contains("slept"), "{answer}");
    }
}

/// Finding 1: Listen streams of one client filling the cap: a new client is served,
/// in place of the oldest stream of the client holding the most; another
/// client's single stream stays.
#[tokio::test]
async fn at_the_cap_the_oldest_stream_of_the_client_holding_most_gives_way() {
    let tokens = BearerTokens::new([("alice-token", "alice"), ("mallory-token", "mallory")]);
    let options = EndpointOptions::default().authenticate(tokens);
    let addr = start_serving(server(), options, patient(4)).await;
    let mut alice = open_listen(addr, Some("alice-token")).await;
    let mut mallory = Vec::new();
    for _ in 0..3 {
        mallory.push(open_listen(addr, Some("mallory-token")).await);
    }
    let answer = exchange(addr, &call(addr, "echo", Some("alice-token"))).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert!(
        closed(&mut mallory[0]).await,
        "mallory's oldest stream gave way"
    );
    assert!(!closed(&mut mallory[1]).await);
    assert!(!closed(&mut alice).await, "alice's only stream stays");
}

/// Finding 1: A client holds at most `listen_streams_per_client` streams (429 past
/// it, saying why); another client is not refused, and a stream closed makes room.
#[tokio::test]
async fn listen_streams_are_bounded_per_client() {
    let tokens = BearerTokens::new([("alice-token", "alice"), ("mallory-token", "mallory")]);
    // Writes show the server a stream whose client left.
    let options = EndpointOptions::default()
        .authenticate(tokens)
        .listen_streams_per_client(3)
        .keep_alive(Some(Duration::from_millis(100)));
    let addr = start_serving(server(), options, ServeOptions::default()).await;
    let mut held = Vec::new();
    for _ in 0..3 {
        held.push(open_listen(addr, Some("mallory-token")).await);
    }
    let refused = exchange(addr, &listen(addr, Some("mallory-token"))).await;
    assert!(refused.starts_with("HTTP/1.1 429"), "{refused}");
    assert!(
        refused.to_ascii_lowercase().contains("retry-after: 5"),
        "{refused}"
    );
    assert!(
        refused.contains("already holds 3 open listen streams"),
        "{refused}"
    );
    let _alice = open_listen(addr, Some("alice-token")).await;
    drop(held.pop());
    // The server notices the closed stream when it next writes or polls; allow a moment.
    let mut reopened = None;
    for _ in 0..20 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let mut stream = TcpStream::connect(addr).await.unwrap();
        stream
            .write_all(listen(addr, Some("mallory-token")).as_bytes())
            .await
            .unwrap();
        let first = read_until(&mut stream, "\r\n\r\n").await;
        if first.starts_with("HTTP/1.1 200") {
            reopened = Some(stream);
            break;
        }
    }
    assert!(reopened.is_some(), "a closed stream makes room");
}

/// Finding 1: Anonymous callers are told apart by address: one address's streams
/// are bounded too.
#[tokio::test]
async fn anonymous_listen_streams_are_bounded_per_address() {
    let options = EndpointOptions::default().listen_streams_per_client(2);
    let addr = start_serving(server(), options, ServeOptions::default()).await;
    let _a = open_listen(addr, None).await;
    let _b = open_listen(addr, None).await;
    let refused = exchange(addr, &listen(addr, None)).await;
    assert!(refused.starts_with("HTTP/1.1 429"), "{refused}");
}

/// Finding 1: a silent stream writes a keep-alive comment, which event-stream
/// readers skip. streamable-http.mdx: "For long-lived streams — in particular
/// the subscriptions/listen response stream — servers are encouraged to
/// periodically emit an SSE comment line … as a keep-alive."
#[tokio::test]
async fn silent_streams_are_kept_alive() {
    let options = EndpointOptions::default().keep_alive(Some(Duration::from_millis(200)));
    let addr = start_serving(server(), options, ServeOptions::default()).await;
    let mut stream = open_listen(addr, None).await;
    let started = Instant::now();
    read_until(&mut stream, ": keep-alive\n\n").await;
    assert!(started.elapsed() >= Duration::from_millis(150));
    // And again after the next silence.
    read_until(&mut stream, ": keep-alive\n\n").await;
}

/// Finding 3: one caller's tasks cannot refuse everyone else's: past its own
/// bound (64 unfinished) it is refused with 503 and a reason, while another
/// caller still starts tasks.
#[tokio::test]
async fn one_callers_tasks_do_not_refuse_another_callers() {
    let tokens = BearerTokens::new([("alice-token", "alice"), ("mallory-token", "mallory")]);
    let addr = start_serving(
        server(),
        EndpointOptions::default().authenticate(tokens),
        ServeOptions::default(),
    )
    .await;
    let start_task = |token: &'static str| {
        let request = start_task(addr, Some(token));
        async move { exchange(addr, &request).await }
    };
    for n in 0..tessera_server::MAX_LIVE_TASKS_PER_PRINCIPAL {
        let started = start_task("mallory-token").await;
        assert!(started.contains("taskId"), "task {n}: {started}");
    }
    let refused = start_task("mallory-token").await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("as many as one caller may"), "{refused}");
    let alice = start_task("alice-token").await;
    assert!(
        alice.contains("taskId"),
        "another caller is not refused: {alice}"
    );
}

/// Finding 1: a client that stops reading its answer (the socket's buffers
/// full) is disconnected once a write has waited the write timeout, instead
/// of holding its slot and its answer for as long as it likes.
#[tokio::test]
async fn a_client_that_stops_reading_is_disconnected() {
    let serving = ServeOptions::default().write_timeout(Duration::from_millis(500));
    let addr = start_serving(server(), EndpointOptions::default(), serving).await;
    // A small receive buffer, fixed: the kernel's autotuning (up to
    // net.ipv4.tcp_rmem's maximum, 32 MiB here) could otherwise take in
    // most of the answer before the server ever waits.
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(64 * 1024).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    stream
        .write_all(call(addr, "big", None).as_bytes())
        .await
        .unwrap();
    // The answer's first bytes (a debug build under load may take seconds
    // to make 48 MiB of JSON), then nothing read while the server fills the
    // socket's buffers and waits.
    let mut buf = vec![0u8; 1 << 16];
    let mut got = tokio::time::timeout(Duration::from_secs(60), stream.read(&mut buf))
        .await
        .expect("the server starts answering within a minute")
        .unwrap();
    tokio::time::sleep(Duration::from_secs(3)).await;
    let ended = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(n) => got += n,
            }
        }
    })
    .await;
    assert!(ended.is_ok(), "the connection was closed");
    assert!(got < 48 * 1024 * 1024, "cut short: {got} bytes arrived");
}

/// Finding 2: an id is echoed in every notification of its request, so a
/// 1,000,000-byte id is refused where it enters (400, -32600), and not
/// echoed: no listen stream ever queues copies of it.
#[tokio::test]
async fn a_huge_request_id_is_refused_before_any_stream_opens() {
    let addr = start_serving(
        server(),
        EndpointOptions::default(),
        ServeOptions::default(),
    )
    .await;
    let mut params = json!({"notifications": {"toolsListChanged": true}});
    params["_meta"] = support::meta(json!({}));
    let huge = "i".repeat(1_000_000);
    let b =
        json!({"jsonrpc": "2.0", "id": huge, "method": "subscriptions/listen", "params": params})
            .to_string();
    let answer = exchange(
        addr,
        &format!(
            "{}{b}",
            head(addr, "subscriptions/listen", None, b.len(), None)
        ),
    )
    .await;
    assert!(
        answer.starts_with("HTTP/1.1 400"),
        "{}",
        &answer[..200.min(answer.len())]
    );
    assert!(answer.contains("-32600"), "{answer}");
    assert!(answer.contains("longer than 256 bytes"), "{answer}");
    assert!(
        answer.len() < 4096,
        "the id is not echoed: {} bytes",
        answer.len()
    );
}

/// #47 finding 4: a progress token is echoed in every progress
/// notification, so it is bounded like the id: a 921 KB token is refused
/// (400, -32602) in a response smaller than its request, and a token at the
/// limit is echoed as sent.
#[tokio::test]
async fn a_huge_progress_token_draws_no_response_larger_than_its_request() {
    let addr = start_serving(
        server(),
        EndpointOptions::default(),
        ServeOptions::default(),
    )
    .await;
    let progress_call = |token: &str| {
        let mut params = json!({"name": "progress", "arguments": {}});
        params["_meta"] = support::meta(json!({}));
        params["_meta"]["progressToken"] = json!(token);
        let b = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
            .to_string();
        format!(
            "{}{b}",
            head(addr, "tools/call", Some("progress"), b.len(), None)
        )
    };
    let request = progress_call(&"p".repeat(921_000));
    let answer = exchange(addr, &request).await;
    assert!(answer.starts_with("HTTP/1.1 400"), "{}", &answer[..200]);
    assert!(answer.contains("-32602"), "{answer}");
    assert!(
        answer.contains("_meta.progressToken is longer than 256 bytes"),
        "{answer}"
    );
    assert!(
        answer.len() < request.len() / 100,
        "{} bytes answered {} sent",
        answer.len(),
        request.len()
    );

    let at_limit = "p".repeat(256);
    let answer = exchange(addr, &progress_call(&at_limit)).await;
    assert!(answer.starts_with("HTTP/1.1 200"), "{answer}");
    assert_eq!(answer.matches(&at_limit).count(), 3, "{answer}");
    assert!(answer.contains("reported"), "{answer}");
}

/// Sends `request` from local address `from` (another loopback address) and reads to the close.
async fn exchange_from(from: [u8; 4], addr: std::net::SocketAddr, request: &str) -> String {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind(std::net::SocketAddr::from((from, 0))).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    stream.write_all(request.as_bytes()).await.unwrap();
    read_to_close(&mut stream, Duration::from_secs(5))
        .await
        .expect("answered and closed within 5 s")
}

/// Finding 3: anonymous callers are told apart by address: one address
/// holding its 64 unfinished tasks does not refuse another address's.
#[tokio::test]
async fn anonymous_callers_tasks_are_bounded_per_address() {
    let addr = start_serving(
        server(),
        EndpointOptions::default(),
        ServeOptions::default(),
    )
    .await;
    let request = start_task(addr, None);
    for n in 0..tessera_server::MAX_LIVE_TASKS_PER_PRINCIPAL {
        let started = exchange_from([127, 0, 0, 1], addr, &request).await;
        assert!(started.contains("taskId"), "task {n}: {started}");
    }
    let refused = exchange_from([127, 0, 0, 1], addr, &request).await;
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    let other = exchange_from([127, 0, 0, 2], addr, &request).await;
    assert!(
        other.contains("taskId"),
        "another address is not refused: {other}"
    );
}

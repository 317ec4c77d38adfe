//! `counter --legacy serve` against initialize-era clients that try to make
//! the server keep what they send (the second hostile review), over real
//! sockets, with the finding's figures as the attack.

use std::process::Command;
use std::time::Duration;

use serde_json::json;
use test_harness::Listening;
use test_harness::legacy_session::{Call, accept, initialize, post};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

const KEY: &str = "legacy-limits-key-0123456789abcdef0123456";

fn counter() -> Listening {
    let mut command = Command::new(env!("CARGO_BIN_EXE_counter"));
    command
        .args(["--addr", "127.0.0.1:0", "--legacy", "serve"])
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .env("RUST_LOG", "info");
    Listening::start(command)
}

/// Finding 2: `resources/subscribe` kept 64 URIs of up to 1 MiB per session
/// on a server with no resources at all (30 sessions: 294 MB to 1.99 GB).
/// Now nothing is kept of a subscription the caller could not read: the
/// counter has no resources, so each is -32601, and the server's memory
/// stays where it was while 30 sessions send 64 URIs of 256 KiB each (480 MiB).
#[test]
fn subscriptions_to_what_the_server_does_not_have_keep_nothing() {
    let counter = counter();
    let sessions: Vec<String> = (0..30).map(|_| initialize(&counter.addr)).collect();
    let before = counter.rss_kib();
    let padding = "x".repeat(256 * 1024);
    for (s, sid) in sessions.iter().enumerate() {
        for i in 0..64 {
            let subscribe = json!({"jsonrpc": "2.0", "id": i, "method": "resources/subscribe",
                "params": {"uri": format!("test://{s}/{i}/{padding}")}});
            let (status, reply) = post(&counter.addr, Some(sid), &subscribe);
            assert_eq!(status, 200, "{}", &reply[..reply.len().min(400)]);
            assert!(
                reply.contains(r#""code":-32602"#),
                "{}",
                &reply[..reply.len().min(400)]
            );
        }
    }
    let after = counter.rss_kib();
    assert!(
        after < before + 32 * 1024,
        "the server grew from {before} KiB to {after} KiB"
    );
    // A URI it could have is refused for what it is, and the server still serves.
    let subscribe = json!({"jsonrpc": "2.0", "id": 99, "method": "resources/subscribe",
        "params": {"uri": "test://anything"}});
    let (status, reply) = post(&counter.addr, Some(&sessions[0]), &subscribe);
    assert_eq!(status, 200, "{reply}");
    assert!(reply.contains(r#""code":-32601"#), "{reply}");
    assert!(reply.contains("resources/subscribe"), "{reply}");
}

/// Starts `increase-counter` in `session` from `from`: the stream, once its
/// question is pushed; `None` if the call ended without one.
async fn ask_from(
    from: std::net::IpAddr,
    addr: std::net::SocketAddr,
    session: String,
    id: usize,
) -> Option<tokio::net::TcpStream> {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.bind((from, 0).into()).unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "increase-counter", "arguments": {"current": 10}}})
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {session}\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(request.as_bytes()).await.unwrap();
    let mut seen = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = tokio::time::timeout(Duration::from_secs(60), stream.read(&mut buf))
            .await
            .ok()?
            .ok()?;
        if n == 0 {
            return None;
        }
        seen.extend_from_slice(&buf[..n]);
        if String::from_utf8_lossy(&seen).contains("elicitation/create") {
            return Some(stream);
        }
    }
}

/// Finding 1: one client from 40 loopback addresses (16 sessions × 16
/// questions each, within every per-session and per-address limit) filled
/// the 10,000-question table, and a caller from a 41st address was refused
/// for 30 minutes. Now the caller holding the most gives way: the bystander
/// is asked, answers, and its call completes while the flood still holds
/// every question it can.
#[tokio::test(flavor = "multi_thread")]
async fn a_bystander_is_served_while_one_client_holds_every_address_it_can() {
    let counter = tokio::task::spawn_blocking(counter).await.unwrap();
    let addr: std::net::SocketAddr = counter.addr.parse().unwrap();
    let at = counter.addr.clone();
    let sessions: Vec<String> =
        tokio::task::spawn_blocking(move || (0..40 * 16).map(|_| initialize(&at)).collect())
            .await
            .unwrap();
    let mut flood = tokio::task::JoinSet::new();
    for (s, session) in sessions.iter().enumerate() {
        let from = std::net::IpAddr::from([127, 0, 1, (s / 16) as u8 + 1]);
        for q in 0..tessera::http::MAX_QUESTIONS_PER_SESSION {
            flood.spawn(ask_from(from, addr, session.clone(), s * 16 + q));
        }
    }
    let held: Vec<_> = flood.join_all().await.into_iter().flatten().collect();
    // Nothing is answered, so once the flood has been asked this many the
    // table is full (a withdrawn question's place goes to another at once).
    assert!(
        held.len() >= tessera::http::MAX_QUESTIONS,
        "the flood was asked only {} questions",
        held.len()
    );

    // The bystander, from 127.0.0.1, completes the counter's two rounds.
    let at = counter.addr.clone();
    let done = tokio::task::spawn_blocking(move || {
        let sid = initialize(&at);
        let mut call = Call::start(&at, &sid, 1);
        let amount = call.next_message();
        assert_eq!(amount["method"], "elicitation/create", "{amount}");
        let (status, reply) = post(&at, Some(&sid), &accept(&amount, json!({"amount": 5})));
        assert_eq!(status, 202, "{reply}");
        let confirm = call.next_message();
        assert_eq!(confirm["method"], "elicitation/create", "{confirm}");
        let (status, reply) = post(&at, Some(&sid), &accept(&confirm, json!({"confirm": true})));
        assert_eq!(status, 202, "{reply}");
        call.next_message()
    })
    .await
    .unwrap();
    assert_eq!(
        done["result"]["content"][0]["text"], "Counter increased by 5; next value is 15",
        "{done}"
    );
    drop(held);
}

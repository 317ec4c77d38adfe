//! `counter --legacy serve` against initialize-era clients that try to make
//! the server keep what they send (the second hostile review), over real
//! sockets, with the finding's figures as the attack.

use std::process::Command;

use serde_json::json;
use test_harness::Listening;
use test_harness::legacy_session::{initialize, post};

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

//! Initialize-era sessions across instances: three `counter --legacy serve
//! --redis URL` processes sharing one Redis (started on a free port), each
//! request of one session sent to another instance. The session id is
//! sealed, so any instance serves it; the answer to a pushed question is
//! relayed to the instance whose call asked.

use std::io::Read;
use std::net::TcpStream;
use std::process::Command;

use serde_json::{Value, json};
use test_harness::legacy_session::{initialize, post, send};
use test_harness::{Listening, RedisServer};

const KEY: &str = "legacy-instances-key-0123456789abcdef0123";

fn instance(redis: &str) -> Listening {
    let mut command = Command::new(env!("CARGO_BIN_EXE_counter"));
    command
        .args([
            "--addr",
            "127.0.0.1:0",
            "--legacy",
            "serve",
            "--redis",
            redis,
        ])
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .env("RUST_LOG", "info");
    Listening::start(command)
}

/// A call's event stream, read message by message.
struct Call {
    stream: TcpStream,
    seen: String,
    taken: usize,
}

impl Call {
    fn start(addr: &str, session: &str, id: i64) -> Self {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "increase-counter", "arguments": {"current": 10}}});
        Self {
            stream: send(addr, "POST", Some(session), &call),
            seen: String::new(),
            taken: 0,
        }
    }

    /// The next JSON-RPC message on the stream.
    fn next(&mut self) -> Value {
        loop {
            let messages: Vec<Value> = self
                .seen
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .filter_map(|d| serde_json::from_str(d).ok())
                .collect();
            if let Some(m) = messages.get(self.taken) {
                self.taken += 1;
                return m.clone();
            }
            let mut buf = [0u8; 4096];
            let n = self.stream.read(&mut buf).expect("the stream goes on");
            assert!(n > 0, "the stream ended; read:\n{}", self.seen);
            self.seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
}

fn accept(question: &Value, content: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": content}})
}

#[test]
fn every_request_of_a_session_may_reach_another_instance() {
    let redis = RedisServer::start();
    let [a, b, c] = [0, 1, 2].map(|_| instance(&redis.url()));

    let sid = initialize(&a.addr);
    let mut call = Call::start(&b.addr, &sid, 2);
    let amount = call.next();
    assert_eq!(amount["method"], "elicitation/create", "{amount}");
    // Answered to another instance than the one holding the call: relayed there.
    let (status, reply) = post(&c.addr, Some(&sid), &accept(&amount, json!({"amount": 5})));
    assert_eq!(status, 202, "{reply}");
    let confirm = call.next();
    assert_eq!(
        confirm["params"]["message"], "Increase 10 by 5?",
        "{confirm}"
    );
    let (status, reply) = post(
        &a.addr,
        Some(&sid),
        &accept(&confirm, json!({"confirm": true})),
    );
    assert_eq!(status, 202, "{reply}");
    let done = call.next();
    assert_eq!(
        done["result"]["content"][0]["text"], "Counter increased by 5; next value is 15",
        "{done}"
    );
}

#[test]
fn when_the_holder_is_gone_the_answer_is_told_and_a_new_call_completes() {
    let redis = RedisServer::start();
    let a = instance(&redis.url());
    let mut b = instance(&redis.url());
    let c = instance(&redis.url());

    let sid = initialize(&a.addr);
    let mut call = Call::start(&b.addr, &sid, 2);
    let amount = call.next();
    b.kill();
    let (status, reply) = post(&c.addr, Some(&sid), &accept(&amount, json!({"amount": 5})));
    assert_eq!(status, 404, "{reply}");
    assert!(reply.contains("instance that is gone"), "{reply}");

    // The session lives on: a new call on another instance completes.
    let mut call = Call::start(&a.addr, &sid, 3);
    let amount = call.next();
    assert_eq!(
        post(&c.addr, Some(&sid), &accept(&amount, json!({"amount": 5}))).0,
        202
    );
    let confirm = call.next();
    assert_eq!(
        post(
            &c.addr,
            Some(&sid),
            &accept(&confirm, json!({"confirm": true}))
        )
        .0,
        202
    );
    assert_eq!(
        call.next()["result"]["content"][0]["text"],
        "Counter increased by 5; next value is 15"
    );
}

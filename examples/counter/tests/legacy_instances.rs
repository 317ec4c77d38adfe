//! Initialize-era sessions across instances: three `counter --legacy serve
//! --redis URL` processes sharing one Redis (started on a free port), each
//! request of one session sent to another instance. The session id is
//! sealed, so any instance serves it; the answer to a pushed question is
//! relayed to the instance whose call asked.

use std::process::Command;

use serde_json::json;
use test_harness::legacy_session::{Call, accept, initialize, post};
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

#[test]
fn every_request_of_a_session_may_reach_another_instance() {
    let redis = RedisServer::start();
    let [a, b, c] = [0, 1, 2].map(|_| instance(&redis.url()));

    let sid = initialize(&a.addr);
    let mut call = Call::start(&b.addr, &sid, 2);
    let amount = call.next_message();
    assert_eq!(amount["method"], "elicitation/create", "{amount}");
    // Answered to another instance than the one holding the call: relayed there.
    let (status, reply) = post(&c.addr, Some(&sid), &accept(&amount, json!({"amount": 5})));
    assert_eq!(status, 202, "{reply}");
    let confirm = call.next_message();
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
    let done = call.next_message();
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
    let amount = call.next_message();
    b.kill();
    let (status, reply) = post(&c.addr, Some(&sid), &accept(&amount, json!({"amount": 5})));
    assert_eq!(status, 404, "{reply}");
    assert!(reply.contains("instance that is gone"), "{reply}");

    // The session lives on: a new call on another instance completes.
    let mut call = Call::start(&a.addr, &sid, 3);
    let amount = call.next_message();
    assert_eq!(
        post(&c.addr, Some(&sid), &accept(&amount, json!({"amount": 5}))).0,
        202
    );
    let confirm = call.next_message();
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
        call.next_message()["result"]["content"][0]["text"],
        "Counter increased by 5; next value is 15"
    );
}

//! Initialize-era sessions across instances: three `counter --legacy serve
//! --redis URL` processes sharing one Redis (started on a free port), each
//! request of one session sent to another instance. The session id is
//! sealed, so any instance serves it; the answer to a pushed question is
//! relayed to the instance whose call asked. The session's notes are shared
//! too: its standalone stream is open on one instance only, and a DELETE on
//! one is a 404 on every other, also after a restart. A call's stream cut
//! after a question resumes on another instance (`Last-Event-ID`). The same
//! on a three-master Redis Cluster (`--redis-cluster`).

use std::io::Read;
use std::process::Command;

use serde_json::json;
use test_harness::legacy_session::{Call, accept, initialize, post, send};
use test_harness::{Listening, RedisCluster, RedisServer, SharedRedis};

const KEY: &str = "legacy-instances-key-0123456789abcdef0123";

fn instance(redis: &SharedRedis) -> Listening {
    let mut command = Command::new(env!("CARGO_BIN_EXE_counter"));
    command
        .args(["--addr", "127.0.0.1:0", "--legacy", "serve"])
        .args(redis.flags())
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .env("RUST_LOG", "info");
    Listening::start(command)
}

#[test]
fn every_request_of_a_session_may_reach_another_instance() {
    every_request_on_another_instance(SharedRedis::One(RedisServer::start()));
}

#[test]
fn every_request_of_a_session_may_reach_another_instance_on_a_redis_cluster() {
    every_request_on_another_instance(SharedRedis::Cluster(RedisCluster::start()));
}

/// The status line's code of a whole reply.
fn status_of(reply: &str) -> u16 {
    reply
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0)
}

fn every_request_on_another_instance(redis: SharedRedis) {
    let [a, mut b, c] = [0, 1, 2].map(|_| instance(&redis));

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

    // The standalone stream: open on one instance, so refused on another.
    let mut stream = send(&a.addr, "GET", Some(&sid), &json!(null));
    let mut head = [0u8; 64];
    let n = stream.read(&mut head).unwrap();
    let head = String::from_utf8_lossy(&head[..n]).into_owned();
    assert_eq!(status_of(&head), 200, "{head}");
    let mut refused = String::new();
    send(&b.addr, "GET", Some(&sid), &json!(null))
        .read_to_string(&mut refused)
        .unwrap();
    assert_eq!(status_of(&refused), 409, "{refused}");
    assert!(refused.contains("open already"), "{refused}");
    drop(stream);

    // DELETE on one instance: 404 on every other, and after a restart.
    let mut deleted = String::new();
    send(&c.addr, "DELETE", Some(&sid), &json!(null))
        .read_to_string(&mut deleted)
        .unwrap();
    assert_eq!(status_of(&deleted), 200, "{deleted}");
    let list = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/list"});
    for addr in [&a.addr, &b.addr, &c.addr] {
        let (status, reply) = post(addr, Some(&sid), &list);
        assert_eq!(status, 404, "{addr}: {reply}");
        assert!(reply.contains("the session was ended"), "{reply}");
    }
    b.kill();
    let b = instance(&redis);
    let (status, reply) = post(&b.addr, Some(&sid), &list);
    assert_eq!(status, 404, "after a restart: {reply}");
    if let SharedRedis::Cluster(cluster) = &redis {
        // Each session's notes are one key: those of several sessions spread.
        for _ in 0..8 {
            let sid = initialize(&a.addr);
            let mut deleted = String::new();
            send(&c.addr, "DELETE", Some(&sid), &json!(null))
                .read_to_string(&mut deleted)
                .unwrap();
            assert_eq!(status_of(&deleted), 200, "{deleted}");
        }
        let keys = cluster.keys_per_master("tessera:counter:session:*");
        assert_eq!(keys.iter().sum::<usize>(), 9, "{keys:?}");
        assert!(
            keys.iter().filter(|n| **n > 0).count() > 1,
            "session notes on more than one master: {keys:?}"
        );
    }
}

#[test]
fn a_cut_call_stream_resumes_on_another_instance() {
    resumes_on_another_instance(SharedRedis::One(RedisServer::start()));
}

#[test]
fn a_cut_call_stream_resumes_on_another_instance_on_a_redis_cluster() {
    resumes_on_another_instance(SharedRedis::Cluster(RedisCluster::start()));
}

/// The call runs on `a`; its stream breaks after the first question; the
/// answer goes to `b`, the stream is resumed on `c` with `Last-Event-ID`,
/// and the second question and the result arrive there.
fn resumes_on_another_instance(redis: SharedRedis) {
    let [a, b, c] = [0, 1, 2].map(|_| instance(&redis));
    let sid = initialize(&b.addr);
    let mut call = Call::start(&a.addr, &sid, 4);
    let amount = call.next_message();
    assert_eq!(amount["method"], "elicitation/create", "{amount}");
    let last = call.last_event_id().expect("the call's events carry ids");
    drop(call);

    let (status, reply) = post(&b.addr, Some(&sid), &accept(&amount, json!({"amount": 5})));
    assert_eq!(status, 202, "{reply}");
    let mut resumed = Call::resume(&c.addr, &sid, &last);
    let confirm = resumed.next_message();
    assert_eq!(
        confirm["params"]["message"], "Increase 10 by 5?",
        "{confirm}"
    );
    let (status, reply) = post(
        &c.addr,
        Some(&sid),
        &accept(&confirm, json!({"confirm": true})),
    );
    assert_eq!(status, 202, "{reply}");
    let done = resumed.next_message();
    assert_eq!(done["id"], 4, "{done}");
    assert_eq!(
        done["result"]["content"][0]["text"], "Counter increased by 5; next value is 15",
        "{done}"
    );
}

#[test]
fn when_the_holder_is_gone_the_answer_is_told_and_a_new_call_completes() {
    let redis = SharedRedis::One(RedisServer::start());
    let a = instance(&redis);
    let mut b = instance(&redis);
    let c = instance(&redis);

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

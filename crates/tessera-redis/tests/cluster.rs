//! Every shared part on a local three-master Redis Cluster: the ledger, the
//! rate-limit buckets, the change bus, the answer relay, the task store and
//! the session notes, through the `redis` crate's cluster client; keys
//! spread over the masters; a master stopped mid-run fails closed, and
//! service resumes when it is back.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tessera_protocol::LoggingLevel;
use tessera_redis::Redis;
use tessera_server::bridge::{AnswerRelay, NotesError, RelayedAnswer, SessionNotes, StreamLog};
use tessera_server::middleware::{RateDecision, RateLimitStore};
use tessera_server::{BusEvent, Change, ChangeBus, NewTask, TaskStore};
use tessera_state::{LedgerError, TicketLedger};
use test_harness::RedisCluster;

fn in_ten_minutes() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600
}

async fn connect(cluster: &RedisCluster) -> Redis {
    let redis = Redis::connect_cluster(&cluster.urls()).await.unwrap();
    assert!(redis.is_cluster());
    redis
}

/// Retries `step` for up to 5 s (a subscriber connecting, a cluster settling).
async fn eventually<F: std::future::Future<Output = bool>>(what: &str, step: impl Fn() -> F) {
    for _ in 0..100 {
        if step().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("{what} within 5 s");
}

#[tokio::test]
async fn every_shared_part_works_on_a_cluster_and_its_keys_spread_over_the_masters() {
    let cluster = RedisCluster::start();
    let a = connect(&cluster).await;
    let b = connect(&cluster).await;

    // Tickets: once across instances, concurrently too; keys on several masters.
    let (la, lb) = (a.ledger("t"), b.ledger("t"));
    for i in 0..64 {
        la.consume(&format!("ticket-{i}"), in_ten_minutes())
            .await
            .unwrap();
        assert!(matches!(
            lb.consume(&format!("ticket-{i}"), in_ten_minutes()).await,
            Err(LedgerError::AlreadyUsed)
        ));
    }
    let tries = (0..16).map(|i| {
        let ledger = if i % 2 == 0 { la.clone() } else { lb.clone() };
        tokio::spawn(async move { ledger.consume("contested", in_ten_minutes()).await.is_ok() })
    });
    let mut won = 0;
    for t in tries {
        won += usize::from(t.await.unwrap());
    }
    assert_eq!(won, 1, "of concurrent redemptions exactly one wins");
    let tickets = cluster.keys_per_master("tessera:t:ticket:*");
    assert_eq!(tickets.iter().sum::<usize>(), 65);
    assert!(
        tickets.iter().filter(|n| **n > 0).count() > 1,
        "ticket keys spread over the masters: {tickets:?}"
    );

    // Rate-limit buckets hold across instances.
    let (ra, rb) = (a.rate_limits("t"), b.rate_limits("t"));
    let refill = Duration::from_secs(60);
    assert_eq!(
        ra.take("caller", 2, refill).await.unwrap(),
        RateDecision::Allowed
    );
    assert_eq!(
        rb.take("caller", 2, refill).await.unwrap(),
        RateDecision::Allowed
    );
    assert!(matches!(
        ra.take("caller", 2, refill).await.unwrap(),
        RateDecision::Limited(_)
    ));

    // The change bus: published on one, heard on both, once each.
    let (bus_a, bus_b) = (a.bus("t"), b.bus("t"));
    eventually("the buses subscribe", || async {
        bus_a.is_connected() && bus_b.is_connected()
    })
    .await;
    let heard = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&heard);
    let _s = bus_a.subscribe(Arc::new(move |event: BusEvent<'_>| {
        if let BusEvent::Change(c) = event {
            into.lock().unwrap().push(c.clone());
        }
    }));
    bus_b.publish(Change::ToolsListChanged).await.unwrap();
    eventually("the change arrives", || async {
        heard.lock().unwrap().len() == 1
    })
    .await;

    // The answer relay: to the holder by name; a holder that is gone is known.
    let (relay_a, relay_b) = (a.answer_relay("t"), b.answer_relay("t"));
    let got = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&got);
    relay_a.receive(Arc::new(move |answer: RelayedAnswer| {
        into.lock().unwrap().push(answer.session);
    }));
    let answer = RelayedAnswer {
        session: "s1".into(),
        response: serde_json::json!({"jsonrpc": "2.0", "id": 1, "result": {}}),
    };
    eventually("the relay reaches its holder", || async {
        relay_b
            .forward(relay_a.instance(), answer.clone())
            .await
            .unwrap()
    })
    .await;
    eventually("the answer is delivered", || async {
        got.lock().unwrap().len() == 1
    })
    .await;
    assert_eq!(*got.lock().unwrap(), vec!["s1".to_owned()]);
    assert!(
        !relay_b
            .forward("0000000000000000", answer.clone())
            .await
            .unwrap(),
        "no such holder"
    );

    // The task store: created on one, read and cancelled on the other.
    let (ta, tb) = (
        a.task_store("t", Default::default()),
        b.task_store("t", Default::default()),
    );
    let task = ta
        .create(NewTask {
            principal: Some("alice".into()),
            caller: Some("alice".into()),
            trace: None,
        })
        .await
        .unwrap();
    let seen = tb.get(&task.id, Some("alice")).await.unwrap().unwrap();
    assert_eq!(seen.id, task.id);
    assert!(tb.get(&task.id, Some("mallory")).await.unwrap().is_none());
    assert!(tb.cancel(&task.id, Some("alice")).await.unwrap());
    let tasks = cluster.keys_per_master("tessera:{t:tasks}:*");
    assert_eq!(
        tasks.iter().filter(|n| **n > 0).count(),
        1,
        "the task store keeps one slot: {tasks:?}"
    );

    // Session notes: taken on one, read on the other; bounded; ended everywhere.
    let (na, nb) = (a.session_notes("t"), b.session_notes("t"));
    let until = in_ten_minutes();
    na.set_log_level("session-1", until, LoggingLevel::Error)
        .await
        .unwrap();
    na.subscribe("session-1", until, "test://a").await.unwrap();
    assert_eq!(
        nb.read("session-1").await.unwrap().log_level,
        Some(LoggingLevel::Error)
    );
    assert!(nb.is_subscribed("session-1", "test://a").await.unwrap());
    for i in 1..tessera_server::bridge::MAX_SUBSCRIPTIONS_PER_SESSION {
        nb.subscribe("session-1", until, &format!("test://{i}"))
            .await
            .unwrap();
    }
    assert_eq!(
        na.subscribe("session-1", until, "test://one-more").await,
        Err(NotesError::Subscriptions)
    );
    assert!(na.claim_stream("session-1", until, "one").await.unwrap());
    assert!(!nb.claim_stream("session-1", until, "two").await.unwrap());
    nb.end("session-1", until).await.unwrap();
    assert!(na.read("session-1").await.unwrap().ended);
    assert!(
        !na.claim_stream("session-1", until, "one").await.unwrap(),
        "an ended session's stream is not renewed"
    );
    assert!(!na.is_subscribed("session-1", "test://a").await.unwrap());
    for i in 0..32 {
        na.set_log_level(&format!("spread-{i}"), until, LoggingLevel::Info)
            .await
            .unwrap();
    }
    let sessions = cluster.keys_per_master("tessera:t:session:*");
    assert!(
        sessions.iter().filter(|n| **n > 0).count() > 1,
        "session notes spread over the masters: {sessions:?}"
    );

    // Call streams' events: appended on one client, resumed on the other.
    let (la, lb) = (a.stream_log("t"), b.stream_log("t"));
    assert_eq!(lb.read_after("s/1", 0).await.unwrap(), None);
    la.append("s/1", 1, b"question", false).await.unwrap();
    la.append("s/1", 2, b"result", true).await.unwrap();
    let read = lb.read_after("s/1", 1).await.unwrap().unwrap();
    assert_eq!(read.events, vec![(2, b"result".to_vec())]);
    assert!(read.finished);
    for i in 0..16 {
        la.append(&format!("spread/{i}"), 1, b"x", false)
            .await
            .unwrap();
    }
    let streams = cluster.keys_per_master("tessera:t:events:*");
    assert!(
        streams.iter().filter(|n| **n > 0).count() > 1,
        "stream logs spread over the masters: {streams:?}"
    );
}

#[tokio::test]
async fn a_stopped_master_fails_closed_and_service_resumes_when_it_is_back() {
    let cluster = RedisCluster::start();
    let redis = connect(&cluster).await;
    let ledger = redis.ledger("t");
    let bus = redis.bus("t");
    eventually("the bus subscribes", || async { bus.is_connected() }).await;
    let mut redeemed = Vec::new();
    for i in 0..32 {
        let id = format!("before-{i}");
        ledger.consume(&id, in_ten_minutes()).await.unwrap();
        redeemed.push(id);
    }

    cluster.pause(1);
    // Within the node timeout the stopped master's slots fail; after it, the
    // whole cluster refuses (CLUSTERDOWN). Either way: fail closed, quickly.
    tokio::time::sleep(Duration::from_millis(2500)).await;
    let started = std::time::Instant::now();
    for id in &redeemed {
        assert!(
            ledger.consume(id, in_ten_minutes()).await.is_err(),
            "{id} is never accepted twice"
        );
    }
    let mut refused = 0;
    for i in 0..8 {
        if ledger
            .consume(&format!("during-{i}"), in_ten_minutes())
            .await
            .is_err()
        {
            refused += 1;
        }
    }
    assert!(refused > 0, "redemptions refused while a master is down");
    assert!(
        started.elapsed() < Duration::from_secs(60),
        "refusals come within the command timeouts, not hang: {:?}",
        started.elapsed()
    );

    cluster.resume(1);
    eventually("redemptions work again", || async {
        ledger
            .consume(
                &format!("after-{}", tessera_state::random_id().unwrap()),
                in_ten_minutes(),
            )
            .await
            .is_ok()
    })
    .await;
    for id in &redeemed {
        assert!(
            matches!(
                ledger.consume(id, in_ten_minutes()).await,
                Err(LedgerError::AlreadyUsed)
            ),
            "{id} stays redeemed after the master is back"
        );
    }
    eventually("the bus subscribes again", || async { bus.is_connected() }).await;
}

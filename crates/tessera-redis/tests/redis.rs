//! The ledger, the bus and the stream log against a real `redis-server`,
//! including an outage.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tessera_redis::Redis;
use tessera_server::{BusEvent, Change, ChangeBus};
use tessera_state::{LedgerError, TicketLedger};
use test_harness::RedisServer;

fn in_ten_minutes() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
        + 600
}

#[tokio::test]
async fn a_ticket_is_redeemed_once_across_instances_and_expires_with_itself() {
    let server = RedisServer::start();
    let a = Redis::connect(&server.url()).await.unwrap().ledger("t");
    let b = Redis::connect(&server.url()).await.unwrap().ledger("t");
    a.consume("ticket-1", in_ten_minutes()).await.unwrap();
    assert!(matches!(
        b.consume("ticket-1", in_ten_minutes()).await,
        Err(LedgerError::AlreadyUsed)
    ));
    // Concurrent redemptions of one ticket: exactly one wins.
    let tries = (0..16).map(|i| {
        let ledger = if i % 2 == 0 { a.clone() } else { b.clone() };
        tokio::spawn(async move { ledger.consume("ticket-2", in_ten_minutes()).await.is_ok() })
    });
    let mut won = 0;
    for t in tries {
        won += usize::from(t.await.unwrap());
    }
    assert_eq!(won, 1);
    // The key expires with the ticket (EXAT).
    let mut conn = Redis::connect(&server.url()).await.unwrap().connection();
    let ttl: i64 = tessera_redis::redis::cmd("TTL")
        .arg("tessera:t:ticket:ticket-1")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!((590..=600).contains(&ttl), "{ttl}");
}

#[tokio::test]
async fn redemptions_fail_closed_while_redis_is_down_and_work_again_after() {
    let mut server = RedisServer::start();
    let ledger = Redis::connect(&server.url()).await.unwrap().ledger("t");
    ledger.consume("before", in_ten_minutes()).await.unwrap();
    server.stop();
    let started = std::time::Instant::now();
    assert!(matches!(
        ledger.consume("during", in_ten_minutes()).await,
        Err(LedgerError::Backend(_))
    ));
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "failing takes {:?}",
        started.elapsed()
    );
    server.restart();
    let mut ok = false;
    for _ in 0..50 {
        if ledger.consume("after", in_ten_minutes()).await.is_ok() {
            ok = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(ok, "the ledger reconnects by itself");
}

/// Waits until `bus` has its subscriber connected.
async fn connected(bus: &tessera_redis::RedisBus) {
    for _ in 0..100 {
        if bus.is_connected() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the bus did not connect within 5 s");
}

fn recorder() -> (Arc<Mutex<Vec<String>>>, tessera_server::ChangeListener) {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&seen);
    let listener: tessera_server::ChangeListener = Arc::new(move |event: BusEvent<'_>| {
        into.lock().unwrap().push(match event {
            BusEvent::Change(c) => serde_json::to_string(c).unwrap(),
            BusEvent::Lost => "lost".into(),
        });
    });
    (seen, listener)
}

#[tokio::test]
async fn a_change_published_on_one_instance_reaches_listeners_on_every_instance() {
    let mut server = RedisServer::start();
    let one = Redis::connect(&server.url()).await.unwrap().bus("t");
    let three = Redis::connect(&server.url()).await.unwrap().bus("t");
    connected(&one).await;
    connected(&three).await;
    let (seen_one, l1) = recorder();
    let (seen_three, l3) = recorder();
    let _s1 = one.subscribe(l1);
    let _s3 = three.subscribe(l3);
    three
        .publish(Change::ResourceUpdated {
            uri: "notes://list".into(),
        })
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let expected = vec![r#"{"change":"resourceUpdated","uri":"notes://list"}"#.to_owned()];
    assert_eq!(*seen_one.lock().unwrap(), expected);
    assert_eq!(
        *seen_three.lock().unwrap(),
        expected,
        "once, not twice, where it was published"
    );

    // An outage: listeners are told, publishing fails, a new listener ends at once; then it recovers.
    server.stop();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert_eq!(seen_one.lock().unwrap().last().unwrap(), "lost");
    assert!(one.publish(Change::ToolsListChanged).await.is_err());
    let (seen_late, late) = recorder();
    let _late = one.subscribe(late);
    assert_eq!(*seen_late.lock().unwrap(), vec!["lost".to_owned()]);
    server.restart();
    connected(&one).await;
    connected(&three).await;
    let (seen_again, again) = recorder();
    let _again = one.subscribe(again);
    let mut published = false;
    for _ in 0..50 {
        if three.publish(Change::ToolsListChanged).await.is_ok() {
            published = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(published);
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        *seen_again.lock().unwrap(),
        vec![r#"{"change":"toolsListChanged"}"#.to_owned()]
    );
}

/// Issue #27, finding 6: a redemption Redis answers too late fails (the
/// server answers 503, retry), and its `SET`, landing later, does not burn
/// the ticket: the retry is accepted, once.
#[tokio::test]
async fn a_redemption_answered_too_late_does_not_burn_its_ticket() {
    let server = RedisServer::start();
    let ledger = Redis::connect(&server.url()).await.unwrap().ledger("t");
    ledger.consume("warm-up", in_ten_minutes()).await.unwrap();
    // Redis holds every write for 2 s: longer than the ledger waits for an answer.
    let mut admin = Redis::connect(&server.url()).await.unwrap().connection();
    let () = tessera_redis::redis::cmd("CLIENT")
        .arg("PAUSE")
        .arg(2000)
        .arg("WRITE")
        .query_async(&mut admin)
        .await
        .unwrap();
    assert!(matches!(
        ledger.consume("slow", in_ten_minutes()).await,
        Err(LedgerError::Backend(_))
    ));
    // Once the pause ends, the late SET runs, then the release after it.
    let mut redeemed = false;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(100)).await;
        match ledger.consume("slow", in_ten_minutes()).await {
            Ok(()) => {
                redeemed = true;
                break;
            }
            Err(LedgerError::AlreadyUsed | LedgerError::Backend(_)) => continue,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(redeemed, "the retry is accepted");
    assert!(matches!(
        ledger.consume("slow", in_ten_minutes()).await,
        Err(LedgerError::AlreadyUsed)
    ));
}

/// A call stream's events on one Redis: kept by number (a retried append
/// changes nothing), bounded to the last `MAX_STREAM_EVENTS` (the response
/// always kept), read after a number (also across a gap), and expiring.
#[tokio::test]
async fn a_call_streams_events_are_numbered_bounded_and_expire() {
    use tessera_server::bridge::{MAX_STREAM_EVENTS, StreamLog as _};
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).await.unwrap();
    let log = redis.stream_log("t");
    let end = MAX_STREAM_EVENTS as u64 + 6;
    for n in 1..end {
        log.append("sess/stream", n, format!("event {n}").as_bytes(), false)
            .await
            .unwrap();
    }
    log.append("sess/stream", end, b"the result", true)
        .await
        .unwrap();
    log.append("sess/stream", end, b"again", true)
        .await
        .unwrap();
    let all = log.read_after("sess/stream", 0).await.unwrap().unwrap();
    assert_eq!(all.events.len(), MAX_STREAM_EVENTS);
    assert!(all.finished);
    assert_eq!(all.events.last().unwrap(), &(end, b"the result".to_vec()));
    let after = log
        .read_after("sess/stream", end - 2)
        .await
        .unwrap()
        .unwrap();
    let numbers: Vec<u64> = after.events.iter().map(|e| e.0).collect();
    assert_eq!(numbers, [end - 1, end]);
    // A gap (an append that failed) does not hide what follows it.
    for n in [1, 2, 4, 5] {
        log.append("gap", n, b"x", false).await.unwrap();
    }
    for (after, expected) in [
        (0, vec![1, 2, 4, 5]),
        (2, vec![4, 5]),
        (3, vec![4, 5]),
        (5, vec![]),
    ] {
        let read = log.read_after("gap", after).await.unwrap().unwrap();
        let numbers: Vec<u64> = read.events.iter().map(|e| e.0).collect();
        assert_eq!(numbers, expected, "after {after}");
    }
    assert_eq!(log.read_after("never", 0).await.unwrap(), None);
    let mut conn = redis.connection();
    let ttl: i64 = tessera_redis::redis::cmd("PTTL")
        .arg("tessera:t:events:{sess/stream}:meta")
        .query_async(&mut conn)
        .await
        .unwrap();
    assert!(ttl > 0 && ttl <= 600_000, "{ttl}");
}

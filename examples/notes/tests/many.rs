//! Three `notes --redis` instances behind nginx (round-robin), a real
//! redis-server, and the flows the issue names: every round on another
//! instance, a replayed final ticket refused everywhere, a listener on one
//! instance hearing a change made through another, an instance killed
//! mid-flow, and Redis down, then back. The same flows with three `notes
//! --redis-cluster` instances on a local three-master Redis Cluster, where
//! one master is stopped for the outage and the keys end up on more than one
//! master.

use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tessera::client::{ListenEvent, McpClient};
use tessera::protocol::SubscriptionFilter;
use test_harness::{
    Nginx, RedisCluster, RedisServer, SharedRedis, TempDir, free_port, wait_for_port,
};

const KEY: &str = "notes-many-instances-key-0123456789abcdef";

struct Instance {
    child: Child,
    port: u16,
}

impl Instance {
    fn start(redis: &SharedRedis, dir: &TempDir) -> Self {
        Self::start_with(redis, dir, &[])
    }

    fn start_with(redis: &SharedRedis, dir: &TempDir, extra: &[&str]) -> Self {
        let port = free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_notes"))
            .args(redis.flags())
            .args(extra)
            .args(["--addr", &format!("127.0.0.1:{port}")])
            .current_dir(&dir.0)
            .env("MRTR_REQUEST_STATE_KEY", KEY)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_port(port, "notes");
        Self { child, port }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

struct Cluster {
    redis: SharedRedis,
    instances: Vec<Instance>,
    nginx: Nginx,
    _dir: TempDir,
}

impl Cluster {
    fn start(redis: SharedRedis) -> Self {
        let dir = TempDir::new("notes-many");
        let instances: Vec<Instance> = (0..3).map(|_| Instance::start(&redis, &dir)).collect();
        let upstreams: String = instances
            .iter()
            .map(|i| format!("server 127.0.0.1:{};\n", i.port))
            .collect();
        let conf = include_str!("../nginx.conf").replace("{UPSTREAMS}", &upstreams);
        let nginx = Nginx::start(&conf);
        Self {
            redis,
            instances,
            nginx,
            _dir: dir,
        }
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.nginx.port)
    }
}

/// One POST; the JSON-RPC response, its status, and the instance nginx chose.
async fn post(
    http: &reqwest::Client,
    url: &str,
    id: i64,
    method: &str,
    params: Value,
) -> (u16, Value, String) {
    let r = test_harness::mcp_post(http, url, None, id, method, params).await;
    let mut body = r.body.clone();
    if !r.header("retry-after").is_empty() {
        body["retryAfter"] = json!(true);
    }
    (r.status, body, r.header("x-upstream").to_owned())
}

fn add_note(title: &str, state: Option<&Value>, answers: Value) -> Value {
    let mut params = json!({"name": "add-note", "arguments": {"title": title}});
    if let Some(s) = state {
        params["requestState"] = s.clone();
        params["inputResponses"] = answers;
    }
    params
}

async fn note_count(http: &reqwest::Client, url: &str) -> usize {
    let (_, r, _) = post(
        http,
        url,
        99,
        "resources/read",
        json!({"uri": "notes://list"}),
    )
    .await;
    let text = r["result"]["contents"][0]["text"]
        .as_str()
        .unwrap()
        .to_owned();
    serde_json::from_str::<Vec<Value>>(&text).unwrap().len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_behind_nginx_on_one_redis() {
    flows(SharedRedis::One(RedisServer::start())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn three_instances_behind_nginx_on_a_redis_cluster() {
    flows(SharedRedis::Cluster(RedisCluster::start())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_subscription_follows_it_to_other_instances_on_one_redis() {
    subscription_follows_the_session(SharedRedis::One(RedisServer::start())).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sessions_subscription_follows_it_to_other_instances_on_a_redis_cluster() {
    subscription_follows_the_session(SharedRedis::Cluster(RedisCluster::start())).await;
}

/// An initialize-era session subscribes to `notes://list` through one
/// instance, opens its standalone stream on a second, and hears the update
/// of a note added through a third.
async fn subscription_follows_the_session(redis: SharedRedis) {
    use std::io::Read;
    use test_harness::legacy_session::{initialize, post as legacy_post, send};
    let dir = TempDir::new("notes-follow");
    let [a, b, c] = [(); 3].map(|()| Instance::start_with(&redis, &dir, &["--legacy", "serve"]));
    let addr = |i: &Instance| format!("127.0.0.1:{}", i.port);
    let sid = initialize(&addr(&a));
    let (status, reply) = legacy_post(
        &addr(&a),
        Some(&sid),
        &json!({"jsonrpc": "2.0", "id": 2, "method": "resources/subscribe",
            "params": {"uri": "notes://list"}}),
    );
    assert_eq!(status, 200, "{reply}");
    let mut stream = send(&addr(&b), "GET", Some(&sid), &json!(null));
    let mut seen = String::new();
    let mut buf = [0u8; 4096];
    let n = stream.read(&mut buf).unwrap();
    seen.push_str(&String::from_utf8_lossy(&buf[..n]));
    assert!(seen.starts_with("HTTP/1.1 200"), "{seen}");

    let http = reqwest::Client::new();
    let url = c.url();
    let (_, r, _) = post(
        &http,
        &url,
        1,
        "tools/call",
        add_note("Follow", None, json!({})),
    )
    .await;
    let s = r["result"]["requestState"].clone();
    let (_, r, _) = post(
        &http,
        &url,
        2,
        "tools/call",
        add_note(
            "Follow",
            Some(&s),
            json!({"note": {"action": "accept", "content": {"body": "b"}}}),
        ),
    )
    .await;
    let s = r["result"]["requestState"].clone();
    let confirm = json!({"confirmation": {"action": "accept", "content": {"confirm": true}}});
    let (_, r, _) = post(
        &http,
        &url,
        3,
        "tools/call",
        add_note("Follow", Some(&s), confirm),
    )
    .await;
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Added note "),
        "{r}"
    );
    let heard = tokio::task::spawn_blocking(move || {
        while !seen.contains("notifications/resources/updated") {
            let n = stream.read(&mut buf).expect("the stream goes on");
            assert!(n > 0, "the stream ended: {seen}");
            seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
        seen
    })
    .await
    .unwrap();
    assert!(heard.contains(r#""uri":"notes://list""#), "{heard}");
}

async fn flows(redis: SharedRedis) {
    let mut cluster = Cluster::start(redis);
    let http = reqwest::Client::new();
    let lb = cluster.url();

    // Every round of one add-note flow lands on a different instance and completes.
    let (_, r1, up1) = post(
        &http,
        &lb,
        1,
        "tools/call",
        add_note("Groceries", None, json!({})),
    )
    .await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let s1 = r1["result"]["requestState"].clone();
    let (_, r2, up2) = post(
        &http,
        &lb,
        2,
        "tools/call",
        add_note(
            "Groceries",
            Some(&s1),
            json!({"note": {"action": "accept", "content": {"body": "milk"}}}),
        ),
    )
    .await;
    let s2 = r2["result"]["requestState"].clone();
    let confirm = json!({"confirmation": {"action": "accept", "content": {"confirm": true}}});
    let final_round = add_note("Groceries", Some(&s2), confirm.clone());
    let (_, r3, up3) = post(&http, &lb, 3, "tools/call", final_round.clone()).await;
    let text = r3["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with("Added note "), "{r3}");
    assert!(
        up1 != up2 && up2 != up3 && up1 != up3,
        "rounds on {up1}, {up2}, {up3}"
    );
    assert_eq!(note_count(&http, &lb).await, 1);

    // The final ticket replayed on each instance (directly) adds nothing.
    for instance in &cluster.instances {
        let (status, r, _) =
            post(&http, &instance.url(), 4, "tools/call", final_round.clone()).await;
        assert_eq!(r["error"]["code"], -32602, "{status} {r}");
        assert!(
            r["error"]["message"]
                .as_str()
                .unwrap()
                .contains("requestState"),
            "{r}"
        );
    }
    assert_eq!(note_count(&http, &lb).await, 1);

    // A listener on instance one hears, within a second, a change made through instance three.
    let client = McpClient::builder(cluster.instances[0].url())
        .build()
        .unwrap();
    let mut listener = client
        .listen(SubscriptionFilter {
            resource_subscriptions: Some(vec!["notes://list".into()]),
            ..SubscriptionFilter::default()
        })
        .await
        .unwrap();
    assert!(matches!(
        listener.next().await,
        Some(Ok(ListenEvent::Acknowledged(_)))
    ));
    let three = cluster.instances[2].url();
    let (_, r, _) = post(
        &http,
        &three,
        5,
        "tools/call",
        add_note("Other", None, json!({})),
    )
    .await;
    let s = r["result"]["requestState"].clone();
    let (_, r, _) = post(
        &http,
        &three,
        6,
        "tools/call",
        add_note(
            "Other",
            Some(&s),
            json!({"note": {"action": "accept", "content": {"body": "x"}}}),
        ),
    )
    .await;
    let s = r["result"]["requestState"].clone();
    let changed = Instant::now();
    post(
        &http,
        &three,
        7,
        "tools/call",
        add_note("Other", Some(&s), confirm.clone()),
    )
    .await;
    let heard = tokio::time::timeout(Duration::from_secs(1), listener.next())
        .await
        .expect("heard within a second");
    let Some(Ok(ListenEvent::Notification(n))) = heard else {
        panic!("{heard:?}")
    };
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(n["params"]["uri"], "notes://list");
    eprintln!(
        "change heard on instance one {:?} after it was made on instance three",
        changed.elapsed()
    );

    // An instance killed mid-flow: the next rounds land elsewhere and the flow completes.
    let (_, r, _) = post(
        &http,
        &lb,
        8,
        "tools/call",
        add_note("Killed", None, json!({})),
    )
    .await;
    let s = r["result"]["requestState"].clone();
    let killed = cluster.instances.remove(1);
    drop(killed);
    let (_, r, _) = post(
        &http,
        &lb,
        9,
        "tools/call",
        add_note(
            "Killed",
            Some(&s),
            json!({"note": {"action": "accept", "content": {"body": "y"}}}),
        ),
    )
    .await;
    let s = r["result"]["requestState"].clone();
    let (_, r, _) = post(
        &http,
        &lb,
        10,
        "tools/call",
        add_note("Killed", Some(&s), confirm.clone()),
    )
    .await;
    assert!(
        r["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Added note "),
        "{r}"
    );
    assert_eq!(note_count(&http, &lb).await, 3);

    // Redis down: a single-use redemption is 503 with Retry-After; ordinary calls are served.
    let (_, r, _) = post(
        &http,
        &lb,
        11,
        "tools/call",
        add_note("Outage", None, json!({})),
    )
    .await;
    let s = r["result"]["requestState"].clone();
    match &mut cluster.redis {
        SharedRedis::One(redis) => redis.stop(),
        SharedRedis::Cluster(redis) => {
            // One master stopped; past the node timeout the cluster refuses all.
            redis.pause(0);
            tokio::time::sleep(Duration::from_millis(2500)).await;
        }
    }
    let answered = add_note(
        "Outage",
        Some(&s),
        json!({"note": {"action": "accept", "content": {"body": "z"}}}),
    );
    let (status, r, _) = post(&http, &lb, 12, "tools/call", answered.clone()).await;
    assert_eq!(status, 503, "{r}");
    assert_eq!(r["retryAfter"], true);
    let (status, r, _) = post(&http, &lb, 13, "tools/list", json!({})).await;
    assert_eq!(status, 200, "{r}");
    assert_eq!(r["result"]["tools"].as_array().unwrap().len(), 2);
    match &mut cluster.redis {
        SharedRedis::One(redis) => {
            // The listener on instance one (after the changes it was sent) was
            // ended gracefully, so its client knows to listen again.
            let ended = tokio::time::timeout(Duration::from_secs(5), async {
                loop {
                    match listener.next().await {
                        Some(Ok(ListenEvent::Notification(_))) => continue,
                        other => return other,
                    }
                }
            })
            .await
            .unwrap();
            assert!(matches!(ended, Some(Ok(ListenEvent::Ended))), "{ended:?}");
            redis.restart();
        }
        SharedRedis::Cluster(redis) => redis.resume(0),
    }

    // Back: the refused round, retried, is served (the outage burned nothing), once.
    let mut served = None;
    for id in 14..100 {
        let (status, r, _) = post(&http, &lb, id, "tools/call", answered.clone()).await;
        if status == 200 {
            served = Some(r);
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let served = served.expect("served again once Redis is back");
    assert_eq!(served["result"]["resultType"], "input_required", "{served}");
    // A replay is refused as such on every instance (each once its own
    // connection is back: until then, 503 as during the outage).
    let mut refused = 0;
    for id in 100..200 {
        let (status, again, _) = post(&http, &lb, id, "tools/call", answered.clone()).await;
        if status == 503 {
            tokio::time::sleep(Duration::from_millis(100)).await;
            continue;
        }
        assert_eq!(again["error"]["code"], -32602, "accepted once: {again}");
        refused += 1;
        if refused == 3 {
            break;
        }
    }
    assert_eq!(refused, 3, "replays answered as replays once Redis is back");
    if let SharedRedis::Cluster(redis) = &cluster.redis {
        let keys = redis.keys_per_master("tessera:*");
        assert!(
            keys.iter().filter(|n| **n > 0).count() > 1,
            "keys on more than one master: {keys:?}"
        );
    }
}

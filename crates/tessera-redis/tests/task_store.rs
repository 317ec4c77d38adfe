//! The Redis task store keeps the store contract, against a real `redis-server`.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tessera_redis::Redis;
use tessera_server::testing::check_task_store;
use tessera_server::{BoxFuture, TaskRuntime};
use test_harness::RedisServer;

struct Tokio;

impl TaskRuntime for Tokio {
    fn spawn(&self, work: BoxFuture<'static, ()>) {
        tokio::spawn(work);
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_redis_store_keeps_the_contract() {
    let server = RedisServer::start();
    let redis = Redis::connect(&server.url()).await.unwrap();
    // Each check gets a namespace of its own, as the contract asks.
    let made = AtomicUsize::new(0);
    check_task_store(
        |policy| {
            let store = redis.task_store(
                &format!("contract{}", made.fetch_add(1, Ordering::Relaxed)),
                policy,
            );
            async move {
                tokio::time::timeout(Duration::from_secs(5), store.subscribed())
                    .await
                    .expect("the store's channel is subscribed within 5 s");
                store
            }
        },
        &Tokio,
    )
    .await;
}

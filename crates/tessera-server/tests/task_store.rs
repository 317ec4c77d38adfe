//! The in-memory task store keeps the store contract.

use std::time::Duration;

use tessera_server::testing::check_task_store;
use tessera_server::{BoxFuture, MemoryTaskStore, TaskRuntime};

struct Tokio;

impl TaskRuntime for Tokio {
    fn spawn(&self, work: BoxFuture<'static, ()>) {
        tokio::spawn(work);
    }

    fn sleep(&self, duration: Duration) -> BoxFuture<'static, ()> {
        Box::pin(tokio::time::sleep(duration))
    }
}

#[tokio::test]
async fn the_memory_store_keeps_the_contract() {
    check_task_store(|policy| async move { MemoryTaskStore::new(policy) }, &Tokio).await;
}

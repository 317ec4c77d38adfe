//! Redis for Tessera servers running as many instances behind a load balancer.
//!
//! - [`RedisLedger`]: the single-use ticket ledger shared by every instance
//!   (an atomic `SET … NX EXAT` that expires with the ticket), so a ticket
//!   redeemed on one instance cannot be redeemed again on another. When Redis
//!   is unreachable, redemptions fail closed (the server answers 503 with
//!   `Retry-After`); everything else keeps serving.
//! - [`RedisBus`]: the change bus, fanning `subscriptions/listen`
//!   notifications out to every instance's listeners over pub/sub,
//!   reconnecting with backoff; while Redis is unreachable, listeners are
//!   ended gracefully (clients listen again) and publishing fails.
//! - [`RedisTaskStore`]: tasks (the tasks extension) every instance can
//!   answer: `tasks/get`, `tasks/update` and `tasks/cancel` reach any
//!   instance, answers and cancels wake the one running the task over
//!   pub/sub, and a task whose instance died ends `failed` once its runner's
//!   lease runs out.
//! - [`RedisRelay`]: initialize-era answers forwarded to the instance whose
//!   call asked the question (`tessera_http::EndpointOptions::answer_relay`),
//!   so every request of such a session may reach any instance; an answer
//!   whose holder is gone gets a clear error.
//! - [`RedisSessionNotes`]: what is kept of initialize-era sessions (ended,
//!   log level, subscriptions, the standalone stream's holder)
//!   (`tessera_http::EndpointOptions::session_notes`), so a DELETE on one
//!   instance ends the session on all, also after restarts.
//!
//! Everything works on one Redis ([`Redis::connect`]) and on a Redis
//! Cluster ([`Redis::connect_cluster`], the `redis` crate's cluster client):
//! there, keys spread over the slots (the task store alone keeps its keys in
//! one slot, for its quotas: see [`RedisTaskStore`]), Lua scripts touch the
//! keys of one slot, and channels are sharded (`SPUBLISH`/`SSUBSCRIBE`).
//!
//! ```no_run
//! # async fn run() -> Result<(), tessera_redis::RedisError> {
//! use std::sync::Arc;
//! let redis = tessera_redis::Redis::connect("redis://127.0.0.1:6379/").await?;
//! let builder = tessera_server::McpServer::builder("notes", "1.0.0")
//!     .ticket_ledger(Arc::new(redis.ledger("notes")))
//!     .change_bus(Arc::new(redis.bus("notes")));
//! # let _ = builder; Ok(()) }
//! ```

mod bus;
mod connection;
mod ledger;
mod rate_limits;
mod relay;
mod session_notes;
mod stream_log;
mod subscriber;
mod task_store;

pub use bus::RedisBus;
pub use connection::{Redis, RedisConnection, RedisError};
pub use ledger::RedisLedger;
pub use rate_limits::RedisRateLimits;
/// The Redis client crate, for applications that keep their own data in the same Redis.
pub use redis;
pub use relay::RedisRelay;
pub use session_notes::RedisSessionNotes;
pub use stream_log::RedisStreamLog;
pub use task_store::RedisTaskStore;

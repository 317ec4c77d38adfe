//! Rate-limit buckets every instance shares.

use std::time::Duration;

use tessera_server::BoxFuture;
use tessera_server::middleware::{RateDecision, RateLimitStore};

use crate::RedisConnection;

/// Token buckets in Redis (`tessera:{namespace}:rate:` keys), each taken
/// from in one Lua script on Redis's own clock, so a limit holds across
/// instances; a bucket expires once it would be full again.
#[derive(Clone)]
pub struct RedisRateLimits {
    conn: RedisConnection,
    prefix: String,
}

impl RedisRateLimits {
    /// Buckets on `conn`, their keys under `tessera:{namespace}:rate:` (one
    /// key per bucket, so on a cluster they spread over the slots).
    pub fn new(conn: impl Into<RedisConnection>, namespace: &str) -> Self {
        Self {
            conn: conn.into(),
            prefix: format!("tessera:{namespace}:rate:"),
        }
    }
}

/// Takes a token: 0 when allowed, else the milliseconds until one is back.
/// Times are in microseconds (the refill of 3000/s is 333 µs). Needs Redis
/// 5 or later (`TIME` before writes: effects replication).
const TAKE: &str = r#"
local capacity = tonumber(ARGV[1])
local refill = tonumber(ARGV[2])
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000000 + tonumber(time[2])
local b = redis.call('HMGET', KEYS[1], 'tokens', 'at')
local tokens = tonumber(b[1]) or capacity
local at = tonumber(b[2]) or now
tokens = math.min(capacity, tokens + math.max(0, now - at) / refill)
if tokens >= 1 then
  tokens = tokens - 1
  redis.call('HSET', KEYS[1], 'tokens', string.format('%.6f', tokens), 'at', string.format('%d', now))
  redis.call('PEXPIRE', KEYS[1], string.format('%d', math.ceil((capacity - tokens) * refill / 1000) + 1000))
  return 0
end
return math.max(1, math.ceil((1 - tokens) * refill / 1000))
"#;

static SCRIPT: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| redis::Script::new(TAKE));

impl RateLimitStore for RedisRateLimits {
    fn take<'a>(
        &'a self,
        key: &'a str,
        capacity: u32,
        refill: Duration,
    ) -> BoxFuture<'a, Result<RateDecision, String>> {
        let mut conn = self.conn.clone();
        Box::pin(async move {
            let wait_ms: u64 = SCRIPT
                .key(format!("{}{key}", self.prefix))
                .arg(capacity)
                .arg(refill.as_micros().max(1) as u64)
                .invoke_async(&mut conn)
                .await
                .map_err(|e| format!("Redis: {e}"))?;
            Ok(match wait_ms {
                0 => RateDecision::Allowed,
                ms => RateDecision::Limited(Duration::from_millis(ms)),
            })
        })
    }
}

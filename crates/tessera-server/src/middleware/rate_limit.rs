//! Rate limits: a token bucket per caller and per tool (or method), in
//! memory or in a shared store.
//!
//! The tools page: servers "MUST rate limit tool invocations". Every
//! request the limit sees takes a token from the bucket of its caller and
//! target; a bucket holds `requests` tokens and refills at `requests` per
//! window, so a caller may burst up to the limit and then goes at the
//! window's pace. Each round of a tool that asks is a request of its own.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use crate::middleware::{McpRequest, Middleware, Next, Served};
use crate::task_store::now_ms;
use crate::{BoxFuture, ServerError};

/// Whether a request may go ahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RateDecision {
    /// A token was taken.
    Allowed,
    /// The bucket is empty: a token is back after this long.
    Limited(Duration),
}

/// Where buckets are kept: this process's memory ([`MemoryRateLimits`]) or
/// a store every instance shares (`tessera_redis::RedisRateLimits`).
pub trait RateLimitStore: Send + Sync + 'static {
    /// Takes one token from bucket `key`, which holds `capacity` tokens and
    /// gains one every `refill`; an error says why the store cannot answer.
    fn take<'a>(
        &'a self,
        key: &'a str,
        capacity: u32,
        refill: Duration,
    ) -> BoxFuture<'a, Result<RateDecision, String>>;
}

/// A [`Middleware`] refusing a caller's requests past `requests` per
/// `window`, per caller and per tool (per method for other methods), with
/// HTTP 429, `Retry-After` and -32000 whose `data.retryAfterSeconds` says
/// when to try again. A store that cannot answer lets the request through
/// and logs why (a limit must not take the server down with its store).
///
/// ```
/// use std::time::Duration;
/// use tessera_server::middleware::{RateLimit, for_methods};
/// use tessera_server::{Context, McpServer, ToolDef};
///
/// let server = McpServer::builder("demo", "1.0.0")
///     .middleware(for_methods(["tools/call"], RateLimit::new(30, Duration::from_secs(60))))
///     .tool(ToolDef::new("hello", |_: Context, _: ()| async { "Hello!" }))
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
pub struct RateLimit {
    requests: u32,
    window: Duration,
    store: Arc<dyn RateLimitStore>,
}

impl RateLimit {
    /// `requests` per `window` (each at least 1), in this process's memory.
    pub fn new(requests: u32, window: Duration) -> Self {
        Self::in_store(requests, window, Arc::new(MemoryRateLimits::default()))
    }

    /// The same limit, its buckets in `store`.
    pub fn in_store(requests: u32, window: Duration, store: Arc<dyn RateLimitStore>) -> Self {
        Self {
            requests: requests.max(1),
            window: window.max(Duration::from_millis(1)),
            store,
        }
    }

    /// Parses `N/s`, `N/min` or `N/h` (as `--rate-limit` takes it).
    ///
    /// ```
    /// use std::time::Duration;
    /// let (n, window) = tessera_server::middleware::RateLimit::parse("60/min").unwrap();
    /// assert_eq!((n, window), (60, Duration::from_secs(60)));
    /// assert!(tessera_server::middleware::RateLimit::parse("fast").is_err());
    /// ```
    pub fn parse(text: &str) -> Result<(u32, Duration), String> {
        let bad = || format!("a rate limit is N/s, N/min or N/h (e.g. 60/min), not {text:?}");
        let (n, unit) = text.trim().split_once('/').ok_or_else(bad)?;
        let n: u32 = n.trim().parse().map_err(|_| bad())?;
        let window = match unit.trim() {
            "s" | "sec" | "second" => Duration::from_secs(1),
            "m" | "min" | "minute" => Duration::from_secs(60),
            "h" | "hour" => Duration::from_secs(3600),
            _ => return Err(bad()),
        };
        if n == 0 {
            return Err(bad());
        }
        Ok((n, window))
    }

    fn refill(&self) -> Duration {
        self.window / self.requests
    }

    fn describe(&self) -> String {
        let window = match self.window.as_millis() {
            1000 => "second".to_owned(),
            60_000 => "minute".to_owned(),
            3_600_000 => "hour".to_owned(),
            ms => format!("{ms} ms"),
        };
        format!("{} per {window}", self.requests)
    }
}

impl Middleware for RateLimit {
    fn handle<'a>(
        &'a self,
        request: &'a McpRequest,
        next: Next<'a>,
    ) -> BoxFuture<'a, Result<Served, ServerError>> {
        Box::pin(async move {
            // Only names the server offers get buckets of their own: unknown
            // tools share one, unknown methods another, so request data can
            // neither pick a key's size nor make up keys to churn the store.
            let what = match (request.tool(), request.offered) {
                (Some(tool), true) => format!("tool {tool}"),
                (Some(_), false) => "tool (unknown)".to_owned(),
                (None, true) => format!("method {}", request.method),
                (None, false) => "method (unknown)".to_owned(),
            };
            // The limit is part of the key: two limits sharing a store keep
            // buckets of their own.
            let key = format!(
                "{}/{}\u{0}{what}\u{0}{}",
                self.requests,
                self.window.as_micros(),
                request.caller.as_deref().unwrap_or("-")
            );
            match self.store.take(&key, self.requests, self.refill()).await {
                Ok(RateDecision::Allowed) => {}
                Ok(RateDecision::Limited(wait)) => {
                    let retry_after_secs = wait.as_secs_f64().ceil().max(1.0) as u64;
                    return Err(ServerError::RateLimited {
                        message: format!(
                            "Rate limited: {what} allows {} per caller; try again in {retry_after_secs} s",
                            self.describe()
                        ),
                        retry_after_secs,
                    });
                }
                Err(why) => {
                    tracing::warn!(%why, "the rate limit store did not answer; the request goes ahead");
                }
            }
            next.run().await
        })
    }
}

/// Buckets in this process's memory, at most [`MemoryRateLimits::MAX_BUCKETS`]
/// of them. At the bound one sweep makes room for a tenth more: full buckets
/// are forgotten first (forgetting one changes nothing), then those seen
/// least recently — a caller kept waiting is seen at every try, so its empty
/// bucket is the last to go. A sweep costs one pass, once per
/// `MAX_BUCKETS / 10` new buckets, so a new key costs O(1) amortised.
#[derive(Default)]
pub struct MemoryRateLimits {
    buckets: Mutex<HashMap<String, Bucket>>,
}

#[derive(Clone, Copy)]
struct Bucket {
    /// Tokens at `at_ms`.
    tokens: f64,
    at_ms: u64,
    /// The last take, allowed or not.
    seen_ms: u64,
}

impl MemoryRateLimits {
    /// The most buckets kept; past it, full ones are dropped, then those seen least recently.
    pub const MAX_BUCKETS: usize = 100_000;

    /// How many buckets are kept now.
    pub fn len(&self) -> usize {
        self.buckets
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .len()
    }

    /// Whether no bucket is kept.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn take_now(&self, key: &str, capacity: u32, refill: Duration, now: u64) -> RateDecision {
        self.take_bounded(key, capacity, refill, now, Self::MAX_BUCKETS)
    }

    fn take_bounded(
        &self,
        key: &str,
        capacity: u32,
        refill: Duration,
        now: u64,
        max: usize,
    ) -> RateDecision {
        let mut buckets = self.buckets.lock().unwrap_or_else(PoisonError::into_inner);
        let per_ms = 1.0 / (refill.as_secs_f64() * 1000.0).max(f64::MIN_POSITIVE);
        let capacity = f64::from(capacity);
        let level =
            |b: &Bucket| (b.tokens + (now.saturating_sub(b.at_ms)) as f64 * per_ms).min(capacity);
        if buckets.len() >= max && !buckets.contains_key(key) {
            let keep = max - max.div_ceil(10);
            buckets.retain(|_, b| level(b) < capacity);
            if buckets.len() > keep {
                let mut seen: Vec<u64> = buckets.values().map(|b| b.seen_ms).collect();
                // Forget the `cut` seen least recently: all seen before the
                // cut-th oldest time, and as many seen at it as make up `cut`.
                let cut = seen.len() - keep;
                let (_, &mut last_forgotten, _) = seen.select_nth_unstable(cut - 1);
                let before = seen.iter().filter(|&&t| t < last_forgotten).count();
                let mut ties = cut - before;
                buckets.retain(|_, b| {
                    if b.seen_ms < last_forgotten {
                        return false;
                    }
                    let forget = b.seen_ms == last_forgotten && ties > 0;
                    ties -= usize::from(forget);
                    !forget
                });
            }
        }
        let bucket = buckets.entry(key.to_owned()).or_insert(Bucket {
            tokens: capacity,
            at_ms: now,
            seen_ms: now,
        });
        bucket.seen_ms = now;
        let tokens = level(bucket);
        if tokens >= 1.0 {
            bucket.tokens = tokens - 1.0;
            bucket.at_ms = now;
            RateDecision::Allowed
        } else {
            let wait_ms = ((1.0 - tokens) / per_ms).ceil() as u64;
            RateDecision::Limited(Duration::from_millis(wait_ms))
        }
    }
}

impl RateLimitStore for MemoryRateLimits {
    fn take<'a>(
        &'a self,
        key: &'a str,
        capacity: u32,
        refill: Duration,
    ) -> BoxFuture<'a, Result<RateDecision, String>> {
        let decision = self.take_now(key, capacity, refill, now_ms());
        Box::pin(std::future::ready(Ok(decision)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bucket_bursts_to_its_capacity_then_refills_at_its_pace() {
        let store = MemoryRateLimits::default();
        let refill = Duration::from_secs(20); // 3 per minute
        for _ in 0..3 {
            assert_eq!(store.take_now("k", 3, refill, 1_000), RateDecision::Allowed);
        }
        assert_eq!(
            store.take_now("k", 3, refill, 1_000),
            RateDecision::Limited(Duration::from_secs(20))
        );
        assert_eq!(
            store.take_now("k", 3, refill, 11_000),
            RateDecision::Limited(Duration::from_secs(10))
        );
        assert_eq!(
            store.take_now("k", 3, refill, 21_000),
            RateDecision::Allowed
        );
        // Another key has its own bucket.
        assert_eq!(
            store.take_now("other", 3, refill, 21_000),
            RateDecision::Allowed
        );
    }

    #[test]
    fn at_the_bound_a_waiting_caller_keeps_its_empty_bucket() {
        let store = MemoryRateLimits::default();
        let refill = Duration::from_secs(60);
        assert_eq!(
            store.take_bounded("waiting", 1, refill, 0, 100),
            RateDecision::Allowed
        );
        // Others fill the store past its bound many times over, each bucket
        // left part used (nothing full to forget), while the caller keeps trying.
        for i in 0..1_000u64 {
            let now = 1 + i;
            store.take_bounded(&format!("other {i}"), 2, refill, now, 100);
            assert!(store.len() <= 100, "{}", store.len());
            assert!(matches!(
                store.take_bounded("waiting", 1, refill, now, 100),
                RateDecision::Limited(_)
            ));
        }
        // The sweep made room for a tenth, then left the store alone.
        assert!(store.len() > 90, "{}", store.len());
    }
}

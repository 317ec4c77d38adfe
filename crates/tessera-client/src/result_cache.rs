//! Results the server says may be reused (`ttlMs` on `server/discover` and
//! the lists), kept until they go stale or a change notification says so.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::Value;
use tessera_protocol::JsonObject;

/// The methods whose complete results carry caching hints this client honours.
const CACHEABLE: &[&str] = &[
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
];

/// Fresh results by method and parameters; shared with the client's listeners.
#[derive(Clone, Default)]
pub(crate) struct ResultCache(Arc<Inner>);

#[derive(Default)]
struct Inner {
    entries: Mutex<HashMap<String, (Instant, Value)>>,
    /// Bumped by every invalidation: a result fetched across one is not kept.
    generation: AtomicU64,
}

impl ResultCache {
    fn entries(&self) -> std::sync::MutexGuard<'_, HashMap<String, (Instant, Value)>> {
        self.0
            .entries
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Taken before a request: [`keep`](Self::keep) refuses a result if an
    /// invalidation came while it was on its way.
    pub(crate) fn generation(&self) -> u64 {
        self.0.generation.load(Ordering::SeqCst)
    }

    /// "A cached response is identified by the request method together with
    /// the request parameters that affect the result": `None` for methods
    /// this cache does not hold.
    pub(crate) fn key(method: &str, params: &JsonObject) -> Option<String> {
        CACHEABLE
            .contains(&method)
            .then(|| format!("{method} {}", Value::Object(params.clone())))
    }

    /// A result received less than its `ttlMs` ago.
    pub(crate) fn fresh(&self, key: &str) -> Option<Value> {
        let mut entries = self.entries();
        match entries.get(key) {
            Some((until, value)) if Instant::now() < *until => Some(value.clone()),
            Some(_) => {
                entries.remove(key);
                None
            }
            None => None,
        }
    }

    /// Keeps a complete result for its `ttlMs` ("If ttlMs is 0 ... immediately
    /// stale"; absent or negative counts as 0).
    pub(crate) fn keep(&self, generation: u64, key: String, result: &Value) {
        let complete = result
            .get("resultType")
            .and_then(Value::as_str)
            .unwrap_or("complete")
            == "complete";
        let ttl = result
            .get("ttlMs")
            .and_then(Value::as_u64)
            .filter(|t| *t > 0);
        if let (true, Some(ttl)) = (complete, ttl)
            && let Some(until) = Instant::now().checked_add(Duration::from_millis(ttl))
        {
            let mut entries = self.entries();
            if self.generation() == generation {
                entries.insert(key, (until, result.clone()));
            }
        }
    }

    /// "When a relevant notification is received while a cached response is
    /// still fresh, the notification invalidates the cached response."
    pub(crate) fn notice(&self, notification: &Value) {
        let list = match notification.get("method").and_then(Value::as_str) {
            Some("notifications/tools/list_changed") => "tools/list ",
            Some("notifications/prompts/list_changed") => "prompts/list ",
            Some("notifications/resources/list_changed") => "resources/",
            _ => return,
        };
        let mut entries = self.entries();
        self.0.generation.fetch_add(1, Ordering::SeqCst);
        entries.retain(|key, _| !key.starts_with(list));
    }

    /// Forgets everything (another authorization context, or the caller asks).
    pub(crate) fn clear(&self) {
        let mut entries = self.entries();
        self.0.generation.fetch_add(1, Ordering::SeqCst);
        entries.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn key(method: &str) -> String {
        ResultCache::key(method, &JsonObject::new()).unwrap()
    }

    #[test]
    fn fresh_for_ttl_then_stale() {
        let cache = ResultCache::default();
        cache.keep(0, key("tools/list"), &json!({"tools": [], "ttlMs": 60_000}));
        assert!(cache.fresh(&key("tools/list")).is_some());
        cache.keep(0, key("prompts/list"), &json!({"prompts": [], "ttlMs": 0}));
        assert!(cache.fresh(&key("prompts/list")).is_none());
        cache.keep(
            0,
            key("resources/list"),
            &json!({"resources": [], "ttlMs": -5}),
        );
        assert!(cache.fresh(&key("resources/list")).is_none());
        cache.keep(0, key("server/discover"), &json!({"ttlMs": 1}));
        std::thread::sleep(Duration::from_millis(5));
        assert!(cache.fresh(&key("server/discover")).is_none());
        // Absurd TTLs do not overflow the clock.
        cache.keep(0, key("server/discover"), &json!({"ttlMs": u64::MAX}));
        // Interim results are never kept; other methods have no key.
        cache.keep(
            0,
            key("tools/list"),
            &json!({"resultType": "input_required", "ttlMs": 60_000}),
        );
        assert!(ResultCache::key("tools/call", &JsonObject::new()).is_none());
    }

    #[test]
    fn the_parameters_are_part_of_the_key_and_notifications_invalidate() {
        let cache = ResultCache::default();
        let mut page2 = JsonObject::new();
        page2.insert("cursor".into(), json!("2"));
        let second = ResultCache::key("tools/list", &page2).unwrap();
        cache.keep(0, second.clone(), &json!({"tools": [], "ttlMs": 60_000}));
        assert!(cache.fresh(&key("tools/list")).is_none());
        assert!(cache.fresh(&second).is_some());
        cache.keep(
            0,
            key("prompts/list"),
            &json!({"prompts": [], "ttlMs": 60_000}),
        );
        cache.notice(&json!({"method": "notifications/tools/list_changed"}));
        assert!(cache.fresh(&second).is_none());
        assert!(cache.fresh(&key("prompts/list")).is_some());
        cache.clear();
        assert!(cache.fresh(&key("prompts/list")).is_none());
        // A result fetched while a change was announced is not kept.
        let before = cache.generation();
        cache.notice(&json!({"method": "notifications/prompts/list_changed"}));
        cache.keep(
            before,
            key("prompts/list"),
            &json!({"prompts": [], "ttlMs": 60_000}),
        );
        assert!(cache.fresh(&key("prompts/list")).is_none());
    }
}

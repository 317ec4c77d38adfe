//! Sessions their clients ended with DELETE, remembered until their ids expire.

use std::collections::HashMap;
use std::sync::Mutex;

use tessera_protocol::clock::unix_seconds;

/// Ended sessions remembered at most; past it, those already expired are
/// forgotten first, and a DELETE that still finds no room is answered 503.
pub const MAX_ENDED_SESSIONS: usize = 100_000;

/// Session keys ended here, with when their ids expire anyway.
#[derive(Default)]
pub(crate) struct Ended {
    keys: Mutex<HashMap<String, u64>>,
}

impl Ended {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, u64>> {
        self.keys
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Ends the session `key` (whose id expires at `expires_at`); `false` when there is no room.
    pub(crate) fn end(&self, key: &str, expires_at: u64) -> bool {
        let mut keys = self.lock();
        if keys.len() >= MAX_ENDED_SESSIONS {
            let now = unix_seconds();
            keys.retain(|_, expires| *expires > now);
        }
        if keys.len() >= MAX_ENDED_SESSIONS {
            return false;
        }
        keys.insert(key.to_owned(), expires_at);
        true
    }

    /// Whether the session `key` was ended here.
    pub(crate) fn is_ended(&self, key: &str) -> bool {
        self.lock().contains_key(key)
    }
}

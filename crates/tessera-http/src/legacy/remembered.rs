//! What this instance remembers of initialize-era sessions besides their
//! sealed ids: those ended with DELETE, the log level each asked for, the
//! resources each subscribed to, and whether its standalone stream is open.
//!
//! The id itself carries the handshake, so any instance serves any request
//! of a session; these notes are kept where the request that made them
//! arrived, until the id expires. They are bounded: past
//! [`MAX_REMEMBERED_SESSIONS`] the expired ones are forgotten first, and a
//! request that still finds no room is answered 503.

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex};

use tessera_protocol::LoggingLevel;
use tessera_protocol::clock::unix_seconds;

/// Sessions this instance keeps notes on, at most.
pub const MAX_REMEMBERED_SESSIONS: usize = 100_000;

/// Resources one session may subscribe to: 64.
pub const MAX_SUBSCRIPTIONS_PER_SESSION: usize = 64;

/// The longest URI a session may subscribe to: 2048 bytes (a session's
/// subscriptions hold at most 64 × 2 KiB = 128 KiB).
pub const MAX_SUBSCRIPTION_URI_BYTES: usize = 2048;

/// The notes on one session.
#[derive(Default)]
struct Note {
    expires_at: u64,
    ended: bool,
    log_level: Option<LoggingLevel>,
    subscriptions: BTreeSet<String>,
    listening: bool,
}

/// Why a note could not be taken.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Full {
    /// The instance keeps as many sessions as it may.
    Sessions,
    /// The session subscribes to as many resources as it may.
    Subscriptions,
}

/// The notes, by session key.
#[derive(Default)]
pub(crate) struct Remembered {
    notes: Mutex<HashMap<String, Note>>,
}

impl Remembered {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, Note>> {
        self.notes
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Runs `change` on the note of `key` (made if need be).
    fn with_note<T>(
        &self,
        key: &str,
        expires_at: u64,
        change: impl FnOnce(&mut Note) -> Result<T, Full>,
    ) -> Result<T, Full> {
        let mut notes = self.lock();
        if !notes.contains_key(key) && notes.len() >= MAX_REMEMBERED_SESSIONS {
            let now = unix_seconds();
            notes.retain(|_, note| note.expires_at > now);
            if notes.len() >= MAX_REMEMBERED_SESSIONS {
                return Err(Full::Sessions);
            }
        }
        let note = notes.entry(key.to_owned()).or_default();
        note.expires_at = expires_at;
        change(note)
    }

    /// Ends the session `key`.
    pub(crate) fn end(&self, key: &str, expires_at: u64) -> Result<(), Full> {
        self.with_note(key, expires_at, |note| {
            note.ended = true;
            note.subscriptions.clear();
            Ok(())
        })
    }

    /// Whether the session `key` was ended here.
    pub(crate) fn is_ended(&self, key: &str) -> bool {
        self.lock().get(key).is_some_and(|note| note.ended)
    }

    /// Notes the level `logging/setLevel` asked for.
    pub(crate) fn set_log_level(
        &self,
        key: &str,
        expires_at: u64,
        level: LoggingLevel,
    ) -> Result<(), Full> {
        self.with_note(key, expires_at, |note| {
            note.log_level = Some(level);
            Ok(())
        })
    }

    /// The level the session asked for, if it did (here).
    pub(crate) fn log_level(&self, key: &str) -> Option<LoggingLevel> {
        self.lock().get(key).and_then(|note| note.log_level)
    }

    /// Subscribes the session to `uri` (`resources/subscribe`).
    pub(crate) fn subscribe(&self, key: &str, expires_at: u64, uri: &str) -> Result<(), Full> {
        self.with_note(key, expires_at, |note| {
            if !note.subscriptions.contains(uri)
                && note.subscriptions.len() >= MAX_SUBSCRIPTIONS_PER_SESSION
            {
                return Err(Full::Subscriptions);
            }
            note.subscriptions.insert(uri.to_owned());
            Ok(())
        })
    }

    /// Ends the session's subscription to `uri` (`resources/unsubscribe`).
    pub(crate) fn unsubscribe(&self, key: &str, uri: &str) {
        if let Some(note) = self.lock().get_mut(key) {
            note.subscriptions.remove(uri);
        }
    }

    /// Whether the session subscribed to `uri`.
    pub(crate) fn is_subscribed(&self, key: &str, uri: &str) -> bool {
        self.lock()
            .get(key)
            .is_some_and(|note| note.subscriptions.contains(uri))
    }

    /// Marks the session's standalone stream open; `None` if one is open
    /// already (each message goes on one stream only). The guard closes it.
    pub(crate) fn open_stream(
        self: &Arc<Self>,
        key: &str,
        expires_at: u64,
    ) -> Result<Option<StreamGuard>, Full> {
        let opened = self.with_note(key, expires_at, |note| {
            Ok(!std::mem::replace(&mut note.listening, true))
        })?;
        Ok(opened.then(|| StreamGuard {
            remembered: Arc::clone(self),
            key: key.to_owned(),
        }))
    }
}

/// The session's standalone stream, open while this lives.
pub(crate) struct StreamGuard {
    remembered: Arc<Remembered>,
    key: String,
}

impl Drop for StreamGuard {
    fn drop(&mut self) {
        if let Some(note) = self.remembered.lock().get_mut(&self.key) {
            note.listening = false;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_per_session_and_bounded() {
        let r = Arc::new(Remembered::default());
        let later = unix_seconds() + 60;
        r.subscribe("a", later, "test://x").unwrap();
        assert!(r.is_subscribed("a", "test://x"));
        assert!(!r.is_subscribed("b", "test://x"));
        for i in 1..MAX_SUBSCRIPTIONS_PER_SESSION {
            r.subscribe("a", later, &format!("test://{i}")).unwrap();
        }
        assert_eq!(
            r.subscribe("a", later, "test://one-more"),
            Err(Full::Subscriptions)
        );
        r.unsubscribe("a", "test://x");
        assert!(!r.is_subscribed("a", "test://x"));
        let first = r.open_stream("a", later).unwrap();
        assert!(first.is_some());
        assert!(r.open_stream("a", later).unwrap().is_none());
        drop(first);
        assert!(r.open_stream("a", later).unwrap().is_some());
        r.end("a", later).unwrap();
        assert!(r.is_ended("a") && !r.is_ended("b"));
    }
}

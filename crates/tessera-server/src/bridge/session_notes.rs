//! What is kept of an initialize-era session besides its sealed id: whether
//! it was ended (DELETE), the log level it asked for, the resources it
//! subscribed to, and who holds its standalone stream.
//!
//! The id itself carries the handshake, so any instance serves any request
//! of a session; these notes are what instances must share for a session to
//! behave the same on all of them. [`MemorySessionNotes`] keeps them in the
//! process (one instance, or notes that hold only where they were taken);
//! `tessera-redis` keeps them in Redis or a Redis Cluster, so a DELETE on
//! one instance ends the session on every one, also after restarts.

use std::collections::{BTreeSet, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use tessera_protocol::LoggingLevel;
use tessera_protocol::clock::unix_seconds;

use crate::BoxFuture;

/// Sessions a [`MemorySessionNotes`] keeps notes on, at most.
pub const MAX_REMEMBERED_SESSIONS: usize = 100_000;

/// Resources one session may subscribe to: 64.
pub const MAX_SUBSCRIPTIONS_PER_SESSION: usize = 64;

/// The longest URI a session may subscribe to: 2048 bytes (a session's
/// subscriptions hold at most 64 × 2 KiB = 128 KiB).
pub const MAX_SUBSCRIPTION_URI_BYTES: usize = 2048;

/// How long a claim on a session's standalone stream lasts unless renewed:
/// 30 s. The instance holding the stream renews it every third of that, so
/// the stream of an instance that died can be opened again elsewhere.
pub const STREAM_LEASE: Duration = Duration::from_secs(30);

/// What a request needs to know of its session.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct SessionNote {
    /// The session was ended (DELETE).
    pub ended: bool,
    /// The level `logging/setLevel` asked for, if it did.
    pub log_level: Option<LoggingLevel>,
}

/// Why a note could not be read or taken.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum NotesError {
    /// The notes hold as many sessions as they may.
    #[error("the server keeps as many session notes as it can")]
    Sessions,
    /// The session subscribes to [`MAX_SUBSCRIPTIONS_PER_SESSION`] resources already.
    #[error("the session subscribes to as many resources as it may")]
    Subscriptions,
    /// The shared store did not answer.
    #[error("the session notes are unavailable: {0}")]
    Unavailable(String),
}

/// A future of the notes.
pub type NotesFuture<'a, T> = BoxFuture<'a, Result<T, NotesError>>;

/// Where session notes are kept, by session key
/// ([`OpenedSession::key`](super::OpenedSession::key)). Each note expires
/// with its session (`expires_at`, Unix seconds).
pub trait SessionNotes: Send + Sync + 'static {
    /// The note of `key` (the default note for a session never noted).
    fn read<'a>(&'a self, key: &'a str) -> NotesFuture<'a, SessionNote>;

    /// Ends the session: its subscriptions go with it.
    fn end<'a>(&'a self, key: &'a str, expires_at: u64) -> NotesFuture<'a, ()>;

    /// Notes the level `logging/setLevel` asked for.
    fn set_log_level<'a>(
        &'a self,
        key: &'a str,
        expires_at: u64,
        level: LoggingLevel,
    ) -> NotesFuture<'a, ()>;

    /// Subscribes the session to `uri`; [`NotesError::Subscriptions`] past
    /// [`MAX_SUBSCRIPTIONS_PER_SESSION`].
    fn subscribe<'a>(&'a self, key: &'a str, expires_at: u64, uri: &'a str) -> NotesFuture<'a, ()>;

    /// Ends the session's subscription to `uri`.
    fn unsubscribe<'a>(&'a self, key: &'a str, uri: &'a str) -> NotesFuture<'a, ()>;

    /// Whether the session subscribes to `uri`.
    fn is_subscribed<'a>(&'a self, key: &'a str, uri: &'a str) -> NotesFuture<'a, bool>;

    /// Claims (or renews) the session's standalone stream for `holder` for
    /// [`STREAM_LEASE`]: `false` while another holder's claim lasts (each
    /// message goes on one stream only), and once the session was ended (a
    /// stream open then ends at its next renewal).
    fn claim_stream<'a>(
        &'a self,
        key: &'a str,
        expires_at: u64,
        holder: &'a str,
    ) -> NotesFuture<'a, bool>;

    /// Gives the stream up, if `holder` still holds it.
    fn release_stream<'a>(&'a self, key: &'a str, holder: &'a str) -> NotesFuture<'a, ()>;
}

/// The notes on one session.
#[derive(Default)]
struct Note {
    expires_at: u64,
    ended: bool,
    log_level: Option<LoggingLevel>,
    subscriptions: BTreeSet<String>,
    stream: Option<(String, u64)>,
}

/// Session notes in this process, bounded: past [`MAX_REMEMBERED_SESSIONS`]
/// the expired ones are forgotten first, and a note that still finds no
/// room is refused ([`NotesError::Sessions`]).
#[derive(Default)]
pub struct MemorySessionNotes {
    notes: Mutex<HashMap<String, Note>>,
}

impl MemorySessionNotes {
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
        change: impl FnOnce(&mut Note) -> Result<T, NotesError>,
    ) -> Result<T, NotesError> {
        let mut notes = self.lock();
        if !notes.contains_key(key) && notes.len() >= MAX_REMEMBERED_SESSIONS {
            let now = unix_seconds();
            notes.retain(|_, note| note.expires_at > now);
            if notes.len() >= MAX_REMEMBERED_SESSIONS {
                return Err(NotesError::Sessions);
            }
        }
        let note = notes.entry(key.to_owned()).or_default();
        note.expires_at = expires_at;
        change(note)
    }
}

/// A ready future.
fn ready<'a, T: Send + 'a>(value: Result<T, NotesError>) -> NotesFuture<'a, T> {
    Box::pin(std::future::ready(value))
}

impl SessionNotes for MemorySessionNotes {
    fn read<'a>(&'a self, key: &'a str) -> NotesFuture<'a, SessionNote> {
        let note = self
            .lock()
            .get(key)
            .map_or_else(SessionNote::default, |n| SessionNote {
                ended: n.ended,
                log_level: n.log_level,
            });
        ready(Ok(note))
    }

    fn end<'a>(&'a self, key: &'a str, expires_at: u64) -> NotesFuture<'a, ()> {
        ready(self.with_note(key, expires_at, |note| {
            note.ended = true;
            note.subscriptions.clear();
            Ok(())
        }))
    }

    fn set_log_level<'a>(
        &'a self,
        key: &'a str,
        expires_at: u64,
        level: LoggingLevel,
    ) -> NotesFuture<'a, ()> {
        ready(self.with_note(key, expires_at, |note| {
            note.log_level = Some(level);
            Ok(())
        }))
    }

    fn subscribe<'a>(&'a self, key: &'a str, expires_at: u64, uri: &'a str) -> NotesFuture<'a, ()> {
        ready(self.with_note(key, expires_at, |note| {
            if !note.subscriptions.contains(uri)
                && note.subscriptions.len() >= MAX_SUBSCRIPTIONS_PER_SESSION
            {
                return Err(NotesError::Subscriptions);
            }
            note.subscriptions.insert(uri.to_owned());
            Ok(())
        }))
    }

    fn unsubscribe<'a>(&'a self, key: &'a str, uri: &'a str) -> NotesFuture<'a, ()> {
        if let Some(note) = self.lock().get_mut(key) {
            note.subscriptions.remove(uri);
        }
        ready(Ok(()))
    }

    fn is_subscribed<'a>(&'a self, key: &'a str, uri: &'a str) -> NotesFuture<'a, bool> {
        let subscribed = self
            .lock()
            .get(key)
            .is_some_and(|note| note.subscriptions.contains(uri));
        ready(Ok(subscribed))
    }

    fn claim_stream<'a>(
        &'a self,
        key: &'a str,
        expires_at: u64,
        holder: &'a str,
    ) -> NotesFuture<'a, bool> {
        let now = unix_seconds();
        ready(self.with_note(key, expires_at, |note| {
            let free = !note.ended
                && match &note.stream {
                    Some((held_by, until)) => held_by == holder || *until <= now,
                    None => true,
                };
            if free {
                note.stream = Some((holder.to_owned(), now + STREAM_LEASE.as_secs()));
            }
            Ok(free)
        }))
    }

    fn release_stream<'a>(&'a self, key: &'a str, holder: &'a str) -> NotesFuture<'a, ()> {
        if let Some(note) = self.lock().get_mut(key)
            && note
                .stream
                .as_ref()
                .is_some_and(|(held_by, _)| held_by == holder)
        {
            note.stream = None;
        }
        ready(Ok(()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The memory notes answer at once.
    fn now<T>(mut future: NotesFuture<'_, T>) -> Result<T, NotesError> {
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match future.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(out) => out,
            std::task::Poll::Pending => panic!("memory notes never wait"),
        }
    }

    #[test]
    fn notes_are_per_session_and_bounded() {
        let r = MemorySessionNotes::default();
        let later = unix_seconds() + 60;
        now(r.subscribe("a", later, "test://x")).unwrap();
        assert!(now(r.is_subscribed("a", "test://x")).unwrap());
        assert!(!now(r.is_subscribed("b", "test://x")).unwrap());
        for i in 1..MAX_SUBSCRIPTIONS_PER_SESSION {
            now(r.subscribe("a", later, &format!("test://{i}"))).unwrap();
        }
        assert_eq!(
            now(r.subscribe("a", later, "test://one-more")),
            Err(NotesError::Subscriptions)
        );
        now(r.unsubscribe("a", "test://x")).unwrap();
        assert!(!now(r.is_subscribed("a", "test://x")).unwrap());
        assert!(now(r.claim_stream("a", later, "one")).unwrap());
        assert!(now(r.claim_stream("a", later, "one")).unwrap(), "renewed");
        assert!(!now(r.claim_stream("a", later, "two")).unwrap());
        now(r.release_stream("a", "two")).unwrap();
        assert!(!now(r.claim_stream("a", later, "two")).unwrap());
        now(r.release_stream("a", "one")).unwrap();
        assert!(now(r.claim_stream("a", later, "two")).unwrap());
        now(r.set_log_level("a", later, LoggingLevel::Error)).unwrap();
        now(r.end("a", later)).unwrap();
        assert!(
            !now(r.claim_stream("a", later, "two")).unwrap(),
            "ended: no stream"
        );
        let note = now(r.read("a")).unwrap();
        assert!(note.ended && note.log_level == Some(LoggingLevel::Error));
        assert!(!now(r.read("b")).unwrap().ended);
        assert!(!now(r.is_subscribed("a", "test://1")).unwrap());
    }
}

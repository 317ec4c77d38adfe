//! Single use: a ledger of consumed ticket ids.
//!
//! A sealed ticket is valid until it expires, and a client may present it
//! more than once. When a ticket must be used at most once (a payment, a
//! counter increment), the server opens it and then calls
//! [`TicketLedger::consume`] with [`Opened::ticket_id`](crate::Opened::ticket_id)
//! and [`Opened::expires_at`](crate::Opened::expires_at); the second consume
//! of the same id fails with [`LedgerError::AlreadyUsed`].
//!
//! The trait returns a boxed future so that a shared store (Redis `SET NX
//! EXAT`, a database) can implement it, while this crate stays free of any
//! async runtime. [`MemoryLedger`] serves one process.

use std::collections::{BTreeSet, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::error::LedgerError;
use tessera_protocol::clock::unix_seconds as unix_now;

/// The future a [`TicketLedger`] returns.
pub type LedgerFuture<'a> = tessera_protocol::BoxFuture<'a, Result<(), LedgerError>>;

/// Records ticket ids as used, so that each ticket is accepted at most once.
pub trait TicketLedger: Send + Sync {
    /// Marks `ticket_id` used until `expires_at` (unix seconds); fails with [`LedgerError::AlreadyUsed`] if it already was.
    ///
    /// Implementations must be atomic: of two concurrent calls with the same
    /// id, exactly one succeeds. They should fail closed (return an error)
    /// when they cannot record the id.
    fn consume<'a>(&'a self, ticket_id: &'a str, expires_at: u64) -> LedgerFuture<'a>;
}

impl<L: TicketLedger + ?Sized> TicketLedger for Arc<L> {
    fn consume<'a>(&'a self, ticket_id: &'a str, expires_at: u64) -> LedgerFuture<'a> {
        (**self).consume(ticket_id, expires_at)
    }
}

/// An in-memory [`TicketLedger`] for one process: bounded, self-purging, fail-closed.
///
/// Entries are dropped once their expiry has passed. When the ledger holds
/// `capacity` unexpired ids, further consumes fail with
/// [`LedgerError::LedgerFull`] instead of forgetting a live ticket. Behind a
/// load balancer with several instances, use a shared ledger instead.
///
/// ```
/// use tessera_state::{LedgerError, MemoryLedger};
///
/// let ledger = MemoryLedger::new(1000);
/// let now = 1_767_225_600;
/// assert!(ledger.consume_at("ticket-a", now + 600, now).is_ok());
/// assert!(matches!(
///     ledger.consume_at("ticket-a", now + 600, now + 1),
///     Err(LedgerError::AlreadyUsed)
/// ));
/// // After its expiry the entry is purged (and the ticket no longer opens anyway).
/// assert!(ledger.consume_at("ticket-b", now + 1200, now + 600).is_ok());
/// assert_eq!(ledger.len(), 1);
/// ```
pub struct MemoryLedger {
    capacity: usize,
    state: Mutex<State>,
}

#[derive(Default)]
struct State {
    /// Ids currently recorded, compactly (see [`compact_id`]).
    ids: HashSet<u128>,
    /// The same ids ordered by expiry, for purging.
    by_expiry: BTreeSet<(u64, u128)>,
}

/// A ticket id in 16 bytes: the codec's ids are 16 random bytes in base64,
/// kept as they are; any other string is folded with 128-bit FNV-1a.
fn compact_id(ticket_id: &str) -> u128 {
    let b64 = crate::token::B64;
    let mut raw = [0u8; 16];
    if let Ok(16) = b64.decoded_length(ticket_id.as_bytes())
        && b64
            .decode(ticket_id.as_bytes(), base64_simd::Out::from_slice(&mut raw))
            .is_ok()
    {
        return u128::from_be_bytes(raw);
    }
    const OFFSET: u128 = 0x6c62272e07bb014262b821756295c58d;
    const PRIME: u128 = 0x0000000001000000000000000000013B;
    ticket_id
        .bytes()
        .fold(OFFSET, |h, b| (h ^ u128::from(b)).wrapping_mul(PRIME))
}

impl MemoryLedger {
    /// Capacity of [`MemoryLedger::default`]: 100 000 unexpired tickets.
    pub const DEFAULT_CAPACITY: usize = 100_000;

    /// Redemptions per second a ledger made by [`for_ttl`](MemoryLedger::for_ttl) absorbs for a whole TTL.
    pub const SUSTAINED_REDEMPTIONS_PER_SEC: usize = 1_000;

    /// The most entries [`for_ttl`](MemoryLedger::for_ttl) gives a ledger, whatever the TTL
    /// (an entry takes about 80 bytes: 80 MB).
    pub const MAX_FOR_TTL: usize = 1_000_000;

    /// A ledger sized for tickets living `ttl`: it fills only if single-use
    /// tickets are redeemed faster than [`SUSTAINED_REDEMPTIONS_PER_SEC`](Self::SUSTAINED_REDEMPTIONS_PER_SEC)
    /// for a whole TTL, and never holds more than [`MAX_FOR_TTL`](Self::MAX_FOR_TTL) entries.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tessera_state::MemoryLedger;
    /// assert_eq!(MemoryLedger::for_ttl(Duration::from_secs(600)).capacity(), 600_000);
    /// assert_eq!(MemoryLedger::for_ttl(Duration::from_secs(86_400)).capacity(), MemoryLedger::MAX_FOR_TTL);
    /// ```
    pub fn for_ttl(ttl: std::time::Duration) -> Self {
        let secs = usize::try_from(ttl.as_secs()).unwrap_or(usize::MAX).max(1);
        Self::new(
            secs.saturating_mul(Self::SUSTAINED_REDEMPTIONS_PER_SEC)
                .min(Self::MAX_FOR_TTL),
        )
    }

    /// A ledger holding at most `capacity` unexpired ticket ids (0 refuses every ticket).
    pub fn new(capacity: usize) -> Self {
        Self {
            capacity,
            state: Mutex::new(State::default()),
        }
    }

    /// The most unexpired ids the ledger holds.
    pub fn capacity(&self) -> usize {
        self.capacity
    }

    /// How many ids are recorded now (expired ones included until the next purge).
    pub fn len(&self) -> usize {
        self.lock().ids.len()
    }

    /// Whether no id is recorded.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Drops every entry whose expiry is at or before `now_unix`; returns how many were dropped.
    pub fn purge_expired(&self, now_unix: u64) -> usize {
        self.lock().purge(now_unix)
    }

    /// [`TicketLedger::consume`] with an injected clock (unix seconds), synchronously.
    ///
    /// A ticket whose expiry is at or before `now_unix` is not recorded and
    /// returns `Ok`: it can no longer be opened, so it cannot be replayed.
    pub fn consume_at(
        &self,
        ticket_id: &str,
        expires_at: u64,
        now_unix: u64,
    ) -> Result<(), LedgerError> {
        let id = compact_id(ticket_id);
        let mut state = self.lock();
        state.purge(now_unix);
        if state.ids.contains(&id) {
            return Err(LedgerError::AlreadyUsed);
        }
        if expires_at <= now_unix {
            return Ok(());
        }
        if state.ids.len() >= self.capacity {
            // The oldest entry frees its place when it expires.
            let retry_after_secs = state
                .by_expiry
                .first()
                .map_or(1, |(oldest, _)| oldest.saturating_sub(now_unix).max(1));
            return Err(LedgerError::LedgerFull {
                capacity: self.capacity,
                retry_after_secs,
            });
        }
        state.by_expiry.insert((expires_at, id));
        state.ids.insert(id);
        Ok(())
    }

    /// Locks the state; a poisoned lock is recovered (every update leaves the state consistent).
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl State {
    fn purge(&mut self, now_unix: u64) -> usize {
        let mut dropped = 0;
        while let Some((expires_at, _)) = self.by_expiry.first() {
            if *expires_at > now_unix {
                break;
            }
            if let Some((_, id)) = self.by_expiry.pop_first() {
                self.ids.remove(&id);
                dropped += 1;
            }
        }
        dropped
    }
}

impl Default for MemoryLedger {
    fn default() -> Self {
        Self::new(Self::DEFAULT_CAPACITY)
    }
}

impl fmt::Debug for MemoryLedger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("MemoryLedger")
            .field("capacity", &self.capacity)
            .field("len", &self.len())
            .finish()
    }
}

impl TicketLedger for MemoryLedger {
    fn consume<'a>(&'a self, ticket_id: &'a str, expires_at: u64) -> LedgerFuture<'a> {
        let result = self.consume_at(ticket_id, expires_at, unix_now());
        Box::pin(std::future::ready(result))
    }
}

#[cfg(test)]
mod tests {
    use std::task::{Context, Poll, Waker};

    use super::*;

    const NOW: u64 = 1_767_225_600;

    /// Polls a future that is ready at once (no runtime needed).
    fn ready<F: Future>(future: F) -> F::Output {
        let mut future = std::pin::pin!(future);
        let mut context = Context::from_waker(Waker::noop());
        match future.as_mut().poll(&mut context) {
            Poll::Ready(output) => output,
            Poll::Pending => panic!("MemoryLedger futures are always ready"),
        }
    }

    #[test]
    fn consume_twice_is_already_used() {
        let ledger = MemoryLedger::new(10);
        assert!(ledger.consume_at("a", NOW + 600, NOW).is_ok());
        assert!(matches!(
            ledger.consume_at("a", NOW + 600, NOW + 599),
            Err(LedgerError::AlreadyUsed)
        ));
        assert!(ledger.consume_at("b", NOW + 600, NOW).is_ok());
        assert_eq!(ledger.len(), 2);
    }

    #[test]
    fn trait_consume_works_through_dyn_and_arc() {
        let now = unix_now();
        let ledger: Arc<dyn TicketLedger> = Arc::new(MemoryLedger::new(4));
        assert!(ready(ledger.consume("t", now + 600)).is_ok());
        let second = ready(ledger.consume("t", now + 600));
        assert!(matches!(second, Err(LedgerError::AlreadyUsed)));
        assert_eq!(second.map_err(|e| e.reason()), Err("already_used"));

        let wrapped = Arc::new(MemoryLedger::new(4));
        assert!(ready(TicketLedger::consume(&wrapped, "u", now + 600)).is_ok());
        assert!(ready(TicketLedger::consume(&wrapped, "u", now + 600)).is_err());
    }

    #[test]
    fn expired_entries_are_purged() {
        let ledger = MemoryLedger::new(10);
        ledger.consume_at("a", NOW + 10, NOW).expect("fresh");
        ledger.consume_at("b", NOW + 20, NOW).expect("fresh");
        ledger.consume_at("c", NOW + 30, NOW).expect("fresh");
        assert_eq!(ledger.purge_expired(NOW + 9), 0);
        assert_eq!(ledger.purge_expired(NOW + 20), 2);
        assert_eq!(ledger.len(), 1);
        // A purged id may be recorded again (its ticket no longer opens anyway).
        ledger
            .consume_at("a", NOW + 40, NOW + 21)
            .expect("purged id");
        // Purging also happens on consume.
        ledger.consume_at("d", NOW + 100, NOW + 35).expect("fresh");
        assert_eq!(ledger.len(), 2);
        assert_eq!(ledger.purge_expired(u64::MAX), 2);
        assert!(ledger.is_empty());
    }

    #[test]
    fn expired_tickets_are_not_recorded() {
        let ledger = MemoryLedger::new(1);
        assert!(ledger.consume_at("old", NOW, NOW).is_ok());
        assert!(ledger.consume_at("old", NOW - 5, NOW).is_ok());
        assert!(ledger.is_empty());
    }

    #[test]
    fn full_ledger_refuses_rather_than_forgets() {
        let ledger = MemoryLedger::new(2);
        ledger.consume_at("a", NOW + 100, NOW).expect("room");
        ledger.consume_at("b", NOW + 200, NOW).expect("room");
        let full = ledger.consume_at("c", NOW + 300, NOW + 1);
        // A place frees when "a" expires, 99 s later.
        assert!(matches!(
            full,
            Err(LedgerError::LedgerFull {
                capacity: 2,
                retry_after_secs: 99
            })
        ));
        // The live tickets are still remembered.
        assert!(matches!(
            ledger.consume_at("a", NOW + 100, NOW + 1),
            Err(LedgerError::AlreadyUsed)
        ));
        // Once one expires, there is room again.
        ledger
            .consume_at("c", NOW + 300, NOW + 100)
            .expect("room after purge");
        assert!(matches!(
            ledger.consume_at("b", NOW + 200, NOW + 100),
            Err(LedgerError::AlreadyUsed)
        ));
    }

    #[test]
    fn codec_ids_are_kept_in_sixteen_bytes_and_other_strings_hashed() {
        let id = "AAECAwQFBgcICQoLDA0ODw";
        assert_eq!(compact_id(id), 0x000102030405060708090a0b0c0d0e0f);
        assert_ne!(compact_id("ticket-a"), compact_id("ticket-b"));
        let ledger = MemoryLedger::for_ttl(std::time::Duration::from_secs(2));
        assert_eq!(ledger.capacity(), 2_000);
    }

    #[test]
    fn zero_capacity_refuses_everything() {
        let ledger = MemoryLedger::new(0);
        assert!(matches!(
            ledger.consume_at("a", NOW + 1, NOW),
            Err(LedgerError::LedgerFull { capacity: 0, .. })
        ));
    }

    #[test]
    fn is_send_sync_and_concurrent_consumes_admit_one() {
        fn assert_send_sync<T: Send + Sync>() {}
        assert_send_sync::<MemoryLedger>();

        let ledger = Arc::new(MemoryLedger::default());
        let winners: usize = std::thread::scope(|scope| {
            let handles: Vec<_> = (0..8)
                .map(|_| {
                    let ledger = Arc::clone(&ledger);
                    scope.spawn(move || {
                        usize::from(ledger.consume_at("same", NOW + 60, NOW).is_ok())
                    })
                })
                .collect();
            handles
                .into_iter()
                .map(|handle| handle.join().unwrap_or(0))
                .sum()
        });
        assert_eq!(winners, 1);
    }

    #[test]
    fn debug_shows_size_only() {
        let ledger = MemoryLedger::new(3);
        ledger
            .consume_at("secret-ticket", NOW + 1, NOW)
            .expect("room");
        let printed = format!("{ledger:?}");
        assert!(printed.contains("capacity: 3") && printed.contains("len: 1"));
        assert!(!printed.contains("secret-ticket"));
    }
}

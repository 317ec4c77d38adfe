//! Body limits: what one request body may cost before any handler runs.
//!
//! - bytes: a per-request limit (the endpoint's body limit) and an
//!   endpoint-wide budget of body bytes being read at once, so stalled
//!   uploads cannot hold the memory of many bodies;
//! - JSON values: a body whose values (every object, array, string, number…)
//!   outnumber the limit is refused before it is built into a tree;
//! - parsing: at most a few large bodies are parsed at once, so big requests
//!   cannot starve small ones of the async workers.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A body this large or larger is "large": only a few are parsed and served at once.
pub(crate) const LARGE_BODY: usize = 64 * 1024;

/// The first bytes of every body, outside the shared budget of bytes in flight.
pub(crate) const SMALL_BODY: usize = 16 * 1024;

/// A counter with a ceiling; a [`Reservation`] gives back what it took when dropped.
#[derive(Debug, Default)]
pub(crate) struct Allowance {
    used: AtomicUsize,
}

/// What a [`Allowance::reserve`] took, given back on drop.
#[derive(Debug)]
pub(crate) struct Reservation {
    allowance: Arc<Allowance>,
    amount: usize,
}

impl Allowance {
    /// Takes `amount` if that keeps the total at or under `ceiling`.
    pub(crate) fn reserve(self: &Arc<Self>, amount: usize, ceiling: usize) -> Option<Reservation> {
        self.take(amount, ceiling).then(|| Reservation {
            allowance: Arc::clone(self),
            amount,
        })
    }

    fn take(&self, amount: usize, ceiling: usize) -> bool {
        self.used
            .fetch_update(Ordering::AcqRel, Ordering::Relaxed, |used| {
                used.checked_add(amount).filter(|n| *n <= ceiling)
            })
            .is_ok()
    }

    /// How much is taken now.
    #[cfg(test)]
    pub(crate) fn used(&self) -> usize {
        self.used.load(Ordering::Relaxed)
    }
}

impl Reservation {
    /// Takes `more` into this reservation, within `ceiling`.
    pub(crate) fn grow(&mut self, more: usize, ceiling: usize) -> bool {
        let taken = self.allowance.take(more, ceiling);
        if taken {
            self.amount += more;
        }
        taken
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        self.allowance.used.fetch_sub(self.amount, Ordering::AcqRel);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reservations_stay_under_the_ceiling_and_give_back_on_drop() {
        let budget = Arc::new(Allowance::default());
        let mut a = budget.reserve(60, 100).unwrap();
        assert!(budget.reserve(41, 100).is_none());
        assert!(a.grow(40, 100));
        assert!(!a.grow(1, 100));
        assert_eq!(budget.used(), 100);
        drop(a);
        assert_eq!(budget.used(), 0);
        assert!(budget.reserve(100, 100).is_some());
    }
}

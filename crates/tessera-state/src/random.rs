//! Randomness for ticket ids and nonces: a per-thread ChaCha20 generator
//! seeded from the operating system and reseeded after [`RESEED_AFTER`]
//! bytes, so sealing a ticket costs no system call.

use std::cell::RefCell;

use chacha20::ChaCha20Rng;
use chacha20::rand_core::{Rng as _, SeedableRng as _};

/// Output after which a thread's generator takes a fresh seed from the OS.
const RESEED_AFTER: usize = 64 * 1024;

/// A thread's generator and how much it has produced since its seed.
struct ThreadRandom {
    rng: ChaCha20Rng,
    produced: usize,
}

thread_local! {
    static RANDOM: RefCell<Option<ThreadRandom>> = const { RefCell::new(None) };
}

/// Fills `dest` with cryptographically secure random bytes.
pub(crate) fn fill(dest: &mut [u8]) -> Result<(), getrandom::Error> {
    RANDOM.with(|cell| {
        let mut slot = cell.borrow_mut();
        let stale = slot
            .as_ref()
            .is_none_or(|r| r.produced.saturating_add(dest.len()) > RESEED_AFTER);
        if stale {
            let mut seed = [0u8; 32];
            getrandom::fill(&mut seed)?;
            *slot = Some(ThreadRandom {
                rng: ChaCha20Rng::from_seed(seed),
                produced: 0,
            });
            zeroize::Zeroize::zeroize(&mut seed);
        }
        if let Some(r) = slot.as_mut() {
            r.rng.fill_bytes(dest);
            r.produced = r.produced.saturating_add(dest.len());
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draws_differ_and_survive_reseeding() {
        let mut seen = std::collections::HashSet::new();
        // Enough 40-byte draws to cross the reseed threshold twice.
        for _ in 0..(2 * RESEED_AFTER / 40 + 10) {
            let mut bytes = [0u8; 40];
            fill(&mut bytes).expect("random");
            assert!(seen.insert(bytes), "a draw repeated");
        }
    }

    #[test]
    fn threads_draw_different_streams() {
        let draw = || {
            let mut b = [0u8; 32];
            fill(&mut b).expect("random");
            b
        };
        let other = std::thread::spawn(draw).join().expect("thread");
        assert_ne!(draw(), other);
    }
}

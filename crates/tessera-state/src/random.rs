//! Randomness for ticket ids and nonces: a per-thread ChaCha20 generator
//! seeded from the operating system and reseeded after [`RESEED_AFTER`]
//! bytes, and in a process other than the one that seeded it: a forked child
//! inherits the parent's generator state and would otherwise draw the same
//! nonces. Sealing a ticket costs no `getrandom` call.

use std::cell::RefCell;

use chacha20::ChaCha20Rng;
use chacha20::rand_core::{Rng as _, SeedableRng as _};

/// Output after which a thread's generator takes a fresh seed from the OS.
const RESEED_AFTER: usize = 64 * 1024;

/// A thread's generator and how much it has produced since its seed.
struct ThreadRandom {
    rng: ChaCha20Rng,
    produced: usize,
    /// The process that seeded it.
    pid: u32,
}

thread_local! {
    static RANDOM: RefCell<Option<ThreadRandom>> = const { RefCell::new(None) };
}

/// Fills `dest` with cryptographically secure random bytes.
pub(crate) fn fill(dest: &mut [u8]) -> Result<(), getrandom::Error> {
    fill_in(current_pid(), dest)
}

/// A random identifier: 128 bits as 32 lowercase hex digits (e.g. a task id
/// no third party can guess); `None` when the operating system has no randomness to give.
pub fn random_id() -> Option<String> {
    let mut bytes = [0u8; 16];
    fill(&mut bytes).ok()?;
    Some(crate::lower_hex(&bytes))
}

/// The id of this process (where processes can fork; elsewhere a constant).
fn current_pid() -> u32 {
    #[cfg(unix)]
    {
        std::process::id()
    }
    #[cfg(not(unix))]
    {
        0
    }
}

/// [`fill`] as process `pid`.
fn fill_in(pid: u32, dest: &mut [u8]) -> Result<(), getrandom::Error> {
    RANDOM.with(|cell| {
        let mut slot = cell.borrow_mut();
        let stale = slot
            .as_ref()
            .is_none_or(|r| r.pid != pid || r.produced.saturating_add(dest.len()) > RESEED_AFTER);
        if stale {
            let mut seed = [0u8; 32];
            getrandom::fill(&mut seed)?;
            *slot = Some(ThreadRandom {
                rng: ChaCha20Rng::from_seed(seed),
                produced: 0,
                pid,
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

    /// Issue #14, 9: the generator reseeds after `fork`. A child has the
    /// parent's thread-local state; seen from another pid it is reseeded, so
    /// the child's draws are not the parent's continuation.
    #[test]
    fn another_process_reseeds_instead_of_continuing_the_stream() {
        let parent = current_pid();
        let mut first = [0u8; 32];
        fill_in(parent, &mut first).expect("random");
        let state_after = |f: &dyn Fn(&ThreadRandom) -> (usize, u32)| {
            RANDOM.with(|c| c.borrow().as_ref().map(f)).expect("seeded")
        };
        let (produced, pid) = state_after(&|r| (r.produced, r.pid));
        assert_eq!(pid, parent);
        assert!(produced >= 32);
        // What the parent's stream would give next, from its seed and position.
        let mut continuation = [0u8; 32];
        RANDOM.with(|c| {
            let slot = c.borrow();
            let rng = &slot.as_ref().expect("seeded").rng;
            let mut copy = ChaCha20Rng::from_seed(rng.get_seed());
            copy.set_word_pos(rng.get_word_pos());
            copy.fill_bytes(&mut continuation);
        });
        let mut child = [0u8; 32];
        fill_in(parent.wrapping_add(1), &mut child).expect("random");
        assert_ne!(
            child, continuation,
            "a forked child must not continue the parent's stream"
        );
        assert_eq!(
            state_after(&|r| (r.produced, r.pid)),
            (32, parent.wrapping_add(1))
        );
    }

    #[test]
    fn ids_are_32_lowercase_hex_digits_of_the_drawn_bytes() {
        let a = random_id().expect("random");
        let b = random_id().expect("random");
        assert_ne!(a, b);
        for id in [&a, &b] {
            assert_eq!(id.len(), 32, "{id}");
            assert!(
                id.bytes().all(|c| matches!(c, b'0'..=b'9' | b'a'..=b'f')),
                "{id}"
            );
        }
        // Every nibble value appears over enough ids: no digit is missing from the table.
        let seen: std::collections::HashSet<u8> = (0..64)
            .flat_map(|_| random_id().expect("random").into_bytes())
            .collect();
        assert_eq!(seen.len(), 16);
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

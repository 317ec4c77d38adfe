//! The one clock: wall time and elapsed time, on every target. `std`'s
//! clocks panic on `wasm32-unknown-unknown`; `web-time` reads `Date.now()`
//! and `performance.now()` there and is `std` elsewhere.

pub use web_time::{Instant, SystemTime, UNIX_EPOCH};

/// Now, in whole seconds since the unix epoch (0 before it).
pub fn unix_seconds() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

#[cfg(test)]
mod tests {
    #[test]
    fn now_is_after_2024() {
        assert!(super::unix_seconds() > 1_704_067_200);
    }
}

//! The wall clock, in unix seconds.
//!
//! Every time-dependent operation also has an `*_at` variant that takes the
//! time as an argument, so tests (and hosts with their own clock) inject it.

/// Seconds since the unix epoch; 0 if the clock reads earlier than 1970.
#[cfg(not(all(target_arch = "wasm32", target_os = "unknown", feature = "wasm")))]
pub(crate) fn unix_now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs())
}

/// Seconds since the unix epoch, from JavaScript's `Date.now()` (`SystemTime` panics on this target).
#[cfg(all(target_arch = "wasm32", target_os = "unknown", feature = "wasm"))]
pub(crate) fn unix_now() -> u64 {
    let millis = js_sys::Date::now();
    if millis.is_finite() && millis > 0.0 {
        // Float-to-int `as` saturates; it cannot panic.
        (millis / 1000.0) as u64
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn now_is_after_2024() {
        assert!(super::unix_now() > 1_704_067_200);
    }
}

//! RFC 3339 timestamps in UTC, as the wire carries them (a task's
//! `createdAt`) and as logs print them, written by `humantime`.

use std::fmt;

use crate::clock::{SystemTime, UNIX_EPOCH};

/// A time written as RFC 3339 in UTC with a fixed number of fraction digits.
///
/// ```
/// use std::time::Duration;
/// use tessera_protocol::Rfc3339;
/// use tessera_protocol::clock::UNIX_EPOCH;
///
/// let t = UNIX_EPOCH + Duration::from_millis(1_764_584_400_123);
/// assert_eq!(Rfc3339::millis(t).to_string(), "2025-12-01T10:20:00.123Z");
/// assert_eq!(Rfc3339::micros(t).to_string(), "2025-12-01T10:20:00.123000Z");
/// ```
#[derive(Debug, Clone, Copy)]
pub struct Rfc3339 {
    time: SystemTime,
    micros: bool,
}

impl Rfc3339 {
    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`.
    pub fn millis(time: SystemTime) -> Self {
        Self {
            time,
            micros: false,
        }
    }

    /// `YYYY-MM-DDTHH:MM:SS.uuuuuuZ`.
    pub fn micros(time: SystemTime) -> Self {
        Self { time, micros: true }
    }
}

impl fmt::Display for Rfc3339 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // humantime writes `std` times; building one from the epoch works on
        // every target (only reading `std`'s clock does not). Times before
        // 1970 are written as the epoch.
        let since = self.time.duration_since(UNIX_EPOCH).unwrap_or_default();
        let time = std::time::UNIX_EPOCH + since;
        if self.micros {
            write!(f, "{}", humantime::format_rfc3339_micros(time))
        } else {
            write!(f, "{}", humantime::format_rfc3339_millis(time))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn leap_days_and_the_epoch() {
        let t = UNIX_EPOCH + Duration::from_secs(951_782_400); // 2000-02-29
        assert_eq!(Rfc3339::millis(t).to_string(), "2000-02-29T00:00:00.000Z");
        assert_eq!(
            Rfc3339::millis(UNIX_EPOCH).to_string(),
            "1970-01-01T00:00:00.000Z"
        );
    }
}

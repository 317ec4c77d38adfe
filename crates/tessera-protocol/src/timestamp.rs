//! RFC 3339 timestamps in UTC, as the wire carries them (a task's
//! `createdAt`) and as logs print them.

use std::fmt;
use std::time::{SystemTime, UNIX_EPOCH};

/// A time written as RFC 3339 in UTC with a fixed number of fraction digits.
///
/// ```
/// use std::time::{Duration, UNIX_EPOCH};
/// use tessera_protocol::Rfc3339;
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
        // Times before 1970 are written as the epoch.
        let since = self.time.duration_since(UNIX_EPOCH).unwrap_or_default();
        let secs = since.as_secs();
        let (days, rest) = (secs / 86_400, secs % 86_400);
        // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
        let z = days as i64 + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        let year = yoe + era * 400 + i64::from(month <= 2);
        write!(
            f,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.",
            rest / 3600,
            rest % 3600 / 60,
            rest % 60
        )?;
        if self.micros {
            write!(f, "{:06}Z", since.subsec_micros())
        } else {
            write!(f, "{:03}Z", since.subsec_millis())
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn dates_across_eras_and_leap_days() {
        assert_eq!(
            Rfc3339::millis(UNIX_EPOCH).to_string(),
            "1970-01-01T00:00:00.000Z"
        );
        let leap = UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(
            Rfc3339::millis(leap).to_string(),
            "2000-02-29T00:00:00.000Z"
        );
        let end = UNIX_EPOCH + Duration::from_micros(4_102_444_799_999_999);
        assert_eq!(
            Rfc3339::micros(end).to_string(),
            "2099-12-31T23:59:59.999999Z"
        );
    }
}

//! The request log's clock. `std`'s clocks panic on `wasm32-unknown-unknown`;
//! there the JavaScript clock (`Date.now()`) is used with the `wasm` feature,
//! and no clock at all (zero latency, the epoch) without it.

use std::time::{Duration, SystemTime};

#[cfg(not(all(target_arch = "wasm32", target_os = "unknown")))]
mod imp {
    use std::time::{Duration, Instant, SystemTime};

    /// When a request started.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct Started(Instant);

    pub(crate) fn start() -> Started {
        Started(Instant::now())
    }

    pub(crate) fn elapsed(started: Started) -> Duration {
        started.0.elapsed()
    }

    pub(crate) fn wall() -> SystemTime {
        SystemTime::now()
    }
}

#[cfg(all(target_arch = "wasm32", target_os = "unknown"))]
mod imp {
    use std::time::{Duration, SystemTime, UNIX_EPOCH};

    /// When a request started, in milliseconds since the epoch.
    #[derive(Debug, Clone, Copy)]
    pub(crate) struct Started(f64);

    fn millis() -> f64 {
        #[cfg(feature = "wasm")]
        return js_sys::Date::now();
        #[cfg(not(feature = "wasm"))]
        return 0.0;
    }

    pub(crate) fn start() -> Started {
        Started(millis())
    }

    pub(crate) fn elapsed(started: Started) -> Duration {
        Duration::from_secs_f64(((millis() - started.0) / 1000.0).max(0.0))
    }

    pub(crate) fn wall() -> SystemTime {
        UNIX_EPOCH + Duration::from_secs_f64(millis().max(0.0) / 1000.0)
    }
}

pub(crate) use imp::Started;

/// Starts timing a request.
pub(crate) fn start() -> Started {
    imp::start()
}

/// Time since `started`.
pub(crate) fn elapsed(started: Started) -> Duration {
    imp::elapsed(started)
}

/// The wall clock.
pub(crate) fn wall() -> SystemTime {
    imp::wall()
}

//! Errors of the requestState codec, its keys, its configuration and the ticket ledger.
//!
//! # One wire error for every rejection
//!
//! [`OpenError`] tells the *server* why a ticket was refused, for logs and
//! metrics ([`OpenError::reason`]). The *client* must not learn which check
//! failed: a server maps every [`OpenError`] (and a ledger's
//! [`LedgerError::AlreadyUsed`]) to the same JSON-RPC error,
//! code [`WIRE_CODE`] (`-32602`), message [`WIRE_MESSAGE`] and data
//! `{"reason": WIRE_REASON}`:
//!
//! ```json
//! {"code": -32602, "message": "Invalid or expired requestState",
//!  "data": {"reason": "invalid_request_state"}}
//! ```

use crate::key::KeyId;

/// JSON-RPC error code a server answers with for any rejected requestState (Invalid params).
pub const WIRE_CODE: i32 = -32602;

/// JSON-RPC error message a server answers with for any rejected requestState.
pub const WIRE_MESSAGE: &str = "Invalid or expired requestState";

/// Value of `data.reason` in the JSON-RPC error a server answers with for any rejected requestState.
pub const WIRE_REASON: &str = "invalid_request_state";

/// Why a requestState ticket was refused; map every variant to one wire error.
///
/// The variants tell the *server* why, for logs and metrics
/// ([`OpenError::reason`]). The *client* must not learn which check failed:
/// a server answers every `OpenError` (and a ledger's
/// [`LedgerError::AlreadyUsed`]) with the same JSON-RPC error, code
/// [`WIRE_CODE`], message [`WIRE_MESSAGE`] and data `{"reason": WIRE_REASON}`:
///
/// ```json
/// {"code": -32602, "message": "Invalid or expired requestState",
///  "data": {"reason": "invalid_request_state"}}
/// ```
///
/// ```
/// use serde_json::json;
/// use tessera_state::{OpenError, WIRE_CODE, WIRE_MESSAGE, WIRE_REASON};
///
/// fn to_wire(error: &OpenError) -> serde_json::Value {
///     // Log `error.reason()` (and `error` itself) server-side; send only this.
///     let _ = error.reason();
///     json!({"code": WIRE_CODE, "message": WIRE_MESSAGE, "data": {"reason": WIRE_REASON}})
/// }
/// assert_eq!(
///     to_wire(&OpenError::BindingMismatch),
///     to_wire(&OpenError::Expired { expires_at: 1, now: 2 }),
/// );
/// ```
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum OpenError {
    /// The token is not of the form `t1e.<kid>.<body>` or `t1s.<kid>.<payload>.<mac>`, or a part is not valid.
    #[error("requestState is malformed: {detail}")]
    Malformed {
        /// Which structural check failed (a fixed string, never input).
        detail: &'static str,
    },
    /// The token names a key id that is not in the key ring (rotated out, or forged).
    #[error("requestState was sealed with key id `{key_id}`, which is not in the key ring")]
    UnknownKey {
        /// The key id named by the token (syntax already validated: 1..=16 of `[A-Za-z0-9_-]`).
        key_id: KeyId,
    },
    /// Decryption or MAC verification failed: the token was altered or sealed with another secret.
    #[error("requestState failed its integrity check")]
    Integrity,
    /// The ticket's expiry has passed.
    #[error("requestState expired at {expires_at} (now {now})")]
    Expired {
        /// Expiry of the ticket, unix seconds.
        expires_at: u64,
        /// The time it was checked against, unix seconds.
        now: u64,
    },
    /// The ticket was issued more than the allowed clock skew in the future.
    #[error("requestState was issued at {issued_at}, too far after now ({now})")]
    NotYetValid {
        /// Issue time of the ticket, unix seconds.
        issued_at: u64,
        /// The time it was checked against, unix seconds.
        now: u64,
    },
    /// The ticket was minted for another method, target, arguments, principal or audience.
    #[error("requestState was minted for a different request")]
    BindingMismatch,
    /// The token is longer than the codec's size budget (checked before any decoding or crypto).
    #[error("requestState is {len} bytes; the limit is {max}")]
    TooLarge {
        /// Length of the token in bytes.
        len: usize,
        /// The codec's budget in bytes.
        max: usize,
    },
    /// The ticket is authentic but its payload does not deserialize into the requested type.
    #[error("requestState payload does not have the expected shape: {0}")]
    Payload(#[source] serde_json::Error),
}

impl OpenError {
    /// A short snake_case label for logs and metrics (never sent to the client).
    ///
    /// ```
    /// use tessera_state::OpenError;
    /// assert_eq!(OpenError::Integrity.reason(), "integrity");
    /// ```
    pub fn reason(&self) -> &'static str {
        match self {
            Self::Malformed { .. } => "malformed",
            Self::UnknownKey { .. } => "unknown_key",
            Self::Integrity => "integrity",
            Self::Expired { .. } => "expired",
            Self::NotYetValid { .. } => "not_yet_valid",
            Self::BindingMismatch => "binding_mismatch",
            Self::TooLarge { .. } => "too_large",
            Self::Payload(_) => "payload",
        }
    }
}

/// Why a ticket could not be sealed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum SealError {
    /// The sealed token would exceed the codec's size budget.
    #[error("sealed requestState would be {len} bytes; the limit is {max}")]
    TooLarge {
        /// Length the token would have, in bytes.
        len: usize,
        /// The codec's budget in bytes.
        max: usize,
    },
    /// The payload could not be serialized to JSON (e.g. a map with non-string keys).
    #[error("requestState payload cannot be serialized to JSON: {0}")]
    Payload(#[source] serde_json::Error),
    /// The operating system's random number generator failed.
    #[error("no randomness for a requestState ticket: {0}")]
    Random(getrandom::Error),
    /// The AEAD refused to encrypt (not expected for inputs within the size budget).
    #[error("requestState encryption failed")]
    Cipher,
}

/// Why a codec configuration was refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ConfigError {
    /// The time to live is under one second or over the maximum.
    #[error(
        "requestState TTL must be between 1 and {max_secs} seconds (got {got_secs} whole seconds)"
    )]
    InvalidTtl {
        /// The TTL asked for, in whole seconds.
        got_secs: u64,
        /// The largest TTL allowed, in seconds.
        max_secs: u64,
    },
    /// The size budget is too small to hold any ticket.
    #[error("requestState size budget must be at least {min} bytes (got {got})")]
    BudgetTooSmall {
        /// The budget asked for, in bytes.
        got: usize,
        /// The smallest budget allowed, in bytes.
        min: usize,
    },
}

/// Why a ticket ledger refused to record a ticket as used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LedgerError {
    /// The ticket was already consumed: this is a replay.
    #[error("requestState ticket was already used")]
    AlreadyUsed,
    /// The ledger is full of unexpired tickets; it refuses rather than forget one (fail closed).
    #[error(
        "requestState ledger is full ({capacity} unexpired tickets; a place frees in {retry_after_secs} s)"
    )]
    LedgerFull {
        /// The ledger's capacity.
        capacity: usize,
        /// Seconds until the oldest entry expires and frees a place.
        retry_after_secs: u64,
    },
    /// The ledger's backing store failed (for ledgers other than `MemoryLedger`).
    #[error("requestState ledger backend failed: {0}")]
    Backend(#[source] Box<dyn std::error::Error + Send + Sync>),
}

impl LedgerError {
    /// A short snake_case label for logs and metrics.
    ///
    /// ```
    /// use tessera_state::LedgerError;
    /// assert_eq!(LedgerError::AlreadyUsed.reason(), "already_used");
    /// ```
    pub fn reason(&self) -> &'static str {
        match self {
            Self::AlreadyUsed => "already_used",
            Self::LedgerFull { .. } => "ledger_full",
            Self::Backend(_) => "backend",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_are_the_documented_ones() {
        assert_eq!(WIRE_CODE, -32602);
        assert_eq!(WIRE_MESSAGE, "Invalid or expired requestState");
        assert_eq!(WIRE_REASON, "invalid_request_state");
    }

    #[test]
    fn reasons_are_distinct_snake_case() {
        let errors = [
            OpenError::Malformed { detail: "x" },
            OpenError::UnknownKey {
                key_id: KeyId::new("k9").expect("valid id"),
            },
            OpenError::Integrity,
            OpenError::Expired {
                expires_at: 1,
                now: 2,
            },
            OpenError::NotYetValid {
                issued_at: 100,
                now: 1,
            },
            OpenError::BindingMismatch,
            OpenError::TooLarge { len: 2, max: 1 },
            OpenError::Payload(serde_json::from_str::<u8>("\"x\"").expect_err("not a u8")),
        ];
        let mut seen = std::collections::HashSet::new();
        for error in &errors {
            let reason = error.reason();
            assert!(
                reason.bytes().all(|b| b.is_ascii_lowercase() || b == b'_'),
                "{reason}"
            );
            assert!(seen.insert(reason), "duplicate reason {reason}");
        }
    }

    #[test]
    fn too_short_message_names_length_minimum_and_remedy() {
        let message = crate::KeyError::TooShort { len: 31 }.to_string();
        assert_eq!(
            message,
            "requestState key is 31 bytes; at least 32 are required \
             (make one with `openssl rand -base64 32`)"
        );
    }
}

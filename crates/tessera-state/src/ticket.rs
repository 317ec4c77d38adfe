//! The claims a ticket carries, and what opening one yields.
//!
//! Claims are one JSON object, encrypted (`t1e`) or signed (`t1s`):
//!
//! ```json
//! {"iat":1767225600,"exp":1767226200,"jti":"q3Jb0XlbT1k9yWc3M0f4yg",
//!  "bnd":"<base64url sha256 binding digest>","data":<payload>}
//! ```
//!
//! - `iat`: issued-at, unix seconds.
//! - `exp`: expiry, unix seconds; the ticket opens while `now < exp`.
//! - `jti`: ticket id, 128 random bits as 22 base64url characters; the key for single use.
//! - `bnd`: the [`BindingDigest`](crate::BindingDigest) in base64url.
//! - `data`: the typed payload (the handler's state), as JSON.

use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// Number of random bytes in a ticket id.
pub(crate) const TICKET_ID_BYTES: usize = 16;

/// Claims as sealed.
#[derive(Serialize)]
pub(crate) struct ClaimsOut<'a, T: ?Sized> {
    pub(crate) iat: u64,
    pub(crate) exp: u64,
    pub(crate) jti: &'a str,
    pub(crate) bnd: &'a str,
    pub(crate) data: &'a T,
}

/// Claims as opened, with the payload of type `D`: typed in one pass when
/// it fits, raw JSON (to report why it does not) otherwise.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct ClaimsIn<'a, D = &'a RawValue> {
    pub(crate) iat: u64,
    pub(crate) exp: u64,
    #[serde(borrow)]
    pub(crate) jti: &'a str,
    #[serde(borrow)]
    pub(crate) bnd: &'a str,
    pub(crate) data: D,
}

/// A ticket that opened: its typed payload and its claims.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Opened<T> {
    /// The state the handler sealed.
    pub payload: T,
    /// The random ticket id (22 base64url characters); pass it to a [`TicketLedger`](crate::TicketLedger) for single use.
    pub ticket_id: String,
    /// When the ticket was sealed, unix seconds.
    pub issued_at: u64,
    /// When the ticket stops opening, unix seconds.
    pub expires_at: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_round_trip_with_raw_payload() {
        let out = ClaimsOut {
            iat: 1,
            exp: 2,
            jti: "id",
            bnd: "b",
            data: &serde_json::json!({"k": [1, 2]}),
        };
        let text = serde_json::to_string(&out).expect("serialize");
        assert_eq!(
            text,
            r#"{"iat":1,"exp":2,"jti":"id","bnd":"b","data":{"k":[1,2]}}"#
        );
        let back: ClaimsIn<'_> = serde_json::from_str(&text).expect("deserialize");
        assert_eq!((back.iat, back.exp, back.jti, back.bnd), (1, 2, "id", "b"));
        assert_eq!(back.data.get(), r#"{"k":[1,2]}"#);
    }

    #[test]
    fn unknown_and_missing_claims_are_refused() {
        assert!(
            serde_json::from_str::<ClaimsIn<'_>>(
                r#"{"iat":1,"exp":2,"jti":"id","bnd":"b","data":1,"x":0}"#
            )
            .is_err()
        );
        assert!(
            serde_json::from_str::<ClaimsIn<'_>>(r#"{"iat":1,"exp":2,"jti":"id","bnd":"b"}"#)
                .is_err()
        );
    }
}

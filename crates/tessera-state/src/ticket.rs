//! The claims a ticket carries, and what opening one yields.
//!
//! Claims are a fixed 64-byte header followed by the payload as JSON, the
//! whole encrypted (`t1e`) or signed (`t1s`):
//!
//! | bytes | claim |
//! |---|---|
//! | 0..8 | `iat`: issued-at, unix seconds, big-endian |
//! | 8..16 | `exp`: expiry, unix seconds, big-endian; the ticket opens while `now < exp` |
//! | 16..32 | `jti`: ticket id, 128 random bits; the key for single use |
//! | 32..64 | `bnd`: the [`BindingDigest`](crate::BindingDigest) |
//! | 64.. | `data`: the typed payload (the handler's state), as JSON |

/// Number of random bytes in a ticket id.
pub(crate) const TICKET_ID_BYTES: usize = 16;

/// Length of the fixed claims before the payload.
pub(crate) const CLAIMS_LEN: usize = 8 + 8 + TICKET_ID_BYTES + 32;

/// The fixed claims of a ticket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Claims {
    pub(crate) iat: u64,
    pub(crate) exp: u64,
    pub(crate) jti: [u8; TICKET_ID_BYTES],
    pub(crate) bnd: [u8; 32],
}

impl Claims {
    /// Appends the claims in their fixed layout.
    pub(crate) fn write(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.iat.to_be_bytes());
        out.extend_from_slice(&self.exp.to_be_bytes());
        out.extend_from_slice(&self.jti);
        out.extend_from_slice(&self.bnd);
    }

    /// Splits opened bytes into the claims and the payload JSON; `None` when too short.
    pub(crate) fn read(bytes: &[u8]) -> Option<(Self, &[u8])> {
        let (iat, rest) = bytes.split_first_chunk::<8>()?;
        let (exp, rest) = rest.split_first_chunk::<8>()?;
        let (jti, rest) = rest.split_first_chunk::<TICKET_ID_BYTES>()?;
        let (bnd, data) = rest.split_first_chunk::<32>()?;
        let claims = Self {
            iat: u64::from_be_bytes(*iat),
            exp: u64::from_be_bytes(*exp),
            jti: *jti,
            bnd: *bnd,
        };
        Some((claims, data))
    }
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
    /// The expiry sealed in the ticket (`exp`), unix seconds. An instance
    /// with a shorter TTL stops opening it earlier, but one with a longer TTL
    /// (or a clock running behind, within the skew) may open it until then:
    /// a shared ledger must remember it until `expires_at` plus
    /// [`MAX_CLOCK_SKEW_SECS`](crate::MAX_CLOCK_SKEW_SECS).
    pub expires_at: u64,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_round_trip_in_their_fixed_layout() {
        let claims = Claims {
            iat: 1,
            exp: 0x0102_0304_0506_0708,
            jti: [7; TICKET_ID_BYTES],
            bnd: [9; 32],
        };
        let mut bytes = Vec::new();
        claims.write(&mut bytes);
        assert_eq!(bytes.len(), CLAIMS_LEN);
        assert_eq!(
            bytes[..16],
            [0, 0, 0, 0, 0, 0, 0, 1, 1, 2, 3, 4, 5, 6, 7, 8]
        );
        bytes.extend_from_slice(br#"{"k":[1,2]}"#);
        let (back, data) = Claims::read(&bytes).expect("long enough");
        assert_eq!(back, claims);
        assert_eq!(data, br#"{"k":[1,2]}"#);
    }

    #[test]
    fn short_claims_are_refused() {
        for len in [0, 8, 16, 32, CLAIMS_LEN - 1] {
            assert!(Claims::read(&vec![0; len]).is_none(), "{len} bytes");
        }
        assert_eq!(
            Claims::read(&[0; CLAIMS_LEN]).map(|(_, d)| d.len()),
            Some(0)
        );
    }
}

//! The textual token format: splitting a token into its parts, and base64.
//!
//! ```text
//! t1e.<kid>.<base64url(nonce[24] || ciphertext || tag[16])>
//!     AAD = the ASCII bytes "t1e.<kid>."
//! t1s.<kid>.<base64url(claims)>.<base64url(hmac[32])>
//!     MAC input = the ASCII bytes "t1s.<kid>.<base64url(claims)>"
//! ```
//!
//! Base64 is URL-safe without padding and decoded strictly: padding,
//! whitespace and non-zero trailing bits are refused, so every token has one
//! spelling and any change to a character changes the authenticated bytes or
//! fails to decode.

use crate::error::OpenError;
use crate::key::check_key_id;
use crate::mode::{ENCRYPTED_PREFIX, SIGNED_PREFIX};

/// The base64 of the format: URL-safe alphabet, no padding, canonical
/// decoding. `base64-simd` vectorises where the CPU allows (SSE4.1 and AVX2
/// detected at run time, NEON; wasm32 only when built with `+simd128`) and
/// falls back to tables elsewhere: a counter flow's two tickets cost about
/// 1,700 instructions to encode and decode with it,
/// against about 7,800 with the `base64` crate's general-purpose engine
/// (`bench/instructions`).
pub(crate) const B64: base64_simd::Base64 = base64_simd::URL_SAFE_NO_PAD;

pub(crate) use crate::aead::{NONCE_LEN, TAG_LEN};
/// Length of an HMAC-SHA256 tag.
pub(crate) const MAC_LEN: usize = 32;
/// Length of an HMAC-SHA256 tag in unpadded base64.
pub(crate) const MAC_B64_LEN: usize = 43;

/// A token split into its parts, not yet authenticated.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Parts<'a> {
    /// `t1e.<kid>.<body>`.
    Encrypted {
        /// The key id (syntax checked).
        kid: &'a str,
        /// `t1e.<kid>.`, the AEAD associated data.
        aad: &'a str,
        /// Base64 of nonce, ciphertext and tag.
        body: &'a str,
    },
    /// `t1s.<kid>.<payload>.<mac>`.
    Signed {
        /// The key id (syntax checked).
        kid: &'a str,
        /// `t1s.<kid>.<payload>`, the MAC input.
        signed: &'a str,
        /// Base64 of the claims.
        payload: &'a str,
        /// Base64 of the MAC.
        mac: &'a str,
    },
}

/// Splits a token into its parts; checks structure only, not authenticity.
pub(crate) fn split(token: &str) -> Result<Parts<'_>, OpenError> {
    let malformed = |detail| OpenError::Malformed { detail };
    let (version, rest) = token
        .split_once('.')
        .ok_or(malformed("no `.` after the version"))?;
    let (kid, rest) = rest
        .split_once('.')
        .ok_or(malformed("no `.` after the key id"))?;
    check_key_id(kid).map_err(|_| malformed("invalid key id"))?;
    // version + '.' + kid + '.', all ASCII (the kid was just checked, the
    // version is compared below), so this is a char boundary when it is in range.
    let header_len = version.len() + kid.len() + 2;
    match version {
        ENCRYPTED_PREFIX => {
            if rest.is_empty() || rest.contains('.') {
                return Err(malformed("encrypted token must have three parts"));
            }
            let aad = token.get(..header_len).ok_or(malformed("header"))?;
            Ok(Parts::Encrypted {
                kid,
                aad,
                body: rest,
            })
        }
        SIGNED_PREFIX => {
            let (payload, mac) = rest
                .split_once('.')
                .ok_or(malformed("signed token must have four parts"))?;
            if payload.is_empty() || mac.contains('.') {
                return Err(malformed("signed token must have four parts"));
            }
            if mac.len() != MAC_B64_LEN {
                return Err(malformed("signature has the wrong length"));
            }
            let signed = token
                .get(..header_len + payload.len())
                .ok_or(malformed("header"))?;
            Ok(Parts::Signed {
                kid,
                signed,
                payload,
                mac,
            })
        }
        _ => Err(malformed("unknown version prefix")),
    }
}

/// Unpadded base64 length of `len` bytes.
pub(crate) fn b64_len(len: usize) -> usize {
    // 4 characters per 3 bytes, rounded up; saturating so huge inputs just fail the budget.
    len.saturating_mul(4).div_ceil(3)
}

#[cfg(test)]
mod tests {

    use super::*;

    #[test]
    fn splits_encrypted_tokens() {
        assert_eq!(
            split("t1e.k1.QUJD").expect("valid"),
            Parts::Encrypted {
                kid: "k1",
                aad: "t1e.k1.",
                body: "QUJD"
            }
        );
    }

    #[test]
    fn splits_signed_tokens() {
        let mac = "A".repeat(43);
        let token = format!("t1s.key-2.e30.{mac}");
        assert_eq!(
            split(&token).expect("valid"),
            Parts::Signed {
                kid: "key-2",
                signed: "t1s.key-2.e30",
                payload: "e30",
                mac: &mac,
            }
        );
    }

    #[test]
    fn refuses_bad_structure() {
        let mac = "A".repeat(43);
        let bad = [
            String::new(),
            ".".to_owned(),
            "t1e".to_owned(),
            "t1e.".to_owned(),
            "t1e.k1".to_owned(),
            "t1e.k1.".to_owned(),
            "t1e..QUJD".to_owned(),
            "t1e.k1.QU.JD".to_owned(),
            "t2e.k1.QUJD".to_owned(),
            "T1E.k1.QUJD".to_owned(),
            "t1e.k!.QUJD".to_owned(),
            "t1e.0123456789abcdefg.QUJD".to_owned(),
            "t1s.k1.e30".to_owned(),
            format!("t1s.k1..{mac}"),
            "t1s.k1.e30.AAAA".to_owned(),
            format!("t1s.k1.e30.{mac}.x"),
            format!("t1s.k1.e30.{mac}A"),
            "t1é.k1.QUJD".to_owned(),
        ];
        for token in bad {
            assert!(
                matches!(split(&token), Err(OpenError::Malformed { .. })),
                "{token:?}"
            );
        }
    }

    #[test]
    fn base64_is_strict() {
        assert!(B64.decode_to_vec("QUJD").is_ok());
        assert!(B64.decode_to_vec("QUI").is_ok());
        // Non-zero trailing bits, padding and whitespace are refused.
        assert!(B64.decode_to_vec("QUJ").is_err());
        assert!(B64.decode_to_vec("QUI=").is_err());
        assert!(B64.decode_to_vec("QU JD").is_err());
        assert!(B64.decode_to_vec("QUJD+").is_err());
    }

    #[test]
    fn b64_len_matches_the_encoder() {
        for len in 0..100 {
            assert_eq!(b64_len(len), B64.encode_to_string(vec![0u8; len]).len());
        }
    }
}

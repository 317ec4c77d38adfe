//! Purpose-specific subkeys derived from a secret with HKDF-SHA256.
//!
//! One secret never keys two algorithms: the AEAD key and the MAC key are
//! separate HKDF-Expand outputs with distinct `info` strings. Both cipher
//! instances are built once, when the key enters a [`KeyRing`](crate::KeyRing),
//! and are zeroized on drop.

use hkdf::Hkdf;
use hmac::Hmac;
use hmac::digest::KeyInit;
use sha2::Sha256;
use zeroize::Zeroizing;

/// HKDF salt (domain separation from any other use of the same secret).
const HKDF_SALT: &[u8] = b"tessera/requestState/v1";
/// HKDF info for the XChaCha20-Poly1305 key (32 bytes).
const INFO_AEAD: &[u8] = b"tessera/requestState/v1/aead";
/// HKDF info for the HMAC-SHA256 key (32 bytes).
const INFO_MAC: &[u8] = b"tessera/requestState/v1/mac";

/// HMAC-SHA256, keyed once and cloned per message.
pub(crate) type HmacSha256 = Hmac<Sha256>;

/// An HKDF output or a cipher key of the wrong length (not expected: the lengths are fixed).
#[derive(Debug)]
pub(crate) struct DeriveFailed;

/// The keyed primitives of one ring entry.
pub(crate) struct SubKeys {
    /// Encrypts and decrypts `t1e` tickets.
    pub(crate) aead: crate::aead::XChaCha20Poly1305,
    /// Signs and verifies `t1s` tickets; clone it for each message (cheap: two hash states).
    pub(crate) mac: HmacSha256,
}

impl SubKeys {
    /// Derives both subkeys from `secret` (a key's bytes).
    pub(crate) fn derive(secret: &[u8]) -> Result<Self, DeriveFailed> {
        let hkdf = Hkdf::<Sha256>::new(Some(HKDF_SALT), secret);

        let mut aead_key = Zeroizing::new([0u8; 32]);
        hkdf.expand(INFO_AEAD, aead_key.as_mut_slice())
            .map_err(|_| DeriveFailed)?;
        let aead = crate::aead::XChaCha20Poly1305::new(&aead_key);

        let mut mac_key = Zeroizing::new([0u8; 32]);
        hkdf.expand(INFO_MAC, mac_key.as_mut_slice())
            .map_err(|_| DeriveFailed)?;
        let mac = <HmacSha256 as KeyInit>::new_from_slice(mac_key.as_slice())
            .map_err(|_| DeriveFailed)?;

        Ok(Self { aead, mac })
    }
}

#[cfg(test)]
mod tests {
    use hmac::Mac;

    use super::*;

    /// RFC 5869 test case 1, so the HKDF wiring is the standard one.
    #[test]
    fn hkdf_matches_rfc5869_case_1() {
        let ikm = [0x0bu8; 22];
        let salt: Vec<u8> = (0x00u8..=0x0c).collect();
        let info: Vec<u8> = (0xf0u8..=0xf9).collect();
        let mut okm = [0u8; 42];
        Hkdf::<Sha256>::new(Some(&salt), &ikm)
            .expand(&info, &mut okm)
            .expect("42 bytes is a valid HKDF length");
        let expected =
            "3cb25f25faacd57a90434f64d0362f2a2d2d0a90cf1a5a4c5db02d56ecc4c5bf34007208d5b887185865";
        assert_eq!(crate::lower_hex(&okm), expected);
    }

    #[test]
    fn aead_and_mac_subkeys_differ_per_secret() {
        let a = SubKeys::derive(&[1u8; 32]).expect("derive");
        let b = SubKeys::derive(&[2u8; 32]).expect("derive");
        let tag = |keys: &SubKeys| keys.mac.clone().chain_update(b"m").finalize().into_bytes();
        assert_ne!(tag(&a), tag(&b));
        // Deterministic: same secret, same subkeys.
        let a2 = SubKeys::derive(&[1u8; 32]).expect("derive");
        assert_eq!(tag(&a), tag(&a2));
    }
}

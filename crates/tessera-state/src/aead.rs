//! XChaCha20-Poly1305, the ticket's AEAD, from audited implementations: no
//! primitive is written here.
//!
//! The construction is the one of draft-irtf-cfrg-xchacha: HChaCha20 turns
//! the key and the nonce's first 16 bytes into a subkey, and the message is
//! sealed with the IETF ChaCha20-Poly1305 of RFC 8439 under that subkey, with
//! the nonce `0u32 || nonce[16..24]`. Tickets are byte for byte what
//! RustCrypto's `chacha20poly1305::XChaCha20Poly1305` makes, so every ticket
//! sealed before stays readable.
//!
//! - **Native targets**: ring's ChaCha20-Poly1305 (BoringSSL's assembly, the
//!   implementation rustls seals its own tickets with) under the subkey of
//!   RustCrypto's `chacha20::hchacha`. Measured in one run on the 2-core test
//!   machine (release build, 100,000 rounds, three runs), sealing and then
//!   opening a 250-byte message took 1.2–1.4 µs, against 5.6–6.1 µs with
//!   RustCrypto's `chacha20poly1305` (its Poly1305 picks an AVX2 backend at
//!   run time that cannot be inlined, slow on messages this short).
//! - **wasm32** (Cloudflare Workers): RustCrypto's `chacha20poly1305`, whose
//!   portable code has no secret-dependent branch or table; ring's would
//!   need a C toolchain for wasm32.
//!
//! The tests hold both against Wycheproof's XChaCha20-Poly1305 vectors and
//! against each other on random inputs; `fuzz/fuzz_targets/aead_differential.rs`
//! does the same under the fuzzer.

use zeroize::Zeroizing;

/// Bytes of an XChaCha20 nonce.
pub(crate) const NONCE_LEN: usize = 24;
/// Bytes of a Poly1305 tag.
pub(crate) const TAG_LEN: usize = 16;

/// Bytes of a key.
pub(crate) const KEY_LEN: usize = 32;

/// The tag did not match: the message was not sealed with this key, nonce and associated data.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Forged;

/// XChaCha20-Poly1305 under one key.
pub(crate) struct XChaCha20Poly1305 {
    key: Zeroizing<[u8; KEY_LEN]>,
}

impl XChaCha20Poly1305 {
    /// The cipher keyed with `key`.
    pub(crate) fn new(key: &[u8; KEY_LEN]) -> Self {
        Self {
            key: Zeroizing::new(*key),
        }
    }

    /// Encrypts `buffer` in place; returns the tag over `aad` and the
    /// ciphertext (`None` only past 2^38 bytes, which no ticket reaches).
    pub(crate) fn encrypt(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buffer: &mut [u8],
    ) -> Option<[u8; TAG_LEN]> {
        imp::encrypt(&self.key, nonce, aad, buffer)
    }

    /// Checks `tag` over `aad` and the ciphertext in `buffer`, then decrypts
    /// it in place. On `Err` the buffer's contents are unspecified: the
    /// caller drops it.
    pub(crate) fn decrypt(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buffer: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Forged> {
        imp::decrypt(&self.key, nonce, aad, buffer, tag)
    }
}

/// ring's ChaCha20-Poly1305 under an HChaCha20 subkey.
#[cfg(not(target_arch = "wasm32"))]
mod imp {
    use chacha20::{R20, hchacha};
    use ring::aead::{Aad, CHACHA20_POLY1305, LessSafeKey, Nonce, Tag, UnboundKey};
    use zeroize::{Zeroize, Zeroizing};

    use super::{Forged, KEY_LEN, NONCE_LEN, TAG_LEN};

    /// The IETF ChaCha20-Poly1305 key and nonce of one XChaCha20 message.
    /// (`None` never: ring refuses only a key of another length than 32 bytes.)
    fn message_key(key: &[u8; KEY_LEN], nonce: &[u8; NONCE_LEN]) -> Option<(LessSafeKey, Nonce)> {
        let mut head = [0u8; 16];
        head.copy_from_slice(&nonce[..16]);
        let mut subkey = hchacha::<R20>(key.into(), (&head).into());
        let mut bytes = Zeroizing::new([0u8; KEY_LEN]);
        bytes.copy_from_slice(&subkey);
        subkey.as_mut_slice().zeroize();
        let unbound = UnboundKey::new(&CHACHA20_POLY1305, bytes.as_slice()).ok()?;
        let mut short = [0u8; 12];
        short[4..].copy_from_slice(&nonce[16..]);
        Some((
            LessSafeKey::new(unbound),
            Nonce::assume_unique_for_key(short),
        ))
    }

    pub(super) fn encrypt(
        key: &[u8; KEY_LEN],
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buffer: &mut [u8],
    ) -> Option<[u8; TAG_LEN]> {
        let (key, nonce) = message_key(key, nonce)?;
        let tag = key
            .seal_in_place_separate_tag(nonce, Aad::from(aad), buffer)
            .ok()?;
        let mut out = [0u8; TAG_LEN];
        out.copy_from_slice(tag.as_ref());
        Some(out)
    }

    pub(super) fn decrypt(
        key: &[u8; KEY_LEN],
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buffer: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Forged> {
        let (key, nonce) = message_key(key, nonce).ok_or(Forged)?;
        key.open_in_place_separate_tag(nonce, Aad::from(aad), Tag::from(*tag), buffer, 0..)
            .map(|_| ())
            .map_err(|_| Forged)
    }
}

/// RustCrypto's `chacha20poly1305`.
#[cfg(target_arch = "wasm32")]
mod imp {
    use chacha20poly1305::aead::{AeadInOut, KeyInit};
    use chacha20poly1305::{Tag, XChaCha20Poly1305, XNonce};

    use super::{Forged, KEY_LEN, NONCE_LEN, TAG_LEN};

    pub(super) fn encrypt(
        key: &[u8; KEY_LEN],
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buffer: &mut [u8],
    ) -> Option<[u8; TAG_LEN]> {
        let cipher = XChaCha20Poly1305::new(key.into());
        cipher
            .encrypt_inout_detached(&XNonce::from(*nonce), aad, buffer.into())
            .ok()
            .map(Into::into)
    }

    pub(super) fn decrypt(
        key: &[u8; KEY_LEN],
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buffer: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Forged> {
        let cipher = XChaCha20Poly1305::new(key.into());
        cipher
            .decrypt_inout_detached(&XNonce::from(*nonce), aad, buffer.into(), &Tag::from(*tag))
            .map_err(|_| Forged)
    }
}

/// The cipher's two operations, for the differential fuzz target
/// (`--cfg fuzzing`): `encrypt` returns the tag, `decrypt` whether it matched.
#[cfg(fuzzing)]
pub mod fuzzing {
    /// Seals `buffer` in place under `key` and `nonce`; returns the tag.
    pub fn encrypt(
        key: &[u8; 32],
        nonce: &[u8; 24],
        aad: &[u8],
        buffer: &mut [u8],
    ) -> Option<[u8; 16]> {
        super::imp::encrypt(key, nonce, aad, buffer)
    }

    /// Opens `buffer` in place; `false` when the tag does not match.
    pub fn decrypt(
        key: &[u8; 32],
        nonce: &[u8; 24],
        aad: &[u8],
        buffer: &mut [u8],
        tag: &[u8; 16],
    ) -> bool {
        super::imp::decrypt(key, nonce, aad, buffer, tag).is_ok()
    }
}

#[cfg(test)]
mod tests {
    use chacha20poly1305::aead::{AeadInOut, KeyInit};
    use proptest::prelude::*;

    use super::*;

    fn hex(text: &str) -> Vec<u8> {
        let text: String = text.split_whitespace().collect();
        (0..text.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&text[i..i + 2], 16).unwrap())
            .collect()
    }

    /// draft-irtf-cfrg-xchacha-03, A.3.1: the AEAD test vector.
    #[test]
    fn xchacha20poly1305_matches_the_draft_vector() {
        let key: [u8; 32] = hex("808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f")
            .try_into()
            .unwrap();
        let nonce: [u8; 24] = hex("404142434445464748494a4b4c4d4e4f5051525354555657")
            .try_into()
            .unwrap();
        let aad = hex("50515253c0c1c2c3c4c5c6c7");
        let plain = b"Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it.";
        let mut buffer = plain.to_vec();
        let tag = XChaCha20Poly1305::new(&key)
            .encrypt(&nonce, &aad, &mut buffer)
            .unwrap();
        assert_eq!(
            buffer,
            hex(
                "bd6d179d3e83d43b9576579493c0e939572a1700252bfaccbed2902c21396cbb\
                 731c7f1b0b4aa6440bf3a82f4eda7e39ae64c6708c54c216cb96b72e1213b452\
                 2f8c9ba40db5d945b11b69b982c1bb9e3f3fac2bc369488f76b2383565d3fff9\
                 21f9664c97637da9768812f615c68b13b52e"
            )
        );
        assert_eq!(tag.to_vec(), hex("c0875924c1c7987947deafd8780acf49"));
        XChaCha20Poly1305::new(&key)
            .decrypt(&nonce, &aad, &mut buffer, &tag)
            .unwrap();
        assert_eq!(buffer, plain);
    }

    /// Every XChaCha20-Poly1305 vector of Project Wycheproof: the valid ones
    /// seal to their ciphertext and tag and open again, the invalid ones
    /// (altered tags, ciphertexts, associated data) are refused.
    #[test]
    fn wycheproof_xchacha20poly1305() {
        use wycheproof::TestResult;
        use wycheproof::aead::{TestName, TestSet};
        let set = TestSet::load(TestName::XChaCha20Poly1305).expect("the Wycheproof set");
        let mut checked = 0;
        for group in &set.test_groups {
            for test in &group.tests {
                let (Ok(key), Ok(nonce), Ok(tag)) = (
                    <[u8; KEY_LEN]>::try_from(&test.key[..]),
                    <[u8; NONCE_LEN]>::try_from(&test.nonce[..]),
                    <[u8; TAG_LEN]>::try_from(&test.tag[..]),
                ) else {
                    // Other key, nonce or tag sizes: this cipher takes none of them.
                    assert_ne!(test.result, TestResult::Valid, "case {}", test.tc_id);
                    continue;
                };
                let cipher = XChaCha20Poly1305::new(&key);
                let mut opened = test.ct.to_vec();
                let result = cipher.decrypt(&nonce, &test.aad, &mut opened, &tag);
                match test.result {
                    TestResult::Valid | TestResult::Acceptable => {
                        assert_eq!(result, Ok(()), "case {}: {}", test.tc_id, test.comment);
                        assert_eq!(opened, &test.pt[..], "case {}", test.tc_id);
                        let mut sealed = test.pt.to_vec();
                        let sealed_tag = cipher.encrypt(&nonce, &test.aad, &mut sealed).unwrap();
                        assert_eq!(sealed, &test.ct[..], "case {}", test.tc_id);
                        assert_eq!(sealed_tag, tag, "case {}", test.tc_id);
                    }
                    TestResult::Invalid => {
                        assert_eq!(result, Err(Forged), "case {}: {}", test.tc_id, test.comment);
                    }
                }
                checked += 1;
            }
        }
        assert!(checked >= 200, "only {checked} Wycheproof cases ran");
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// The same bytes as RustCrypto's `chacha20poly1305` for any key,
        /// nonce, associated data and message; and any change to any of them
        /// is refused.
        #[test]
        fn identical_to_chacha20poly1305(
            key in any::<[u8; 32]>(),
            nonce in any::<[u8; 24]>(),
            aad in proptest::collection::vec(any::<u8>(), 0..80),
            message in proptest::collection::vec(any::<u8>(), 0..300),
            flip in any::<usize>(),
        ) {
            let ours = XChaCha20Poly1305::new(&key);
            let theirs = chacha20poly1305::XChaCha20Poly1305::new_from_slice(&key).unwrap();
            let mut a = message.clone();
            let tag = ours.encrypt(&nonce, &aad, &mut a).unwrap();
            let mut b = message.clone();
            let their_tag = theirs
                .encrypt_inout_detached(&chacha20poly1305::XNonce::try_from(&nonce[..]).unwrap(), &aad, b.as_mut_slice().into())
                .unwrap();
            prop_assert_eq!(&a, &b);
            prop_assert_eq!(&tag[..], &their_tag[..]);

            let mut opened = a.clone();
            prop_assert!(ours.decrypt(&nonce, &aad, &mut opened, &tag).is_ok());
            prop_assert_eq!(&opened, &message);

            // One bit flipped anywhere (ciphertext, tag or associated data) is refused.
            let total = a.len() + TAG_LEN + aad.len();
            let at = flip % total;
            let (mut c, mut t, mut d) = (a.clone(), tag, aad.clone());
            if at < c.len() {
                c[at] ^= 1;
            } else if at < c.len() + TAG_LEN {
                t[at - c.len()] ^= 1;
            } else {
                d[at - c.len() - TAG_LEN] ^= 1;
            }
            prop_assert_eq!(ours.decrypt(&nonce, &d, &mut c, &t), Err(Forged));
        }
    }
}

//! XChaCha20-Poly1305 (RFC 8439 §2.8 with the extended nonce of
//! draft-irtf-cfrg-xchacha), composed here from the `chacha20` crate's
//! XChaCha20 and a portable Poly1305.
//!
//! Why not `chacha20poly1305`: its `poly1305` picks an AVX2 backend at run
//! time that cannot be inlined, and for ticket-sized messages that made each
//! seal and open about twice as slow (200 bytes: 2.0–2.6 µs against 1.0–1.3 µs
//! here, measured in one run on the 2-core test machine). The portable backend is chosen only by a
//! `--cfg poly1305_backend="soft"` flag that a user's build never inherits,
//! so a server built outside this repository sealed tickets at the slow
//! speed. The construction is the standard one, byte for byte: the tests
//! check it against RFC 8439's vectors and against `chacha20poly1305` on
//! random keys, nonces, associated data and messages.
//!
//! Poly1305 here is the 64-bit "donna" arrangement (three 44/44/42-bit limbs,
//! products in `u128`): no table, no branch and no early exit on secret
//! data; the tag is compared in constant time, and a message is decrypted
//! only after its tag matched.

use chacha20::XChaCha20;
use chacha20::cipher::{KeyIvInit, StreamCipher, StreamCipherSeek};
use subtle::ConstantTimeEq;
use zeroize::{Zeroize, Zeroizing};

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

    /// The stream cipher for `nonce`, and the Poly1305 key of this message
    /// (the first 32 bytes of keystream block 0; the message starts at block 1).
    fn start(&self, nonce: &[u8; NONCE_LEN]) -> (XChaCha20, Poly1305) {
        let key: &[u8; KEY_LEN] = &self.key;
        let mut cipher = XChaCha20::new(key.into(), nonce.into());
        let mut block0 = Zeroizing::new([0u8; 64]);
        cipher.apply_keystream(block0.as_mut());
        let mut mac_key = [0u8; 32];
        mac_key.copy_from_slice(&block0[..32]);
        let mac = Poly1305::new(&mac_key);
        mac_key.zeroize();
        cipher.seek(64u64);
        (cipher, mac)
    }

    /// Encrypts `buffer` in place; returns the tag over `aad` and the ciphertext.
    pub(crate) fn encrypt(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buffer: &mut [u8],
    ) -> [u8; TAG_LEN] {
        let (mut cipher, mac) = self.start(nonce);
        cipher.apply_keystream(buffer);
        aead_tag(mac, aad, buffer)
    }

    /// Checks `tag` over `aad` and the ciphertext in `buffer`, then decrypts
    /// it in place; a forged or damaged message is left as it came.
    pub(crate) fn decrypt(
        &self,
        nonce: &[u8; NONCE_LEN],
        aad: &[u8],
        buffer: &mut [u8],
        tag: &[u8; TAG_LEN],
    ) -> Result<(), Forged> {
        let (mut cipher, mac) = self.start(nonce);
        let expected = aead_tag(mac, aad, buffer);
        if !bool::from(expected.ct_eq(tag)) {
            return Err(Forged);
        }
        cipher.apply_keystream(buffer);
        Ok(())
    }
}

/// The AEAD's tag: Poly1305 over `aad`, zero padding to 16 bytes, the
/// ciphertext, zero padding, and both lengths as little-endian `u64`s.
fn aead_tag(mut mac: Poly1305, aad: &[u8], ciphertext: &[u8]) -> [u8; TAG_LEN] {
    mac.update_padded(aad);
    mac.update_padded(ciphertext);
    let mut lengths = [0u8; 16];
    lengths[..8].copy_from_slice(&(aad.len() as u64).to_le_bytes());
    lengths[8..].copy_from_slice(&(ciphertext.len() as u64).to_le_bytes());
    mac.block(&lengths, true);
    mac.finish()
}

const MASK44: u64 = (1 << 44) - 1;
const MASK42: u64 = (1 << 42) - 1;

/// Poly1305 (RFC 8439 §2.5) in progress: the clamped `r`, the accumulator
/// `h` in three limbs, and `s` added at the end.
struct Poly1305 {
    r: [u64; 3],
    /// `r1` and `r2` times 20: the reduction modulo 2^130 - 5 folded into the products.
    s: [u64; 2],
    h: [u64; 3],
    pad: [u64; 2],
}

impl Drop for Poly1305 {
    fn drop(&mut self) {
        self.r.zeroize();
        self.s.zeroize();
        self.h.zeroize();
        self.pad.zeroize();
    }
}

fn le64(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

impl Poly1305 {
    /// A one-time authenticator keyed with `key` (`r` then `s`).
    fn new(key: &[u8; 32]) -> Self {
        let t0 = le64(&key[0..8]);
        let t1 = le64(&key[8..16]);
        // r clamped (RFC 8439 §2.5.1), split into 44, 44 and 42 bits.
        let r0 = t0 & 0xffc_0fff_ffff;
        let r1 = ((t0 >> 44) | (t1 << 20)) & 0xfff_ffc0_ffff;
        let r2 = (t1 >> 24) & 0x00f_ffff_fc0f;
        Self {
            r: [r0, r1, r2],
            s: [r1 * 20, r2 * 20],
            h: [0; 3],
            pad: [le64(&key[16..24]), le64(&key[24..32])],
        }
    }

    /// Adds one 16-byte block (with the 2^128 bit when `full`, as every block
    /// but a short last one of a plain message has) and multiplies by `r`.
    fn block(&mut self, block: &[u8; 16], full: bool) {
        let t0 = le64(&block[0..8]);
        let t1 = le64(&block[8..16]);
        let hibit = if full { 1u64 << 40 } else { 0 };
        let [r0, r1, r2] = self.r;
        let [s1, s2] = self.s;
        let mut h0 = self.h[0] + (t0 & MASK44);
        let mut h1 = self.h[1] + (((t0 >> 44) | (t1 << 20)) & MASK44);
        let mut h2 = self.h[2] + (((t1 >> 24) & MASK42) | hibit);

        let mul = |a: u64, b: u64| u128::from(a) * u128::from(b);
        let d0 = mul(h0, r0) + mul(h1, s2) + mul(h2, s1);
        let mut d1 = mul(h0, r1) + mul(h1, r0) + mul(h2, s2);
        let mut d2 = mul(h0, r2) + mul(h1, r1) + mul(h2, r0);

        // Carry, folding what passes 2^130 back in times 5.
        let c = (d0 >> 44) as u64;
        h0 = (d0 as u64) & MASK44;
        d1 += u128::from(c);
        let c = (d1 >> 44) as u64;
        h1 = (d1 as u64) & MASK44;
        d2 += u128::from(c);
        let c = (d2 >> 42) as u64;
        h2 = (d2 as u64) & MASK42;
        h0 += c * 5;
        let c = h0 >> 44;
        h0 &= MASK44;
        h1 += c;
        self.h = [h0, h1, h2];
    }

    /// Adds `data` in 16-byte blocks, the last one padded with zeros (the
    /// AEAD's padding: every block counts as full).
    fn update_padded(&mut self, data: &[u8]) {
        let mut blocks = data.chunks_exact(16);
        for block in &mut blocks {
            let mut b = [0u8; 16];
            b.copy_from_slice(block);
            self.block(&b, true);
        }
        let rest = blocks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 16];
            b[..rest.len()].copy_from_slice(rest);
            self.block(&b, true);
        }
    }

    /// The MAC of a plain message (RFC 8439 §2.5): its last short block
    /// ends with a 1 byte and no 2^128 bit.
    #[cfg(test)]
    fn update_message(&mut self, data: &[u8]) {
        let mut blocks = data.chunks_exact(16);
        for block in &mut blocks {
            let mut b = [0u8; 16];
            b.copy_from_slice(block);
            self.block(&b, true);
        }
        let rest = blocks.remainder();
        if !rest.is_empty() {
            let mut b = [0u8; 16];
            b[..rest.len()].copy_from_slice(rest);
            b[rest.len()] = 1;
            self.block(&b, false);
        }
    }

    /// `h` reduced modulo 2^130 - 5, plus `s`, modulo 2^128.
    fn finish(mut self) -> [u8; TAG_LEN] {
        let [mut h0, mut h1, mut h2] = self.h;
        // Full carry.
        let c = h1 >> 44;
        h1 &= MASK44;
        h2 += c;
        let c = h2 >> 42;
        h2 &= MASK42;
        h0 += c * 5;
        let c = h0 >> 44;
        h0 &= MASK44;
        h1 += c;
        let c = h1 >> 44;
        h1 &= MASK44;
        h2 += c;
        let c = h2 >> 42;
        h2 &= MASK42;
        h0 += c * 5;
        let c = h0 >> 44;
        h0 &= MASK44;
        h1 += c;

        // g = h + 5 - 2^130: h if g is negative (h < p), else g.
        let mut g0 = h0 + 5;
        let c = g0 >> 44;
        g0 &= MASK44;
        let mut g1 = h1 + c;
        let c = g1 >> 44;
        g1 &= MASK44;
        let mut g2 = (h2 + c).wrapping_sub(1 << 42);
        let keep_g = (g2 >> 63).wrapping_sub(1);
        g0 &= keep_g;
        g1 &= keep_g;
        g2 &= keep_g;
        let keep_h = !keep_g;
        h0 = (h0 & keep_h) | g0;
        h1 = (h1 & keep_h) | g1;
        h2 = (h2 & keep_h) | g2;

        // h + s, modulo 2^128.
        let [t0, t1] = self.pad;
        h0 += t0 & MASK44;
        let c = h0 >> 44;
        h0 &= MASK44;
        h1 += (((t0 >> 44) | (t1 << 20)) & MASK44) + c;
        let c = h1 >> 44;
        h1 &= MASK44;
        h2 += ((t1 >> 24) & MASK42) + c;
        h2 &= MASK42;

        let lo = h0 | (h1 << 44);
        let hi = (h1 >> 20) | (h2 << 24);
        let mut tag = [0u8; TAG_LEN];
        tag[..8].copy_from_slice(&lo.to_le_bytes());
        tag[8..].copy_from_slice(&hi.to_le_bytes());
        self.h = [0; 3];
        tag
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

    /// RFC 8439 §2.5.2.
    #[test]
    fn poly1305_matches_rfc8439_2_5_2() {
        let key: [u8; 32] = hex(
            "85:d6:be:78:57:55:6d:33:7f:44:52:fe:42:d5:06:a8:01:03:80:8a:fb:0d:b2:fd:4a:bf:f6:af:41:49:f5:1b"
                .replace(':', "")
                .as_str(),
        )
        .try_into()
        .unwrap();
        let mut mac = Poly1305::new(&key);
        mac.update_message(b"Cryptographic Forum Research Group");
        assert_eq!(
            mac.finish().to_vec(),
            hex("a8061dc1305136c6c22b8baf0c0127a9")
        );
    }

    /// RFC 8439 appendix A.3, test vectors 1, 5, 6 and 11 (the edge cases of the reduction).
    #[test]
    fn poly1305_matches_rfc8439_appendix_a3() {
        let check = |key: &str, message: &[u8], tag: &str| {
            let key: [u8; 32] = hex(key).try_into().unwrap();
            let mut mac = Poly1305::new(&key);
            mac.update_message(message);
            assert_eq!(mac.finish().to_vec(), hex(tag), "key {key:02x?}");
        };
        check(
            &"00".repeat(32),
            &[0u8; 64],
            "00000000000000000000000000000000",
        );
        // #11: h reaches the modulus exactly during the final reduction.
        check(
            "0100000000000000000000000000000000000000000000000000000000000000",
            &hex(
                "ffffffffffffffffffffffffffffffff f0ffffffffffffffffffffffffffffff 11000000000000000000000000000000",
            ),
            "05000000000000000000000000000000",
        );
        // #5: the product passes 2^130 - 5.
        check(
            "0200000000000000000000000000000000000000000000000000000000000000",
            &hex("ffffffffffffffffffffffffffffffff"),
            "03000000000000000000000000000000",
        );
        // #6: h + s wraps modulo 2^128.
        check(
            "02000000000000000000000000000000ffffffffffffffffffffffffffffffff",
            &hex("02000000000000000000000000000000"),
            "03000000000000000000000000000000",
        );
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
        let tag = XChaCha20Poly1305::new(&key).encrypt(&nonce, &aad, &mut buffer);
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

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(1024))]

        /// The same bytes as `chacha20poly1305` for any key, nonce, associated
        /// data and message; and any change to any of them is refused.
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
            let tag = ours.encrypt(&nonce, &aad, &mut a);
            let mut b = message.clone();
            let their_tag = theirs
                .encrypt_inout_detached(&chacha20poly1305::XNonce::try_from(&nonce[..]).unwrap(), &aad, b.as_mut_slice().into())
                .unwrap();
            prop_assert_eq!(&a, &b);
            prop_assert_eq!(&tag[..], &their_tag[..]);

            let mut opened = a.clone();
            prop_assert!(ours.decrypt(&nonce, &aad, &mut opened, &tag).is_ok());
            prop_assert_eq!(&opened, &message);

            // One bit flipped anywhere (ciphertext, tag or associated data) is refused, the buffer untouched.
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
            let before = c.clone();
            prop_assert_eq!(ours.decrypt(&nonce, &d, &mut c, &t), Err(Forged));
            prop_assert_eq!(c, before);
        }
    }
}

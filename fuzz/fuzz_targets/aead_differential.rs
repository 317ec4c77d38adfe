//! The ticket's AEAD against a second implementation: whatever the key,
//! nonce, associated data and message, tessera-state's XChaCha20-Poly1305
//! (ring's ChaCha20-Poly1305 under an HChaCha20 subkey) seals to the same
//! bytes as RustCrypto's `chacha20poly1305`, opens what it sealed, and
//! refuses the message with any one bit of it, its tag or its associated
//! data changed.
//!
//! Run with `scripts/fuzz` (or `cargo +nightly fuzz run aead_differential`).

#![no_main]

use chacha20poly1305::aead::{AeadInOut, KeyInit};
use chacha20poly1305::{XChaCha20Poly1305, XNonce};
use libfuzzer_sys::fuzz_target;
use tessera_state::aead_fuzzing::{decrypt, encrypt};

fuzz_target!(|input: &[u8]| {
    // key[32] nonce[24] aad_len[1] flip[2] then aad and message.
    if input.len() < 59 {
        return;
    }
    let (key, rest) = input.split_at(32);
    let (nonce, rest) = rest.split_at(24);
    let aad_len = usize::from(rest[0]).min(rest.len() - 3);
    let flip = usize::from(u16::from_le_bytes([rest[1], rest[2]]));
    let (aad, message) = rest[3..].split_at(aad_len);
    let key: [u8; 32] = key.try_into().expect("32 bytes");
    let nonce: [u8; 24] = nonce.try_into().expect("24 bytes");

    let mut ours = message.to_vec();
    let tag = encrypt(&key, &nonce, aad, &mut ours).expect("a short message seals");
    let mut theirs = message.to_vec();
    let their_tag = XChaCha20Poly1305::new(&key.into())
        .encrypt_inout_detached(&XNonce::from(nonce), aad, theirs.as_mut_slice().into())
        .expect("a short message seals");
    assert_eq!(ours, theirs, "ciphertexts differ");
    assert_eq!(tag, <[u8; 16]>::from(their_tag), "tags differ");

    let mut opened = ours.clone();
    assert!(decrypt(&key, &nonce, aad, &mut opened, &tag), "its own seal refused");
    assert_eq!(opened, message);

    let total = ours.len() + 16 + aad.len();
    let at = flip % total;
    let (mut c, mut t, mut d) = (ours, tag, aad.to_vec());
    if at < c.len() {
        c[at] ^= 1 << (flip % 8);
    } else if at < c.len() + 16 {
        t[at - c.len()] ^= 1 << (flip % 8);
    } else {
        d[at - c.len() - 16] ^= 1 << (flip % 8);
    }
    assert!(!decrypt(&key, &nonce, &d, &mut c, &t), "an altered message opened");
});

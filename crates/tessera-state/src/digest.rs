//! A short, stable name for a value that must not be shown itself (a session
//! id that carries a sealed handshake): the start of its SHA-256.

use sha2::{Digest as _, Sha256};

/// The first `bytes` bytes (at most 32) of `value`'s SHA-256, as lowercase hex.
///
/// ```
/// assert_eq!(tessera_state::digest_hex(b"abc", 4), "ba7816bf");
/// ```
pub fn digest_hex(value: &[u8], bytes: usize) -> String {
    let digest = Sha256::digest(value);
    crate::lower_hex(&digest[..bytes.min(digest.len())])
}

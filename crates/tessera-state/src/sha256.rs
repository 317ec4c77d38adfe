//! SHA-256 for the ticket binding: ring's on native targets, RustCrypto's
//! `sha2` on wasm32.
//!
//! Why two: every request digests its binding (one SHA-256 block when the
//! call's own part is short, see `binding.rs`), and ring's assembly does a block in fewer
//! than half the instructions of `sha2`'s portable code where the CPU has no
//! SHA extensions (`bench/instructions`, under valgrind, when a binding took
//! three blocks: 30,300 instructions of SHA-256 per counter flow with
//! `sha2`, 11,900 with ring). ring is already
//! the AEAD's implementation natively; it does not build for
//! `wasm32-unknown-unknown`, where `sha2` serves. Both are maintained,
//! audited implementations of the same function; a test checks them against
//! each other and against FIPS 180-2's vectors.

/// An incremental SHA-256.
#[derive(Clone)]
pub(crate) struct Sha256(imp::State);

impl Sha256 {
    /// A hash of nothing yet.
    pub(crate) fn new() -> Self {
        Self(imp::new())
    }

    /// Adds `bytes`.
    pub(crate) fn update(&mut self, bytes: &[u8]) {
        imp::update(&mut self.0, bytes);
    }

    /// The digest of everything added.
    pub(crate) fn finalize(self) -> [u8; 32] {
        imp::finish(self.0)
    }
}

/// The SHA-256 of `bytes`, in one call (skill manifests digest whole files).
///
/// ```
/// assert_eq!(tessera_state::sha256(b"abc")[..4], [0xba, 0x78, 0x16, 0xbf]);
/// ```
pub fn sha256(bytes: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(bytes);
    hash.finalize()
}

#[cfg(not(target_arch = "wasm32"))]
mod imp {
    pub(super) type State = ring::digest::Context;

    pub(super) fn new() -> State {
        ring::digest::Context::new(&ring::digest::SHA256)
    }

    pub(super) fn update(state: &mut State, bytes: &[u8]) {
        state.update(bytes);
    }

    pub(super) fn finish(state: State) -> [u8; 32] {
        let mut out = [0u8; 32];
        out.copy_from_slice(state.finish().as_ref());
        out
    }
}

#[cfg(target_arch = "wasm32")]
mod imp {
    use sha2::Digest as _;

    pub(super) type State = sha2::Sha256;

    pub(super) fn new() -> State {
        sha2::Sha256::new()
    }

    pub(super) fn update(state: &mut State, bytes: &[u8]) {
        state.update(bytes);
    }

    pub(super) fn finish(state: State) -> [u8; 32] {
        state.finalize().into()
    }
}

#[cfg(test)]
mod tests {
    use sha2::Digest as _;

    use super::Sha256;

    fn hex(bytes: [u8; 32]) -> String {
        crate::lower_hex(&bytes)
    }

    #[test]
    fn fips_180_2_vectors() {
        let one = |input: &[u8]| {
            let mut h = Sha256::new();
            h.update(input);
            hex(h.finalize())
        };
        assert_eq!(
            one(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert_eq!(
            one(b"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
        );
        assert_eq!(
            one(b""),
            "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        );
    }

    #[test]
    fn agrees_with_rustcrypto_in_pieces_and_clones() {
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for split in [0, 1, 55, 56, 63, 64, 65, 500, 1000] {
            let mut ours = Sha256::new();
            ours.update(&data[..split]);
            let fork = ours.clone();
            ours.update(&data[split..]);
            assert_eq!(
                ours.finalize(),
                <[u8; 32]>::from(sha2::Sha256::digest(&data))
            );
            let mut theirs = sha2::Sha256::new();
            theirs.update(&data[..split]);
            assert_eq!(fork.finalize(), <[u8; 32]>::from(theirs.finalize()));
        }
    }
}

//! The two ways a ticket can be sealed.

/// How new tickets are sealed; tickets of either mode always open (see [`RequestStateCodec`](crate::RequestStateCodec)).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SealMode {
    /// XChaCha20-Poly1305 with a random 24-byte nonce: the client cannot read the state (`t1e.` tokens).
    #[default]
    Encrypted,
    /// HMAC-SHA256 over readable base64url JSON: the client can read but not alter the state (`t1s.` tokens).
    Signed,
}

impl SealMode {
    /// The version-and-mode prefix of tokens sealed in this mode (`t1e` or `t1s`).
    pub fn prefix(self) -> &'static str {
        match self {
            Self::Encrypted => ENCRYPTED_PREFIX,
            Self::Signed => SIGNED_PREFIX,
        }
    }
}

/// Token prefix of format version 1, encrypted.
pub(crate) const ENCRYPTED_PREFIX: &str = "t1e";
/// Token prefix of format version 1, signed.
pub(crate) const SIGNED_PREFIX: &str = "t1s";

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encrypted_is_the_default() {
        assert_eq!(SealMode::default(), SealMode::Encrypted);
        assert_eq!(SealMode::Encrypted.prefix(), "t1e");
        assert_eq!(SealMode::Signed.prefix(), "t1s");
    }
}

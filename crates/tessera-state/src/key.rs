//! Secrets, key ids and the key ring that seals and opens tickets.
//!
//! A [`KeyRing`] has one *active* key id, which seals, and any number of
//! older ids that still open. To rotate: deploy a ring whose active id is a
//! new key and which keeps the old id; once every ticket sealed under the old
//! key has expired (one TTL later), drop the old id.

use std::fmt;

use zeroize::Zeroizing;

use crate::subkey::SubKeys;

/// Minimum length of a requestState secret, in bytes.
pub const MIN_KEY_LEN: usize = 32;

/// Maximum length of a key id, in characters.
pub const MAX_KEY_ID_LEN: usize = 16;

/// A requestState secret of at least [`MIN_KEY_LEN`] bytes, zeroized on drop and never printed.
pub struct StateKey {
    bytes: Zeroizing<Vec<u8>>,
}

impl StateKey {
    /// Takes a copy of `bytes` as a secret; refuses fewer than [`MIN_KEY_LEN`] bytes.
    ///
    /// ```
    /// use tessera_state::StateKey;
    /// assert!(StateKey::from_bytes(&[7u8; 32]).is_ok());
    /// assert!(StateKey::from_bytes(&[7u8; 31]).is_err());
    /// ```
    pub fn from_bytes(bytes: &[u8]) -> Result<Self, KeyError> {
        if bytes.len() < MIN_KEY_LEN {
            return Err(KeyError::TooShort { len: bytes.len() });
        }
        Ok(Self {
            bytes: Zeroizing::new(bytes.to_vec()),
        })
    }

    /// Uses the UTF-8 bytes of a secret string (e.g. an environment variable) as the key, unchanged.
    ///
    /// The string is not base64-decoded: the output of `openssl rand -base64 32`
    /// (44 characters) is used as 44 bytes of key material.
    ///
    /// ```
    /// use tessera_state::StateKey;
    /// let key = StateKey::from_secret_str("q3Jb0XlbT1k9yWc3M0f4yqGzj7pX2n5hVQm8s6Kd1aE=")?;
    /// # let _ = key;
    /// # Ok::<(), tessera_state::KeyError>(())
    /// ```
    pub fn from_secret_str(secret: &str) -> Result<Self, KeyError> {
        Self::from_bytes(secret.as_bytes())
    }

    /// Makes a fresh random 32-byte key from the operating system's generator.
    ///
    /// ```
    /// let key = tessera_state::StateKey::generate()?;
    /// # let _ = key;
    /// # Ok::<(), tessera_state::KeyError>(())
    /// ```
    pub fn generate() -> Result<Self, KeyError> {
        let mut bytes = Zeroizing::new(vec![0u8; MIN_KEY_LEN]);
        getrandom::fill(&mut bytes).map_err(KeyError::Random)?;
        Ok(Self { bytes })
    }

    /// The secret bytes, for subkey derivation only.
    pub(crate) fn expose(&self) -> &[u8] {
        &self.bytes
    }
}

impl fmt::Debug for StateKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("StateKey(<redacted>)")
    }
}

/// A key id: 1 to 16 characters of `[A-Za-z0-9_-]`, carried in clear in every token.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct KeyId(Box<str>);

impl KeyId {
    /// Validates and wraps a key id.
    ///
    /// ```
    /// use tessera_state::KeyId;
    /// assert!(KeyId::new("2026-07_a").is_ok());
    /// assert!(KeyId::new("").is_err());
    /// assert!(KeyId::new("has.dot").is_err());
    /// ```
    pub fn new(id: &str) -> Result<Self, KeyError> {
        check_key_id(id)?;
        Ok(Self(id.into()))
    }

    /// The id as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Checks key id syntax without allocating.
pub(crate) fn check_key_id(id: &str) -> Result<(), KeyError> {
    if id.is_empty() {
        return Err(KeyError::InvalidKeyId {
            problem: "is empty",
        });
    }
    if id.len() > MAX_KEY_ID_LEN {
        return Err(KeyError::InvalidKeyId {
            problem: "is longer than 16 characters",
        });
    }
    if !id
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
    {
        return Err(KeyError::InvalidKeyId {
            problem: "contains a character that is not allowed",
        });
    }
    Ok(())
}

impl fmt::Debug for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&*self.0, f)
    }
}

impl fmt::Display for KeyId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl AsRef<str> for KeyId {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// One id with its derived subkeys.
pub(crate) struct RingEntry {
    pub(crate) id: KeyId,
    pub(crate) keys: SubKeys,
}

/// The keys a codec seals and opens with: one active id that seals, older ids that still open.
///
/// Subkeys are derived (HKDF-SHA256) when a key is added, and the secret
/// itself is dropped (zeroized) right away.
pub struct KeyRing {
    /// The key that seals.
    active: RingEntry,
    /// Keys that still open, in the order they were added.
    older: Vec<RingEntry>,
}

/// The environment variable (or Worker secret) conventionally holding the requestState key.
pub const KEY_VAR: &str = "MRTR_REQUEST_STATE_KEY";
/// The one holding a key list for rotation (`id:secret,...`, the first active).
pub const KEYS_VAR: &str = "MRTR_REQUEST_STATE_KEYS";

impl KeyRing {
    /// The ring an operator configured: the list in [`KEYS_VAR`] when set,
    /// else the secret in [`KEY_VAR`] as key `k1`; `Ok(None)` when neither is.
    ///
    /// Values are trimmed (a pasted secret's newline is not part of it) and an
    /// empty value counts as unset. Errors are sentences for the operator that
    /// name the variable and never echo a secret. Every host (a native
    /// binary, a Worker) reads its keys through this one rule, so the same
    /// secret yields the same key everywhere.
    ///
    /// ```
    /// use tessera_state::KeyRing;
    /// assert!(KeyRing::from_configured(None, Some(" ")).unwrap().is_none());
    /// let ring = KeyRing::from_configured(Some("a secret of at least thirty-two bytes\n"), None)
    ///     .unwrap()
    ///     .unwrap();
    /// assert_eq!(ring.active_id(), "k1");
    /// assert_eq!(
    ///     KeyRing::from_configured(Some("short"), None).unwrap_err(),
    ///     "MRTR_REQUEST_STATE_KEY is unusable: requestState key is 5 bytes; \
    ///      at least 32 are required (make one with `openssl rand -base64 32`)"
    /// );
    /// ```
    pub fn from_configured(key: Option<&str>, keys: Option<&str>) -> Result<Option<Self>, String> {
        fn set(v: Option<&str>) -> Option<&str> {
            v.map(str::trim).filter(|v| !v.is_empty())
        }
        if let Some(list) = set(keys) {
            return Self::from_env_list(list)
                .map(Some)
                .map_err(|e| format!("{KEYS_VAR} is unusable: {e}"));
        }
        let Some(secret) = set(key) else {
            return Ok(None);
        };
        let key =
            StateKey::from_secret_str(secret).map_err(|e| format!("{KEY_VAR} is unusable: {e}"))?;
        Self::new("k1", key).map(Some).map_err(|e| e.to_string())
    }

    /// A ring whose active (sealing) key is `key`, under id `active_id`.
    ///
    /// ```
    /// use tessera_state::{KeyRing, StateKey};
    /// let ring = KeyRing::new("k2", StateKey::from_bytes(&[2u8; 32])?)?
    ///     .with_key("k1", StateKey::from_bytes(&[1u8; 32])?)?;
    /// assert_eq!(ring.active_id(), "k2");
    /// assert!(ring.contains("k1"));
    /// # Ok::<(), tessera_state::KeyError>(())
    /// ```
    pub fn new(active_id: &str, key: StateKey) -> Result<Self, KeyError> {
        let id = KeyId::new(active_id)?;
        let keys = SubKeys::derive(key.expose()).map_err(|_| KeyError::Derive)?;
        Ok(Self {
            active: RingEntry { id, keys },
            older: Vec::new(),
        })
    }

    /// Adds an older key that still opens tickets but never seals; ids must be unique.
    pub fn with_key(mut self, id: &str, key: StateKey) -> Result<Self, KeyError> {
        let id = KeyId::new(id)?;
        if self.contains(id.as_str()) {
            return Err(KeyError::DuplicateKeyId { key_id: id });
        }
        let keys = SubKeys::derive(key.expose()).map_err(|_| KeyError::Derive)?;
        self.older.push(RingEntry { id, keys });
        Ok(self)
    }

    /// Parses `id:secret[,id:secret...]`; the first entry is the active key.
    ///
    /// This is the format suggested for the `MRTR_REQUEST_STATE_KEYS`
    /// environment variable, e.g. `k2:<secret2>,k1:<secret1>`. Each secret is
    /// used as its UTF-8 bytes (see [`StateKey::from_secret_str`]) and must be
    /// at least 32 bytes; whitespace around entries, ids and secrets is
    /// ignored. Secrets cannot contain `,` (base64 output never does); the
    /// first `:` of an entry separates id and secret. Errors name the entry by
    /// position and never echo a secret.
    ///
    /// ```
    /// use tessera_state::KeyRing;
    /// let ring = KeyRing::from_env_list(
    ///     "k2:9c5hOZXh1ZmlXFZ1QnHjQm7NQ0V0Yk0rR2x0dGl0c3U=, k1:Lq2m1bb0n6KZ0k3y0x1Y2b3QJkq8mN7pR4sT6uV8wXo=",
    /// )?;
    /// assert_eq!(ring.active_id(), "k2");
    /// assert_eq!(ring.key_ids().collect::<Vec<_>>(), ["k2", "k1"]);
    ///
    /// let error = KeyRing::from_env_list("k1:too-short").unwrap_err();
    /// assert_eq!(
    ///     error.to_string(),
    ///     "entry 1 of the requestState key list: requestState key is 9 bytes; \
    ///      at least 32 are required (make one with `openssl rand -base64 32`)"
    /// );
    /// # Ok::<(), tessera_state::KeyError>(())
    /// ```
    pub fn from_env_list(list: &str) -> Result<Self, KeyError> {
        if list.trim().is_empty() {
            return Err(KeyError::EmptyList);
        }
        let mut ring: Option<Self> = None;
        for (position, entry) in list.split(',').enumerate() {
            let index = position.saturating_add(1);
            let (id, secret) = entry
                .trim()
                .split_once(':')
                .ok_or(KeyError::MissingSeparator { index })?;
            let in_entry = |source: KeyError| match source {
                // A duplicate id is already a whole-ring statement; keep it flat.
                KeyError::DuplicateKeyId { .. } => source,
                other => KeyError::Entry {
                    index,
                    source: Box::new(other),
                },
            };
            let key = StateKey::from_secret_str(secret.trim()).map_err(in_entry)?;
            ring = Some(match ring {
                None => Self::new(id.trim(), key).map_err(in_entry)?,
                Some(ring) => ring.with_key(id.trim(), key).map_err(in_entry)?,
            });
        }
        ring.ok_or(KeyError::EmptyList)
    }

    /// The id of the key that seals new tickets.
    pub fn active_id(&self) -> &str {
        self.active().id.as_str()
    }

    /// All key ids, the active one first.
    pub fn key_ids(&self) -> impl Iterator<Item = &str> {
        self.entries().map(|entry| entry.id.as_str())
    }

    /// Whether tickets sealed under `id` can be opened with this ring.
    pub fn contains(&self, id: &str) -> bool {
        self.get(id).is_some()
    }

    /// The active entry.
    pub(crate) fn active(&self) -> &RingEntry {
        &self.active
    }

    /// The entry for `id`, if any.
    pub(crate) fn get(&self, id: &str) -> Option<&RingEntry> {
        self.entries().find(|entry| entry.id.as_str() == id)
    }

    /// All entries, the active one first.
    fn entries(&self) -> impl Iterator<Item = &RingEntry> {
        std::iter::once(&self.active).chain(self.older.iter())
    }
}

impl fmt::Debug for KeyRing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("KeyRing")
            .field("active", &self.active_id())
            .field("ids", &self.key_ids().collect::<Vec<_>>())
            .finish_non_exhaustive()
    }
}

/// Why a key, key id or key ring was refused.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum KeyError {
    /// The secret is shorter than [`MIN_KEY_LEN`] bytes.
    #[error(
        "requestState key is {len} bytes; at least {MIN_KEY_LEN} are required \
         (make one with `openssl rand -base64 32`)"
    )]
    TooShort {
        /// Length of the refused secret in bytes.
        len: usize,
    },
    /// A key id is not 1..=16 characters of `[A-Za-z0-9_-]`.
    #[error(
        "requestState key id {problem}; use 1 to 16 characters from A-Z, a-z, 0-9, `_` and `-`"
    )]
    InvalidKeyId {
        /// What is wrong with it (a fixed phrase; the id itself is not echoed).
        problem: &'static str,
    },
    /// The same key id was given twice.
    #[error("requestState key id `{key_id}` appears more than once in the key ring")]
    DuplicateKeyId {
        /// The repeated key id.
        key_id: KeyId,
    },
    /// The key list is empty.
    #[error(
        "the requestState key list is empty; expected `id:secret[,id:secret...]` \
         (make a secret with `openssl rand -base64 32`)"
    )]
    EmptyList,
    /// An entry of the key list has no `:` between id and secret.
    #[error("entry {index} of the requestState key list is not of the form `id:secret`")]
    MissingSeparator {
        /// 1-based position of the entry in the list.
        index: usize,
    },
    /// An entry of the key list has a bad id or secret.
    #[error("entry {index} of the requestState key list: {source}")]
    Entry {
        /// 1-based position of the entry in the list.
        index: usize,
        /// What is wrong with it.
        #[source]
        source: Box<KeyError>,
    },
    /// The operating system's random number generator failed (key generation).
    #[error("no randomness for a requestState key: {0}")]
    Random(getrandom::Error),
    /// Deriving the purpose-specific subkeys failed (not expected for valid keys).
    #[error("deriving requestState subkeys failed")]
    Derive,
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECRET_A: &str = "0123456789abcdef0123456789abcdef";
    const SECRET_B: &str = "fedcba9876543210fedcba9876543210-b";

    #[test]
    fn short_keys_are_refused_with_length_minimum_and_remedy() {
        for len in [0usize, 1, 31] {
            let error = StateKey::from_bytes(&vec![b'x'; len]).expect_err("too short");
            assert_eq!(
                error.to_string(),
                format!(
                    "requestState key is {len} bytes; at least 32 are required \
                     (make one with `openssl rand -base64 32`)"
                )
            );
        }
        let error = StateKey::from_secret_str(&"y".repeat(31)).expect_err("31 bytes");
        assert!(matches!(error, KeyError::TooShort { len: 31 }));
    }

    #[test]
    fn keys_of_32_bytes_and_more_are_accepted() {
        assert!(StateKey::from_bytes(&[0u8; 32]).is_ok());
        assert!(StateKey::from_bytes(&[0u8; 64]).is_ok());
        assert!(StateKey::from_secret_str(SECRET_A).is_ok());
        // UTF-8 bytes count, not characters: 16 two-byte characters are 32 bytes.
        assert!(StateKey::from_secret_str(&"é".repeat(16)).is_ok());
        assert!(StateKey::generate().is_ok());
    }

    #[test]
    fn key_ids_are_validated() {
        for good in ["a", "k1", "A-Z_09", "0123456789abcdef"] {
            assert!(KeyId::new(good).is_ok(), "{good}");
        }
        for bad in [
            "",
            "0123456789abcdefg",
            "k.1",
            "k 1",
            "k:1",
            "k/1",
            "é",
            "k1\n",
        ] {
            assert!(
                matches!(KeyId::new(bad), Err(KeyError::InvalidKeyId { .. })),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn debug_never_shows_the_secret() {
        let key = StateKey::from_secret_str(SECRET_A).expect("valid key");
        let printed = format!("{key:?} {key:#?}");
        assert!(!printed.contains(SECRET_A), "{printed}");
        assert!(!printed.contains("0123"), "{printed}");

        let bytes = StateKey::from_bytes(&[0xAB; 32]).expect("valid key");
        let printed = format!("{bytes:?}");
        assert!(!printed.contains("171") && !printed.to_lowercase().contains("ab"));

        let ring = KeyRing::new("k1", StateKey::from_secret_str(SECRET_A).expect("valid"))
            .expect("ring")
            .with_key("k0", StateKey::from_secret_str(SECRET_B).expect("valid"))
            .expect("ring");
        let printed = format!("{ring:?} {ring:#?}");
        assert!(!printed.contains(SECRET_A) && !printed.contains(SECRET_B));
        assert!(
            printed.contains("k1") && printed.contains("k0"),
            "{printed}"
        );
    }

    #[test]
    fn ring_has_one_active_id_and_older_ids() {
        let ring = KeyRing::new("new", StateKey::from_secret_str(SECRET_A).expect("valid"))
            .expect("ring")
            .with_key("old", StateKey::from_secret_str(SECRET_B).expect("valid"))
            .expect("ring");
        assert_eq!(ring.active_id(), "new");
        assert_eq!(ring.key_ids().collect::<Vec<_>>(), ["new", "old"]);
        assert!(ring.contains("old"));
        assert!(!ring.contains("older"));
    }

    #[test]
    fn duplicate_ids_are_refused() {
        let error = KeyRing::new("k1", StateKey::from_secret_str(SECRET_A).expect("valid"))
            .expect("ring")
            .with_key("k1", StateKey::from_secret_str(SECRET_B).expect("valid"))
            .expect_err("duplicate");
        assert!(matches!(error, KeyError::DuplicateKeyId { .. }));
        assert!(error.to_string().contains("`k1`"));
    }

    #[test]
    fn env_list_first_entry_is_active() {
        let list = format!("k2:{SECRET_B},k1:{SECRET_A}");
        let ring = KeyRing::from_env_list(&list).expect("ring");
        assert_eq!(ring.active_id(), "k2");
        assert_eq!(ring.key_ids().collect::<Vec<_>>(), ["k2", "k1"]);

        let spaced = format!("  k2 : {SECRET_B} ,\n k1:{SECRET_A}\n");
        let ring = KeyRing::from_env_list(&spaced).expect("ring");
        assert_eq!(ring.key_ids().collect::<Vec<_>>(), ["k2", "k1"]);

        let single = KeyRing::from_env_list(&format!("only:{SECRET_A}")).expect("ring");
        assert_eq!(single.active_id(), "only");
    }

    #[test]
    fn env_list_secret_may_contain_colons() {
        let secret = format!("{SECRET_A}:with:colons");
        let ring = KeyRing::from_env_list(&format!("k1:{secret}")).expect("ring");
        assert_eq!(ring.active_id(), "k1");
    }

    #[test]
    fn env_list_errors_are_clear_and_never_echo_secrets() {
        let cases: Vec<(String, &str)> = vec![
            (String::new(), "the requestState key list is empty"),
            ("   ".to_owned(), "the requestState key list is empty"),
            (
                SECRET_A.to_owned(),
                "entry 1 of the requestState key list is not of the form `id:secret`",
            ),
            (
                format!("k1:{SECRET_A},"),
                "entry 2 of the requestState key list is not of the form `id:secret`",
            ),
            (
                format!("k1:{SECRET_A},k0:short-secret"),
                "entry 2 of the requestState key list: requestState key is 12 bytes",
            ),
            (
                format!("bad id:{SECRET_A}"),
                "entry 1 of the requestState key list: requestState key id contains",
            ),
            (
                format!(":{SECRET_A}"),
                "entry 1 of the requestState key list: requestState key id is empty",
            ),
            (
                format!("k1:{SECRET_A},k1:{SECRET_B}"),
                "requestState key id `k1` appears more than once",
            ),
        ];
        for (list, expected) in cases {
            let error = KeyRing::from_env_list(&list).expect_err("invalid list");
            let message = error.to_string();
            assert!(
                message.starts_with(expected),
                "{list:?}: {message:?} should start with {expected:?}"
            );
            assert!(!message.contains(SECRET_A) && !message.contains(SECRET_B));
            assert!(!message.contains("short-secret"));
        }
    }
}

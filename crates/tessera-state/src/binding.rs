//! What a ticket is bound to: the call it was minted for, reduced to one digest.
//!
//! A [`Binding`] names the JSON-RPC method, the target (tool, prompt or
//! resource name), the request's arguments in canonical JSON, the
//! authenticated principal (if any) and the audience (the server's own
//! identity, e.g. its canonical URL). The whole binding is reduced to one
//! SHA-256 [`BindingDigest`], and only that digest travels, inside the
//! authenticated part of the ticket.
//!
//! Digest input (format 2), all lengths as 8-byte big-endian integers:
//!
//! ```text
//! len("tessera/requestState/v2/binding") || "tessera/requestState/v2/binding"
//! len(method)    || method
//! len(target)    || target
//! len(padding)   || padding        (zero bytes: the lines so far fill whole 64-byte blocks)
//! len(audience)  || audience
//! 0x00                                      (principal: None)
//!   | 0x01 || len(principal) || principal   (principal: Some)
//! canonical_json(arguments)        (last, so it needs no length)
//! ```
//!
//! Every part but the last carries its length, so two different calls never
//! feed the same bytes. The first four lines are the same for every call of
//! one tool and are hashed once ([`BindingPrefix`]); the padding makes them
//! whole blocks, so a call costs one SHA-256 block when what follows them
//! (the audience with its 8-byte length, the principal part, the canonical
//! arguments) takes at most 55 bytes, and two up to 119.
//!
//! Format 1 digested the arguments on their own first and put the audience
//! last, three blocks for the same call:
//!
//! ```text
//! len("tessera/requestState/v1/binding") || "tessera/requestState/v1/binding"
//! len(method) || method || len(target) || target
//! 32 || sha256(canonical_json(arguments))
//! 0x00 | 0x01 || len(principal) || principal
//! len(audience) || audience
//! ```
//!
//! Tickets sealed with it still open: the codec compares a ticket's digest
//! with [`Binding::digest_v1`] when it is not the format 2 digest.

use std::fmt;
use std::sync::Arc;

use crate::sha256::Sha256;
use serde_json::Value;

use crate::canonical::write_canonical;

/// Domain separation tag for the binding digest (format 2).
const BINDING_TAG: &[u8] = b"tessera/requestState/v2/binding";

/// Domain separation tag of format 1, for tickets sealed with it.
const BINDING_TAG_V1: &[u8] = b"tessera/requestState/v1/binding";

/// SHA-256's block size: the prefix is padded to whole blocks.
const BLOCK: usize = 64;

/// SHA-256 of the canonical JSON of a request's arguments.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct ArgumentsDigest([u8; 32]);

impl ArgumentsDigest {
    /// Digests `arguments` as canonical JSON (see [`canonical_json`](crate::canonical_json)).
    ///
    /// Pass the arguments exactly as the request carries them; a server should
    /// normalise absent arguments to one value (e.g. `{}`) before binding, since
    /// `null` and `{}` digest differently.
    ///
    /// ```
    /// use serde_json::json;
    /// use tessera_state::ArgumentsDigest;
    /// assert_eq!(
    ///     ArgumentsDigest::of(&json!({"a": 1, "b": {"c": 2, "d": 3}})),
    ///     ArgumentsDigest::of(&json!({"b": {"d": 3, "c": 2}, "a": 1})),
    /// );
    /// ```
    pub fn of(arguments: &Value) -> Self {
        let mut hasher = Sha256::new();
        write_canonical(arguments, &mut hasher);
        Self(hasher.finalize())
    }

    /// Wraps 32 bytes taken to be such a digest (SHA-256 of the canonical
    /// JSON), e.g. to compare with [`Binding::arguments_digest`].
    pub fn from_bytes(bytes: [u8; 32]) -> Self {
        Self(bytes)
    }

    /// The 32 digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for ArgumentsDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ArgumentsDigest({})", Hex(&self.0))
    }
}

/// The SHA-256 digest of a whole [`Binding`]; the only part of it a ticket carries.
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct BindingDigest([u8; 32]);

impl BindingDigest {
    /// The 32 digest bytes.
    pub fn as_bytes(&self) -> &[u8; 32] {
        &self.0
    }
}

impl fmt::Debug for BindingDigest {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "BindingDigest({})", Hex(&self.0))
    }
}

/// The call a ticket is minted for; a ticket opens only with an equal binding.
#[derive(Clone, PartialEq, Eq)]
pub struct Binding {
    method: Arc<str>,
    target: Arc<str>,
    /// The arguments in canonical JSON.
    arguments: Box<[u8]>,
    principal: Option<String>,
    audience: String,
    digest: BindingDigest,
}

impl Binding {
    /// Binds to a method, a target name, the request's arguments, the principal (if authenticated) and the audience.
    ///
    /// ```
    /// use serde_json::json;
    /// use tessera_state::Binding;
    /// let aud = "https://mcp.example.com/mcp";
    /// let binding = Binding::new(
    ///     "tools/call",
    ///     "increase-counter",
    ///     &json!({"by": 2, "label": "visits"}),
    ///     Some("user-42"),
    ///     aud,
    /// );
    /// // Argument key order does not matter; every other difference does.
    /// let same = json!({"label": "visits", "by": 2});
    /// let reordered = Binding::new("tools/call", "increase-counter", &same, Some("user-42"), aud);
    /// assert_eq!(binding.digest(), reordered.digest());
    /// let anonymous = Binding::new("tools/call", "increase-counter", &same, None, aud);
    /// assert_ne!(binding.digest(), anonymous.digest());
    /// ```
    pub fn new(
        method: &str,
        target: &str,
        arguments: &Value,
        principal: Option<&str>,
        audience: &str,
    ) -> Self {
        BindingPrefix::new(method, target).bind(arguments, principal, audience)
    }

    /// The JSON-RPC method, e.g. `tools/call`.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The tool, prompt or resource the call addresses.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The digest of the call's arguments (computed on each call).
    pub fn arguments_digest(&self) -> ArgumentsDigest {
        let mut hasher = Sha256::new();
        hasher.update(&self.arguments);
        ArgumentsDigest(hasher.finalize())
    }

    /// The authenticated principal, if the request had one.
    pub fn principal(&self) -> Option<&str> {
        self.principal.as_deref()
    }

    /// The audience: which server (deployment, canonical URL) the ticket is for.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// The digest of the whole binding, as tickets carry it.
    pub fn digest(&self) -> &BindingDigest {
        &self.digest
    }

    /// The digest of the same binding in format 1 (see the module's doc),
    /// which tickets sealed before format 2 carry; computed on each call.
    /// No ticket outlives [`MAX_TTL`](crate::MAX_TTL), so format 1 can be
    /// dropped once format 2 has been sealing that long.
    ///
    /// ```
    /// use serde_json::json;
    /// use tessera_state::Binding;
    /// let binding = Binding::new("tools/call", "t", &json!({"a": 1}), None, "aud");
    /// assert_ne!(binding.digest_v1(), *binding.digest());
    /// ```
    pub fn digest_v1(&self) -> BindingDigest {
        let mut hasher = Sha256::new();
        put_framed(&mut hasher, BINDING_TAG_V1);
        put_framed(&mut hasher, self.method.as_bytes());
        put_framed(&mut hasher, self.target.as_bytes());
        put_framed(&mut hasher, self.arguments_digest().as_bytes());
        put_principal(&mut hasher, self.principal.as_deref());
        put_framed(&mut hasher, self.audience.as_bytes());
        BindingDigest(hasher.finalize())
    }
}

impl fmt::Debug for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Binding")
            .field("method", &self.method)
            .field("target", &self.target)
            .field("arguments", &self.arguments_digest())
            .field("principal", &self.principal)
            .field("audience", &self.audience)
            .field("digest", &self.digest)
            .finish()
    }
}

/// The part of a [`Binding`] that is the same for every call of one method
/// on one target, hashed once: a server keeps one per tool and prompt, so a
/// call hashes only what is its own (the digest is the same as
/// [`Binding::new`]'s).
///
/// ```
/// use serde_json::json;
/// use tessera_state::{Binding, BindingPrefix};
///
/// let prefix = BindingPrefix::new("tools/call", "increase-counter");
/// let args = json!({"by": 2});
/// assert_eq!(
///     prefix.bind(&args, Some("alice"), "aud").digest(),
///     Binding::new("tools/call", "increase-counter", &args, Some("alice"), "aud").digest()
/// );
/// ```
#[derive(Clone)]
pub struct BindingPrefix {
    method: Arc<str>,
    target: Arc<str>,
    /// The hash state after the tag, the method, the target and the padding.
    hashed: Sha256,
}

impl fmt::Debug for BindingPrefix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BindingPrefix")
            .field("method", &self.method)
            .field("target", &self.target)
            .finish_non_exhaustive()
    }
}

impl BindingPrefix {
    /// The prefix of bindings to `method` on `target`.
    pub fn new(method: &str, target: &str) -> Self {
        let mut hashed = Sha256::new();
        let mut len = 0;
        for part in [BINDING_TAG, method.as_bytes(), target.as_bytes()] {
            put_framed(&mut hashed, part);
            len += 8 + part.len();
        }
        // The padding's own length field counts too.
        let padding = (BLOCK - (len + 8) % BLOCK) % BLOCK;
        put_framed(&mut hashed, &[0u8; BLOCK][..padding]);
        Self {
            method: method.into(),
            target: target.into(),
            hashed,
        }
    }

    /// The binding of a call with `arguments`, by `principal`, for `audience`.
    pub fn bind(&self, arguments: &Value, principal: Option<&str>, audience: &str) -> Binding {
        let mut canonical = Vec::with_capacity(64);
        write_canonical(arguments, &mut canonical);
        let mut hasher = self.hashed.clone();
        put_framed(&mut hasher, audience.as_bytes());
        put_principal(&mut hasher, principal);
        hasher.update(&canonical);
        Binding {
            method: Arc::clone(&self.method),
            target: Arc::clone(&self.target),
            arguments: canonical.into_boxed_slice(),
            principal: principal.map(str::to_owned),
            audience: audience.to_owned(),
            digest: BindingDigest(hasher.finalize()),
        }
    }
}

/// Feeds `len(bytes)` as 8 big-endian bytes, then `bytes`.
fn put_framed(hasher: &mut Sha256, bytes: &[u8]) {
    let len = u64::try_from(bytes.len()).unwrap_or(u64::MAX);
    hasher.update(&len.to_be_bytes());
    hasher.update(bytes);
}

/// Feeds the principal: `0x00`, or `0x01` and the principal framed.
fn put_principal(hasher: &mut Sha256, principal: Option<&str>) {
    match principal {
        None => hasher.update(&[0u8]),
        Some(principal) => {
            hasher.update(&[1u8]);
            put_framed(hasher, principal.as_bytes());
        }
    }
}

/// Lowercase hex for Debug output.
struct Hex<'a>(&'a [u8]);

impl fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.iter().try_for_each(|byte| write!(f, "{byte:02x}"))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn base() -> Binding {
        Binding::new(
            "tools/call",
            "increase-counter",
            &json!({"by": 2, "note": {"x": [1, 2]}}),
            Some("alice"),
            "https://a.example/mcp",
        )
    }

    #[test]
    fn equal_calls_have_equal_digests() {
        let same = Binding::new(
            "tools/call",
            "increase-counter",
            &json!({"note": {"x": [1, 2]}, "by": 2}),
            Some("alice"),
            "https://a.example/mcp",
        );
        assert_eq!(base().digest(), same.digest());
        assert_eq!(base(), same);
    }

    #[test]
    fn each_component_changes_the_digest() {
        let args = json!({"by": 2, "note": {"x": [1, 2]}});
        let others = [
            Binding::new(
                "prompts/get",
                "increase-counter",
                &args,
                Some("alice"),
                "https://a.example/mcp",
            ),
            Binding::new(
                "tools/call",
                "decrease-counter",
                &args,
                Some("alice"),
                "https://a.example/mcp",
            ),
            Binding::new(
                "tools/call",
                "increase-counter",
                &json!({"by": 3, "note": {"x": [1, 2]}}),
                Some("alice"),
                "https://a.example/mcp",
            ),
            Binding::new(
                "tools/call",
                "increase-counter",
                &args,
                Some("bob"),
                "https://a.example/mcp",
            ),
            Binding::new(
                "tools/call",
                "increase-counter",
                &args,
                None,
                "https://a.example/mcp",
            ),
            Binding::new(
                "tools/call",
                "increase-counter",
                &args,
                Some("alice"),
                "https://b.example/mcp",
            ),
        ];
        let mut digests = std::collections::HashSet::new();
        assert!(digests.insert(*base().digest()));
        for other in &others {
            assert!(digests.insert(*other.digest()), "{other:?}");
        }
    }

    #[test]
    fn framing_is_unambiguous() {
        let args = json!({});
        let pairs = [
            (
                Binding::new("ab", "c", &args, None, "d"),
                Binding::new("a", "bc", &args, None, "d"),
            ),
            (
                Binding::new("m", "t", &args, Some(""), "d"),
                Binding::new("m", "t", &args, None, "d"),
            ),
            (
                Binding::new("m", "t", &args, Some("p"), ""),
                Binding::new("m", "t", &args, None, "p"),
            ),
            (
                Binding::new("m", "", &args, None, "x"),
                Binding::new("m", "x", &args, None, ""),
            ),
        ];
        for (left, right) in pairs {
            assert_ne!(left.digest(), right.digest(), "{left:?} vs {right:?}");
        }
    }

    #[test]
    fn arguments_digest_is_sha256_of_canonical_json() {
        let args = json!({"b": 2, "a": 1});
        use sha2::Digest as _;
        let expected: [u8; 32] = sha2::Sha256::digest(br#"{"a":1,"b":2}"#).into();
        assert_eq!(ArgumentsDigest::of(&args).as_bytes(), &expected);
        let binding = Binding::new("m", "t", &args, None, "aud");
        assert_eq!(binding.arguments_digest().as_bytes(), &expected);
    }

    #[test]
    fn the_digest_is_sha256_of_the_documented_input() {
        use sha2::Digest as _;
        let framed = |bytes: &[u8]| [&(bytes.len() as u64).to_be_bytes()[..], bytes].concat();
        let args = json!({"b": 2, "a": 1});
        for (principal, principal_part) in [
            (None, vec![0u8]),
            (Some("alice"), [&[1u8][..], &framed(b"alice")].concat()),
        ] {
            let mut prefix = [
                framed(b"tessera/requestState/v2/binding"),
                framed(b"tools/call"),
                framed(b"increase-counter"),
            ]
            .concat();
            let padding = vec![0u8; (64 - (prefix.len() + 8) % 64) % 64];
            prefix.extend(framed(&padding));
            assert_eq!(prefix.len() % 64, 0);
            let input = [
                prefix,
                framed(b"https://a.example/mcp"),
                principal_part.clone(),
                br#"{"a":1,"b":2}"#.to_vec(),
            ]
            .concat();
            let expected: [u8; 32] = sha2::Sha256::digest(&input).into();
            let binding = Binding::new(
                "tools/call",
                "increase-counter",
                &args,
                principal,
                "https://a.example/mcp",
            );
            assert_eq!(binding.digest().as_bytes(), &expected);

            let v1_input = [
                framed(b"tessera/requestState/v1/binding"),
                framed(b"tools/call"),
                framed(b"increase-counter"),
                framed(&sha2::Sha256::digest(br#"{"a":1,"b":2}"#)),
                principal_part,
                framed(b"https://a.example/mcp"),
            ]
            .concat();
            let expected_v1: [u8; 32] = sha2::Sha256::digest(&v1_input).into();
            assert_eq!(binding.digest_v1().as_bytes(), &expected_v1);
        }
    }

    #[test]
    fn the_prefix_fills_whole_blocks_for_any_target_length() {
        use sha2::Digest as _;
        let framed = |bytes: &[u8]| [&(bytes.len() as u64).to_be_bytes()[..], bytes].concat();
        // Every remainder modulo 64 of the unpadded prefix, 0 among them.
        for n in 0..=130 {
            let target = "x".repeat(n);
            let mut prefix = [
                framed(b"tessera/requestState/v2/binding"),
                framed(b"tools/call"),
                framed(target.as_bytes()),
            ]
            .concat();
            let padding = vec![0u8; (64 - (prefix.len() + 8) % 64) % 64];
            prefix.extend(framed(&padding));
            assert_eq!(prefix.len() % 64, 0, "target of {n} bytes");
            let input = [prefix, framed(b"aud"), vec![0u8], br#"{"k":1}"#.to_vec()].concat();
            let expected: [u8; 32] = sha2::Sha256::digest(&input).into();
            let binding = Binding::new("tools/call", &target, &json!({"k": 1}), None, "aud");
            assert_eq!(
                binding.digest().as_bytes(),
                &expected,
                "target of {n} bytes"
            );
        }
    }

    #[test]
    fn accessors_return_components() {
        let binding = base();
        assert_eq!(binding.method(), "tools/call");
        assert_eq!(binding.target(), "increase-counter");
        assert_eq!(binding.principal(), Some("alice"));
        assert_eq!(binding.audience(), "https://a.example/mcp");
        assert_eq!(
            binding.arguments_digest(),
            ArgumentsDigest::of(&json!({"note": {"x": [1, 2]}, "by": 2}))
        );
        let printed = format!("{binding:?}");
        assert!(printed.contains("increase-counter"));
    }
}

//! What a ticket is bound to: the call it was minted for, reduced to one digest.
//!
//! A [`Binding`] names the JSON-RPC method, the target (tool, prompt or
//! resource name), a SHA-256 digest of the request's arguments in canonical
//! JSON, the authenticated principal (if any) and the audience (the server's
//! own identity, e.g. its canonical URL). The whole binding is reduced to one
//! SHA-256 [`BindingDigest`] over length-prefixed components, and only that
//! digest travels, inside the authenticated part of the ticket.
//!
//! Digest input, all lengths as 8-byte big-endian integers:
//!
//! ```text
//! len("tessera/requestState/v1/binding") || "tessera/requestState/v1/binding"
//! len(method)    || method
//! len(target)    || target
//! 32             || sha256(canonical_json(arguments))
//! 0x00                               (principal: None)
//!   | 0x01 || len(principal) || principal   (principal: Some)
//! len(audience)  || audience
//! ```

use std::fmt;

use crate::sha256::Sha256;
use serde_json::Value;

use crate::canonical::write_canonical;

/// Domain separation tag for the binding digest.
const BINDING_TAG: &[u8] = b"tessera/requestState/v1/binding";

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

    /// Wraps a digest computed elsewhere (SHA-256 of the canonical JSON).
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
    method: String,
    target: String,
    arguments: ArgumentsDigest,
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
        Self::from_arguments_digest(
            method,
            target,
            ArgumentsDigest::of(arguments),
            principal,
            audience,
        )
    }

    /// Like [`Binding::new`], with the arguments already digested.
    pub fn from_arguments_digest(
        method: &str,
        target: &str,
        arguments: ArgumentsDigest,
        principal: Option<&str>,
        audience: &str,
    ) -> Self {
        BindingPrefix::new(method, target).bind_digest(arguments, principal, audience)
    }

    /// The JSON-RPC method, e.g. `tools/call`.
    pub fn method(&self) -> &str {
        &self.method
    }

    /// The tool, prompt or resource the call addresses.
    pub fn target(&self) -> &str {
        &self.target
    }

    /// The digest of the call's arguments.
    pub fn arguments_digest(&self) -> &ArgumentsDigest {
        &self.arguments
    }

    /// The authenticated principal, if the request had one.
    pub fn principal(&self) -> Option<&str> {
        self.principal.as_deref()
    }

    /// The audience: which server (deployment, canonical URL) the ticket is for.
    pub fn audience(&self) -> &str {
        &self.audience
    }

    /// The digest of the whole binding, as carried in tickets.
    pub fn digest(&self) -> &BindingDigest {
        &self.digest
    }
}

impl fmt::Debug for Binding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Binding")
            .field("method", &self.method)
            .field("target", &self.target)
            .field("arguments", &self.arguments)
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
    method: String,
    target: String,
    /// The hash state after the tag, the method and the target.
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
        put_framed(&mut hashed, BINDING_TAG);
        put_framed(&mut hashed, method.as_bytes());
        put_framed(&mut hashed, target.as_bytes());
        Self {
            method: method.to_owned(),
            target: target.to_owned(),
            hashed,
        }
    }

    /// The binding of a call with `arguments`, by `principal`, for `audience`.
    pub fn bind(&self, arguments: &Value, principal: Option<&str>, audience: &str) -> Binding {
        self.bind_digest(ArgumentsDigest::of(arguments), principal, audience)
    }

    /// [`bind`](Self::bind), with the arguments already digested.
    pub fn bind_digest(
        &self,
        arguments: ArgumentsDigest,
        principal: Option<&str>,
        audience: &str,
    ) -> Binding {
        let mut hasher = self.hashed.clone();
        put_framed(&mut hasher, arguments.as_bytes());
        match principal {
            None => hasher.update(&[0u8]),
            Some(principal) => {
                hasher.update(&[1u8]);
                put_framed(&mut hasher, principal.as_bytes());
            }
        }
        put_framed(&mut hasher, audience.as_bytes());
        Binding {
            method: self.method.clone(),
            target: self.target.clone(),
            arguments,
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
        let binding = Binding::from_arguments_digest(
            "m",
            "t",
            ArgumentsDigest::from_bytes(expected),
            None,
            "aud",
        );
        assert_eq!(
            binding.digest(),
            Binding::new("m", "t", &args, None, "aud").digest()
        );
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
            &ArgumentsDigest::of(&json!({"note": {"x": [1, 2]}, "by": 2}))
        );
        let printed = format!("{binding:?}");
        assert!(printed.contains("increase-counter"));
    }
}

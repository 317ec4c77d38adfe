//! The requestState codec: seals typed state into bound, expiring tickets and opens them again.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use hmac::Mac as _;
use serde::Serialize;
use serde::de::DeserializeOwned;
use subtle::ConstantTimeEq as _;

use crate::binding::{Binding, BindingDigest};
use crate::error::{ConfigError, OpenError, SealError};
use crate::key::{KeyId, KeyRing};
use crate::mode::SealMode;
use crate::subkey::SubKeys;
use crate::ticket::{CLAIMS_LEN, Claims, Opened, TICKET_ID_BYTES};
use crate::token::{self, B64, MAC_LEN, NONCE_LEN, Parts, TAG_LEN, b64_len};
use tessera_protocol::clock::unix_seconds as unix_now;

/// Time to live of a ticket unless configured otherwise: 600 seconds.
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);

/// Longest time to live the builder accepts: 30 days.
pub const MAX_TTL: Duration = Duration::from_secs(30 * 24 * 60 * 60);

/// How far in the future an issued-at may lie before a ticket is refused as not yet valid: 60 seconds.
pub const MAX_CLOCK_SKEW_SECS: u64 = 60;

/// Size budget of a token unless configured otherwise: 16 KiB.
pub const DEFAULT_MAX_TOKEN_LEN: usize = 16 * 1024;

/// Smallest size budget the builder accepts (no ticket fits in less): 128 bytes.
pub const MIN_MAX_TOKEN_LEN: usize = 128;

/// Seals handler state into requestState tickets and opens them; cheap to clone and share.
///
/// - [`seal`](Self::seal) mints a ticket for one call ([`Binding`]) under the
///   ring's active key, in the configured [`SealMode`].
/// - [`open`](Self::open) accepts tickets of **both** modes under **any** key
///   id in the ring, so switching modes or rotating keys never breaks tickets
///   in flight. Both modes need the secret to produce a ticket, so accepting
///   both costs no integrity; a server that chose `Encrypted` for privacy
///   only ever mints encrypted tickets.
///
/// Every refusal is an [`OpenError`]; servers answer all of them with the
/// same wire error ([`WIRE_MESSAGE`](crate::WIRE_MESSAGE)).
///
/// Opening does not make a ticket single-use: pass
/// [`Opened::ticket_id`] to a [`TicketLedger`](crate::TicketLedger) for that.
///
/// ```
/// use serde::{Deserialize, Serialize};
/// use serde_json::json;
/// use tessera_state::{Binding, KeyRing, RequestStateCodec, StateKey};
///
/// #[derive(Serialize, Deserialize, Debug, PartialEq)]
/// enum Step { AskedName, AskedAge { name: String } }
///
/// let ring = KeyRing::new("k1", StateKey::from_secret_str("correct horse battery staple 0123456789")?)?;
/// let codec = RequestStateCodec::new(ring);
/// let args = json!({"by": 2});
/// let binding = Binding::new("tools/call", "increase-counter", &args, None, "https://mcp.example.com");
///
/// let ticket = codec.seal(&Step::AskedAge { name: "Ada".into() }, &binding)?;
/// assert!(ticket.starts_with("t1e.k1."));
///
/// let opened = codec.open::<Step>(&ticket, &binding)?;
/// assert_eq!(opened.payload, Step::AskedAge { name: "Ada".into() });
///
/// let other = Binding::new("tools/call", "increase-counter", &json!({"by": 3}), None, "https://mcp.example.com");
/// assert_eq!(codec.open::<Step>(&ticket, &other).unwrap_err().reason(), "binding_mismatch");
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
#[derive(Clone)]
pub struct RequestStateCodec {
    inner: Arc<Inner>,
}

struct Inner {
    ring: Arc<KeyRing>,
    mode: SealMode,
    ttl_secs: u64,
    max_token_len: usize,
}

/// Configures a [`RequestStateCodec`]: mode, time to live, size budget.
#[derive(Debug)]
#[must_use]
pub struct RequestStateCodecBuilder {
    ring: KeyRing,
    mode: SealMode,
    ttl: Duration,
    max_token_len: usize,
}

impl RequestStateCodecBuilder {
    /// Sets how new tickets are sealed (default [`SealMode::Encrypted`]).
    pub fn mode(mut self, mode: SealMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets the time to live in whole seconds (default 600 s); must be 1 s to [`MAX_TTL`].
    pub fn ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// Sets the size budget for sealed and opened tokens in bytes (default 16 KiB, at least 128).
    pub fn max_token_len(mut self, max: usize) -> Self {
        self.max_token_len = max;
        self
    }

    /// Checks the configuration and builds the codec.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tessera_state::{KeyRing, RequestStateCodec, SealMode, StateKey};
    ///
    /// let ring = KeyRing::new("k1", StateKey::generate()?)?;
    /// let codec = RequestStateCodec::builder(ring)
    ///     .mode(SealMode::Signed)
    ///     .ttl(Duration::from_secs(300))
    ///     .max_token_len(8 * 1024)
    ///     .build()?;
    /// assert_eq!(codec.ttl(), Duration::from_secs(300));
    ///
    /// let ring = KeyRing::new("k1", StateKey::generate()?)?;
    /// assert!(RequestStateCodec::builder(ring).ttl(Duration::ZERO).build().is_err());
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn build(self) -> Result<RequestStateCodec, ConfigError> {
        let ttl_secs = self.ttl.as_secs();
        if ttl_secs == 0 || self.ttl > MAX_TTL {
            return Err(ConfigError::InvalidTtl {
                got_secs: ttl_secs,
                max_secs: MAX_TTL.as_secs(),
            });
        }
        if self.max_token_len < MIN_MAX_TOKEN_LEN {
            return Err(ConfigError::BudgetTooSmall {
                got: self.max_token_len,
                min: MIN_MAX_TOKEN_LEN,
            });
        }
        Ok(RequestStateCodec {
            inner: Arc::new(Inner {
                ring: Arc::new(self.ring),
                mode: self.mode,
                ttl_secs,
                max_token_len: self.max_token_len,
            }),
        })
    }
}

impl RequestStateCodec {
    /// A codec with the defaults: encrypted, 600 s TTL, 16 KiB budget.
    pub fn new(ring: KeyRing) -> Self {
        Self {
            inner: Arc::new(Inner {
                ring: Arc::new(ring),
                mode: SealMode::default(),
                ttl_secs: DEFAULT_TTL.as_secs(),
                max_token_len: DEFAULT_MAX_TOKEN_LEN,
            }),
        }
    }

    /// Starts configuring a codec over `ring`.
    pub fn builder(ring: KeyRing) -> RequestStateCodecBuilder {
        RequestStateCodecBuilder {
            ring,
            mode: SealMode::default(),
            ttl: DEFAULT_TTL,
            max_token_len: DEFAULT_MAX_TOKEN_LEN,
        }
    }

    /// The mode new tickets are sealed in.
    pub fn mode(&self) -> SealMode {
        self.inner.mode
    }

    /// The time to live of new tickets.
    pub fn ttl(&self) -> Duration {
        Duration::from_secs(self.inner.ttl_secs)
    }

    /// The size budget for tokens, in bytes.
    pub fn max_token_len(&self) -> usize {
        self.inner.max_token_len
    }

    /// A codec over the same keys and mode whose tickets live `ttl` (1 s to
    /// [`MAX_TTL`]; out of range is clamped): for a token that outlives one
    /// round, such as a session id. Its tickets open only with a binding of
    /// their own purpose, so use a method name no request has.
    ///
    /// ```
    /// use std::time::Duration;
    /// use serde_json::json;
    /// use tessera_state::{Binding, KeyRing, RequestStateCodec, StateKey};
    ///
    /// let codec = RequestStateCodec::new(KeyRing::new("k1", StateKey::generate()?)?);
    /// let sessions = codec.with_ttl(Duration::from_secs(86_400));
    /// let binding = Binding::new("mcp/session", "", &json!({}), None, "https://mcp.example.com");
    /// let token = sessions.seal(&"a session", &binding)?;
    /// let opened = sessions.open::<String>(&token, &binding)?;
    /// assert_eq!(opened.expires_at, opened.issued_at + 86_400);
    /// assert_eq!(codec.ttl(), Duration::from_secs(600));
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn with_ttl(&self, ttl: Duration) -> Self {
        let inner = &*self.inner;
        Self {
            inner: Arc::new(Inner {
                ring: Arc::clone(&inner.ring),
                mode: inner.mode,
                ttl_secs: ttl.as_secs().clamp(1, MAX_TTL.as_secs()),
                max_token_len: inner.max_token_len,
            }),
        }
    }

    /// The key ring.
    pub fn key_ring(&self) -> &KeyRing {
        &self.inner.ring
    }

    /// Seals `payload` into a ticket bound to `binding`, issued now.
    pub fn seal<T: Serialize + ?Sized>(
        &self,
        payload: &T,
        binding: &Binding,
    ) -> Result<String, SealError> {
        self.seal_at(payload, binding, unix_now())
    }

    /// Seals `payload` into a ticket bound to `binding`, issued at `now_unix` (seconds).
    pub fn seal_at<T: Serialize + ?Sized>(
        &self,
        payload: &T,
        binding: &Binding,
        now_unix: u64,
    ) -> Result<String, SealError> {
        let inner = &*self.inner;
        // The ticket id, and for encrypted tickets the nonce, from the thread's generator.
        let mut jti = [0u8; TICKET_ID_BYTES];
        let mut nonce = [0u8; NONCE_LEN];
        crate::random::fill(&mut jti).map_err(SealError::Random)?;
        if inner.mode == SealMode::Encrypted {
            crate::random::fill(&mut nonce).map_err(SealError::Random)?;
        }
        let claims = Claims {
            iat: now_unix,
            exp: now_unix.saturating_add(inner.ttl_secs),
            jti,
            bnd: *binding.digest().as_bytes(),
        };
        let active = inner.ring.active();
        let prefix = inner.mode.prefix();
        let kid = active.id.as_str();
        // prefix '.' kid '.'
        let header_len = prefix.len() + kid.len() + 2;
        let max = inner.max_token_len;

        match inner.mode {
            SealMode::Encrypted => {
                // nonce || plaintext, encrypted in place, then the tag appended.
                let mut buffer = Vec::with_capacity(NONCE_LEN + CLAIMS_LEN + 256 + TAG_LEN);
                buffer.extend_from_slice(&nonce);
                claims.write(&mut buffer);
                serde_json::to_writer(&mut buffer, payload).map_err(SealError::Payload)?;
                let len = header_len.saturating_add(b64_len(buffer.len().saturating_add(TAG_LEN)));
                if len > max {
                    return Err(SealError::TooLarge { len, max });
                }
                let mut token = String::with_capacity(len);
                push_header(&mut token, prefix, kid);
                let (nonce, message) = buffer
                    .split_at_mut_checked(NONCE_LEN)
                    .ok_or(SealError::Cipher)?;
                let nonce: &[u8; NONCE_LEN] =
                    (&*nonce).try_into().map_err(|_| SealError::Cipher)?;
                let tag = active
                    .keys
                    .aead
                    .encrypt(nonce, token.as_bytes(), message)
                    .ok_or(SealError::Cipher)?;
                buffer.extend_from_slice(&tag);
                B64.encode_append(&buffer, &mut token);
                Ok(token)
            }
            SealMode::Signed => {
                let mut json = Vec::with_capacity(CLAIMS_LEN + 256);
                claims.write(&mut json);
                serde_json::to_writer(&mut json, payload).map_err(SealError::Payload)?;
                let len = header_len
                    .saturating_add(b64_len(json.len()))
                    .saturating_add(1 + b64_len(MAC_LEN));
                if len > max {
                    return Err(SealError::TooLarge { len, max });
                }
                let mut token = String::with_capacity(len);
                push_header(&mut token, prefix, kid);
                B64.encode_append(&json, &mut token);
                let mut mac = active.keys.mac.clone();
                mac.update(token.as_bytes());
                let tag = mac.finalize().into_bytes();
                token.push('.');
                B64.encode_append(tag, &mut token);
                Ok(token)
            }
        }
    }

    /// Opens a ticket for the call described by `binding`, checking it against the clock now.
    pub fn open<T: DeserializeOwned>(
        &self,
        token: &str,
        binding: &Binding,
    ) -> Result<Opened<T>, OpenError> {
        self.open_at(token, binding, unix_now())
    }

    /// Opens a ticket for the call described by `binding`, checking it against `now_unix` (seconds).
    ///
    /// Checks, in order: size budget (before any decoding), structure, key id,
    /// integrity (AEAD or constant-time MAC), claims, expiry, issued-at skew,
    /// binding (constant-time), payload type.
    pub fn open_at<T: DeserializeOwned>(
        &self,
        token: &str,
        binding: &Binding,
        now_unix: u64,
    ) -> Result<Opened<T>, OpenError> {
        let inner = &*self.inner;
        let max = inner.max_token_len;
        if token.len() > max {
            return Err(OpenError::TooLarge {
                len: token.len(),
                max,
            });
        }
        let parts = token::split(token)?;
        let kid = match parts {
            Parts::Encrypted { kid, .. } | Parts::Signed { kid, .. } => kid,
        };
        let entry = inner.ring.get(kid).ok_or_else(|| match KeyId::new(kid) {
            Ok(key_id) => OpenError::UnknownKey { key_id },
            Err(_) => OpenError::Malformed {
                detail: "invalid key id",
            },
        })?;

        let claims_bytes = match parts {
            Parts::Encrypted { aad, body, .. } => decrypt(&entry.keys, aad, body)?,
            Parts::Signed {
                signed,
                payload,
                mac,
                ..
            } => verify(&entry.keys, signed, payload, mac)?,
        };

        let (claims, data) = Claims::read(&claims_bytes).ok_or(OpenError::Malformed {
            detail: "claims are shorter than their fixed header",
        })?;
        if claims.exp < claims.iat {
            return Err(OpenError::Malformed {
                detail: "expiry precedes issue time",
            });
        }
        // This instance's own TTL bounds every ticket, whatever its `exp`
        // says: one minted by an instance with a longer TTL (sharing the key)
        // expires here once `iat` + this TTL + the clock skew is past. The
        // skew allowed is never longer than the TTL itself.
        let skew = MAX_CLOCK_SKEW_SECS.min(inner.ttl_secs);
        let expires_here = claims.exp.min(
            claims
                .iat
                .saturating_add(inner.ttl_secs.saturating_add(skew)),
        );
        if now_unix >= expires_here {
            return Err(OpenError::Expired {
                expires_at: expires_here,
                now: now_unix,
            });
        }
        if claims.iat > now_unix.saturating_add(MAX_CLOCK_SKEW_SECS) {
            return Err(OpenError::NotYetValid {
                issued_at: claims.iat,
                now: now_unix,
            });
        }
        // A ticket sealed with the binding's first format carries that digest.
        let bound = |digest: &BindingDigest| bool::from(claims.bnd.ct_eq(digest.as_bytes()));
        if !(bound(binding.digest()) || bound(&binding.digest_v1())) {
            return Err(OpenError::BindingMismatch);
        }
        // A payload is UTF-8 JSON (it was sealed so): checked once as a whole,
        // not string by string.
        let payload = match std::str::from_utf8(data) {
            Ok(text) => serde_json::from_str(text),
            Err(_) => serde_json::from_slice(data),
        }
        .map_err(OpenError::Payload)?;
        Ok(Opened {
            payload,
            ticket_id: B64.encode_to_string(claims.jti),
            issued_at: claims.iat,
            expires_at: claims.exp,
        })
    }
}

/// Decodes and decrypts the body of a `t1e` token; returns the claims.
fn decrypt(keys: &SubKeys, aad: &str, body: &str) -> Result<Vec<u8>, OpenError> {
    let malformed = |detail| OpenError::Malformed { detail };
    let mut buffer = B64
        .decode_to_vec(body)
        .map_err(|_| malformed("body is not canonical base64url"))?;
    let tag_at = buffer
        .len()
        .checked_sub(TAG_LEN)
        .filter(|&at| at >= NONCE_LEN)
        .ok_or(malformed("body is too short"))?;
    let (nonce_and_message, tag) = buffer
        .split_at_mut_checked(tag_at)
        .ok_or(malformed("body is too short"))?;
    let (nonce, message) = nonce_and_message
        .split_at_mut_checked(NONCE_LEN)
        .ok_or(malformed("body is too short"))?;
    let nonce: &[u8; NONCE_LEN] = (&*nonce).try_into().map_err(|_| malformed("nonce"))?;
    let tag: &[u8; TAG_LEN] = (&*tag).try_into().map_err(|_| malformed("tag"))?;
    keys.aead
        .decrypt(nonce, aad.as_bytes(), message, tag)
        .map_err(|_| OpenError::Integrity)?;
    buffer.truncate(tag_at);
    buffer.drain(..NONCE_LEN);
    Ok(buffer)
}

/// Verifies the MAC of a `t1s` token, then decodes its payload; returns the claims.
fn verify(keys: &SubKeys, signed: &str, payload: &str, mac: &str) -> Result<Vec<u8>, OpenError> {
    let malformed = |detail| OpenError::Malformed { detail };
    let not_canonical = || malformed("signature is not canonical base64url");
    // Exactly MAC_LEN bytes are expected; measured first, so decoding cannot
    // overrun the tag.
    let mut tag = [0u8; MAC_LEN];
    if B64
        .decoded_length(mac.as_bytes())
        .map_err(|_| not_canonical())?
        != MAC_LEN
    {
        return Err(OpenError::Integrity);
    }
    B64.decode(mac.as_bytes(), base64_simd::Out::from_slice(&mut tag))
        .map_err(|_| not_canonical())?;
    let mut verifier = keys.mac.clone();
    verifier.update(signed.as_bytes());
    // Constant time; also refuses a tag of the wrong length.
    verifier
        .verify_slice(&tag)
        .map_err(|_| OpenError::Integrity)?;
    B64.decode_to_vec(payload)
        .map_err(|_| malformed("payload is not canonical base64url"))
}

/// Writes `prefix.kid.`.
fn push_header(token: &mut String, prefix: &str, kid: &str) {
    token.push_str(prefix);
    token.push('.');
    token.push_str(kid);
    token.push('.');
}

impl fmt::Debug for RequestStateCodec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestStateCodec")
            .field("mode", &self.inner.mode)
            .field("ttl_secs", &self.inner.ttl_secs)
            .field("max_token_len", &self.inner.max_token_len)
            .field("keys", &self.inner.ring)
            .finish()
    }
}

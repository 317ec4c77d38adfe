//! The requestState codec of a stateless MCP server: sealed, bound, expiring tickets.
//!
//! A server that needs the user's input answers with `input_required` and a
//! `requestState` ticket, then forgets the request. The client retries with
//! the user's answers and the ticket; any instance can open it. The ticket
//! travels through the client, so everything here treats it as
//! attacker-controlled input: it is size-checked before decoding,
//! authenticated before parsing, and checked for expiry and for the call it
//! was minted for before the typed state is handed back.
//!
//! - [`KeyRing`] / [`StateKey`]: secrets of at least 32 bytes under short key
//!   ids; one active id seals, older ids still open (rotation).
//! - [`Binding`]: method, target, the arguments in canonical JSON,
//!   principal and audience, reduced to one digest inside the ticket.
//! - [`RequestStateCodec`]: [`seal`](RequestStateCodec::seal) and
//!   [`open`](RequestStateCodec::open) typed state in [`SealMode::Encrypted`]
//!   (XChaCha20-Poly1305, default) or [`SealMode::Signed`] (HMAC-SHA256).
//! - [`OpenError`]: why a ticket was refused, for logs; every variant maps to
//!   one wire error ([`WIRE_CODE`], [`WIRE_MESSAGE`], [`WIRE_REASON`]).
//! - [`TicketLedger`] / [`MemoryLedger`]: single use.
//!
//! # Token format
//!
//! ```text
//! t1e.<kid>.<base64url(nonce[24] || ciphertext || tag[16])>     SealMode::Encrypted
//! t1s.<kid>.<base64url(claims)>.<base64url(hmac[32])>           SealMode::Signed
//! ```
//!
//! `t1` is the format version, `e`/`s` the mode, `<kid>` the key id. Both are
//! authenticated: `t1e.<kid>.` is the AEAD's associated data, and the MAC
//! covers `t1s.<kid>.<payload>`. Base64 is URL-safe without padding, decoded
//! strictly. The claims are a fixed 64-byte header — `iat`, `exp` (unix
//! seconds, big-endian), `jti` (128-bit random ticket id), `bnd` (binding
//! digest) — followed by `data`, the payload as JSON.
//! Subkeys for the AEAD and the MAC are derived from each secret with
//! HKDF-SHA256 (`info` = `tessera/requestState/v1/aead` and `.../mac`).
//!
//! No I/O, no async runtime. On `wasm32-unknown-unknown` enable the `wasm`
//! feature (randomness from `crypto.getRandomValues`, time from `Date.now()`).
//!
//! ```
//! use serde::{Deserialize, Serialize};
//! use serde_json::json;
//! use tessera_state::{Binding, KeyRing, MemoryLedger, RequestStateCodec};
//!
//! #[derive(Serialize, Deserialize)]
//! struct Counter { step: u8, total: i64 }
//!
//! // In production: KeyRing::from_env_list(&std::env::var("MRTR_REQUEST_STATE_KEYS")?)
//! let ring = KeyRing::from_env_list("k1:an example secret that is long enough!!")?;
//! let codec = RequestStateCodec::new(ring);
//! let ledger = MemoryLedger::default();
//!
//! let args = json!({"amount": 5});
//! let binding = Binding::new("tools/call", "increase-counter", &args, Some("alice"), "https://mcp.example.com/mcp");
//! let ticket = codec.seal(&Counter { step: 1, total: 5 }, &binding)?;
//!
//! // ... the client retries the same call with `requestState: ticket` ...
//! let opened = codec.open::<Counter>(&ticket, &binding)?;
//! assert_eq!(opened.payload.total, 5);
//! ledger.consume_at(&opened.ticket_id, opened.expires_at, opened.issued_at)?;
//! assert!(ledger.consume_at(&opened.ticket_id, opened.expires_at, opened.issued_at).is_err());
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod aead;
#[cfg(fuzzing)]
pub use aead::fuzzing as aead_fuzzing;
mod binding;
mod canonical;
mod codec;
mod digest;
mod error;
mod hex;
mod key;
mod ledger;
mod mode;
mod random;
mod sha256;
mod subkey;
mod ticket;
mod token;

pub use binding::{ArgumentsDigest, Binding, BindingDigest, BindingPrefix};
pub use canonical::canonical_json;
pub use codec::{
    DEFAULT_MAX_TOKEN_LEN, DEFAULT_TTL, MAX_CLOCK_SKEW_SECS, MAX_TTL, MIN_MAX_TOKEN_LEN,
    RequestStateCodec, RequestStateCodecBuilder,
};
pub use digest::digest_hex;
pub use error::{
    ConfigError, LedgerError, OpenError, SealError, WIRE_CODE, WIRE_MESSAGE, WIRE_REASON,
};
pub use hex::{lower_hex, push_lower_hex};
pub use key::{KEY_VAR, KEYS_VAR, KeyError, KeyId, KeyRing, MAX_KEY_ID_LEN, MIN_KEY_LEN, StateKey};
pub use ledger::{LedgerFuture, MemoryLedger, TicketLedger};
pub use mode::SealMode;
pub use random::random_id;
pub use sha256::sha256;
pub use ticket::Opened;

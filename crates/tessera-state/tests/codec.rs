//! Behaviour of the codec through its public API: round trips, tampering,
//! binding, expiry, rotation, budgets and redaction.

use std::collections::BTreeMap;
use std::fmt::Debug;
use std::time::Duration;

use base64_simd::URL_SAFE_NO_PAD;
use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tessera_state::{
    Binding, ConfigError, KeyRing, OpenError, RequestStateCodec, SealError, SealMode, StateKey,
};

const NOW: u64 = 1_767_225_600;
const SECRET_1: &str = "first secret: thirty-two bytes or more";
const SECRET_2: &str = "second secret (also comfortably long)";
const MODES: [SealMode; 2] = [SealMode::Encrypted, SealMode::Signed];

fn key(secret: &str) -> StateKey {
    StateKey::from_secret_str(secret).expect("valid key")
}

fn codec(mode: SealMode) -> RequestStateCodec {
    let ring = KeyRing::new("k1", key(SECRET_1)).expect("ring");
    RequestStateCodec::builder(ring)
        .mode(mode)
        .build()
        .expect("codec")
}

fn binding() -> Binding {
    Binding::new(
        "tools/call",
        "increase-counter",
        &json!({"amount": 5, "options": {"unit": "clicks", "round": true}}),
        Some("alice"),
        "https://mcp.example.com/mcp",
    )
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Form {
    step: u32,
    name: String,
    answers: Vec<Option<bool>>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum Step {
    Start,
    AskedName(String),
    AskedAge { name: String, attempts: u8 },
    Pair(i64, f64),
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Nested {
    steps: Vec<Step>,
    forms: BTreeMap<String, Form>,
    extra: Value,
    unit: (),
}

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + Debug>(value: &T) {
    for mode in MODES {
        let codec = codec(mode);
        let token = codec.seal_at(value, &binding(), NOW).expect("seal");
        let opened = codec
            .open_at::<T>(&token, &binding(), NOW + 1)
            .expect("open");
        assert_eq!(&opened.payload, value, "{mode:?}");
        assert_eq!(opened.issued_at, NOW);
        assert_eq!(opened.expires_at, NOW + 600);
    }
}

#[test]
fn round_trips_in_both_modes_for_several_shapes() {
    round_trip(&Form {
        step: 2,
        name: "Ada \"Countess\" Lovelace — 😀".into(),
        answers: vec![Some(true), None, Some(false)],
    });
    round_trip(&Step::Start);
    round_trip(&Step::AskedName("Grace".into()));
    round_trip(&Step::AskedAge {
        name: "Grace".into(),
        attempts: 3,
    });
    round_trip(&Step::Pair(-7, 2.5));
    round_trip(&"just a string with \n newline and \u{0} nul".to_owned());
    round_trip(&String::new());
    round_trip(&42u64);
    round_trip(&());
    round_trip(&vec![1u8, 2, 3]);
    round_trip(&json!({"z": [1, {"y": null}], "a": "b"}));
    let mut forms = BTreeMap::new();
    forms.insert(
        "first".to_owned(),
        Form {
            step: 1,
            name: "x".into(),
            answers: vec![],
        },
    );
    round_trip(&Nested {
        steps: vec![
            Step::Start,
            Step::AskedName("n".into()),
            Step::Pair(1, -0.5),
        ],
        forms,
        extra: json!({"deep": [[[{"deeper": true}]]]}),
        unit: (),
    });
}

#[test]
fn token_format_names_version_mode_and_key_id() {
    let encrypted = codec(SealMode::Encrypted)
        .seal_at(&Step::Start, &binding(), NOW)
        .expect("seal");
    let parts: Vec<&str> = encrypted.split('.').collect();
    assert_eq!(parts.len(), 3, "{encrypted}");
    assert_eq!(&parts[..2], ["t1e", "k1"]);
    // 24-byte nonce + ciphertext + 16-byte tag.
    let body = URL_SAFE_NO_PAD.decode_to_vec(parts[2]).expect("base64url");
    assert!(body.len() > 24 + 16);

    let signed = codec(SealMode::Signed)
        .seal_at(&Step::AskedName("Ada".into()), &binding(), NOW)
        .expect("seal");
    let parts: Vec<&str> = signed.split('.').collect();
    assert_eq!(parts.len(), 4, "{signed}");
    assert_eq!(&parts[..2], ["t1s", "k1"]);
    assert_eq!(
        URL_SAFE_NO_PAD.decode_to_vec(parts[3]).expect("mac").len(),
        32
    );
    // The signed payload: iat and exp (big-endian), the 16-byte ticket id,
    // the 32-byte binding digest, then the payload as readable JSON.
    let claims = URL_SAFE_NO_PAD.decode_to_vec(parts[2]).expect("payload");
    assert_eq!(claims[..8], NOW.to_be_bytes());
    assert_eq!(claims[8..16], (NOW + 600).to_be_bytes());
    assert_eq!(claims[32..64], *binding().digest().as_bytes());
    let data: Value = serde_json::from_slice(&claims[64..]).expect("json");
    assert_eq!(data, json!({"AskedName": "Ada"}));
    let opened = codec(SealMode::Signed)
        .open_at::<Step>(&signed, &binding(), NOW)
        .expect("open");
    assert_eq!(
        opened.ticket_id,
        URL_SAFE_NO_PAD.encode_to_string(&claims[16..32])
    );

    for token in [&encrypted, &signed] {
        assert!(
            token
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b)),
            "{token}"
        );
    }
}

#[test]
fn opening_accepts_both_modes_whatever_the_codec_seals() {
    let encrypted = codec(SealMode::Encrypted);
    let signed = codec(SealMode::Signed);
    let from_encrypted = encrypted
        .seal_at(&Step::Start, &binding(), NOW)
        .expect("seal");
    let from_signed = signed.seal_at(&Step::Start, &binding(), NOW).expect("seal");
    for opener in [&encrypted, &signed] {
        for token in [&from_encrypted, &from_signed] {
            assert_eq!(
                opener
                    .open_at::<Step>(token, &binding(), NOW)
                    .expect("open")
                    .payload,
                Step::Start
            );
        }
    }
}

fn assert_rejected(codec: &RequestStateCodec, token: &str, context: &str) -> OpenError {
    match codec.open_at::<Value>(token, &binding(), NOW + 1) {
        Ok(opened) => panic!("{context}: {token:?} opened as {:?}", opened.payload),
        Err(error) => error,
    }
}

#[test]
fn every_single_bit_flip_is_rejected_in_both_modes() {
    for mode in MODES {
        let codec = codec(mode);
        let token = codec
            .seal_at(&json!({"step": 1, "name": "Ada"}), &binding(), NOW)
            .expect("seal");
        let mut tried = 0usize;
        for index in 0..token.len() {
            for bit in 0..8 {
                let mut bytes = token.as_bytes().to_vec();
                bytes[index] ^= 1 << bit;
                // A flip that leaves UTF-8 cannot even be passed as `&str`: rejected by type.
                let Ok(flipped) = String::from_utf8(bytes) else {
                    continue;
                };
                tried += 1;
                assert_rejected(
                    &codec,
                    &flipped,
                    &format!("{mode:?} byte {index} bit {bit}"),
                );
            }
        }
        // Bits 0..=6 of every ASCII byte keep it valid UTF-8.
        assert_eq!(tried, token.len() * 7, "{mode:?}");
    }
}

#[test]
fn truncation_and_extension_are_rejected() {
    for mode in MODES {
        let codec = codec(mode);
        let token = codec.seal_at(&Step::Start, &binding(), NOW).expect("seal");
        for len in 0..token.len() {
            assert_rejected(
                &codec,
                &token[..len],
                &format!("{mode:?} truncated to {len}"),
            );
            // Dropping a prefix is as bad as dropping a suffix.
            assert_rejected(
                &codec,
                &token[len + 1..],
                &format!("{mode:?} without first {len}"),
            );
        }
        for suffix in [
            "A", "a", "0", "-", "_", ".", "=", " ", "\n", "AA", "AAA", "AAAA", ".A",
        ] {
            assert_rejected(
                &codec,
                &format!("{token}{suffix}"),
                &format!("{mode:?} + {suffix:?}"),
            );
            assert_rejected(
                &codec,
                &format!("{suffix}{token}"),
                &format!("{suffix:?} + {mode:?}"),
            );
        }
    }
}

#[test]
fn empty_and_garbage_inputs_are_malformed() {
    let codec = codec(SealMode::Encrypted);
    for input in [
        "",
        ".",
        "..",
        "...",
        "t1e",
        "t1e..",
        "t1s...",
        "hello",
        "t1e.k1",
        "🙂.🙂.🙂",
    ] {
        let error = assert_rejected(&codec, input, "garbage");
        assert!(
            matches!(error, OpenError::Malformed { .. }),
            "{input:?}: {error:?}"
        );
        assert_eq!(error.reason(), "malformed");
    }
}

#[test]
fn a_changed_version_prefix_is_rejected() {
    for mode in MODES {
        let codec = codec(mode);
        let token = codec.seal_at(&Step::Start, &binding(), NOW).expect("seal");
        let rest = &token[3..];
        for prefix in [
            "t1e", "t1s", "t2e", "t2s", "t0e", "t1x", "T1E", "t1", "t1ee", "",
        ] {
            if prefix == mode.prefix() {
                continue;
            }
            assert_rejected(
                &codec,
                &format!("{prefix}{rest}"),
                &format!("{mode:?} as {prefix}"),
            );
        }
    }
}

#[test]
fn a_changed_key_id_is_rejected() {
    let ring = KeyRing::new("k1", key(SECRET_1))
        .expect("ring")
        .with_key("k2", key(SECRET_2))
        .expect("ring");
    for mode in MODES {
        let codec = RequestStateCodec::builder(KeyRing::new("k1", key(SECRET_1)).expect("ring"))
            .mode(mode)
            .build()
            .expect("codec");
        let both = RequestStateCodec::builder(
            KeyRing::new("k1", key(SECRET_1))
                .expect("ring")
                .with_key("k2", key(SECRET_2))
                .expect("ring"),
        )
        .mode(mode)
        .build()
        .expect("codec");
        let token = codec.seal_at(&Step::Start, &binding(), NOW).expect("seal");
        assert!(ring.contains("k2"));

        // Another id in the ring: the id is authenticated, so integrity fails.
        let relabelled = token.replacen(".k1.", ".k2.", 1);
        let error = assert_rejected(&both, &relabelled, "relabelled k2");
        assert!(matches!(error, OpenError::Integrity), "{error:?}");

        // An id not in the ring.
        let error = assert_rejected(&both, &token.replacen(".k1.", ".k3.", 1), "unknown k3");
        assert!(matches!(error, OpenError::UnknownKey { ref key_id } if key_id.as_str() == "k3"));
        assert_eq!(error.reason(), "unknown_key");

        // The same id under another secret.
        let impostor = RequestStateCodec::new(KeyRing::new("k1", key(SECRET_2)).expect("ring"));
        let error = impostor
            .open_at::<Step>(&token, &binding(), NOW)
            .expect_err("other secret");
        assert!(matches!(error, OpenError::Integrity), "{error:?}");
    }
}

#[test]
fn a_signed_payload_cannot_be_edited() {
    let codec = codec(SealMode::Signed);
    let token = codec
        .seal_at(&json!({"total": 5}), &binding(), NOW)
        .expect("seal");
    let parts: Vec<&str> = token.split('.').collect();
    let claims = URL_SAFE_NO_PAD.decode_to_vec(parts[2]).expect("payload");
    // A later expiry and a larger total, the signature left as it was.
    let mut edited = claims[..8].to_vec();
    edited.extend_from_slice(&(NOW + 1_000_000).to_be_bytes());
    edited.extend_from_slice(&claims[16..64]);
    edited.extend_from_slice(br#"{"total":5000}"#);
    let forged = format!(
        "{}.{}.{}.{}",
        parts[0],
        parts[1],
        URL_SAFE_NO_PAD.encode_to_string(&edited),
        parts[3]
    );
    let error = assert_rejected(&codec, &forged, "edited payload");
    assert!(matches!(error, OpenError::Integrity), "{error:?}");
}

#[test]
fn each_binding_component_changed_alone_is_a_mismatch() {
    let args = json!({"amount": 5, "options": {"unit": "clicks", "round": true}});
    let aud = "https://mcp.example.com/mcp";
    let others = [
        (
            "method",
            Binding::new("prompts/get", "increase-counter", &args, Some("alice"), aud),
        ),
        (
            "target",
            Binding::new("tools/call", "decrease-counter", &args, Some("alice"), aud),
        ),
        (
            "argument value",
            Binding::new(
                "tools/call",
                "increase-counter",
                &json!({"amount": 6, "options": {"unit": "clicks", "round": true}}),
                Some("alice"),
                aud,
            ),
        ),
        (
            "nested argument value",
            Binding::new(
                "tools/call",
                "increase-counter",
                &json!({"amount": 5, "options": {"unit": "clicks", "round": false}}),
                Some("alice"),
                aud,
            ),
        ),
        (
            "argument added",
            Binding::new(
                "tools/call",
                "increase-counter",
                &json!({"amount": 5, "options": {"unit": "clicks", "round": true}, "x": 1}),
                Some("alice"),
                aud,
            ),
        ),
        (
            "principal None",
            Binding::new("tools/call", "increase-counter", &args, None, aud),
        ),
        (
            "principal B",
            Binding::new("tools/call", "increase-counter", &args, Some("bob"), aud),
        ),
        (
            "audience",
            Binding::new(
                "tools/call",
                "increase-counter",
                &args,
                Some("alice"),
                "https://other.example/mcp",
            ),
        ),
    ];
    for mode in MODES {
        let codec = codec(mode);
        let token = codec.seal_at(&Step::Start, &binding(), NOW).expect("seal");
        for (what, other) in &others {
            let error = codec.open_at::<Step>(&token, other, NOW).expect_err(what);
            assert!(
                matches!(error, OpenError::BindingMismatch),
                "{mode:?} {what}: {error:?}"
            );
            assert_eq!(error.reason(), "binding_mismatch");
        }
        // And the other way: a ticket minted anonymously fails for a principal.
        let anonymous = &others[5].1;
        let token = codec.seal_at(&Step::Start, anonymous, NOW).expect("seal");
        assert!(matches!(
            codec.open_at::<Step>(&token, &binding(), NOW),
            Err(OpenError::BindingMismatch)
        ));
        assert!(codec.open_at::<Step>(&token, anonymous, NOW).is_ok());
    }
}

#[test]
fn argument_key_order_does_not_matter() {
    let reordered: Value =
        serde_json::from_str(r#"{"options": {"round": true, "unit": "clicks"}, "amount": 5}"#)
            .expect("json");
    let same = Binding::new(
        "tools/call",
        "increase-counter",
        &reordered,
        Some("alice"),
        "https://mcp.example.com/mcp",
    );
    assert_eq!(same.digest(), binding().digest());
    for mode in MODES {
        let codec = codec(mode);
        let token = codec.seal_at(&Step::Start, &binding(), NOW).expect("seal");
        assert!(codec.open_at::<Step>(&token, &same, NOW).is_ok());
    }
    let flat_a: Value = serde_json::from_str(r#"{"a":1,"b":2}"#).expect("json");
    let flat_b: Value = serde_json::from_str(r#"{"b":2,"a":1}"#).expect("json");
    assert_eq!(
        tessera_state::ArgumentsDigest::of(&flat_a),
        tessera_state::ArgumentsDigest::of(&flat_b)
    );
}

#[test]
fn expired_and_not_yet_valid_tickets_are_rejected() {
    for mode in MODES {
        let codec = codec(mode);
        let token = codec.seal_at(&Step::Start, &binding(), NOW).expect("seal");
        assert!(codec.open_at::<Step>(&token, &binding(), NOW).is_ok());
        assert!(codec.open_at::<Step>(&token, &binding(), NOW + 599).is_ok());
        for later in [NOW + 600, NOW + 601, NOW + 86_400, u64::MAX] {
            let error = codec
                .open_at::<Step>(&token, &binding(), later)
                .expect_err("expired");
            assert!(
                matches!(error, OpenError::Expired { expires_at, .. } if expires_at == NOW + 600)
            );
            assert_eq!(error.reason(), "expired");
        }
        // Sealed by an instance whose clock runs ahead.
        let ahead = codec
            .seal_at(&Step::Start, &binding(), NOW + 60)
            .expect("seal");
        assert!(
            codec.open_at::<Step>(&ahead, &binding(), NOW).is_ok(),
            "60 s skew is tolerated"
        );
        let too_far = codec
            .seal_at(&Step::Start, &binding(), NOW + 61)
            .expect("seal");
        let error = codec
            .open_at::<Step>(&too_far, &binding(), NOW)
            .expect_err("future");
        assert!(
            matches!(error, OpenError::NotYetValid { issued_at, now } if issued_at == NOW + 61 && now == NOW)
        );
        assert_eq!(error.reason(), "not_yet_valid");
        // The real clock: a fresh ticket opens.
        let fresh = codec.seal(&Step::Start, &binding()).expect("seal");
        assert!(codec.open::<Step>(&fresh, &binding()).is_ok());
        // Seal at the end of time saturates rather than wrapping, and is expired.
        let end = codec
            .seal_at(&Step::Start, &binding(), u64::MAX)
            .expect("seal");
        assert!(matches!(
            codec.open_at::<Step>(&end, &binding(), u64::MAX),
            Err(OpenError::Expired { .. })
        ));
    }
}

/// Issue #14, 5: "The server's own TTL bounds every ticket at open (`iat` +
/// TTL + skew), whatever `exp` says" — the skew never longer than the TTL.
#[test]
fn the_opening_instance_ttl_bounds_a_ticket_minted_with_a_longer_one() {
    for mode in MODES {
        let long = codec(mode);
        let short = RequestStateCodec::builder(KeyRing::new("k1", key(SECRET_1)).expect("ring"))
            .mode(mode)
            .ttl(Duration::from_secs(2))
            .build()
            .expect("codec");
        let token = long.seal_at(&Step::Start, &binding(), NOW).expect("seal");
        assert!(long.open_at::<Step>(&token, &binding(), NOW + 5).is_ok());
        let opened = short
            .open_at::<Step>(&token, &binding(), NOW + 3)
            .expect("within TTL + skew");
        assert_eq!(
            opened.expires_at,
            NOW + 600,
            "a shared ledger remembers it by the sealed expiry, not this instance's bound"
        );
        let error = short
            .open_at::<Step>(&token, &binding(), NOW + 4)
            .expect_err("past this instance's TTL");
        assert!(
            matches!(error, OpenError::Expired { expires_at, .. } if expires_at == NOW + 4),
            "{error:?}"
        );
        // A 600 s instance allows the whole 60 s skew past its own TTL, no more.
        let forged_long =
            RequestStateCodec::builder(KeyRing::new("k1", key(SECRET_1)).expect("ring"))
                .mode(mode)
                .ttl(Duration::from_secs(86_400))
                .build()
                .expect("codec")
                .seal_at(&Step::Start, &binding(), NOW)
                .expect("seal");
        assert!(
            long.open_at::<Step>(&forged_long, &binding(), NOW + 659)
                .is_ok()
        );
        assert!(
            long.open_at::<Step>(&forged_long, &binding(), NOW + 660)
                .is_err()
        );
    }
}

#[test]
fn ttl_is_configurable_finite_and_positive() {
    let ring = || KeyRing::new("k1", key(SECRET_1)).expect("ring");
    let codec = RequestStateCodec::builder(ring())
        .ttl(Duration::from_secs(30))
        .build()
        .expect("codec");
    assert_eq!(codec.ttl(), Duration::from_secs(30));
    let token = codec.seal_at(&1u8, &binding(), NOW).expect("seal");
    let opened = codec
        .open_at::<u8>(&token, &binding(), NOW + 29)
        .expect("open");
    assert_eq!(opened.expires_at, NOW + 30);
    assert!(codec.open_at::<u8>(&token, &binding(), NOW + 30).is_err());

    assert_eq!(
        RequestStateCodec::new(ring()).ttl(),
        Duration::from_secs(600)
    );
    for bad in [
        Duration::ZERO,
        Duration::from_millis(999),
        tessera_state::MAX_TTL + Duration::from_secs(1),
        Duration::MAX,
    ] {
        let error = RequestStateCodec::builder(ring())
            .ttl(bad)
            .build()
            .expect_err("bad ttl");
        assert!(matches!(error, ConfigError::InvalidTtl { .. }), "{bad:?}");
    }
    assert!(
        RequestStateCodec::builder(ring())
            .ttl(tessera_state::MAX_TTL)
            .build()
            .is_ok()
    );
}

#[test]
fn rotated_out_keys_open_while_in_the_ring() {
    for mode in MODES {
        let old = RequestStateCodec::builder(KeyRing::new("k1", key(SECRET_1)).expect("ring"))
            .mode(mode)
            .build()
            .expect("codec");
        let in_flight = old.seal_at(&Step::Start, &binding(), NOW).expect("seal");

        // Rotation: k2 becomes active, k1 still opens.
        let rotated = RequestStateCodec::builder(
            KeyRing::new("k2", key(SECRET_2))
                .expect("ring")
                .with_key("k1", key(SECRET_1))
                .expect("ring"),
        )
        .mode(mode)
        .build()
        .expect("codec");
        assert!(
            rotated
                .open_at::<Step>(&in_flight, &binding(), NOW + 1)
                .is_ok()
        );
        let fresh = rotated
            .seal_at(&Step::Start, &binding(), NOW)
            .expect("seal");
        assert!(
            fresh.starts_with(&format!("{}.k2.", mode.prefix())),
            "{fresh}"
        );
        assert!(rotated.open_at::<Step>(&fresh, &binding(), NOW + 1).is_ok());
        // The old deployment cannot open tickets of the new key.
        assert!(matches!(
            old.open_at::<Step>(&fresh, &binding(), NOW + 1),
            Err(OpenError::UnknownKey { .. })
        ));

        // k1 removed: its tickets are refused as unknown.
        let retired = RequestStateCodec::new(KeyRing::new("k2", key(SECRET_2)).expect("ring"));
        let error = retired
            .open_at::<Step>(&in_flight, &binding(), NOW + 1)
            .expect_err("retired key");
        assert!(matches!(error, OpenError::UnknownKey { ref key_id } if key_id.as_str() == "k1"));
    }
}

#[test]
fn rotation_through_the_env_list() {
    let old =
        RequestStateCodec::new(KeyRing::from_env_list(&format!("k1:{SECRET_1}")).expect("ring"));
    let token = old.seal_at(&Step::Start, &binding(), NOW).expect("seal");
    let new = RequestStateCodec::new(
        KeyRing::from_env_list(&format!("k2:{SECRET_2},k1:{SECRET_1}")).expect("ring"),
    );
    assert_eq!(new.key_ring().active_id(), "k2");
    assert!(new.open_at::<Step>(&token, &binding(), NOW).is_ok());
}

#[test]
fn payload_of_the_wrong_shape_is_a_payload_error() {
    for mode in MODES {
        let codec = codec(mode);
        let token = codec
            .seal_at(&Step::AskedName("Ada".into()), &binding(), NOW)
            .expect("seal");
        let error = codec
            .open_at::<Form>(&token, &binding(), NOW)
            .expect_err("wrong shape");
        assert!(matches!(error, OpenError::Payload(_)), "{error:?}");
        assert_eq!(error.reason(), "payload");
        assert!(matches!(
            codec.open_at::<u64>(&token, &binding(), NOW),
            Err(OpenError::Payload(_))
        ));
        // A struct with a missing field is refused, never half-filled.
        let partial = codec
            .seal_at(&json!({"step": 1, "name": "x"}), &binding(), NOW)
            .expect("seal");
        assert!(matches!(
            codec.open_at::<Form>(&partial, &binding(), NOW),
            Err(OpenError::Payload(_))
        ));
        // But the right shape opens.
        assert!(codec.open_at::<Step>(&token, &binding(), NOW).is_ok());
    }
}

#[test]
fn unserializable_payloads_are_seal_errors() {
    let mut map = BTreeMap::new();
    map.insert(vec![1u8], 2u8);
    for mode in MODES {
        let error = codec(mode)
            .seal_at(&map, &binding(), NOW)
            .expect_err("non-string keys");
        assert!(matches!(error, SealError::Payload(_)), "{error:?}");
    }
}

#[test]
fn size_budget_applies_to_seal_and_open() {
    for mode in MODES {
        let codec = codec(mode);
        assert_eq!(codec.max_token_len(), 16 * 1024);
        let big = "x".repeat(16 * 1024);
        let error = codec.seal_at(&big, &binding(), NOW).expect_err("too large");
        assert!(
            matches!(error, SealError::TooLarge { max: 16384, .. }),
            "{error:?}"
        );

        // Just under the budget seals and opens.
        let fits = "x".repeat(11 * 1024);
        let token = codec.seal_at(&fits, &binding(), NOW).expect("fits");
        assert!(token.len() <= 16 * 1024);
        assert_eq!(
            codec
                .open_at::<String>(&token, &binding(), NOW)
                .expect("open")
                .payload,
            fits
        );

        // Oversized input is refused before any parsing, even when it is garbage.
        let oversized = "t1e.k1.".to_owned() + &"A".repeat(16 * 1024);
        let error = assert_rejected(&codec, &oversized, "oversized");
        assert!(matches!(error, OpenError::TooLarge { len, max: 16384 } if len == oversized.len()));
        assert_eq!(error.reason(), "too_large");
        let error = assert_rejected(&codec, &"\u{1F600}".repeat(5000), "oversized emoji");
        assert!(matches!(error, OpenError::TooLarge { .. }));

        // Configurable: a smaller budget refuses what the default accepts, both ways.
        let small = RequestStateCodec::builder(KeyRing::new("k1", key(SECRET_1)).expect("ring"))
            .mode(mode)
            .max_token_len(1024)
            .build()
            .expect("codec");
        assert!(matches!(
            small.seal_at(&"y".repeat(1024), &binding(), NOW),
            Err(SealError::TooLarge { max: 1024, .. })
        ));
        let medium = codec
            .seal_at(&"y".repeat(1024), &binding(), NOW)
            .expect("seal");
        assert!(matches!(
            small.open_at::<String>(&medium, &binding(), NOW),
            Err(OpenError::TooLarge { max: 1024, .. })
        ));
    }
    let error = RequestStateCodec::builder(KeyRing::new("k1", key(SECRET_1)).expect("ring"))
        .max_token_len(127)
        .build()
        .expect_err("tiny budget");
    assert_eq!(error, ConfigError::BudgetTooSmall { got: 127, min: 128 });
}

#[test]
fn ticket_ids_are_random_128_bit() {
    let codec = codec(SealMode::Encrypted);
    let mut ids = std::collections::HashSet::new();
    let mut tokens = std::collections::HashSet::new();
    for _ in 0..200 {
        let token = codec.seal_at(&Step::Start, &binding(), NOW).expect("seal");
        let opened = codec
            .open_at::<Step>(&token, &binding(), NOW)
            .expect("open");
        assert_eq!(
            URL_SAFE_NO_PAD
                .decode_to_vec(&opened.ticket_id)
                .expect("b64")
                .len(),
            16
        );
        assert!(ids.insert(opened.ticket_id));
        assert!(
            tokens.insert(token),
            "random nonce makes every token distinct"
        );
    }
}

#[test]
fn debug_output_never_contains_secrets() {
    let ring = KeyRing::new("k2", key(SECRET_2))
        .expect("ring")
        .with_key("k1", key(SECRET_1))
        .expect("ring");
    let codec = RequestStateCodec::builder(ring)
        .mode(SealMode::Signed)
        .build()
        .expect("codec");
    let printed = format!("{codec:?} {codec:#?} {:?}", codec.key_ring());
    for secret in [SECRET_1, SECRET_2] {
        assert!(!printed.contains(secret), "{printed}");
        assert!(!printed.contains(&secret[..8]), "{printed}");
    }
    assert!(printed.contains("k1") && printed.contains("k2") && printed.contains("Signed"));
    let key = key(SECRET_1);
    assert!(!format!("{key:?}").contains(&SECRET_1[..8]));
}

#[test]
fn codec_is_send_sync_clone_and_clones_share_keys() {
    fn assert_traits<T: Send + Sync + Clone + 'static>() {}
    assert_traits::<RequestStateCodec>();
    let codec = codec(SealMode::Encrypted);
    let clone = codec.clone();
    let token = codec.seal_at(&Step::Start, &binding(), NOW).expect("seal");
    let opened = std::thread::spawn(move || clone.open_at::<Step>(&token, &binding(), NOW))
        .join()
        .expect("thread");
    assert!(opened.is_ok());
}

/// A ticket sealed by the codec before its AEAD moved to ring (the same
/// XChaCha20-Poly1305, byte for byte) and before the binding's second
/// format (it carries the format 1 digest): tickets in flight across either
/// upgrade still open, and a changed byte still does not, nor the same
/// ticket for another call.
#[test]
fn a_ticket_sealed_before_the_aead_moved_to_ring_still_opens() {
    const SEALED: &str = "t1e.k1.rzOwyD56-Vep8iKwEv3iDM7ac75Kecksn6iD6WGp0Cnj9adyps9AgAncQF7CVP3-Fa-lWHuMu-gfNA060shfPkFqch0mOFbUhPp7v5sEe1pcgAYa9yPcyf0MY4vLnL4uOL8vpkIIwJZ8pudKM1ZoiUXVfX917G-iviXeRpf3yLy2FJcd4TtV4CTPpWBv-5OdTwEL53Mi";
    let codec = RequestStateCodec::new(
        KeyRing::from_env_list("k1:a secret sealed before ring and long enough").expect("ring"),
    );
    let binding = Binding::new(
        "tools/call",
        "increase-counter",
        &json!({"current": 10}),
        Some("alice"),
        "https://mcp.example.com/mcp",
    );
    let opened = codec
        .open_at::<Value>(SEALED, &binding, NOW + 1)
        .expect("an earlier ticket opens");
    assert_eq!(
        opened.payload,
        json!({"q": {"amount": "form"}, "a": {"x": {"amount": 5}}})
    );
    assert_ne!(*binding.digest(), binding.digest_v1());
    let mut altered = SEALED.to_owned();
    altered.replace_range(40..41, if &SEALED[40..41] == "A" { "B" } else { "A" });
    assert!(codec.open_at::<Value>(&altered, &binding, NOW + 1).is_err());
    let other = Binding::new(
        "tools/call",
        "increase-counter",
        &json!({"current": 11}),
        Some("alice"),
        "https://mcp.example.com/mcp",
    );
    assert!(matches!(
        codec.open_at::<Value>(SEALED, &other, NOW + 1),
        Err(OpenError::BindingMismatch)
    ));
}

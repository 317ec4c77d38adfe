//! Opens arbitrary input as a requestState ticket: it must never open and never panic.
//!
//! Run with `cargo +nightly fuzz run open_request_state` from the repository root.

#![no_main]

use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use serde_json::{Value, json};
use tessera_state::{Binding, KeyRing, RequestStateCodec, SealMode, StateKey};

const NOW: u64 = 1_767_225_600;

struct Fixture {
    encrypted: RequestStateCodec,
    signed: RequestStateCodec,
    binding: Binding,
}

static FIXTURE: LazyLock<Fixture> = LazyLock::new(|| {
    let ring = || {
        KeyRing::new(
            "k1",
            StateKey::from_secret_str("fuzzing secret, at least thirty-two bytes").expect("key"),
        )
        .expect("ring")
        .with_key(
            "k0",
            StateKey::from_secret_str("older fuzzing secret, also long enough").expect("key"),
        )
        .expect("ring")
    };
    Fixture {
        encrypted: RequestStateCodec::new(ring()),
        signed: RequestStateCodec::builder(ring())
            .mode(SealMode::Signed)
            .build()
            .expect("codec"),
        binding: Binding::new("tools/call", "fuzz", &json!({"a": 1}), Some("p"), "aud"),
    }
});

fuzz_target!(|data: &[u8]| {
    let Ok(token) = std::str::from_utf8(data) else {
        return;
    };
    let fixture = &*FIXTURE;
    for codec in [&fixture.encrypted, &fixture.signed] {
        // Without the secrets, no input can be a valid ticket.
        assert!(
            codec
                .open_at::<Value>(token, &fixture.binding, NOW)
                .is_err()
        );
        assert!(codec.open::<String>(token, &fixture.binding).is_err());
    }
});

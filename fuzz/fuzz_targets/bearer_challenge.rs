//! Parses arbitrary text as a `WWW-Authenticate` header: it never panics,
//! and a challenge found has only the parameters the header spelled out.
//!
//! Run with `cargo +nightly fuzz run bearer_challenge` from the repository root.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_protocol::BearerChallenge;

fuzz_target!(|data: &[u8]| {
    let Ok(header) = std::str::from_utf8(data) else {
        return;
    };
    // The DPoP scheme's challenge (RFC 9449 §7.1) is read the same way.
    if BearerChallenge::parse_scheme(header, "DPoP").is_some() {
        assert!(header.to_ascii_lowercase().contains("dpop"));
    }
    let Some(challenge) = BearerChallenge::parse(header) else {
        return;
    };
    assert!(header.to_ascii_lowercase().contains("bearer"));
    for scope in challenge.scopes() {
        assert!(!scope.is_empty() && !scope.contains(char::is_whitespace));
    }
    for (name, value) in [
        ("resource_metadata", &challenge.resource_metadata),
        ("scope", &challenge.scope),
        ("error", &challenge.error),
    ] {
        if value.is_some() {
            assert!(header.to_ascii_lowercase().contains(name), "{name} from nowhere");
        }
    }
});

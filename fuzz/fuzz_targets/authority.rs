//! Reads arbitrary text as a `Host`/`Origin` authority the way the endpoint
//! does: it never panics, and an accepted one names a host that has no
//! userinfo, path, whitespace or control characters in it.
//!
//! Run with `RUSTFLAGS="--cfg fuzzing" cargo +nightly fuzz run authority`
//! from the repository root (cargo fuzz sets the flag itself).

#![no_main]

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Some(host) = tessera_http::fuzz_authority(text) else {
        return;
    };
    assert!(!host.is_empty());
    assert!(
        !host.contains(['@', '/', '?', '#', '\\']) && !host.contains(char::is_whitespace),
        "{text:?} gave {host:?}"
    );
    assert!(!text.contains('@'), "userinfo accepted in {text:?}");
});

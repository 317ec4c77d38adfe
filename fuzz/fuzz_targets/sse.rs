//! Feeds arbitrary bytes to the client's event-stream parser, whole and in
//! two chunks split where the first byte says: it never panics, and how the
//! bytes are chunked never changes the events read.
//!
//! Run with `cargo +nightly fuzz run sse` from the repository root.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_protocol::sse::{MAX_EVENT_BYTES, SseParser};

/// Every event of `chunks`, the last unterminated one included, or the refusal.
fn events(chunks: &[&[u8]]) -> Result<Vec<String>, String> {
    let mut parser = SseParser::default();
    let mut out = Vec::new();
    for chunk in chunks {
        out.extend(parser.feed(chunk)?);
    }
    out.extend(parser.finish());
    Ok(out)
}

fuzz_target!(|data: &[u8]| {
    let Some((&split, body)) = data.split_first() else {
        return;
    };
    let at = usize::from(split) * body.len() / 256;
    let whole = events(&[body]);
    let chunked = events(&[&body[..at], &body[at..]]);
    assert_eq!(whole, chunked, "chunking changed the events");
    for event in whole.into_iter().flatten() {
        assert!(event.len() <= MAX_EVENT_BYTES);
    }
});

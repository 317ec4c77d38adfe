//! Reads arbitrary bytes as stdio's newline-delimited messages with a small
//! limit: it never panics, ends, and every message is within the limit,
//! holds no newline and is not empty (its line's one trailing carriage
//! return taken off).
//!
//! Run with `cargo +nightly fuzz run line_reader` from the repository root.

#![no_main]

use libfuzzer_sys::fuzz_target;
use tessera_tokio::{Line, LineReader};

const MAX: usize = 64;

fuzz_target!(|data: &[u8]| {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime");
    runtime.block_on(async {
        let mut lines = LineReader::new(data, MAX);
        // Each read consumes at least one byte or ends: at most one read per byte, plus the end.
        for _ in 0..=data.len() + 1 {
            match lines.next().await.expect("reading from memory does not fail") {
                Line::Message(m) => {
                    assert!(!m.is_empty() && m.len() <= MAX, "{m:?}");
                    assert!(!m.contains(&b'\n'), "{m:?}");
                }
                Line::TooLong => {}
                Line::End => return,
            }
        }
        panic!("the reader did not end");
    });
});

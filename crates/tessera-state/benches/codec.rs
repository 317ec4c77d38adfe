//! Seal and open of a ~100-byte payload in both modes.

use criterion::{Criterion, criterion_group, criterion_main};
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::hint::black_box;
use tessera_state::{Binding, KeyRing, RequestStateCodec, SealMode, StateKey};

const NOW: u64 = 1_767_225_600;

/// About 100 bytes of JSON.
#[derive(Serialize, Deserialize)]
enum Step {
    AskedAge {
        name: String,
        total: i64,
        answers: Vec<String>,
    },
}

fn payload() -> Step {
    Step::AskedAge {
        name: "Ada Lovelace".into(),
        total: 41,
        answers: vec!["yes".into(), "blue".into(), "the counter, please".into()],
    }
}

fn codec(mode: SealMode) -> RequestStateCodec {
    let ring = KeyRing::new(
        "k1",
        StateKey::from_secret_str("benchmark secret that is long enough").expect("key"),
    )
    .expect("ring");
    RequestStateCodec::builder(ring)
        .mode(mode)
        .build()
        .expect("codec")
}

fn bench(c: &mut Criterion) {
    let binding = Binding::new(
        "tools/call",
        "increase-counter",
        &json!({"amount": 5, "label": "visits"}),
        Some("user-42"),
        "https://mcp.example.com/mcp",
    );
    let payload_len = serde_json::to_vec(&payload()).expect("json").len();
    assert!(
        (90..=120).contains(&payload_len),
        "payload is {payload_len} bytes"
    );

    for (name, mode) in [
        ("encrypted", SealMode::Encrypted),
        ("signed", SealMode::Signed),
    ] {
        let codec = codec(mode);
        let value = payload();
        c.bench_function(&format!("seal/{name}"), |b| {
            b.iter(|| {
                codec
                    .seal_at(black_box(&value), black_box(&binding), NOW)
                    .expect("seal")
            })
        });
        let token = codec.seal_at(&value, &binding, NOW).expect("seal");
        c.bench_function(&format!("open/{name}"), |b| {
            b.iter(|| {
                codec
                    .open_at::<Step>(black_box(&token), black_box(&binding), NOW + 1)
                    .expect("open")
            })
        });
    }

    c.bench_function("binding/new", |b| {
        let args = json!({"amount": 5, "label": "visits"});
        b.iter(|| {
            Binding::new(
                "tools/call",
                "increase-counter",
                black_box(&args),
                Some("user-42"),
                "https://mcp.example.com/mcp",
            )
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);

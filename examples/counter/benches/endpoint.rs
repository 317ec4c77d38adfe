//! The counter's rounds through the HTTP endpoint logic (head checks, body
//! parse, envelope, dispatch, framing), without sockets.

use criterion::{Criterion, criterion_group, criterion_main};

#[path = "endpoint_flow.rs"]
mod endpoint_flow;
#[path = "support.rs"]
mod support;

fn rounds(c: &mut Criterion) {
    let endpoint = endpoint_flow::endpoint();
    let bodies = endpoint_flow::rounds(&endpoint);
    for (round, body) in bodies.into_iter().enumerate() {
        c.bench_function(&format!("endpoint round {}", round + 1), |bench| {
            bench.iter(|| endpoint_flow::send(&endpoint, body.clone()))
        });
    }
}

criterion_group!(benches, rounds);
criterion_main!(benches);

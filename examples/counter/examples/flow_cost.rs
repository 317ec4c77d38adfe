//! Runs N complete counter flows through the endpoint logic (no sockets),
//! so that `bench/instructions` can count the instructions one flow costs
//! under callgrind: a figure that, unlike time, does not move with the
//! machine's load.
//!
//! `cargo run --release -p counter --example flow_cost -- 1000`

#[path = "../benches/endpoint_flow.rs"]
mod endpoint_flow;
#[path = "../benches/support.rs"]
mod support;

fn main() {
    let flows: usize = match std::env::args().nth(1).map(|n| n.parse()) {
        None => 1000,
        Some(Ok(n)) => n,
        Some(Err(e)) => {
            eprintln!("flow_cost: the number of flows must be a whole number ({e})");
            std::process::exit(2);
        }
    };
    let endpoint = endpoint_flow::endpoint();
    let bodies = endpoint_flow::rounds(&endpoint);
    for _ in 0..flows {
        for body in &bodies {
            std::hint::black_box(endpoint_flow::send(&endpoint, body.clone()));
        }
    }
}

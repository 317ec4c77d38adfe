//! `loadgen`: runs complete three-round `increase-counter` flows (the wire a
//! real client sends: `_meta`, headers, fresh ids, echoed tickets) against a
//! URL at concurrency C for D seconds after a warm-up, over HTTP/1.1
//! keep-alive with `TCP_NODELAY`. Every response is checked; errors are
//! counted and reported. Prints a table and one JSON line.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use loadgen::{Connection, Round, Target, round};

/// Command-line settings.
struct Settings {
    target: Target,
    concurrency: usize,
    duration: Duration,
    warmup: Duration,
    label: String,
}

const USAGE: &str = "usage: loadgen --url http://127.0.0.1:8787/mcp [--concurrency 16] [--duration 10] [--warmup 2] [--label NAME] [--tool increase-counter]";

fn settings() -> Result<Settings, String> {
    let mut url = None;
    let mut tool = String::from("increase-counter");
    let mut concurrency = 16;
    let mut duration = 10.0;
    let mut warmup = 2.0;
    let mut label = String::from("target");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{a} needs a value\n{USAGE}"))
        };
        match a.as_str() {
            "--url" => url = Some(value()?),
            "--tool" => tool = value()?,
            "--concurrency" | "-c" => {
                concurrency = value()?
                    .parse()
                    .map_err(|_| "--concurrency takes a number")?
            }
            "--duration" | "-d" => {
                duration = value()?.parse().map_err(|_| "--duration takes seconds")?
            }
            "--warmup" => warmup = value()?.parse().map_err(|_| "--warmup takes seconds")?,
            "--label" => label = value()?,
            _ => return Err(format!("unknown argument {a}\n{USAGE}")),
        }
    }
    Ok(Settings {
        target: Target::parse(&url.ok_or(USAGE)?)?.tool(tool),
        concurrency: concurrency.max(1),
        duration: Duration::from_secs_f64(duration),
        warmup: Duration::from_secs_f64(warmup),
        label,
    })
}

/// One worker's measurements.
#[derive(Default)]
struct Tally {
    request_us: Vec<u32>,
    flow_us: Vec<u32>,
    flows: u64,
    errors: u64,
    first_error: Option<String>,
}

/// One complete flow; returns the three request latencies.
async fn flow(
    conn: &mut Connection,
    target: &Target,
    next_id: &mut u64,
) -> Result<[Duration; 3], String> {
    let mut id = || {
        *next_id += 1;
        *next_id
    };
    let first = round(conn, target, id(), Round::First).await?;
    let second = round(conn, target, id(), Round::Amount(&first)).await?;
    let third = round(conn, target, id(), Round::Confirm(&second)).await?;
    Ok([first.latency, second.latency, third.latency])
}

async fn worker(
    settings: Arc<Settings>,
    worker: u64,
    measuring: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
) -> Tally {
    let mut tally = Tally::default();
    let mut next_id = worker * 1_000_000_000;
    let mut conn = None;
    while !stop.load(Ordering::Relaxed) {
        let c = match Connection::reuse(&mut conn, &settings.target).await {
            Ok(c) => c,
            Err(e) => {
                tally.errors += 1;
                tally.first_error.get_or_insert(e);
                tokio::time::sleep(Duration::from_millis(10)).await;
                continue;
            }
        };
        let started = Instant::now();
        let result = flow(c, &settings.target, &mut next_id).await;
        if !measuring.load(Ordering::Relaxed) {
            if result.is_err() {
                conn = None;
            }
            continue;
        }
        match result {
            Ok(lat) => {
                tally.flows += 1;
                tally
                    .flow_us
                    .push(started.elapsed().as_micros().min(u32::MAX as u128) as u32);
                tally.request_us.extend(
                    lat.iter()
                        .map(|d| d.as_micros().min(u32::MAX as u128) as u32),
                );
            }
            Err(e) => {
                tally.errors += 1;
                tally.first_error.get_or_insert(e);
                conn = None;
            }
        }
    }
    tally
}

fn percentile(sorted: &[u32], p: f64) -> u32 {
    if sorted.is_empty() {
        return 0;
    }
    let rank = ((p / 100.0) * (sorted.len() - 1) as f64).round() as usize;
    sorted[rank.min(sorted.len() - 1)]
}

fn main() -> ExitCode {
    let settings = match settings() {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    let runtime = match loadgen::runtime() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let (tally, measured) = runtime.block_on(async {
        let measuring = Arc::new(AtomicBool::new(false));
        let stop = Arc::new(AtomicBool::new(false));
        let tasks: Vec<_> = (0..settings.concurrency as u64)
            .map(|w| {
                tokio::spawn(worker(
                    Arc::clone(&settings),
                    w,
                    Arc::clone(&measuring),
                    Arc::clone(&stop),
                ))
            })
            .collect();
        tokio::time::sleep(settings.warmup).await;
        measuring.store(true, Ordering::Relaxed);
        let started = Instant::now();
        tokio::time::sleep(settings.duration).await;
        measuring.store(false, Ordering::Relaxed);
        let measured = started.elapsed();
        stop.store(true, Ordering::Relaxed);
        let mut all = Tally::default();
        for t in tasks {
            if let Ok(t) = t.await {
                all.flows += t.flows;
                all.errors += t.errors;
                all.request_us.extend(t.request_us);
                all.flow_us.extend(t.flow_us);
                if all.first_error.is_none() {
                    all.first_error = t.first_error;
                }
            }
        }
        (all, measured)
    });
    let mut req = tally.request_us;
    let mut flows = tally.flow_us;
    req.sort_unstable();
    flows.sort_unstable();
    let secs = measured.as_secs_f64();
    let flows_per_s = tally.flows as f64 / secs;
    let reqs_per_s = req.len() as f64 / secs;
    println!(
        "{} at {} connections for {:.1} s: {} flows, {} errors",
        settings.label, settings.concurrency, secs, tally.flows, tally.errors
    );
    println!("  flows/s {flows_per_s:.0}   requests/s {reqs_per_s:.0}");
    println!(
        "  request µs  p50 {}  p90 {}  p99 {}  max {}",
        percentile(&req, 50.0),
        percentile(&req, 90.0),
        percentile(&req, 99.0),
        req.last().copied().unwrap_or(0)
    );
    println!(
        "  flow µs     p50 {}  p90 {}  p99 {}  max {}",
        percentile(&flows, 50.0),
        percentile(&flows, 90.0),
        percentile(&flows, 99.0),
        flows.last().copied().unwrap_or(0)
    );
    if let Some(e) = &tally.first_error {
        println!("  first error: {e}");
    }
    println!(
        "{}",
        serde_json::json!({
            "label": settings.label,
            "concurrency": settings.concurrency,
            "seconds": secs,
            "flows": tally.flows,
            "errors": tally.errors,
            "flows_per_s": flows_per_s,
            "requests_per_s": reqs_per_s,
            "request_us": {"p50": percentile(&req, 50.0), "p90": percentile(&req, 90.0), "p99": percentile(&req, 99.0), "max": req.last().copied().unwrap_or(0)},
            "flow_us": {"p50": percentile(&flows, 50.0), "p90": percentile(&flows, 90.0), "p99": percentile(&flows, 99.0), "max": flows.last().copied().unwrap_or(0)},
        })
    );
    if tally.errors > 0 || tally.flows == 0 {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

//! `loadgen`: runs complete three-round `increase-counter` flows (the wire a
//! real client sends: `_meta`, headers, fresh ids, echoed tickets) against a
//! URL at concurrency C for D seconds after a warm-up, over HTTP/1.1
//! keep-alive with `TCP_NODELAY`. Every response is checked; errors are
//! counted and reported. Prints a table and one JSON line.

use std::process::ExitCode;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

/// Command-line settings.
struct Settings {
    url: http::Uri,
    concurrency: usize,
    duration: Duration,
    warmup: Duration,
    label: String,
}

const USAGE: &str = "usage: loadgen --url http://127.0.0.1:8787/mcp [--concurrency 16] [--duration 10] [--warmup 2] [--label NAME]";

fn settings() -> Result<Settings, String> {
    let mut url = None;
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
    let url: http::Uri = url
        .ok_or(USAGE)?
        .parse()
        .map_err(|e| format!("bad --url: {e}"))?;
    if url.scheme_str() != Some("http") || url.host().is_none() {
        return Err("--url must be http://HOST:PORT/PATH".into());
    }
    Ok(Settings {
        url,
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

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"loadgen","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}"#;

fn body(id: u64, extra: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{META},"name":"increase-counter","arguments":{{"current":10}}{extra}}}}}"#
    )
}

/// The `requestState` string of a response (tickets are base64url and dots: no escapes).
fn ticket(body: &str) -> Option<&str> {
    let start = body.find(r#""requestState":""#)? + r#""requestState":""#.len();
    let len = body[start..].find('"')?;
    Some(&body[start..start + len])
}

struct Connection {
    sender: http1::SendRequest<Full<Bytes>>,
}

async fn connect(settings: &Settings) -> Result<Connection, String> {
    let host = settings.url.host().unwrap_or("127.0.0.1");
    let port = settings.url.port_u16().unwrap_or(80);
    let stream = TcpStream::connect((host, port))
        .await
        .map_err(|e| format!("connect: {e}"))?;
    stream.set_nodelay(true).map_err(|e| e.to_string())?;
    let (sender, conn) = http1::handshake(TokioIo::new(stream))
        .await
        .map_err(|e| format!("handshake: {e}"))?;
    tokio::spawn(async move {
        let _ = conn.await;
    });
    Ok(Connection { sender })
}

async fn post(
    conn: &mut Connection,
    settings: &Settings,
    authority: &str,
    payload: String,
) -> Result<String, String> {
    conn.sender
        .ready()
        .await
        .map_err(|e| format!("connection: {e}"))?;
    let request = http::Request::post(settings.url.path())
        .header("Host", authority)
        .header("Content-Type", "application/json")
        .header("Accept", "application/json, text/event-stream")
        .header("MCP-Protocol-Version", "2026-07-28")
        .header("Mcp-Method", "tools/call")
        .header("Mcp-Name", "increase-counter")
        .body(Full::new(Bytes::from(payload)))
        .map_err(|e| e.to_string())?;
    let response = conn
        .sender
        .send_request(request)
        .await
        .map_err(|e| format!("request: {e}"))?;
    let status = response.status();
    let bytes = response
        .into_body()
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes();
    let text = String::from_utf8(bytes.to_vec()).map_err(|_| "body is not UTF-8".to_owned())?;
    if status != http::StatusCode::OK {
        return Err(format!(
            "HTTP {status}: {}",
            text.chars().take(200).collect::<String>()
        ));
    }
    // An SSE answer: keep the data line of the final message.
    Ok(
        match text.lines().rev().find_map(|l| l.strip_prefix("data: ")) {
            Some(data) if text.starts_with("event:") || text.starts_with("data:") => {
                data.to_owned()
            }
            _ => text,
        },
    )
}

/// One complete flow; returns the three request latencies.
async fn flow(
    conn: &mut Connection,
    settings: &Settings,
    authority: &str,
    next_id: &mut u64,
) -> Result<[Duration; 3], String> {
    let mut lat = [Duration::ZERO; 3];
    let expect_id = |body: &str, id: u64| {
        if body.contains(&format!(r#""id":{id},"#)) || body.contains(&format!(r#""id":{id}}}"#)) {
            Ok(())
        } else {
            Err(format!("response does not echo id {id}: {body}"))
        }
    };
    *next_id += 1;
    let id = *next_id;
    let t = Instant::now();
    let r1 = post(conn, settings, authority, body(id, "")).await?;
    lat[0] = t.elapsed();
    expect_id(&r1, id)?;
    if !r1.contains(r#""input_required""#) || !r1.contains(r#""amount""#) {
        return Err(format!("round 1 did not ask for the amount: {r1}"));
    }
    let s1 = ticket(&r1).ok_or("round 1 has no requestState")?;
    *next_id += 1;
    let id = *next_id;
    let t = Instant::now();
    let extra = format!(
        r#","inputResponses":{{"amount":{{"action":"accept","content":{{"amount":5}}}}}},"requestState":"{s1}""#
    );
    let r2 = post(conn, settings, authority, body(id, &extra)).await?;
    lat[1] = t.elapsed();
    expect_id(&r2, id)?;
    if !r2.contains(r#""confirmation""#) || !r2.contains("Increase 10 by 5?") {
        return Err(format!("round 2 did not ask for confirmation: {r2}"));
    }
    let s2 = ticket(&r2).ok_or("round 2 has no requestState")?;
    *next_id += 1;
    let id = *next_id;
    let t = Instant::now();
    let extra = format!(
        r#","inputResponses":{{"confirmation":{{"action":"accept","content":{{"confirm":true}}}}}},"requestState":"{s2}""#
    );
    let r3 = post(conn, settings, authority, body(id, &extra)).await?;
    lat[2] = t.elapsed();
    expect_id(&r3, id)?;
    if !r3.contains("Counter increased by 5; next value is 15") {
        return Err(format!("round 3 did not complete: {r3}"));
    }
    Ok(lat)
}

async fn worker(
    settings: Arc<Settings>,
    worker: u64,
    measuring: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
) -> Tally {
    let mut tally = Tally::default();
    let authority = settings
        .url
        .authority()
        .map_or_else(|| "127.0.0.1".to_owned(), |a| a.to_string());
    let mut next_id = worker * 1_000_000_000;
    let mut conn = None;
    while !stop.load(Ordering::Relaxed) {
        let c = match conn.as_mut() {
            Some(c) => c,
            None => match connect(&settings).await {
                Ok(c) => conn.insert(c),
                Err(e) => {
                    tally.errors += 1;
                    tally.first_error.get_or_insert(e);
                    tokio::time::sleep(Duration::from_millis(10)).await;
                    continue;
                }
            },
        };
        let started = Instant::now();
        let result = flow(c, &settings, &authority, &mut next_id).await;
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
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start: {e}");
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

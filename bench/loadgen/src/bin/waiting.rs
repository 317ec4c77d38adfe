//! `waiting`: the cost of a waiting human. Starts N `increase-counter` flows,
//! lets every one pause at its first question for a think time, then
//! completes them all, sampling the server's RSS, open sockets and threads
//! (from `/proc/PID`) throughout. Prints one JSON summary line; writes the
//! samples as CSV for charts.
//!
//! Two ways to ask a person:
//! - `--mode mrtr` (2026-07-28): round one answers `input_required` and the
//!   request ends; the client keeps the ticket and closes its connections
//!   while the person thinks.
//! - `--mode legacy` (2025-11-25 with sessions): `initialize`, then a
//!   `tools/call` whose SSE stream stays open while the server awaits the
//!   `elicitation/create` it pushed on it; the answers are POSTed back into
//!   the session.

use std::process::ExitCode;
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use loadgen::{Connection, Round, Target, read_text, round};
use serde_json::{Value, json};
use tokio::sync::{Semaphore, watch};

const USAGE: &str = "usage: waiting --url URL --pid SERVER_PID [--mode mrtr|legacy] [--flows 1000] [--think 30] [--concurrency 64] [--samples FILE] [--label NAME] [--tool increase-counter] [--upstream-pid PID]";

/// The phases of a run, in order; samples are tagged with the current one.
const PHASES: [&str; 6] = ["warming", "idle", "asking", "thinking", "answering", "done"];

#[derive(Clone, Copy, PartialEq)]
enum Mode {
    Mrtr,
    Legacy,
}

struct Settings {
    target: Target,
    pid: u32,
    mode: Mode,
    flows: usize,
    think: Duration,
    concurrency: usize,
    samples: Option<String>,
    label: String,
    /// The server behind a gateway, read beside it.
    upstream_pid: Option<u32>,
}

fn settings() -> Result<Settings, String> {
    let (mut url, mut pid, mut mode) = (None, None, Mode::Mrtr);
    let mut tool = String::from("increase-counter");
    let mut upstream_pid = None;
    let (mut flows, mut think, mut concurrency) = (1000, 30.0, 64);
    let (mut samples, mut label) = (None, String::from("target"));
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = || {
            args.next()
                .ok_or_else(|| format!("{a} needs a value\n{USAGE}"))
        };
        let number = |v: String| v.parse::<f64>().map_err(|_| format!("{a} takes a number"));
        match a.as_str() {
            "--url" => url = Some(value()?),
            "--tool" => tool = value()?,
            "--pid" => pid = Some(number(value()?)? as u32),
            "--mode" => {
                mode = match value()?.as_str() {
                    "mrtr" => Mode::Mrtr,
                    "legacy" => Mode::Legacy,
                    other => return Err(format!("--mode is mrtr or legacy, not {other}")),
                }
            }
            "--flows" => flows = number(value()?)? as usize,
            "--think" => think = number(value()?)?,
            "--concurrency" | "-c" => concurrency = number(value()?)? as usize,
            "--samples" => samples = Some(value()?),
            "--label" => label = value()?,
            "--upstream-pid" => upstream_pid = Some(number(value()?)? as u32),
            _ => return Err(format!("unknown argument {a}\n{USAGE}")),
        }
    }
    Ok(Settings {
        target: Target::parse(&url.ok_or(USAGE)?)?.tool(tool),
        pid: pid.ok_or(USAGE)?,
        mode,
        flows: flows.max(1),
        think: Duration::from_secs_f64(think),
        concurrency: concurrency.max(1),
        samples,
        label,
        upstream_pid,
    })
}

/// One reading of the server process.
#[derive(Clone, Copy, Default)]
struct Sample {
    seconds: f64,
    phase: u8,
    rss_kb: u64,
    sockets: u64,
    threads: u64,
    /// The RSS of the server behind a gateway, when there is one.
    upstream_rss_kb: u64,
}

/// Reads VmRSS and Threads from `/proc/PID/status` and counts the sockets
/// among its file descriptors.
fn read_process(pid: u32) -> Option<(u64, u64, u64)> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let field = |name: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(name))
            .and_then(|v| v.split_whitespace().next()?.parse().ok())
    };
    let sockets = std::fs::read_dir(format!("/proc/{pid}/fd"))
        .ok()?
        .filter_map(Result::ok)
        .filter(|e| {
            std::fs::read_link(e.path()).is_ok_and(|l| l.to_string_lossy().starts_with("socket:"))
        })
        .count() as u64;
    Some((field("VmRSS:")?, sockets, field("Threads:")?))
}

/// Counts flows as they pass a point, and whatever went wrong.
#[derive(Default)]
struct Progress {
    paused: AtomicUsize,
    completed: AtomicUsize,
    errors: AtomicUsize,
    first_error: Mutex<Option<String>>,
}

impl Progress {
    fn fail(&self, error: String) {
        self.errors.fetch_add(1, Ordering::Relaxed);
        self.first_error
            .lock()
            .expect("not poisoned")
            .get_or_insert(error);
    }
}

/// 2026-07-28: round one for every flow at concurrency C, connections
/// closed, think, then rounds two and three.
async fn run_mrtr(
    settings: Arc<Settings>,
    flows: usize,
    progress: Arc<Progress>,
    answer: watch::Receiver<bool>,
) {
    let tickets = Arc::new(Mutex::new(Vec::with_capacity(flows)));
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..settings.concurrency)
        .map(|_| {
            let (settings, progress) = (Arc::clone(&settings), Arc::clone(&progress));
            let (tickets, next) = (Arc::clone(&tickets), Arc::clone(&next));
            tokio::spawn(async move {
                let mut conn = None;
                while next.fetch_add(1, Ordering::Relaxed) < flows {
                    let result = async {
                        let c = Connection::reuse(&mut conn, &settings.target).await?;
                        round(c, &settings.target, 1, Round::First).await
                    }
                    .await;
                    match result {
                        Ok(step) => {
                            tickets.lock().expect("not poisoned").push(step);
                            progress.paused.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            conn = None;
                            progress.fail(e);
                        }
                    }
                }
                // The connection closes here: nothing is held while people think.
            })
        })
        .collect();
    for w in workers {
        let _ = w.await;
    }
    let mut answer = answer;
    let _ = answer.wait_for(|go| *go).await;
    let tickets = Arc::new(std::mem::take(&mut *tickets.lock().expect("not poisoned")));
    let next = Arc::new(AtomicUsize::new(0));
    let workers: Vec<_> = (0..settings.concurrency)
        .map(|_| {
            let (settings, progress) = (Arc::clone(&settings), Arc::clone(&progress));
            let (tickets, next) = (Arc::clone(&tickets), Arc::clone(&next));
            tokio::spawn(async move {
                let mut conn = None;
                loop {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some(first) = tickets.get(i) else { break };
                    let result = async {
                        let c = Connection::reuse(&mut conn, &settings.target).await?;
                        let step = round(c, &settings.target, 2, Round::Amount(first)).await?;
                        round(c, &settings.target, 3, Round::Confirm(&step)).await
                    }
                    .await;
                    match result {
                        Ok(_) => {
                            progress.completed.fetch_add(1, Ordering::Relaxed);
                        }
                        Err(e) => {
                            conn = None;
                            progress.fail(e);
                        }
                    }
                }
            })
        })
        .collect();
    for w in workers {
        let _ = w.await;
    }
}

/// Keep-alive connections for the short POSTs of the initialize era.
struct Pool {
    settings: Arc<Settings>,
    idle: Mutex<Vec<Connection>>,
}

impl Pool {
    /// POSTs a JSON-RPC message into a session; returns status, the session
    /// id header and the whole body.
    async fn post(
        &self,
        session: Option<&str>,
        message: Value,
    ) -> Result<(http::StatusCode, Option<String>, String), String> {
        let target = &self.settings.target;
        let mut request = target.post();
        if let Some(session) = session {
            request = request
                .header("Mcp-Session-Id", session)
                .header("MCP-Protocol-Version", "2025-11-25");
        }
        let request = request
            .body(Full::new(Bytes::from(message.to_string())))
            .map_err(|e| e.to_string())?;
        // A connection the server closed while it idled (people think longer
        // than servers keep idle keep-alive connections) is dropped, not reused.
        let popped = {
            let mut idle = self.idle.lock().expect("not poisoned");
            idle.retain(|c| !c.is_closed());
            idle.pop()
        };
        let mut conn = match popped {
            Some(c) => c,
            None => Connection::open(target).await?,
        };
        let response = conn.send(request).await?;
        let status = response.status();
        let session = response
            .headers()
            .get("mcp-session-id")
            .and_then(|v| v.to_str().ok())
            .map(str::to_owned);
        let text = read_text(response.into_body()).await?;
        self.idle.lock().expect("not poisoned").push(conn);
        Ok((status, session, text))
    }
}

/// Reads JSON-RPC messages from the `data:` lines of an SSE body as they come.
struct EventReader {
    body: Incoming,
    buffer: Vec<u8>,
}

impl EventReader {
    async fn next(&mut self) -> Result<Value, String> {
        loop {
            if let Some(end) = self.buffer.windows(2).position(|w| w == b"\n\n") {
                let event: Vec<u8> = self.buffer.drain(..end + 2).collect();
                let event = String::from_utf8_lossy(&event);
                let data: String = event
                    .lines()
                    .filter_map(|l| l.strip_prefix("data:"))
                    .map(str::trim_start)
                    .collect();
                if !data.is_empty() {
                    return serde_json::from_str(&data).map_err(|e| format!("event: {e}"));
                }
                continue;
            }
            let frame = self
                .body
                .frame()
                .await
                .ok_or("the stream ended")?
                .map_err(|e| format!("stream: {e}"))?;
            if let Ok(data) = frame.into_data() {
                self.buffer
                    .extend(data.iter().copied().filter(|&b| b != b'\r'));
            }
        }
    }

    /// The next request the server pushes with `method`; returns its id.
    async fn request(&mut self, method: &str) -> Result<Value, String> {
        loop {
            let message = self.next().await?;
            if message["method"] == method {
                return Ok(message["id"].clone());
            }
        }
    }
}

/// The loopback addresses initialize-era flows come from (127.0.3.1 and
/// on), as that many clients would: the server lets one anonymous address
/// hold 256 pending questions, so 10,000 flows need at least 40 of them.
const LEGACY_ADDRESSES: usize = 64;

/// One initialize-era flow: a session, a `tools/call` whose stream stays
/// open while the server awaits the person's two answers; the call comes
/// from the `flow`-th loopback address, round robin.
async fn legacy_flow(
    pool: &Pool,
    gate: &Semaphore,
    progress: &Progress,
    mut answer: watch::Receiver<bool>,
    flow: usize,
) -> Result<(), String> {
    let permit = gate.acquire().await.map_err(|e| e.to_string())?;
    let (status, session, _) = pool
        .post(
            None,
            json!({"jsonrpc":"2.0","id":1,"method":"initialize","params":{
                "protocolVersion":"2025-11-25",
                "capabilities":{"elicitation":{"form":{}}},
                "clientInfo":{"name":"waiting","version":"1"}}}),
        )
        .await?;
    let session = session.ok_or(format!("initialize answered {status} without a session"))?;
    pool.post(
        Some(&session),
        json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
    )
    .await?;
    let target = &pool.settings.target;
    let from = std::net::Ipv4Addr::new(127, 0, 3, (flow % LEGACY_ADDRESSES) as u8 + 1);
    let mut stream = Connection::open_from(target, Some(from.into())).await?;
    let call = json!({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{
        "name":"increase-counter","arguments":{"current":10}}});
    let request = target
        .post()
        .header("Mcp-Session-Id", &session)
        .header("MCP-Protocol-Version", "2025-11-25")
        .body(Full::new(Bytes::from(call.to_string())))
        .map_err(|e| e.to_string())?;
    let response = stream.send(request).await?;
    if response.status() != http::StatusCode::OK {
        return Err(format!("tools/call answered {}", response.status()));
    }
    let mut events = EventReader {
        body: response.into_body(),
        buffer: Vec::new(),
    };
    let asked = events.request("elicitation/create").await?;
    progress.paused.fetch_add(1, Ordering::Relaxed);
    drop(permit);

    let _ = answer.wait_for(|go| *go).await;
    let _permit = gate.acquire().await.map_err(|e| e.to_string())?;
    let reply = |id: Value, content: Value| json!({"jsonrpc":"2.0","id":id,"result":{"action":"accept","content":content}});
    pool.post(Some(&session), reply(asked, json!({"amount":5})))
        .await?;
    let asked = events.request("elicitation/create").await?;
    pool.post(Some(&session), reply(asked, json!({"confirm":true})))
        .await?;
    loop {
        let message = events.next().await?;
        if message["id"] == 2 {
            let text = message.to_string();
            if !text.contains("Counter increased by 5; next value is 15") {
                return Err(format!("the call ended with {text}"));
            }
            break;
        }
    }
    Ok(())
}

async fn run_legacy(
    settings: Arc<Settings>,
    flows: usize,
    progress: Arc<Progress>,
    answer: watch::Receiver<bool>,
) {
    let pool = Arc::new(Pool {
        settings: Arc::clone(&settings),
        idle: Mutex::new(Vec::new()),
    });
    let gate = Arc::new(Semaphore::new(settings.concurrency));
    let flows: Vec<_> = (0..flows)
        .map(|flow| {
            let (pool, gate, progress) =
                (Arc::clone(&pool), Arc::clone(&gate), Arc::clone(&progress));
            let answer = answer.clone();
            tokio::spawn(async move {
                match legacy_flow(&pool, &gate, &progress, answer, flow).await {
                    Ok(()) => {
                        progress.completed.fetch_add(1, Ordering::Relaxed);
                    }
                    Err(e) => progress.fail(e),
                }
            })
        })
        .collect();
    for f in flows {
        let _ = f.await;
    }
}

fn main() -> ExitCode {
    let settings = match settings() {
        Ok(s) => Arc::new(s),
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::from(2);
        }
    };
    if read_process(settings.pid).is_none() {
        eprintln!("waiting: cannot read /proc/{}", settings.pid);
        return ExitCode::from(2);
    }
    let runtime = match loadgen::runtime() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("{e}");
            return ExitCode::FAILURE;
        }
    };
    let progress = Arc::new(Progress::default());
    let samples = runtime.block_on(run_phases(Arc::clone(&settings), Arc::clone(&progress)));
    report(&settings, &progress, &samples)
}

/// How many complete flows warm the server before the idle reading.
const WARM_FLOWS: usize = 256;

/// Runs `count` flows in the chosen mode; each pauses at its first question
/// until `answer` turns true.
fn flows(
    settings: &Arc<Settings>,
    count: usize,
    progress: &Arc<Progress>,
    answer: watch::Receiver<bool>,
) -> impl Future<Output = ()> + Send + 'static {
    let (settings, progress) = (Arc::clone(settings), Arc::clone(progress));
    async move {
        match settings.mode {
            Mode::Mrtr => run_mrtr(settings, count, progress, answer).await,
            Mode::Legacy => run_legacy(settings, count, progress, answer).await,
        }
    }
}

/// Runs the phases while a sampler reads the server every 250 ms.
async fn run_phases(settings: Arc<Settings>, progress: Arc<Progress>) -> Vec<Sample> {
    let phase = Arc::new(AtomicU8::new(0));
    let started = Instant::now();
    let sampler = {
        let (phase, pid, upstream) = (Arc::clone(&phase), settings.pid, settings.upstream_pid);
        tokio::spawn(async move {
            let mut samples = Vec::new();
            let mut tick = tokio::time::interval(Duration::from_millis(250));
            loop {
                tick.tick().await;
                let phase = phase.load(Ordering::Relaxed);
                if let Some((rss_kb, sockets, threads)) = read_process(pid) {
                    samples.push(Sample {
                        seconds: started.elapsed().as_secs_f64(),
                        phase,
                        rss_kb,
                        sockets,
                        threads,
                        upstream_rss_kb: upstream
                            .and_then(read_process)
                            .map_or(0, |(rss_kb, _, _)| rss_kb),
                    });
                }
                if phase as usize == PHASES.len() - 1 {
                    break samples;
                }
            }
        })
    };
    // Warm the server with a few complete flows first, so "idle" is a
    // server that has served (buffers, thread caches), not one that never has.
    let warm = Arc::new(Progress::default());
    let (_open, go_now) = watch::channel(true);
    flows(&settings, WARM_FLOWS.min(settings.flows), &warm, go_now).await;
    if let Some(e) = warm.first_error.lock().expect("not poisoned").take() {
        progress.fail(format!("warming up: {e}"));
    }
    phase.store(1, Ordering::Relaxed);
    tokio::time::sleep(Duration::from_secs(3)).await;
    phase.store(2, Ordering::Relaxed);
    let (go, answer) = watch::channel(false);
    let flows = tokio::spawn(flows(&settings, settings.flows, &progress, answer));
    // Every flow is at its first question (or failed) before the clock starts.
    while progress.paused.load(Ordering::Relaxed) + progress.errors.load(Ordering::Relaxed)
        < settings.flows
    {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    phase.store(3, Ordering::Relaxed);
    tokio::time::sleep(settings.think).await;
    phase.store(4, Ordering::Relaxed);
    let _ = go.send(true);
    let _ = flows.await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    phase.store(5, Ordering::Relaxed);
    sampler.await.unwrap_or_default()
}

fn report(settings: &Settings, progress: &Progress, samples: &[Sample]) -> ExitCode {
    if let Some(path) = &settings.samples {
        let mut csv = String::from("seconds,phase,rss_kb,sockets,threads\n");
        for s in samples {
            csv += &format!(
                "{:.3},{},{},{},{}\n",
                s.seconds, PHASES[s.phase as usize], s.rss_kb, s.sockets, s.threads
            );
        }
        if let Err(e) = std::fs::write(path, csv) {
            eprintln!("waiting: cannot write {path}: {e}");
        }
    }
    let of = |phase: u8| samples.iter().filter(move |s| s.phase == phase);
    let idle = of(1).next_back().copied().unwrap_or_default();
    let peak = |f: fn(&Sample) -> u64| of(3).map(f).max().unwrap_or(0);
    let completed = progress.completed.load(Ordering::Relaxed);
    let errors = progress.errors.load(Ordering::Relaxed);
    let summary = json!({
        "label": settings.label,
        "mode": if settings.mode == Mode::Mrtr { "mrtr" } else { "legacy" },
        "flows": settings.flows,
        "think_s": settings.think.as_secs_f64(),
        "completed": completed,
        "errors": errors,
        "first_error": progress.first_error.lock().expect("not poisoned").clone(),
        "idle": {"rss_kb": idle.rss_kb, "sockets": idle.sockets, "threads": idle.threads},
        "thinking": {"rss_kb": peak(|s| s.rss_kb), "sockets": peak(|s| s.sockets), "threads": peak(|s| s.threads)},
        "upstream": settings.upstream_pid.map(|_| json!({
            "idle_rss_kb": idle.upstream_rss_kb,
            "thinking_rss_kb": peak(|s| s.upstream_rss_kb),
        })),
    });
    println!("{summary}");
    if errors > 0 || completed != settings.flows {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

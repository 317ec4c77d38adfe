//! `hostile`: scenarios of issue #14 against a running `counter`, over raw
//! HTTP/1.1 on 127.0.0.1. Every loop is bounded in count and time.
//!
//! - `stalled --addr A --sockets N`: a client opens one keep-alive connection
//!   and completes a request on it; then N sockets send full headers and a
//!   sliver of a 1 MiB body and stall; while they are held, the client runs a
//!   three-round counter flow on its connection. Prints the flow's time and
//!   how many stalled sockets the server kept or shed.
//! - `amplify --addr A --bodies N`: N connections at once each post the
//!   largest body the default limits take (1 MiB, 20,000 JSON values, most of
//!   them objects) and read the answer. Prints the statuses.
//!
//! Prints one JSON line with the figures.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const USAGE: &str = "usage: hostile stalled --addr HOST:PORT [--sockets 1100]\n       hostile amplify --addr HOST:PORT [--bodies 8]";

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() -> ExitCode {
    match run().await {
        Ok(line) => {
            println!("{line}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("hostile: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn run() -> Result<Value, String> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let scenario = args.first().ok_or(USAGE)?.clone();
    let value = |name: &str, default: usize| -> Result<usize, String> {
        match args.iter().position(|a| a == name) {
            Some(i) => args
                .get(i + 1)
                .and_then(|v| v.parse().ok())
                .ok_or_else(|| format!("{name} takes a number")),
            None => Ok(default),
        }
    };
    let addr = args
        .iter()
        .position(|a| a == "--addr")
        .and_then(|i| args.get(i + 1))
        .ok_or(USAGE)?
        .clone();
    match scenario.as_str() {
        "stalled" => stalled(&addr, value("--sockets", 1100)?).await,
        "amplify" => amplify(&addr, value("--bodies", 8)?).await,
        _ => Err(USAGE.into()),
    }
}

/// A request's head and body for a `tools/call` of the counter.
fn call(addr: &str, body: &str, close: bool) -> String {
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: increase-counter\r\nContent-Length: {}\r\n{}\r\n{body}",
        body.len(),
        if close { "Connection: close\r\n" } else { "" }
    )
}

fn counter_body(id: u64, extra: Value) -> String {
    let mut params = json!({
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        },
        "name": "increase-counter",
        "arguments": {"current": 10}
    });
    for (k, v) in extra.as_object().into_iter().flatten() {
        params[k] = v.clone();
    }
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}).to_string()
}

/// Reads one response (headers and a Content-Length body) from a kept-alive connection.
async fn read_response(stream: &mut TcpStream) -> Result<(u16, Value), String> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 8192];
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
            let status = head
                .split_whitespace()
                .nth(1)
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            let len: usize = head
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse().ok())
                .unwrap_or(0);
            if buf.len() >= end + 4 + len {
                let body =
                    serde_json::from_slice(&buf[end + 4..end + 4 + len]).unwrap_or(Value::Null);
                return Ok((status, body));
            }
        }
        let left = deadline.saturating_duration_since(Instant::now());
        let n = tokio::time::timeout(left, stream.read(&mut chunk))
            .await
            .map_err(|_| "no answer within 10 s".to_owned())?
            .map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the server closed the connection".into());
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

async fn stalled(addr: &str, sockets: usize) -> Result<Value, String> {
    let mut client = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    client.set_nodelay(true).map_err(|e| e.to_string())?;
    client
        .write_all(call(addr, &counter_body(1, json!({})), false).as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    read_response(&mut client).await?;
    // The stalled uploads: full headers, a sliver of the body, then nothing.
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\
         Mcp-Method: tools/call\r\nMcp-Name: increase-counter\r\nContent-Length: 1048576\r\n\r\n{{\"jsonrpc\":"
    );
    let mut held = Vec::with_capacity(sockets);
    let mut refused = 0usize;
    for _ in 0..sockets {
        match TcpStream::connect(addr).await {
            Ok(mut s) => {
                if s.write_all(head.as_bytes()).await.is_ok() {
                    held.push(s);
                } else {
                    refused += 1;
                }
            }
            Err(_) => refused += 1,
        }
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    // Which of them the server shed: closed without an answer.
    let mut shed = 0usize;
    for s in &mut held {
        let mut probe = [0u8; 1];
        // Closed: a shed socket had unread data, so it may also come back reset.
        if let Ok(Ok(0) | Err(_)) =
            tokio::time::timeout(Duration::from_millis(1), s.read(&mut probe)).await
        {
            shed += 1;
        }
    }
    // The flow, on the established connection, while the uploads are held.
    let (flow_ms, status, text) = flow(addr, &mut client).await?;
    // And on a connection opened now, at the cap: it takes a stalled upload's place.
    let mut newcomer = TcpStream::connect(addr).await.map_err(|e| e.to_string())?;
    newcomer.set_nodelay(true).map_err(|e| e.to_string())?;
    let (new_ms, new_status, new_text) = flow(addr, &mut newcomer).await?;
    Ok(json!({
        "scenario": "stalled",
        "stalled_sockets": sockets,
        "connect_refused": refused,
        "shed_by_server": shed,
        "held_by_server": held.len() - shed,
        "flow_ms": flow_ms,
        "flow_status": status,
        "flow_text": text,
        "new_client_flow_ms": new_ms,
        "new_client_flow_status": new_status,
        "new_client_flow_text": new_text,
    }))
}

/// The counter's three rounds on `client`: milliseconds, last status, final text.
async fn flow(addr: &str, client: &mut TcpStream) -> Result<(f64, u16, String), String> {
    let started = Instant::now();
    client
        .write_all(call(addr, &counter_body(2, json!({})), false).as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let (_, r1) = read_response(client).await?;
    let s1 = r1["result"]["requestState"].clone();
    let round2 = counter_body(
        3,
        json!({"requestState": s1, "inputResponses": {"amount": {"action": "accept", "content": {"amount": 5}}}}),
    );
    client
        .write_all(call(addr, &round2, false).as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let (_, r2) = read_response(client).await?;
    let s2 = r2["result"]["requestState"].clone();
    let round3 = counter_body(
        4,
        json!({"requestState": s2, "inputResponses": {"confirmation": {"action": "accept", "content": {"confirm": true}}}}),
    );
    client
        .write_all(call(addr, &round3, false).as_bytes())
        .await
        .map_err(|e| e.to_string())?;
    let (status, r3) = read_response(client).await?;
    let text = r3["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or("")
        .to_owned();
    Ok((started.elapsed().as_secs_f64() * 1000.0, status, text))
}

async fn amplify(addr: &str, bodies: usize) -> Result<Value, String> {
    // 9,990 objects {"a":0} (two values each) and a pad up to 1 MiB: the most a default endpoint takes.
    let items = vec![json!({"a": 0}); 9_990];
    let probe = counter_body(
        1,
        json!({"arguments": {"current": 10, "items": items, "pad": ""}}),
    );
    let pad = "x".repeat(1024 * 1024 - probe.len() - 1);
    let body = counter_body(
        1,
        json!({"arguments": {"current": 10, "items": items, "pad": pad}}),
    );
    let started = Instant::now();
    let tasks: Vec<_> = (0..bodies)
        .map(|_| {
            let request = call(addr, &body, true);
            let addr = addr.to_owned();
            tokio::spawn(async move {
                let mut s = TcpStream::connect(&addr).await.map_err(|e| e.to_string())?;
                s.write_all(request.as_bytes())
                    .await
                    .map_err(|e| e.to_string())?;
                read_response(&mut s).await.map(|(status, _)| status)
            })
        })
        .collect();
    let mut statuses = Vec::new();
    for t in tasks {
        statuses.push(t.await.map_err(|e| e.to_string())??);
    }
    Ok(json!({
        "scenario": "amplify",
        "bodies": bodies,
        "body_bytes": body.len(),
        "statuses": statuses,
        "ms": started.elapsed().as_secs_f64() * 1000.0,
    }))
}

//! `tessera call` against initialize-era HTTP servers that never answer or
//! never stop asking (the second hostile review's finding 6): each run ends
//! within its bounds — `--timeout` for the time spent waiting on the server,
//! `--max-rounds` for the questions pushed during one call — with exit 6.
//! The servers are raw HTTP/1.1 on 127.0.0.1, speaking just enough of the
//! 2025-11-25 transport to reach the call.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::{Value, json};

mod support;
use support::tessera;

/// What the server does with `tools/call`.
#[derive(Clone, Copy)]
enum Call {
    /// Opens the event stream and sends nothing, ever.
    Silent,
    /// Pushes `elicitation/create` after `elicitation/create`, without end.
    Endless,
}

/// Serves on a free port until the test ends: the URL, and how many answers
/// the client POSTed.
fn serve(call: Call) -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let answers = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&answers);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let counted = Arc::clone(&counted);
            std::thread::spawn(move || {
                let _ = exchange(stream, call, &counted);
            });
        }
    });
    (url, answers)
}

fn exchange(mut stream: TcpStream, call: Call, answers: &AtomicUsize) -> std::io::Result<()> {
    let mut reader = BufReader::new(stream.try_clone()?);
    let (mut length, mut session) = (0, false);
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line)? == 0 {
            return Ok(());
        }
        let line = line.trim_end().to_ascii_lowercase();
        if line.is_empty() {
            break;
        }
        if let Some(v) = line.strip_prefix("content-length:") {
            length = v.trim().parse().unwrap_or(0);
        }
        session |= line.starts_with("mcp-session-id:");
    }
    let mut body = vec![0; length];
    reader.read_exact(&mut body)?;
    let message: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let method = message["method"].as_str().unwrap_or_default();
    let json = |stream: &mut TcpStream, status: &str, extra: &str, body: &Value| {
        let body = body.to_string();
        write!(
            stream,
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{extra}Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        )
    };
    match method {
        "initialize" => json(
            &mut stream,
            "200 OK",
            "Mcp-Session-Id: s1\r\n",
            &json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                "serverInfo": {"name": "old", "version": "1"}}}),
        ),
        // The modern probe, before any session: an initialize-era server's 400.
        _ if !session => {
            write!(
                stream,
                "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
        }
        "tools/list" => json(
            &mut stream,
            "200 OK",
            "",
            &json!({"jsonrpc": "2.0", "id": message["id"], "result": {"tools": [
                {"name": "work", "inputSchema": {"type": "object"}}]}}),
        ),
        "tools/call" => {
            write!(
                stream,
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nConnection: close\r\n\r\n"
            )?;
            stream.flush()?;
            for n in 0.. {
                if let Call::Endless = call {
                    let question = json!({"jsonrpc": "2.0", "id": format!("q{n}"),
                        "method": "elicitation/create", "params": {"mode": "form",
                        "message": "Again?", "requestedSchema": {"type": "object",
                        "properties": {"x": {"type": "integer"}}, "required": ["x"]}}});
                    write!(stream, "data: {question}\n\n")?;
                    stream.flush()?;
                }
                std::thread::sleep(Duration::from_millis(5));
                if n > 200_000 {
                    break;
                }
            }
            Ok(())
        }
        _ => {
            if message.get("result").is_some() || message.get("error").is_some() {
                answers.fetch_add(1, Ordering::SeqCst);
            }
            write!(
                stream,
                "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
            )
        }
    }
}

/// A server that never answers the call ended a headless `tessera call`
/// only past 150 s; now `--timeout` ends it, exit 6, saying why.
#[test]
fn a_silent_server_ends_the_call_at_its_timeout() {
    let (url, _) = serve(Call::Silent);
    let run = tessera(&["call", &url, "work", "--timeout", "2"]);
    let (code, shown, took) = (run.code, run.out, run.took);
    assert_eq!(code, 6, "{shown}");
    assert!(shown.contains("did not answer within 2s"), "{shown}");
    assert!(took >= Duration::from_secs(2), "{took:?}");
    assert!(took < Duration::from_secs(20), "{took:?}");
}

/// A server that pushed questions without end drew 625,537 answers in
/// 150 s; now the CLI answers `--max-rounds` of them and ends, exit 6,
/// naming what was asked last.
#[test]
fn a_server_that_never_stops_asking_is_answered_max_rounds_times() {
    let (url, answers) = serve(Call::Endless);
    let run = tessera(&[
        "call",
        &url,
        "work",
        "--max-rounds",
        "3",
        "--answer",
        "elicitation.x=1",
    ]);
    let (code, shown, took) = (run.code, run.out, run.took);
    assert_eq!(code, 6, "{shown}");
    assert!(
        shown.contains("the server still asked for input after 3 rounds"),
        "{shown}"
    );
    assert!(shown.contains("Again?"), "{shown}");
    // Three answers, and at most the refusal of the fourth question.
    let posted = answers.load(Ordering::SeqCst);
    assert!((3..=4).contains(&posted), "{posted} answers were POSTed");
    assert!(took < Duration::from_secs(20), "{took:?}");
}

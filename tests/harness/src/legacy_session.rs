//! An initialize-era (2025-11-25) session over raw HTTP/1.1, one
//! connection per request, for tests of `--legacy serve` binaries.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

/// One HTTP/1.1 request on its own connection; the stream is returned unread.
pub fn send(addr: &str, method: &str, session: Option<&str>, body: &Value) -> TcpStream {
    send_with(addr, method, session, body, &[])
}

/// [`send`] with `extra` headers.
pub fn send_with(
    addr: &str,
    method: &str,
    session: Option<&str>,
    body: &Value,
    extra: &[(&str, &str)],
) -> TcpStream {
    let body = if method == "POST" {
        body.to_string()
    } else {
        String::new()
    };
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut req = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: {}\r\n",
        body.len()
    );
    if let Some(sid) = session {
        req.push_str(&format!(
            "Mcp-Session-Id: {sid}\r\nMCP-Protocol-Version: 2025-11-25\r\n"
        ));
    }
    for (name, value) in extra {
        req.push_str(&format!("{name}: {value}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(&body);
    s.write_all(req.as_bytes()).unwrap();
    s
}

/// The whole reply: status and text.
pub fn post(addr: &str, session: Option<&str>, body: &Value) -> (u16, String) {
    let mut out = String::new();
    send(addr, "POST", session, body)
        .read_to_string(&mut out)
        .unwrap();
    let status = out
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, out)
}

/// `initialize` on a new session: its id.
pub fn initialize(addr: &str) -> String {
    let (status, reply) = post(
        addr,
        None,
        &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {"form": {}}},
            "clientInfo": {"name": "t", "version": "1"}}}),
    );
    assert_eq!(status, 200, "{reply}");
    reply
        .lines()
        .find_map(|l| l.strip_prefix("mcp-session-id: "))
        .expect("a session id")
        .trim()
        .to_owned()
}

/// A call's event stream, read message by message.
pub struct Call {
    stream: TcpStream,
    seen: String,
    taken: usize,
}

impl Call {
    /// Starts `increase-counter` (current 10) as request `id` of `session`.
    pub fn start(addr: &str, session: &str, id: i64) -> Self {
        let call = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "increase-counter", "arguments": {"current": 10}}});
        Self {
            stream: send(addr, "POST", Some(session), &call),
            seen: String::new(),
            taken: 0,
        }
    }

    /// Resumes a call's stream after event `last_event_id` (GET with `Last-Event-ID`).
    pub fn resume(addr: &str, session: &str, last_event_id: &str) -> Self {
        Self {
            stream: send_with(
                addr,
                "GET",
                Some(session),
                &Value::Null,
                &[("Last-Event-ID", last_event_id)],
            ),
            seen: String::new(),
            taken: 0,
        }
    }

    /// The id of the last event read so far.
    pub fn last_event_id(&self) -> Option<String> {
        self.seen
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix("id: "))
            .map(str::to_owned)
    }

    /// The next JSON-RPC message on the stream.
    pub fn next_message(&mut self) -> Value {
        loop {
            let messages: Vec<Value> = self
                .seen
                .lines()
                .filter_map(|l| l.strip_prefix("data: "))
                .filter_map(|d| serde_json::from_str(d).ok())
                .collect();
            if let Some(m) = messages.get(self.taken) {
                self.taken += 1;
                return m.clone();
            }
            let mut buf = [0u8; 4096];
            let n = self.stream.read(&mut buf).expect("the stream goes on");
            assert!(n > 0, "the stream ended; read:\n{}", self.seen);
            self.seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
}

/// The client's `accept` of `question` with `content`.
pub fn accept(question: &Value, content: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept", "content": content}})
}

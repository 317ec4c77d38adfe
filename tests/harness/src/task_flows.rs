//! Driving the tasks extension over HTTP: a tool call started as a task,
//! polled until it reaches a status.

use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::{McpReply, mcp_post_declaring};

/// The capabilities of a client that answers forms and polls tasks.
pub fn tasks_declared() -> Value {
    json!({"elicitation": {"form": {}}, "extensions": {"io.modelcontextprotocol/tasks": {}}})
}

/// A request `method` with `params` to `url`, from a client declaring the
/// tasks extension ([`tasks_declared`]).
pub async fn post(
    http: &reqwest::Client,
    url: &str,
    id: i64,
    method: &str,
    params: Value,
) -> McpReply {
    mcp_post_declaring(http, url, None, id, method, params, tasks_declared()).await
}

/// Calls `tool` with `arguments` at `url`, expecting a task: its id.
pub async fn start_task(http: &reqwest::Client, url: &str, tool: &str, arguments: Value) -> String {
    let reply = post(
        http,
        url,
        1,
        "tools/call",
        json!({"name": tool, "arguments": arguments}),
    )
    .await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    assert_eq!(reply.body["result"]["resultType"], "task", "{}", reply.body);
    reply.body["result"]["taskId"]
        .as_str()
        .expect("a task id")
        .to_owned()
}

/// Task `id` as `tasks/get` at `url` shows it.
pub async fn task(http: &reqwest::Client, url: &str, id: &str) -> Value {
    let reply = post(http, url, 2, "tasks/get", json!({"taskId": id})).await;
    assert_eq!(reply.status, 200, "{}", reply.body);
    reply.body["result"].clone()
}

/// Polls task `id` at `url` every 50 ms until its status is `want`; fails
/// after `within`.
pub async fn until_status(
    http: &reqwest::Client,
    url: &str,
    id: &str,
    want: &str,
    within: Duration,
) -> Value {
    let started = Instant::now();
    loop {
        let seen = task(http, url, id).await;
        if seen["status"] == want {
            return seen;
        }
        assert!(
            started.elapsed() < within,
            "task {id} is not {want} after {within:?} through {url}: {seen}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A `subscriptions/listen` stream for `notifications/tasks` over raw
/// HTTP/1.1 (blocking reads, 10 s each), from a client declaring the tasks
/// extension.
pub struct TaskListener {
    stream: std::net::TcpStream,
    seen: String,
    taken: usize,
}

impl TaskListener {
    /// Listens at `url` (`http://HOST:PORT/mcp`) for the tasks `ids`.
    pub fn open(url: &str, ids: &[&str]) -> Self {
        use std::io::Write;
        let addr = url
            .strip_prefix("http://")
            .and_then(|rest| rest.split('/').next())
            .expect("an http:// URL");
        let body = json!({"jsonrpc": "2.0", "id": 70, "method": "subscriptions/listen",
            "params": {"notifications": {"taskIds": ids}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": tasks_declared()}}})
        .to_string();
        let mut stream = std::net::TcpStream::connect(addr).expect("connect");
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let request = format!(
            "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        Self {
            stream,
            seen: String::new(),
            taken: 0,
        }
    }

    /// The next JSON-RPC message on the stream (the acknowledgement first).
    pub fn next_message(&mut self) -> Value {
        use std::io::Read;
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
            let mut buf = [0u8; 8192];
            let n = self.stream.read(&mut buf).expect("the stream goes on");
            assert!(n > 0, "the stream ended; read:\n{}", self.seen);
            self.seen.push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    }
}

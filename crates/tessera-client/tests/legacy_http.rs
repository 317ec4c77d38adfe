//! An initialize-era-only server over Streamable HTTP (the TypeScript SDK
//! 1.x): the client attempts a modern request, reads the 400 it gets, falls
//! back to `initialize` (keeping the session it is given) and answers the
//! `elicitation/create` the server pushes on the call's stream with its
//! Elicitor. Streamable HTTP, Backward Compatibility: "If the body is empty or
//! is not a recognized modern JSON-RPC error, fall back to initialize and
//! continue with the legacy version for subsequent requests."

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;
use tessera_client::{McpClient, ScriptedAnswer, ScriptedElicitor};
use test_harness::LegacyHttpServer;

fn elicitor(answer: ScriptedAnswer) -> Arc<ScriptedElicitor> {
    Arc::new(ScriptedElicitor::new(HashMap::from([(
        "elicitation".to_owned(),
        answer,
    )])))
}

#[tokio::test]
async fn the_client_falls_back_to_initialize_and_answers_pushed_questions() {
    let server = LegacyHttpServer::start();
    for (answer, text) in [
        (
            ScriptedAnswer::Accept(json!({"name": "Ada"}).as_object().unwrap().clone()),
            "Hello, Ada!",
        ),
        (ScriptedAnswer::Decline, "No greeting."),
    ] {
        let client = McpClient::builder(&server.url)
            .elicitor(elicitor(answer))
            .build()
            .unwrap();
        // The first request is the probe: a modern tools/list the server refuses with 400.
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools[0].name, "greet");
        assert!(client.is_initialize_era().await.unwrap());
        assert_eq!(client.protocol_version(), "2025-11-25");
        let result = client.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some(text));
        let features = client.server_features().await.unwrap();
        assert!(!features.tasks && !features.listen, "{features:?}");
    }
}

#[tokio::test]
async fn a_client_without_an_elicitor_declares_no_elicitation_to_an_old_server() {
    // The handshake's capabilities say what the client can answer: without an
    // Elicitor none, so the server does not ask and says why.
    let server = LegacyHttpServer::start();
    let client = McpClient::builder(&server.url).build().unwrap();
    let result = client.call_tool("greet", json!({})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        result.content[0].as_text(),
        Some("Client does not support form elicitation.")
    );
}

/// The 2025-11-25 transport: "If the server does close the connection prior
/// to terminating the SSE stream, it SHOULD send an SSE event with a standard
/// retry field before closing the connection. The client MUST respect the
/// retry field, waiting the given number of milliseconds before attempting to
/// reconnect", with `GET` and `Last-Event-ID`. A server that does exactly
/// that, over a real socket: the call's stream gives a priming event and
/// closes; the response comes on the resumed stream.
#[tokio::test]
async fn a_call_stream_closed_before_its_response_is_resumed_after_retry() {
    use std::time::{Duration, Instant};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let seen: Arc<std::sync::Mutex<Vec<(String, Instant)>>> = Arc::default();
    let log = Arc::clone(&seen);
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let log = Arc::clone(&log);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                // Headers, then a body of Content-Length bytes.
                let (head, body) = loop {
                    let n = socket.read(&mut buf).await.unwrap_or(0);
                    if n == 0 {
                        return;
                    }
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request).into_owned();
                    if let Some((head, body)) = text.split_once("\r\n\r\n") {
                        let length = head
                            .lines()
                            .find_map(|l| {
                                l.to_ascii_lowercase()
                                    .strip_prefix("content-length: ")
                                    .map(str::to_owned)
                            })
                            .and_then(|n| n.trim().parse::<usize>().ok())
                            .unwrap_or(0);
                        if body.len() >= length {
                            break (head.to_owned(), body.to_owned());
                        }
                    }
                };
                let last_event_id = head.lines().find_map(|l| {
                    l.to_ascii_lowercase()
                        .starts_with("last-event-id:")
                        .then(|| l[14..].trim().to_owned())
                });
                let message: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
                let method = message["method"].as_str().unwrap_or("").to_owned();
                log.lock().unwrap().push((
                    format!(
                        "{} {method}{}",
                        &head[..head.find(' ').unwrap_or(0)],
                        last_event_id
                            .as_deref()
                            .map(|l| format!(" after {l}"))
                            .unwrap_or_default()
                    ),
                    Instant::now(),
                ));
                let sse = "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nmcp-session-id: s1\r\nconnection: close\r\n\r\n";
                let reply = match (head.starts_with("GET"), method.as_str()) {
                    (true, _) => format!(
                        "{sse}id: stream.1\nevent: message\ndata: {}\n\n",
                        json!({"jsonrpc": "2.0", "id": 2, "result": {"content": [{"type": "text", "text": "resumed"}]}})
                    ),
                    (false, "initialize") => {
                        let body = json!({"jsonrpc": "2.0", "id": message["id"], "result": {
                            "protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                            "serverInfo": {"name": "closing", "version": "1"}}})
                        .to_string();
                        format!(
                            "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nmcp-session-id: s1\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                            body.len()
                        )
                    }
                    (false, "tools/call") => format!("{sse}id: stream.0\nretry: 300\ndata: \n\n"),
                    _ => "HTTP/1.1 202 Accepted\r\ncontent-length: 0\r\nconnection: close\r\n\r\n"
                        .to_owned(),
                };
                let _ = socket.write_all(reply.as_bytes()).await;
                let _ = socket.shutdown().await;
            });
        }
    });

    let client = McpClient::builder(&url)
        .connect_mode(tessera_client::ConnectMode::Legacy)
        .build()
        .unwrap();
    let result = client.call_tool_raw("slow", json!({})).await.unwrap();
    assert_eq!(result["content"][0]["text"], "resumed");
    let seen = seen.lock().unwrap();
    let call = seen
        .iter()
        .find(|(what, _)| what == "POST tools/call")
        .unwrap()
        .1;
    let (what, resumed) = seen
        .iter()
        .find(|(what, _)| what.starts_with("GET"))
        .unwrap();
    assert_eq!(what, "GET  after stream.0");
    assert!(
        resumed.duration_since(call) >= Duration::from_millis(300),
        "reconnected after {:?}, before the server's retry",
        resumed.duration_since(call)
    );
}

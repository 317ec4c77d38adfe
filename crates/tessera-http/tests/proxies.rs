//! Callers behind trusted proxies, over real sockets: the client address
//! per-caller limits count against comes from a PROXY protocol header
//! (v1 or v2) or `X-Forwarded-For` sent by a proxy the operator named, and
//! from no one else.

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use tessera_http::{EndpointOptions, ServeOptions, TrustedProxies};
use tessera_server::middleware::{Audit, AuditRecord};
use tessera_server::{Context, McpServer, ToolDef};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

mod support;
use support::{body, start_serving};

/// A server trusting 127.0.0.1 for PROXY headers and X-Forwarded-For; the
/// callers its audit layer saw.
async fn start() -> (SocketAddr, Arc<Mutex<Vec<Option<String>>>>) {
    let callers = Arc::new(Mutex::new(Vec::new()));
    let into = Arc::clone(&callers);
    let server = McpServer::builder("proxied", "1.0.0")
        .middleware(Audit::new(move |r: &AuditRecord| {
            into.lock().unwrap().push(r.caller.clone())
        }))
        .tool(ToolDef::new("hello", |_: Context, _: Value| async { "hi" }))
        .build()
        .unwrap();
    let proxies = TrustedProxies::parse("127.0.0.1").unwrap();
    let addr = start_serving(
        server,
        EndpointOptions::default().trust_proxies(proxies.clone()),
        ServeOptions::default()
            .header_timeout(Duration::from_secs(1))
            .proxy_protocol(proxies),
    )
    .await;
    (addr, callers)
}

/// Sends `prefix` then one `tools/call` from `from`: the reply's status line
/// (empty when the connection was closed without one).
async fn send(from: &str, addr: SocketAddr, prefix: &[u8], extra: &str) -> String {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket
        .bind((from.parse::<IpAddr>().unwrap(), 0).into())
        .unwrap();
    let mut stream = socket.connect(addr).await.unwrap();
    let payload = body(1, "tools/call", json!({"name": "hello", "arguments": {}}));
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: hello\r\n{extra}Content-Length: {}\r\n\r\n{payload}",
        payload.len()
    );
    let mut bytes = prefix.to_vec();
    bytes.extend_from_slice(request.as_bytes());
    let _ = stream.write_all(&bytes).await;
    let mut reply = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), stream.read_to_end(&mut reply)).await;
    String::from_utf8_lossy(&reply)
        .lines()
        .next()
        .unwrap_or_default()
        .to_owned()
}

/// A PROXY v2 header for a TCP connection from `source` (IPv6) to `dest`.
fn v2(command: u8, source: &str, dest: &str) -> Vec<u8> {
    let mut h = b"\r\n\r\n\0\r\nQUIT\n".to_vec();
    h.push(0x20 | command); // version 2, LOCAL (0) or PROXY (1)
    h.push(0x21); // AF_INET6, STREAM
    h.extend_from_slice(&36u16.to_be_bytes());
    for a in [source, dest] {
        h.extend_from_slice(&a.parse::<std::net::Ipv6Addr>().unwrap().octets());
    }
    h.extend_from_slice(&4711u16.to_be_bytes());
    h.extend_from_slice(&443u16.to_be_bytes());
    h
}

#[tokio::test]
async fn the_client_address_comes_from_a_trusted_proxy_only() {
    let (addr, callers) = start().await;
    let ok = "HTTP/1.1 200 OK";

    // PROXY v1 from the trusted proxy: its source is the caller.
    let v1 = b"PROXY TCP4 203.0.113.7 127.0.0.1 4711 8787\r\n";
    assert_eq!(send("127.0.0.1", addr, v1, "").await, ok);
    // PROXY v2, IPv6: grouped by its /64.
    let header = v2(1, "2001:db8:1:2::99", "2001:db8::1");
    assert_eq!(send("127.0.0.1", addr, &header, "").await, ok);
    // v2 LOCAL (the balancer's own health check): the proxy itself.
    let local = v2(0, "::", "::");
    assert_eq!(send("127.0.0.1", addr, &local, "").await, ok);
    // After a PROXY header what follows is the client's: its
    // X-Forwarded-For is ignored, a LOCAL header's included.
    let spoof = "X-Forwarded-For: 198.51.100.66\r\n";
    assert_eq!(send("127.0.0.1", addr, v1, spoof).await, ok);
    assert_eq!(send("127.0.0.1", addr, &local, spoof).await, ok);

    // From the trusted proxy without a header: closed, never served.
    assert_eq!(send("127.0.0.1", addr, b"", "").await, "");
    // From anyone else, a PROXY header is not read as one: a bad request.
    let refused = send("127.0.0.2", addr, v1, "").await;
    assert!(refused.starts_with("HTTP/1.1 400"), "{refused}");
    // And their X-Forwarded-For is nobody's word but theirs.
    assert_eq!(send("127.0.0.2", addr, b"", spoof).await, ok);

    assert_eq!(
        *callers.lock().unwrap(),
        [
            "address 203.0.113.7",
            "address 2001:db8:1:2::/64",
            "address 127.0.0.1",
            "address 203.0.113.7",
            "address 127.0.0.1",
            "address 127.0.0.2",
        ]
        .map(|c| Some(c.to_owned()))
    );
}

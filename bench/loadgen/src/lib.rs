//! The wire shared by the load generators: the three rounds of an
//! `increase-counter` call as a 2026-07-28 client sends them, checked, over a
//! bare HTTP/1.1 connection.

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1;
use hyper_util::rt::TokioIo;
use tokio::net::TcpStream;

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"loadgen","version":"1"},"io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}"#;

/// Where the load goes: an `http://HOST:PORT/PATH` URL, and the name the
/// counter's tool has there (`increase-counter`, or a gateway's
/// `UP__increase-counter`).
pub struct Target {
    url: http::Uri,
    authority: String,
    tool: String,
}

impl Target {
    /// Parses and checks an `http://` URL with a host.
    pub fn parse(url: &str) -> Result<Self, String> {
        let url: http::Uri = url.parse().map_err(|e| format!("bad --url: {e}"))?;
        if url.scheme_str() != Some("http") || url.host().is_none() {
            return Err("--url must be http://HOST:PORT/PATH".into());
        }
        let authority = url
            .authority()
            .map_or_else(|| "127.0.0.1".to_owned(), |a| a.to_string());
        Ok(Self {
            url,
            authority,
            tool: "increase-counter".into(),
        })
    }

    /// The same target, its counter's tool called `tool`.
    pub fn tool(mut self, tool: impl Into<String>) -> Self {
        self.tool = tool.into();
        self
    }

    /// A POST of `payload` to the target's path with the MCP headers every
    /// request carries; the caller adds what its era needs.
    pub fn post(&self) -> http::request::Builder {
        http::Request::post(self.url.path())
            .header("Host", &self.authority)
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
    }
}

/// One HTTP/1.1 keep-alive connection with `TCP_NODELAY`.
pub struct Connection {
    sender: http1::SendRequest<Full<Bytes>>,
}

impl Connection {
    /// Opens a connection to the target.
    pub async fn open(target: &Target) -> Result<Self, String> {
        Self::open_from(target, None).await
    }

    /// Opens a connection to the target from local address `from` (a
    /// loopback address other than 127.0.0.1 is another client), or from
    /// wherever the system picks.
    pub async fn open_from(
        target: &Target,
        from: Option<std::net::IpAddr>,
    ) -> Result<Self, String> {
        let host = target.url.host().unwrap_or("127.0.0.1");
        let port = target.url.port_u16().unwrap_or(80);
        let stream = match from {
            None => TcpStream::connect((host, port)).await,
            Some(from) => {
                let to = tokio::net::lookup_host((host, port))
                    .await
                    .map_err(|e| format!("resolve {host}: {e}"))?
                    .next()
                    .ok_or(format!("{host} has no address"))?;
                let socket = if to.is_ipv4() {
                    tokio::net::TcpSocket::new_v4()
                } else {
                    tokio::net::TcpSocket::new_v6()
                }
                .map_err(|e| format!("socket: {e}"))?;
                socket
                    .bind((from, 0).into())
                    .map_err(|e| format!("bind {from}: {e}"))?;
                socket.connect(to).await
            }
        }
        .map_err(|e| format!("connect: {e}"))?;
        stream.set_nodelay(true).map_err(|e| e.to_string())?;
        let (sender, conn) = http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("handshake: {e}"))?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(Self { sender })
    }

    /// The connection kept in `slot`, opened first when there is none (or the
    /// last one failed and was dropped).
    pub async fn reuse<'a>(
        slot: &'a mut Option<Self>,
        target: &Target,
    ) -> Result<&'a mut Self, String> {
        if slot.is_none() {
            *slot = Some(Self::open(target).await?);
        }
        slot.as_mut().ok_or_else(|| "no connection".to_owned())
    }

    /// Whether the server closed the connection (e.g. an idle keep-alive
    /// connection past its timeout): a pool must not send on it again.
    pub fn is_closed(&self) -> bool {
        self.sender.is_closed()
    }

    /// Sends a request; the response's body is left to the caller.
    pub async fn send(
        &mut self,
        request: http::Request<Full<Bytes>>,
    ) -> Result<http::Response<Incoming>, String> {
        self.sender
            .ready()
            .await
            .map_err(|e| format!("connection: {e}"))?;
        self.sender
            .send_request(request)
            .await
            .map_err(|e| format!("request: {e}"))
    }

    /// Posts one 2026-07-28 `tools/call` and returns the JSON-RPC message
    /// answering it (from a JSON body, or the last event of an SSE body).
    async fn call(&mut self, target: &Target, payload: String) -> Result<String, String> {
        let request = target
            .post()
            .header("MCP-Protocol-Version", "2026-07-28")
            .header("Mcp-Method", "tools/call")
            .header("Mcp-Name", target.tool.as_str())
            .body(Full::new(Bytes::from(payload)))
            .map_err(|e| e.to_string())?;
        let response = self.send(request).await?;
        let status = response.status();
        let text = read_text(response.into_body()).await?;
        if status != http::StatusCode::OK {
            return Err(format!(
                "HTTP {status}: {}",
                text.chars().take(200).collect::<String>()
            ));
        }
        Ok(
            match text.lines().rev().find_map(|l| l.strip_prefix("data: ")) {
                Some(data) if text.starts_with("event:") || text.starts_with("data:") => {
                    data.to_owned()
                }
                _ => text,
            },
        )
    }
}

/// A whole body as UTF-8 text.
pub async fn read_text(body: Incoming) -> Result<String, String> {
    let bytes = body
        .collect()
        .await
        .map_err(|e| format!("body: {e}"))?
        .to_bytes();
    String::from_utf8(bytes.to_vec()).map_err(|_| "body is not UTF-8".to_owned())
}

/// Which round of the flow to send.
pub enum Round<'a> {
    /// No ticket: the server asks for the amount.
    First,
    /// The amount (5) with round one's step: the server asks to confirm.
    Amount(&'a Step),
    /// The confirmation with round two's step: the server answers.
    Confirm(&'a Step),
}

/// What one round took, and what the next one answers: the ticket it
/// handed back and the key of its question (none after the last).
#[derive(Debug, Clone, Default)]
pub struct Step {
    /// Time from sending the request to the whole answer.
    pub latency: Duration,
    /// The `requestState` to echo in the next round.
    pub ticket: Option<String>,
    /// The key of the question asked (`amount` and `confirmation` from the
    /// counter; `elicitation` from a gateway relaying a server that names none).
    pub key: Option<String>,
}

/// Sends one round of `increase-counter` (current 10) with JSON-RPC id `id`
/// and checks the answer is the one the counter gives.
pub async fn round(
    conn: &mut Connection,
    target: &Target,
    id: u64,
    round: Round<'_>,
) -> Result<Step, String> {
    let parts = |step: &Step| {
        (
            step.ticket.clone().unwrap_or_default(),
            step.key.clone().unwrap_or_default(),
        )
    };
    let extra = match round {
        Round::First => String::new(),
        Round::Amount(step) => {
            let (ticket, key) = parts(step);
            format!(
                r#","inputResponses":{{"{key}":{{"action":"accept","content":{{"amount":5}}}}}},"requestState":"{ticket}""#
            )
        }
        Round::Confirm(step) => {
            let (ticket, key) = parts(step);
            format!(
                r#","inputResponses":{{"{key}":{{"action":"accept","content":{{"confirm":true}}}}}},"requestState":"{ticket}""#
            )
        }
    };
    let payload = format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{META},"name":"{tool}","arguments":{{"current":10}}{extra}}}}}"#,
        tool = target.tool,
    );
    let started = Instant::now();
    let answer = conn.call(target, payload).await?;
    let latency = started.elapsed();
    if !answer.contains(&format!(r#""id":{id},"#)) && !answer.contains(&format!(r#""id":{id}}}"#)) {
        return Err(format!("response does not echo id {id}: {answer}"));
    }
    let expected = match round {
        Round::First => r#""amount""#,
        Round::Amount(_) => "Increase 10 by 5?",
        Round::Confirm(_) => "Counter increased by 5; next value is 15",
    };
    if !answer.contains(expected) {
        return Err(format!("expected {expected} in the answer: {answer}"));
    }
    let (ticket, key) = match round {
        Round::Confirm(_) => (None, None),
        _ => (
            Some(
                member(&answer, r#""requestState":""#)
                    .ok_or_else(|| format!("no requestState in {answer}"))?
                    .to_owned(),
            ),
            Some(
                member(&answer, r#""inputRequests":{""#)
                    .ok_or_else(|| format!("no inputRequests in {answer}"))?
                    .to_owned(),
            ),
        ),
    };
    Ok(Step {
        latency,
        ticket,
        key,
    })
}

/// The string after `prefix` in a response, to its closing quote: the
/// `requestState` (base64url and dots) or the first question's key (no escapes in either).
fn member<'a>(body: &'a str, prefix: &str) -> Option<&'a str> {
    let start = body.find(prefix)? + prefix.len();
    let len = body[start..].find('"')?;
    Some(&body[start..start + len])
}

/// A multi-threaded tokio runtime, or a message saying why there is none.
pub fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start: {e}"))
}

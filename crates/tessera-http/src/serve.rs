//! Running a service on hyper: accept loop, `TCP_NODELAY`, deadlines for
//! headers and bodies, a connection cap at which the connection that made
//! the least progress gives way (see `connections`), graceful shutdown.

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http::{Request, Response};
use hyper::body::Incoming;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use tokio::net::TcpListener;
use tower_service::Service;

use crate::DeadlineBody;
use crate::connections::{ConnectionSlot, Connections, RequestOnSlot};
use crate::write_deadline::WriteDeadline;

/// How long in-flight requests may take to finish after shutdown is asked for.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(30);

/// Descriptors kept free for everything that is not a client connection.
const RESERVED_DESCRIPTORS: u64 = 64;

/// A boxed error, as tower layers produce them.
type BoxError = Box<dyn std::error::Error + Send + Sync>;

/// How [`serve_with`] treats connections.
///
/// ```
/// use std::time::Duration;
/// let options = tessera_http::ServeOptions::default()
///     .header_timeout(Duration::from_secs(5))
///     .body_timeout(Duration::from_secs(10))
///     .max_connections(4_000);
/// # let _ = options;
/// ```
#[derive(Debug, Clone)]
pub struct ServeOptions {
    header_timeout: Duration,
    body_timeout: Duration,
    write_timeout: Duration,
    max_connections: Option<usize>,
    proxy_protocol: Option<crate::TrustedProxies>,
}

impl Default for ServeOptions {
    fn default() -> Self {
        Self {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(10),
            write_timeout: Duration::from_secs(60),
            max_connections: None,
            proxy_protocol: None,
        }
    }
}

impl ServeOptions {
    /// Time allowed for a request's headers, counted from when the connection
    /// waits for them: an idle keep-alive connection is closed after it too
    /// (default 10 s).
    pub fn header_timeout(mut self, after: Duration) -> Self {
        self.header_timeout = after;
        self
    }

    /// Time allowed for a request's body once its headers arrived (default
    /// 10 s); a body still incomplete then is answered 408 and its memory freed.
    pub fn body_timeout(mut self, after: Duration) -> Self {
        self.body_timeout = after;
        self
    }

    /// Time a write may wait for the peer to take bytes (default 60 s): a
    /// client that stops reading its answer or event stream, so the socket's
    /// buffer stays full, is disconnected then, its slot and queue freed.
    pub fn write_timeout(mut self, after: Duration) -> Self {
        self.write_timeout = after;
        self
    }

    /// Most connections held at once (default: the process's descriptor
    /// limit less 64). A connection arriving at the cap takes the place of
    /// the one that made the least progress: one that never sent a whole
    /// request head (the longest waiting), then a body arriving slower than a
    /// kilobyte a second (the slowest), then an idle keep-alive connection
    /// (the longest idle), then the oldest listen stream of the client
    /// holding the most. When every connection is serving a request, the
    /// newcomer is closed at once (shed).
    pub fn max_connections(mut self, n: usize) -> Self {
        self.max_connections = Some(n.max(1));
        self
    }

    /// Reads a PROXY protocol header (v1 or v2, as layer-4 load balancers
    /// send it) at the start of every connection from `proxies`, and takes
    /// the client address it names as the connection's peer; connections
    /// from anyone else are served as they come, their bytes never read as
    /// a header. A connection from a proxy without a valid header within the
    /// header timeout is closed. A `LOCAL` header (the balancer's own health
    /// check) leaves the proxy as the peer. On a connection that began with
    /// a header, `X-Forwarded-For` is never read: a layer-4 balancer writes
    /// no HTTP header, so any there is the client's own.
    pub fn proxy_protocol(mut self, proxies: crate::TrustedProxies) -> Self {
        self.proxy_protocol = Some(proxies);
        self
    }

    /// The connection cap in force.
    pub fn connection_cap(&self) -> usize {
        self.max_connections.unwrap_or_else(default_max_connections)
    }
}

/// The soft limit on open descriptors, less a reserve; 1,024 when unknown.
fn default_max_connections() -> usize {
    let soft = std::fs::read_to_string("/proc/self/limits")
        .ok()
        .and_then(|text| {
            text.lines()
                .find(|l| l.starts_with("Max open files"))
                .and_then(|l| l.split_whitespace().nth(3))
                .and_then(|n| n.parse::<u64>().ok())
        })
        .unwrap_or(1024);
    usize::try_from(soft.saturating_sub(RESERVED_DESCRIPTORS).max(16)).unwrap_or(usize::MAX)
}

/// Serves `service` on `listener` with [`ServeOptions::default`] until
/// `shutdown` completes, then drains in-flight requests.
///
/// `service` is an [`McpEndpoint`](crate::McpEndpoint), or any tower
/// `Service` built around one, so tower-http layers (timeouts, tracing,
/// compression, CORS) apply; its request bodies are [`DeadlineBody`]s.
///
/// ```no_run
/// # async fn run(endpoint: tessera_http::McpEndpoint) -> std::io::Result<()> {
/// let listener = tokio::net::TcpListener::bind("127.0.0.1:8787").await?;
/// tessera_http::serve(listener, endpoint, tessera_http::shutdown_signal()).await
/// # }
/// ```
pub async fn serve<S, B>(
    listener: TcpListener,
    service: S,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()>
where
    S: Service<Request<DeadlineBody<Incoming>>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    serve_with(listener, service, shutdown, ServeOptions::default()).await
}

/// [`serve`] with `options`.
pub async fn serve_with<S, B>(
    listener: TcpListener,
    service: S,
    shutdown: impl Future<Output = ()>,
    options: ServeOptions,
) -> std::io::Result<()>
where
    S: Service<Request<DeadlineBody<Incoming>>, Response = Response<B>> + Clone + Send + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body<Data = Bytes> + Send + 'static,
    B::Error: Into<BoxError>,
{
    let cap = options.connection_cap();
    let active = Arc::new(AtomicUsize::new(0));
    let connections = Arc::new(Connections::default());
    let mut gave_way = OncePerSecond::default();
    let mut shed = OncePerSecond::default();
    let mut accept_failed = OncePerSecond::default();
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    tracing::debug!(cap, "connection cap");
    loop {
        tokio::select! {
            accepted = listener.accept() => {
                let (stream, peer) = match accepted {
                    Ok(pair) => pair,
                    Err(e) => {
                        accept_failed.note(|n| tracing::warn!(error = %e, failures = n, "accept failed"));
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                if active.load(Ordering::Acquire) >= cap {
                    if connections.evict_one() {
                        gave_way.note(|n| tracing::warn!(cap, closed = n, "at the connection cap: connections that made the least progress closed for new ones"));
                    } else {
                        // Shed: close it at once, so it holds no descriptor and no memory.
                        drop(stream);
                        tessera_server::telemetry::metrics::connection_shed("all_serving");
                        shed.note(|n| tracing::warn!(cap, shed = n, "at the connection cap, every connection serving a request: new connections closed"));
                        continue;
                    }
                }
                active.fetch_add(1, Ordering::AcqRel);
                let (active, connections, service, options) = (
                    Arc::clone(&active),
                    Arc::clone(&connections),
                    service.clone(),
                    options.clone(),
                );
                let watcher = graceful.watcher();
                tokio::spawn(async move {
                    let mut stream = stream;
                    let (client, by_header) = match &options.proxy_protocol {
                        Some(proxies) if proxies.trusts(peer.ip()) => {
                            match read_proxy_header(&mut stream, options.header_timeout).await {
                                Ok(client) => (client.unwrap_or(peer.ip()), true),
                                Err(why) => {
                                    tracing::debug!(%peer, why, "connection from a proxy closed");
                                    active.fetch_sub(1, Ordering::AcqRel);
                                    return;
                                }
                            }
                        }
                        _ => (peer.ip(), false),
                    };
                    let (slot, closing) = connections.open_named(client, by_header);
                    let _held = Held(active, Arc::clone(&connections), slot.clone());
                    if let Err(e) = stream.set_nodelay(true) {
                        tracing::debug!(error = %e, %peer, "could not set TCP_NODELAY");
                    }
                    let service = WithBodyDeadline {
                        inner: service,
                        after: options.body_timeout,
                        slot,
                    };
                    // Headers must arrive in time, the first ones and those of each
                    // keep-alive request (hyper's timer makes it enforceable).
                    let connection = http1::Builder::new()
                        .timer(TokioTimer::new())
                        .header_read_timeout(options.header_timeout)
                        .serve_connection(
                            TokioIo::new(WriteDeadline::new(stream, options.write_timeout)),
                            TowerToHyperService::new(service),
                        );
                    let connection = watcher.watch(connection);
                    tokio::select! {
                        ended = connection => if let Err(e) = ended {
                            tracing::debug!(error = %e, %peer, "connection ended with an error");
                        },
                        // Gave way to a newer connection at the cap: dropped, so closed.
                        Ok(()) = closing => {}
                    }
                });
            }
            () = &mut shutdown => break,
        }
    }
    drop(listener);
    tracing::info!("shutting down: draining in-flight requests");
    tokio::select! {
        () = graceful.shutdown() => tracing::info!("all connections closed"),
        () = tokio::time::sleep(DRAIN_TIMEOUT) => tracing::warn!("drain timed out; closing anyway"),
    }
    Ok(())
}

/// The most bytes a PROXY header may take (v2 with its TLVs included).
const MAX_PROXY_HEADER: usize = 4096;

/// Reads the PROXY protocol header a connection from a trusted proxy starts
/// with, and nothing after it: the client address it names (`None` for
/// `LOCAL` or `UNKNOWN`), or why the connection is to be closed.
async fn read_proxy_header(
    stream: &mut tokio::net::TcpStream,
    within: Duration,
) -> Result<Option<std::net::IpAddr>, String> {
    use ppp::{HeaderResult, PartialResult, v1, v2};
    use tokio::io::AsyncReadExt;
    let read = async {
        let mut buf = vec![0u8; MAX_PROXY_HEADER];
        loop {
            let n = stream.peek(&mut buf).await.map_err(|e| e.to_string())?;
            if n == 0 {
                return Err("it closed before its PROXY header".to_owned());
            }
            let parsed = HeaderResult::parse(&buf[..n]);
            if parsed.is_incomplete() {
                if n == buf.len() {
                    return Err(format!("its PROXY header is over {MAX_PROXY_HEADER} bytes"));
                }
                // The rest of the header is on its way (peek does not wait for it).
                tokio::time::sleep(Duration::from_millis(5)).await;
                continue;
            }
            let (len, client) = match parsed {
                HeaderResult::V1(Ok(h)) => (
                    h.header.len(),
                    match h.addresses {
                        v1::Addresses::Tcp4(a) => Some(a.source_address.into()),
                        v1::Addresses::Tcp6(a) => Some(a.source_address.into()),
                        v1::Addresses::Unknown => None,
                    },
                ),
                HeaderResult::V2(Ok(h)) => (
                    h.len(),
                    match (h.command, h.addresses) {
                        (v2::Command::Proxy, v2::Addresses::IPv4(a)) => {
                            Some(a.source_address.into())
                        }
                        (v2::Command::Proxy, v2::Addresses::IPv6(a)) => {
                            Some(a.source_address.into())
                        }
                        _ => None,
                    },
                ),
                HeaderResult::V1(Err(e)) => return Err(format!("no valid PROXY header: {e}")),
                HeaderResult::V2(Err(e)) => return Err(format!("no valid PROXY header: {e}")),
            };
            let mut header = vec![0u8; len];
            stream
                .read_exact(&mut header)
                .await
                .map_err(|e| e.to_string())?;
            return Ok(client);
        }
    };
    tokio::time::timeout(within, read)
        .await
        .unwrap_or_else(|_| Err(format!("no PROXY header within {within:?}")))
}

/// One connection counted and known while it lives.
struct Held(Arc<AtomicUsize>, Arc<Connections>, ConnectionSlot);

impl Drop for Held {
    fn drop(&mut self) {
        self.1.closed(&self.2);
        self.0.fetch_sub(1, Ordering::AcqRel);
    }
}

/// Counts events and lets one log line through per second, with the count.
#[derive(Default)]
struct OncePerSecond {
    last: Option<Instant>,
    since: u64,
}

impl OncePerSecond {
    fn note(&mut self, log: impl FnOnce(u64)) {
        self.since += 1;
        if self
            .last
            .is_none_or(|t| t.elapsed() >= Duration::from_secs(1))
        {
            log(self.since);
            self.since = 0;
            self.last = Some(Instant::now());
        }
    }
}

/// Hands `inner` each request with its body under a deadline, and tells the
/// connection's slot when the request begins, how its body progresses and
/// when its answer has been written.
#[derive(Clone)]
struct WithBodyDeadline<S> {
    inner: S,
    after: Duration,
    slot: ConnectionSlot,
}

impl<S, B> Service<Request<Incoming>> for WithBodyDeadline<S>
where
    S: Service<Request<DeadlineBody<Incoming>>, Response = Response<B>>,
{
    type Response = Response<AnswerOnSlot<B>>;
    type Error = S::Error;
    type Future = Answering<S::Future>;

    fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<Result<(), S::Error>> {
        self.inner.poll_ready(cx)
    }

    fn call(&mut self, mut request: Request<Incoming>) -> Self::Future {
        let after = self.after;
        let (on_slot, body_on_slot) = self.slot.request_began();
        request.extensions_mut().insert(self.slot.clone());
        let future = self
            .inner
            .call(request.map(|body| DeadlineBody::new(body, after).reporting_to(body_on_slot)));
        Answering {
            future,
            on_slot: Some(on_slot),
        }
    }
}

pin_project_lite::pin_project! {
    /// The service's future; its response's body keeps the request on its slot.
    struct Answering<F> {
        #[pin]
        future: F,
        on_slot: Option<RequestOnSlot>,
    }
}

impl<F, B, E> Future for Answering<F>
where
    F: Future<Output = Result<Response<B>, E>>,
{
    type Output = Result<Response<AnswerOnSlot<B>>, E>;

    fn poll(self: std::pin::Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.project();
        this.future.poll(cx).map(|answered| {
            answered.map(|response| {
                response.map(|body| AnswerOnSlot {
                    body,
                    _on_slot: this.on_slot.take(),
                })
            })
        })
    }
}

pin_project_lite::pin_project! {
    /// A response body that holds its request on the connection's slot until
    /// written (or dropped).
    struct AnswerOnSlot<B> {
        #[pin]
        body: B,
        _on_slot: Option<RequestOnSlot>,
    }
}

impl<B: http_body::Body> http_body::Body for AnswerOnSlot<B> {
    type Data = B::Data;
    type Error = B::Error;

    fn poll_frame(
        self: std::pin::Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<http_body::Frame<Self::Data>, Self::Error>>> {
        self.project().body.poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> http_body::SizeHint {
        self.body.size_hint()
    }
}

pub use tessera_tokio::{graceful_shutdown, shutdown_signal};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_default_cap_follows_the_descriptor_limit() {
        let cap = ServeOptions::default().connection_cap();
        assert!(cap >= 16, "{cap}");
        assert_eq!(
            ServeOptions::default().max_connections(0).connection_cap(),
            1
        );
    }

    #[test]
    fn log_lines_are_let_through_once_a_second() {
        let mut gate = OncePerSecond::default();
        let mut lines = Vec::new();
        for _ in 0..1000 {
            gate.note(|n| lines.push(n));
        }
        assert_eq!(lines, [1]);
    }
}

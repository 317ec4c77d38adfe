//! `--metrics HOST:PORT`: the Prometheus text exposition of the server's
//! metrics at `GET /metrics` (OpenTelemetry names mapped the usual way:
//! dots to underscores, the unit as a suffix, `_total` on counters).

use std::convert::Infallible;
use std::sync::Arc;

use bytes::Bytes;
use http_body_util::Full;
use hyper::{Method, Request, Response, StatusCode, header};
use prometheus::{Encoder as _, TextEncoder};

/// Serves `registry` on `listener` until the task is dropped.
pub(crate) async fn serve(listener: tokio::net::TcpListener, registry: Arc<prometheus::Registry>) {
    loop {
        let (stream, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(e) => {
                tracing::warn!(error = %e, "metrics endpoint: accept failed");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let registry = Arc::clone(&registry);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |request| {
                let registry = Arc::clone(&registry);
                async move { Ok::<_, Infallible>(answer(&request, &registry)) }
            });
            let io = hyper_util::rt::TokioIo::new(stream);
            let _ = hyper::server::conn::http1::Builder::new()
                .timer(hyper_util::rt::TokioTimer::new())
                .header_read_timeout(std::time::Duration::from_secs(10))
                .serve_connection(io, service)
                .await;
        });
    }
}

/// The exposition for `GET /metrics`; 404 elsewhere, 405 for other methods.
fn answer<B>(request: &Request<B>, registry: &prometheus::Registry) -> Response<Full<Bytes>> {
    let plain = |status: StatusCode, text: &'static str| {
        let mut r = Response::new(Full::new(Bytes::from_static(text.as_bytes())));
        *r.status_mut() = status;
        r
    };
    if request.uri().path() != "/metrics" {
        return plain(
            StatusCode::NOT_FOUND,
            "Not Found: metrics are at /metrics\n",
        );
    }
    if request.method() != Method::GET && request.method() != Method::HEAD {
        return plain(
            StatusCode::METHOD_NOT_ALLOWED,
            "Method Not Allowed: use GET\n",
        );
    }
    let encoder = TextEncoder::new();
    let mut text = Vec::new();
    if let Err(e) = encoder.encode(&registry.gather(), &mut text) {
        tracing::warn!(error = %e, "metrics endpoint: cannot encode the metrics");
        return plain(
            StatusCode::INTERNAL_SERVER_ERROR,
            "cannot encode the metrics\n",
        );
    }
    let mut r = Response::new(Full::new(Bytes::from(text)));
    if let Ok(value) = header::HeaderValue::from_str(encoder.format_type()) {
        r.headers_mut().insert(header::CONTENT_TYPE, value);
    }
    r
}

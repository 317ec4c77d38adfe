//! `tower_service::Service` for the endpoint, so it mounts anywhere tower does.

use std::convert::Infallible;
use std::task::{Context, Poll};

use bytes::Bytes;
use http::{Request, Response, StatusCode, header};
use http_body_util::BodyExt;
use tessera_protocol::TRANSPORT_ERROR;
use tessera_server::BoxFuture;

use crate::body_limits::{Reservation, SMALL_BODY};
use crate::deadline::BodyReadTimeout;
use crate::{McpBody, McpEndpoint, reject};

impl<B> tower_service::Service<Request<B>> for McpEndpoint
where
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: std::error::Error + Send + Sync + 'static,
{
    type Response = Response<McpBody>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Response<McpBody>, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, request: Request<B>) -> Self::Future {
        let endpoint = self.clone();
        Box::pin(async move { Ok(endpoint.respond(request).await) })
    }
}

impl McpEndpoint {
    /// The check ladder, the one entry every way of serving uses (hyper,
    /// tower, Workers, [`handle`](McpEndpoint::handle)): the head checks,
    /// authentication before a byte of the body is read, the body within
    /// its limits, then the message.
    pub async fn respond<B>(&self, request: Request<B>) -> Response<McpBody>
    where
        B: http_body::Body,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let (head, body) = request.into_parts();
        let mut response = match self.check_head(&head) {
            Some(refusal) => refusal,
            None => match self.authenticate(&head).await {
                Err(refusal) => refusal,
                // GET and DELETE reach here only for initialize-era sessions.
                Ok(caller) if head.method != http::Method::POST => {
                    let facts = caller.facts(self.options());
                    self.session_method(&head, &facts).await
                }
                Ok(caller) => match self.read_body(&head, body).await {
                    Ok((bytes, _reservation)) => self.handle_body(&head, caller, bytes).await,
                    Err(refusal) => refusal,
                },
            },
        };
        self.add_cors(&head, &mut response);
        response
    }

    /// Reads a request body within the body limit and the endpoint-wide budget
    /// of body bytes in flight; the reservation is held while the body lives.
    async fn read_body<B>(
        &self,
        head: &http::request::Parts,
        body: B,
    ) -> Result<(Bytes, Reservation), Response<McpBody>>
    where
        B: http_body::Body,
        B::Error: std::error::Error + Send + Sync + 'static,
    {
        let options = self.options();
        let limit = options.body_limit;
        let declared = head
            .headers
            .get(header::CONTENT_LENGTH)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.parse::<u64>().ok());
        if declared.is_some_and(|n| n > limit as u64) {
            return Err(reject::too_large(limit));
        }
        let busy = || {
            reject::unavailable(
                "Service Unavailable: the server is receiving as many request bytes as it holds at once",
                1,
            )
        };
        let Some(mut reservation) = self
            .bytes_in_flight
            .reserve(0, options.body_bytes_in_flight)
        else {
            return Err(busy());
        };
        let mut chunks: Vec<Bytes> = Vec::new();
        let mut len = 0usize;
        let mut body = std::pin::pin!(body);
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| body_error(&e))?;
            let Ok(data) = frame.into_data() else {
                continue;
            };
            let mut data = data;
            let n = bytes::Buf::remaining(&data);
            len += n;
            if len > limit {
                return Err(reject::too_large(limit));
            }
            // Small bodies stay out of the shared budget (the connection cap bounds
            // them), so uploads stalled by a flood cannot refuse ordinary requests.
            let counted = len.saturating_sub(SMALL_BODY).min(n);
            if counted > 0 && !reservation.grow(counted, options.body_bytes_in_flight) {
                return Err(busy());
            }
            chunks.push(bytes::Buf::copy_to_bytes(&mut data, n));
        }
        let bytes = match chunks.len() {
            0 => Bytes::new(),
            1 => chunks.pop().unwrap_or_default(),
            _ => Bytes::from(chunks.concat()),
        };
        Ok((bytes, reservation))
    }
}

/// The answer to a body that could not be read: 408 past the deadline, else 400.
fn body_error(e: &(dyn std::error::Error + 'static)) -> Response<McpBody> {
    let mut source: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = source {
        if let Some(timeout) = err.downcast_ref::<BodyReadTimeout>() {
            return reject::error(
                StatusCode::REQUEST_TIMEOUT,
                None,
                TRANSPORT_ERROR,
                format!("Request Timeout: {timeout}"),
                None,
            );
        }
        source = err.source();
    }
    reject::error(
        StatusCode::BAD_REQUEST,
        None,
        TRANSPORT_ERROR,
        format!("Bad Request: the request body could not be read: {e}"),
        None,
    )
}

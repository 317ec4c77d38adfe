//! `tower_service::Service` for the endpoint, so it mounts anywhere tower does.

use std::convert::Infallible;
use std::task::{Context, Poll};

use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt, LengthLimitError, Limited};
use tessera_protocol::TRANSPORT_ERROR;
use tessera_server::BoxFuture;

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
        Box::pin(async move {
            let (head, body) = request.into_parts();
            let limit = endpoint.options().body_limit;
            let mut response = match endpoint.check_head(&head) {
                Some(refusal) => refusal,
                // Authenticate before reading a byte of the body.
                None => match endpoint.authenticate(&head).await {
                    Err(refusal) => refusal,
                    Ok(principal) => match Limited::new(body, limit).collect().await {
                        Ok(collected) => {
                            endpoint
                                .handle_body(&head, principal, collected.to_bytes())
                                .await
                        }
                        Err(e) if e.downcast_ref::<LengthLimitError>().is_some() => {
                            reject::too_large(limit)
                        }
                        Err(e) => reject::error(
                            StatusCode::BAD_REQUEST,
                            None,
                            TRANSPORT_ERROR,
                            format!("Bad Request: the request body could not be read: {e}"),
                            None,
                        ),
                    },
                },
            };
            endpoint.add_cors(&head, &mut response);
            Ok(response)
        })
    }
}

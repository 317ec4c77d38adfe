//! One HTTP/1.1 exchange with a service on the function's own host: the
//! Lambda runtime API, the secrets extension. (hyper-util's client, already
//! in the tree as lambda_runtime's.)

use bytes::Bytes;
use http::StatusCode;
use http_body_util::{BodyExt, Full};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;

/// How long one exchange may take.
const TIMEOUT: std::time::Duration = std::time::Duration::from_secs(10);

/// Sends `request` and reads the whole answer; an error says what failed.
pub(crate) async fn exchange(
    request: http::Request<Full<Bytes>>,
) -> Result<(StatusCode, Bytes), String> {
    let client = Client::builder(TokioExecutor::new()).build_http();
    let answer = async {
        let response = client.request(request).await.map_err(|e| e.to_string())?;
        let status = response.status();
        let body = response
            .into_body()
            .collect()
            .await
            .map_err(|e| e.to_string())?;
        Ok((status, body.to_bytes()))
    };
    tokio::time::timeout(TIMEOUT, answer)
        .await
        .map_err(|_| format!("no answer within {} s", TIMEOUT.as_secs()))?
}

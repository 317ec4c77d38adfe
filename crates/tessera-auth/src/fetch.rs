//! How a verifier reaches the authorization server: a small trait, so the
//! verifiers run wherever a host can make an HTTP request (reqwest natively,
//! the Workers fetch API on Cloudflare).

use serde_json::Value;
use tessera_server::BoxFuture;

/// Makes the verifiers' HTTP requests: JSON documents fetched (metadata, key
/// sets) and forms posted (introspection). An answer that is not a success
/// status with a JSON body is an error, its text for the log.
pub trait HttpFetch: Send + Sync {
    /// `GET url`, its JSON body.
    fn get_json<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<Value, String>>;

    /// `POST url` with `form` (`application/x-www-form-urlencoded`) and HTTP
    /// Basic authentication as `basic` (client id, secret): its JSON body.
    fn post_form<'a>(
        &'a self,
        url: &'a str,
        basic: (&'a str, &'a str),
        form: &'a [(&'a str, &'a str)],
    ) -> BoxFuture<'a, Result<Value, String>>;
}

/// [`HttpFetch`] on reqwest (feature `reqwest`, on by default): 5 s per request.
#[cfg(feature = "reqwest")]
pub struct ReqwestFetch {
    http: reqwest::Client,
}

#[cfg(feature = "reqwest")]
impl Default for ReqwestFetch {
    fn default() -> Self {
        Self {
            http: reqwest::Client::builder()
                .timeout(std::time::Duration::from_secs(5))
                .build()
                .unwrap_or_default(),
        }
    }
}

#[cfg(feature = "reqwest")]
impl HttpFetch for ReqwestFetch {
    fn get_json<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move { json_of(self.http.get(url).send().await).await })
    }

    fn post_form<'a>(
        &'a self,
        url: &'a str,
        basic: (&'a str, &'a str),
        form: &'a [(&'a str, &'a str)],
    ) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(async move {
            let request = self
                .http
                .post(url)
                .basic_auth(basic.0, Some(basic.1))
                .form(form);
            json_of(request.send().await).await
        })
    }
}

#[cfg(feature = "reqwest")]
async fn json_of(sent: reqwest::Result<reqwest::Response>) -> Result<Value, String> {
    let response = sent
        .and_then(reqwest::Response::error_for_status)
        .map_err(|e| e.to_string())?;
    response.json().await.map_err(|e| e.to_string())
}

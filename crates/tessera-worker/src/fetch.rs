//! The OAuth verifiers' HTTP requests on the Workers fetch API.

use serde_json::Value;
use tessera_auth::HttpFetch;
use tessera_server::BoxFuture;
use worker::send::SendFuture;
use worker::{Fetch, Headers, Method, Request, RequestInit, Url};

/// [`HttpFetch`] through the Worker's global `fetch`: the issuer's metadata
/// and keys, introspection.
#[derive(Debug, Clone, Copy, Default)]
pub struct WorkerFetch;

impl HttpFetch for WorkerFetch {
    fn get_json<'a>(&'a self, url: &'a str) -> BoxFuture<'a, Result<Value, String>> {
        // The Workers runtime is single-threaded; its JS futures are not `Send`.
        Box::pin(SendFuture::new(async move {
            let url = Url::parse(url).map_err(|e| format!("{url}: {e}"))?;
            json_of(Fetch::Url(url).send().await).await
        }))
    }

    fn post_form<'a>(
        &'a self,
        url: &'a str,
        basic: (&'a str, &'a str),
        form: &'a [(&'a str, &'a str)],
    ) -> BoxFuture<'a, Result<Value, String>> {
        Box::pin(SendFuture::new(async move {
            let body = worker::url::form_urlencoded::Serializer::new(String::new())
                .extend_pairs(form)
                .finish();
            let headers = Headers::new();
            let credentials = base64::Engine::encode(
                &base64::engine::general_purpose::STANDARD,
                format!("{}:{}", basic.0, basic.1),
            );
            let set = |name: &str, value: &str| {
                headers
                    .set(name, value)
                    .map_err(|e| format!("header {name}: {e}"))
            };
            set("content-type", "application/x-www-form-urlencoded")?;
            set("authorization", &format!("Basic {credentials}"))?;
            let mut init = RequestInit::new();
            init.with_method(Method::Post)
                .with_headers(headers)
                .with_body(Some(worker::wasm_bindgen::JsValue::from_str(&body)));
            let request = Request::new_with_init(url, &init).map_err(|e| format!("{url}: {e}"))?;
            json_of(Fetch::Request(request).send().await).await
        }))
    }
}

async fn json_of(sent: worker::Result<worker::Response>) -> Result<Value, String> {
    let mut response = sent.map_err(|e| e.to_string())?;
    let status = response.status_code();
    if !(200..300).contains(&status) {
        return Err(format!("HTTP {status}"));
    }
    response.json().await.map_err(|e| e.to_string())
}

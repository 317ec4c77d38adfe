//! `ceiling`: the fastest server this load could possibly meet on this
//! machine. Bare hyper; each body is parsed once (to echo the id and pick
//! the round) and a canned answer of the counter's shape and size is
//! returned. No validation, no crypto: the upper bound for any MCP server.
//!
//! With `--secure` it is the *secure ceiling*: per request it also opens the
//! request's ticket (when it has one) and seals a new one, bound to the call
//! like the counter's, with `MRTR_REQUEST_STATE_KEY` — the least any server
//! doing this job safely must do, and nothing else.

use std::convert::Infallible;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use serde_json::Value;
use tessera_state::{Binding, KeyRing, RequestStateCodec, StateKey};

/// A canned ticket as long as the counter's encrypted tickets (245 and 274
/// characters in rounds one and two).
const TICKET: &str = "t1e.k1.NBoG85jGpHEnNV5VQ7vH5luCaBH0UeDF-abX93SCA3fOFDMnwUhmt77QsRibWAerDJaNh6OI4l9dEp_xc3Gdu4bQ8RxlwcC8Rkb-qsM7zgYiadBQjbdLJkfEK8nk1L3Z6gVitEQZXpacmVofr06pRbNkrKVAcidUp89v52ouRItcKUxeHfCT8rPmFqSNU5yKqQWm-Nx3iUby0IuGqjoTQeDWN05BA_N645OazuVEyhK6V09EKjtWzM-QrZzmK";

fn answer(round: u8) -> String {
    answer_with(round, TICKET)
}

/// The answer of `round` carrying `ticket`.
fn answer_with(round: u8, ticket: &str) -> String {
    let meta =
        r#""_meta":{"io.modelcontextprotocol/serverInfo":{"name":"ceiling","version":"0.1.0"}}"#;
    match round {
        1 => format!(
            r#"{{"resultType":"input_required","inputRequests":{{"amount":{{"method":"elicitation/create","params":{{"mode":"form","message":"By how much should the counter increase?","requestedSchema":{{"type":"object","properties":{{"amount":{{"type":"number","title":"Amount","description":"The amount to add to the current value"}}}},"required":["amount"]}}}}}}}},"requestState":"{ticket}",{meta}}}"#
        ),
        2 => format!(
            r#"{{"resultType":"input_required","inputRequests":{{"confirmation":{{"method":"elicitation/create","params":{{"mode":"form","message":"Increase 10 by 5?","requestedSchema":{{"type":"object","properties":{{"confirm":{{"type":"boolean","title":"Confirm increase"}}}},"required":["confirm"]}}}}}}}},"requestState":"{ticket}",{meta}}}"#
        ),
        _ => format!(
            r#"{{"resultType":"complete","content":[{{"type":"text","text":"Counter increased by 5; next value is 15"}}],{meta}}}"#
        ),
    }
}

/// What the secure ceiling carries in its tickets: about the counter's payload.
#[derive(serde::Serialize, serde::Deserialize)]
struct Carried {
    q: Value,
    a: Value,
}

async fn serve(
    request: Request<hyper::body::Incoming>,
    answers: &'static [String; 3],
    codec: Option<&'static RequestStateCodec>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let body = match request.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let parsed: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let responses = parsed.pointer("/params/inputResponses");
    let round = match responses {
        Some(r) if r.get("confirmation").is_some() => 3,
        Some(r) if r.get("amount").is_some() => 2,
        _ => 1,
    };
    let id = parsed
        .get("id")
        .map_or_else(|| "null".to_owned(), Value::to_string);
    let secured;
    let result = match codec {
        None => &answers[round - 1],
        Some(codec) => {
            let params = parsed.get("params");
            let binding = Binding::new(
                "tools/call",
                params
                    .and_then(|p| p.get("name"))
                    .and_then(Value::as_str)
                    .unwrap_or(""),
                params
                    .and_then(|p| p.get("arguments"))
                    .unwrap_or(&Value::Null),
                None,
                "ceiling",
            );
            if let Some(token) = params
                .and_then(|p| p.get("requestState"))
                .and_then(Value::as_str)
                && codec.open::<Carried>(token, &binding).is_err()
            {
                return Ok(Response::new(Full::new(Bytes::from_static(
                    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32602,"message":"Invalid or expired requestState"}}"#,
                ))));
            }
            secured = if round < 3 {
                let carried = Carried {
                    q: serde_json::json!({"amount": {"type": "number"}}),
                    a: responses.cloned().unwrap_or(Value::Null),
                };
                let ticket = codec.seal(&carried, &binding).unwrap_or_default();
                answer_with(round as u8, &ticket)
            } else {
                answers[2].clone()
            };
            &secured
        }
    };
    let payload = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
    let mut response = Response::new(Full::new(Bytes::from(payload)));
    response.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Ok(response)
}

fn main() -> std::io::Result<()> {
    let addr = std::env::args()
        .skip_while(|a| a != "--addr")
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8790".into());
    let answers: &'static [String; 3] = Box::leak(Box::new([answer(1), answer(2), answer(3)]));
    let codec: Option<&'static RequestStateCodec> = if std::env::args().any(|a| a == "--secure") {
        let secret = std::env::var("MRTR_REQUEST_STATE_KEY")
            .map_err(|_| std::io::Error::other("--secure needs MRTR_REQUEST_STATE_KEY"))?;
        let key = StateKey::from_secret_str(&secret).map_err(std::io::Error::other)?;
        let ring = KeyRing::new("k1", key).map_err(std::io::Error::other)?;
        Some(Box::leak(Box::new(RequestStateCodec::new(ring))))
    } else {
        None
    };
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let listener = tokio::net::TcpListener::bind(&addr).await?;
            eprintln!("ceiling listening on http://{}/mcp", listener.local_addr()?);
            loop {
                let (stream, _) = listener.accept().await?;
                stream.set_nodelay(true)?;
                tokio::spawn(async move {
                    let service = service_fn(move |r| serve(r, answers, codec));
                    let _ = http1::Builder::new()
                        .serve_connection(TokioIo::new(stream), service)
                        .await;
                });
            }
        })
}

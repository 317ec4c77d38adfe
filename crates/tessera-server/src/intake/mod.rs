//! The one intake: a message's bytes and limits in, a typed message or a
//! refusal out. HTTP, stdio and the Worker read every message through
//! [`read`], so a body is refused (or accepted) the same way on each.
//!
//! One pass over the bytes checks the syntax, the value budget, the frame
//! (`jsonrpc`, `id`, `method`, `params`, `result`, `error`) and members named
//! twice in the envelope or in `params`, and splits `params._meta` from the
//! other members. What a transport knows apart from the bytes (an HTTP
//! version header, a stdio session) it compares with the message after:
//! [`Request::era`] is the one rule for telling the eras apart, and
//! [`Request::read_envelope`] the one rule for the 2026-07-28 `_meta`.

mod reader;
mod refusal;
mod request;

pub use refusal::{Refusal, RefusalKind};
pub use request::{Request, RequestEra};

use serde_json::Value;
use tessera_protocol::{
    ErrorObject, JsonRpcErrorResponse, JsonRpcNotification, JsonRpcResponse, JsonRpcResultResponse,
    JsonRpcVersion, RequestId,
};

pub(crate) use reader::SentMeta;
use reader::{Frame, FrameParams, MetaReading, Pass, Shape, ValuesLeft, read_frame};

/// What one message may cost before anything is built from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Most JSON values (objects, arrays, strings, numbers… at any depth) a
    /// message may hold; reading stops at the first one past it.
    pub max_json_values: usize,
    /// Longest string id, in bytes: an id is echoed in every response and
    /// notification of its request, so its size is bounded where it enters.
    /// The same limit bounds a string `_meta.progressToken`, which every
    /// progress notification of the request echoes.
    pub max_id_bytes: usize,
}

impl Default for Limits {
    /// 20,000 values (about a thousand times what a tool call needs); ids of
    /// up to 256 bytes (a UUID is 36).
    fn default() -> Self {
        Self {
            max_json_values: 20_000,
            max_id_bytes: 256,
        }
    }
}

/// A message as the intake read it.
#[derive(Debug)]
pub enum Message {
    /// A request: it gets a response.
    Request(Request),
    /// A notification: no response.
    Notification(JsonRpcNotification<Value>),
    /// A response to a request the server sent (initialize-era bridges).
    Response(JsonRpcResponse<Value>),
}

/// The request a `notifications/cancelled` names, if `notification` is one
/// and names a valid id.
pub fn cancelled_request(notification: &JsonRpcNotification<Value>) -> Option<RequestId> {
    if notification.method != tessera_protocol::CANCELLED_NOTIFICATION {
        return None;
    }
    RequestId::from_value(notification.params.as_ref()?.get("requestId")?)
}

/// Reads one message from `bytes`.
///
/// ```
/// use tessera_server::intake::{self, Limits, Message, RefusalKind};
///
/// let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
///     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
///     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
/// let Ok(Message::Request(request)) = intake::read(body, &Limits::default()) else { panic!() };
/// assert_eq!((request.method.as_str(), request.protocol_version()), ("tools/list", Some("2026-07-28")));
///
/// let twice = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"a","name":"b"}}"#;
/// let refusal = intake::read(twice, &Limits::default()).unwrap_err();
/// assert_eq!((refusal.kind(), refusal.code()), (&RefusalKind::DuplicateParam("name".into()), -32602));
/// ```
pub fn read(bytes: &[u8], limits: &Limits) -> Result<Message, Refusal> {
    // A value takes at least two bytes (`0,`), so only a larger body can
    // hold too many: a smaller one has its `_meta` read typed in the pass.
    let small = bytes.len() / 2 < limits.max_json_values;
    let meta = if small {
        MetaReading::Typed
    } else {
        MetaReading::Counted
    };
    match read_with(bytes, limits, meta) {
        // A `_meta` the typed reading refused is read again as JSON, so the
        // envelope rule can name what is wrong with it.
        Err(Retry) => read_with(bytes, limits, MetaReading::Counted)
            .map_err(|Retry| Refusal::new(RefusalKind::Parse("unreadable _meta".into()), None))?,
        Ok(read) => read,
    }
}

/// The typed reading of `_meta` failed: read the message again counted.
struct Retry;

fn read_with(
    bytes: &[u8],
    limits: &Limits,
    meta: MetaReading,
) -> Result<Result<Message, Refusal>, Retry> {
    let budget = ValuesLeft::new(limits.max_json_values);
    let pass = Pass {
        budget: &budget,
        meta,
        in_typed_meta: std::cell::Cell::new(false),
    };
    Ok(match read_frame(bytes, &pass) {
        Ok(frame) => classify(frame, limits),
        Err(_) if pass.in_typed_meta.get() => return Err(Retry),
        Err(_) if budget.exceeded() => Err(Refusal::new(
            RefusalKind::TooManyValues(limits.max_json_values),
            None,
        )),
        Err(e) => Err(Refusal::new(RefusalKind::Parse(e.to_string()), None)),
    })
}

/// Sorts a frame into a message, or names why it is none.
fn classify(frame: Frame, limits: &Limits) -> Result<Message, Refusal> {
    match frame.shape {
        Shape::Object => {}
        Shape::Array => return Err(Refusal::new(RefusalKind::Batch, None)),
        Shape::Other => {
            return Err(Refusal::new(
                RefusalKind::NotAMessage("the message is not a JSON object"),
                None,
            ));
        }
    }
    let id = match &frame.id {
        None => Ok(None),
        Some(v) => RequestId::from_value(v).map(Some).ok_or(()),
    };
    // An id too long to echo is not echoed, not even in its refusal.
    if let Ok(Some(RequestId::String(long))) = &id
        && long.len() > limits.max_id_bytes
    {
        return Err(Refusal::new(
            RefusalKind::IdTooLong(limits.max_id_bytes),
            None,
        ));
    }
    let id_hint = id.clone().ok().flatten();
    if let Some(key) = frame.duplicate {
        return Err(Refusal::new(RefusalKind::DuplicateMember(key), id_hint));
    }
    let response_shaped =
        frame.method.is_none() && (frame.result.is_some() || frame.error.is_some());
    let not_a_message = |problem| {
        let kind = if response_shaped {
            RefusalKind::InvalidResponse(problem)
        } else {
            RefusalKind::NotAMessage(problem)
        };
        Refusal::new(kind, id_hint.clone())
    };
    if frame.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return Err(not_a_message("the message lacks \"jsonrpc\": \"2.0\""));
    }
    if let Some(error) = frame.error {
        let id = match frame.id {
            None | Some(Value::Null) => None,
            Some(_) => Some(id_hint.clone().ok_or_else(|| not_a_message(INVALID_ID))?),
        };
        let error: ErrorObject = serde_json::from_value(error)
            .map_err(|_| not_a_message("\"error\" must have a numeric code and a message"))?;
        return Ok(Message::Response(JsonRpcResponse::Error(
            JsonRpcErrorResponse::new(id, error),
        )));
    }
    let id = id.map_err(|()| not_a_message(INVALID_ID))?;
    let Some(method) = frame.method else {
        return match (id, frame.result) {
            (Some(id), Some(result)) => Ok(Message::Response(JsonRpcResponse::Result(
                JsonRpcResultResponse::new(id, result),
            ))),
            _ => Err(not_a_message(
                "the message is neither a request, a notification nor a response",
            )),
        };
    };
    let Value::String(method) = method else {
        return Err(not_a_message("\"method\" must be a string"));
    };
    let (meta, params) = match frame.params {
        None => (None, None),
        Some(FrameParams::Object {
            duplicate: Some(key),
            ..
        }) => return Err(Refusal::new(RefusalKind::DuplicateParam(key), id)),
        Some(FrameParams::Object { meta, rest, .. }) => (meta, Some(rest)),
        Some(FrameParams::Other) => return Err(not_a_message("\"params\" must be an object")),
    };
    // A progress token is echoed in every progress notification: bounded
    // like the id.
    if id.is_some()
        && meta
            .as_ref()
            .is_some_and(|meta| string_token_len(meta) > limits.max_id_bytes)
    {
        return Err(Refusal::new(
            RefusalKind::ProgressTokenTooLong(limits.max_id_bytes),
            id,
        ));
    }
    Ok(match id {
        Some(id) => Message::Request(Request::from_parts(id, method, meta, params)),
        None => Message::Notification(JsonRpcNotification {
            jsonrpc: JsonRpcVersion,
            method,
            params: request::rejoin(meta.map(SentMeta::into_value), params),
        }),
    })
}

/// The length of a string `progressToken` in `meta`, 0 for none or a number.
fn string_token_len(meta: &SentMeta) -> usize {
    let token = match meta {
        SentMeta::Typed(meta) => match &meta.progress_token {
            Some(RequestId::String(token)) => token.as_str(),
            _ => return 0,
        },
        SentMeta::Value(meta) => match meta.get("progressToken") {
            Some(Value::String(token)) => token.as_str(),
            _ => return 0,
        },
    };
    token.len()
}

const INVALID_ID: &str = "\"id\" must be a string or an integer";

#[cfg(test)]
mod tests {
    use super::*;

    fn refusal(text: &str) -> Refusal {
        read(text.as_bytes(), &Limits::default()).unwrap_err()
    }

    #[test]
    fn each_kind_of_message_is_told_apart() {
        let limits = Limits::default();
        let read = |text: &str| read(text.as_bytes(), &limits).unwrap();
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","id":"a","method":"ping"}"#),
            Message::Request(r) if r.id == RequestId::from("a") && r.params.is_empty()
        ));
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#),
            Message::Notification(n) if n.params.as_ref().is_some_and(|p| p["requestId"] == 3)
        ));
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#),
            Message::Response(JsonRpcResponse::Result(r)) if r.id == RequestId::from(7)
        ));
        assert!(matches!(
            read(r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"no"}}"#),
            Message::Response(JsonRpcResponse::Error(e)) if e.id.is_none()
        ));
    }

    #[test]
    fn each_problem_has_its_refusal() {
        let long_token = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{{"progressToken":"{}"}}}}}}"#,
            "t".repeat(257)
        );
        let cases: [(&str, RefusalKind, i32); 12] = [
            (&long_token, RefusalKind::ProgressTokenTooLong(256), -32602),
            ("{", RefusalKind::Parse(String::new()), -32700),
            ("[]", RefusalKind::Batch, -32600),
            ("3", RefusalKind::NotAMessage(""), -32600),
            (
                r#"{"id":1,"method":"m"}"#,
                RefusalKind::NotAMessage(""),
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#,
                RefusalKind::NotAMessage(""),
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
                RefusalKind::NotAMessage(""),
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#,
                RefusalKind::NotAMessage(""),
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","method":"n"}"#,
                RefusalKind::DuplicateMember("method".into()),
                -32600,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{},"_meta":{}}}"#,
                RefusalKind::DuplicateParam("_meta".into()),
                -32602,
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"error":{"code":"x"}}"#,
                RefusalKind::InvalidResponse(""),
                -32600,
            ),
            (
                r#"{"id":1,"result":{}}"#,
                RefusalKind::InvalidResponse(""),
                -32600,
            ),
        ];
        for (text, kind, code) in cases {
            let r = refusal(text);
            assert_eq!(
                std::mem::discriminant(r.kind()),
                std::mem::discriminant(&kind),
                "{text}: {r:?}"
            );
            assert_eq!(r.code(), code, "{text}");
        }
    }

    #[test]
    fn refusals_echo_the_id_when_it_could_be_read() {
        assert_eq!(
            refusal(r#"{"jsonrpc":"2.0","id":4,"method":"m","params":{"name":"a","name":"b"}}"#)
                .id(),
            Some(&RequestId::from(4))
        );
        assert_eq!(refusal(r#"{"jsonrpc":"2.0","id":4,"#).id(), None);
    }

    #[test]
    fn many_unknown_members_cost_time_in_proportion() {
        // Each looked up in a set, not compared with every one before it.
        let members: Vec<String> = (0..19_000).map(|i| format!(r#""x{i}":0"#)).collect();
        let text = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"ping",{}}}"#,
            members.join(",")
        );
        let started = std::time::Instant::now();
        assert!(read(text.as_bytes(), &Limits::default()).is_ok());
        assert!(started.elapsed() < std::time::Duration::from_secs(2));
        let twice = r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":0,"x":1}"#;
        assert_eq!(
            refusal(twice).kind(),
            &RefusalKind::DuplicateMember("x".into())
        );
    }

    #[test]
    fn the_value_budget_stops_reading() {
        let many = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"a":[{}0]}}}}"#,
            "0,".repeat(50)
        );
        let limits = Limits {
            max_json_values: 40,
            ..Limits::default()
        };
        let r = read(many.as_bytes(), &limits).unwrap_err();
        assert_eq!(r.kind(), &RefusalKind::TooManyValues(40));
    }
}

//! A 2026-07-28 request read in one pass from its text, its `_meta` envelope typed.

use std::fmt;

use crate::{JsonObject, JsonRpcVersion, RequestId, RequestMeta, STATELESS_PROTOCOL_VERSIONS};
use serde::Deserialize;
use serde::de::{self, MapAccess, Visitor};
use serde_json::Value;

/// A modern request read straight from the body, when it has the common shape:
/// one JSON-RPC request whose `params._meta` names a supported version and
/// carries client capabilities. Anything else (notifications, batches,
/// initialize-era requests, a missing or malformed envelope) is left to the
/// general path, which names the problem precisely.
#[derive(Debug)]
pub struct EnvelopedRequest {
    /// The id the response echoes.
    pub id: RequestId,
    /// The method called.
    pub method: String,
    /// `params._meta`: a supported protocol version and the client's capabilities (boxed: it is large).
    pub meta: Box<RequestMeta>,
    /// The other params.
    pub params: JsonObject,
}

impl EnvelopedRequest {
    /// Reads `body`; `None` when it is not a modern request with a complete, supported envelope.
    ///
    /// ```
    /// use tessera_protocol::EnvelopedRequest;
    /// let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
    ///     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
    ///     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    /// let request = EnvelopedRequest::parse(body).unwrap();
    /// assert_eq!((request.method.as_str(), request.protocol_version()), ("tools/list", "2026-07-28"));
    /// assert!(EnvelopedRequest::parse(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#).is_none());
    /// ```
    pub fn parse(body: &[u8]) -> Option<Self> {
        let frame: Frame = serde_json::from_slice(body).ok()?;
        let meta = Box::new(frame.params.meta?);
        let version = meta.protocol_version.as_deref()?;
        if !STATELESS_PROTOCOL_VERSIONS.contains(&version) || meta.client_capabilities.is_none() {
            return None;
        }
        Some(Self {
            id: frame.id,
            method: frame.method,
            meta,
            params: frame.params.rest,
        })
    }

    /// The protocol version the envelope names.
    pub fn protocol_version(&self) -> &str {
        self.meta.protocol_version.as_deref().unwrap_or_default()
    }
}

/// The JSON-RPC frame of a request; any other member sends the body to the general path.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Frame {
    #[serde(rename = "jsonrpc")]
    _jsonrpc: JsonRpcVersion,
    id: RequestId,
    method: String,
    params: Params,
}

/// `params`, with `_meta` read as the typed envelope and the rest kept as JSON.
struct Params {
    meta: Option<RequestMeta>,
    rest: JsonObject,
}

impl<'de> Deserialize<'de> for Params {
    fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Members;
        impl<'de> Visitor<'de> for Members {
            type Value = Params;

            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("the params object of a request")
            }

            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Params, A::Error> {
                let mut params = Params {
                    meta: None,
                    rest: JsonObject::new(),
                };
                while let Some(key) = map.next_key::<String>()? {
                    if key == "_meta" {
                        if params.meta.is_some() {
                            return Err(de::Error::duplicate_field("_meta"));
                        }
                        params.meta = Some(map.next_value()?);
                    } else {
                        let value = map.next_value::<Value>()?;
                        // A member named twice goes to the general path, which refuses it.
                        if params.rest.insert(key, value).is_some() {
                            return Err(de::Error::custom("duplicate member in params"));
                        }
                    }
                }
                Ok(params)
            }
        }
        d.deserialize_map(Members)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"elicitation":{"form":{}}}}"#;

    #[test]
    fn reads_a_call_with_its_envelope_and_params() {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":"a","method":"tools/call","params":{{"name":"t","arguments":{{"x":1}},{META}}}}}"#
        );
        let r = EnvelopedRequest::parse(body.as_bytes()).expect("common shape");
        assert_eq!(r.id, RequestId::from("a"));
        assert_eq!(r.method, "tools/call");
        assert_eq!(r.protocol_version(), "2026-07-28");
        assert!(
            r.meta
                .client_capabilities
                .is_some_and(|c| c.supports_form_elicitation())
        );
        assert_eq!(r.params["name"], "t");
        assert!(!r.params.contains_key("_meta"));
    }

    #[test]
    fn leaves_everything_else_to_the_general_path() {
        let cases = [
            // not JSON, a batch, a notification, a response
            "{".to_owned(),
            format!(r#"[{{"jsonrpc":"2.0","id":1,"method":"m","params":{{{META}}}}}]"#),
            format!(r#"{{"jsonrpc":"2.0","method":"m","params":{{{META}}}}}"#),
            r#"{"jsonrpc":"2.0","id":1,"result":{}}"#.to_owned(),
            // wrong version of JSON-RPC, a null or fractional id, an extra member
            format!(r#"{{"jsonrpc":"1.0","id":1,"method":"m","params":{{{META}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":null,"method":"m","params":{{{META}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1.5,"method":"m","params":{{{META}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{{META}}},"x":0}}"#),
            // no params, no envelope, an envelope without capabilities or version,
            // an unsupported version, a mistyped envelope, two envelopes
            r#"{"jsonrpc":"2.0","id":1,"method":"m"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/clientCapabilities":{}}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":"all"}}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{{META},{META}}}}}"#),
            // a member named twice, in the request or in params
            format!(r#"{{"jsonrpc":"2.0","id":1,"id":2,"method":"m","params":{{{META}}}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"m","params":{{"name":"a","name":"b",{META}}}}}"#),
        ];
        for body in cases {
            assert!(EnvelopedRequest::parse(body.as_bytes()).is_none(), "{body}");
        }
    }
}

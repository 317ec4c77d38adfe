//! A request as the intake read it: id, method, `_meta` and the other params;
//! the era rule and the 2026-07-28 envelope rule.

use serde::Deserialize;
use serde_json::Value;
use tessera_protocol::{
    CLIENT_CAPABILITIES_KEY, JsonObject, PROTOCOL_VERSION_KEY, RequestId, RequestMeta,
    STATELESS_PROTOCOL_VERSIONS, is_legacy_version,
};

use super::SentMeta;
use crate::ServerError;

/// A JSON-RPC request, `params._meta` apart from the other params.
#[derive(Debug)]
pub struct Request {
    /// The id its response echoes.
    pub id: RequestId,
    /// The method called.
    pub method: String,
    /// `params` without `_meta` (empty when the request had none).
    pub params: JsonObject,
    /// `params._meta` as sent, until the envelope rule reads it.
    sent_meta: Option<SentMeta>,
    /// `params._meta` as [`Request::read_envelope`] read it.
    envelope: Option<Box<RequestMeta>>,
}

/// The era of a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RequestEra {
    /// Per-request `_meta` (2026-07-28 and later, or an unknown version to refuse).
    Modern,
    /// Initialize era; the version when the request or its transport named one.
    Legacy(Option<String>),
}

impl Request {
    /// A request of `method` with `params` (an object; `_meta` is taken out of it).
    pub fn new(id: RequestId, method: impl Into<String>, params: Option<Value>) -> Self {
        let (meta, params) = match params {
            Some(Value::Object(mut params)) => {
                (params.remove("_meta").map(SentMeta::Value), Some(params))
            }
            _ => (None, None),
        };
        Self::from_parts(id, method.into(), meta, params)
    }

    pub(super) fn from_parts(
        id: RequestId,
        method: String,
        meta: Option<SentMeta>,
        params: Option<JsonObject>,
    ) -> Self {
        Self {
            id,
            method,
            params: params.unwrap_or_default(),
            sent_meta: meta,
            envelope: None,
        }
    }

    /// The protocol version `params._meta` names, if it names one.
    pub fn protocol_version(&self) -> Option<&str> {
        match (&self.envelope, &self.sent_meta) {
            (Some(meta), _) | (None, Some(SentMeta::Typed(meta))) => {
                meta.protocol_version.as_deref()
            }
            (None, Some(SentMeta::Value(meta))) => meta.get(PROTOCOL_VERSION_KEY)?.as_str(),
            (None, None) => None,
        }
    }

    /// The W3C trace context `params._meta` carries: `traceparent`, and
    /// `tracestate` beside it.
    pub fn trace_context(&self) -> Option<(&str, Option<&str>)> {
        match (&self.envelope, &self.sent_meta) {
            (Some(meta), _) | (None, Some(SentMeta::Typed(meta))) => {
                Some((meta.traceparent.as_deref()?, meta.tracestate.as_deref()))
            }
            (None, Some(SentMeta::Value(meta))) => {
                let field = |key: &str| meta.get(key).and_then(Value::as_str);
                Some((field("traceparent")?, field("tracestate")))
            }
            (None, None) => None,
        }
    }

    /// A member of `params`.
    pub fn param(&self, key: &str) -> Option<&Value> {
        self.params.get(key)
    }

    /// The tool or prompt name, or the resource URI, for the methods that have one.
    pub fn target(&self) -> Option<&str> {
        self.param(tessera_protocol::name_param(&self.method)?)?
            .as_str()
    }

    /// The era rule, for every transport: a legacy version named by the
    /// transport (`header_version`: HTTP's `MCP-Protocol-Version`), or a
    /// request naming no version anywhere, is initialize-era; a request whose
    /// `_meta` or transport names any other version is 2026-07-28 (and is
    /// refused later if that version is not served).
    pub fn era(&self, header_version: Option<&str>) -> RequestEra {
        match (header_version, self.protocol_version()) {
            (Some(h), _) if is_legacy_version(h) => RequestEra::Legacy(Some(h.to_owned())),
            (Some(_), _) | (None, Some(_)) => RequestEra::Modern,
            (None, None) if self.method == tessera_protocol::INITIALIZE => RequestEra::Legacy(
                self.param("protocolVersion")
                    .and_then(Value::as_str)
                    .map(str::to_owned),
            ),
            (None, None) => RequestEra::Legacy(None),
        }
    }

    /// The 2026-07-28 envelope rule: `params._meta` must be an object with
    /// `protocolVersion` (a string) and `clientCapabilities` (an object), and
    /// every key it has must be well formed. Read once; later calls return it.
    pub fn read_envelope(&mut self) -> Result<&RequestMeta, ServerError> {
        if self.envelope.is_none() {
            let meta = match self.sent_meta.take() {
                Some(SentMeta::Typed(meta)) => check_typed(meta)?,
                Some(SentMeta::Value(meta)) => Box::new(read_meta(Some(meta))?),
                None => Box::new(read_meta(None)?),
            };
            self.envelope = Some(meta);
        }
        self.envelope.as_deref().ok_or(ServerError::MissingMeta {
            missing: vec!["_meta"],
        })
    }

    /// The envelope (read by [`read_envelope`](Self::read_envelope)), then
    /// whether its version is one this server serves.
    pub(crate) fn modern_meta(&mut self) -> Result<Box<RequestMeta>, ServerError> {
        check_supported(self.read_envelope()?)?;
        self.envelope.take().ok_or(ServerError::MissingMeta {
            missing: vec!["_meta"],
        })
    }

    /// Gives an initialize-era request the 2026-07-28 envelope it stands
    /// for (the era edge's): what it sent in `_meta` (a progress token, trace
    /// context, other keys) kept, `fill` adding what the edge knows — the
    /// version, the session's capabilities and client.
    pub(crate) fn stand_in_envelope(&mut self, fill: impl FnOnce(&mut RequestMeta)) {
        let mut meta = match self.sent_meta.take() {
            Some(SentMeta::Typed(meta)) => meta,
            // A member of the wrong type (the old era did not check them) leaves the rest out.
            Some(SentMeta::Value(meta)) => {
                Box::new(serde_json::from_value(meta).unwrap_or_default())
            }
            None => Box::default(),
        };
        fill(&mut meta);
        self.envelope = Some(meta);
    }

    /// The params and the envelope, for a caller that sends the same request
    /// again ([`with_envelope`](Self::with_envelope): the era bridge's rounds).
    pub(crate) fn into_parts(self) -> (JsonObject, Option<Box<RequestMeta>>) {
        (self.params, self.envelope)
    }

    /// A request of `method` whose envelope was read (or stood in) already.
    pub(crate) fn with_envelope(
        id: RequestId,
        method: String,
        params: JsonObject,
        envelope: Option<Box<RequestMeta>>,
    ) -> Self {
        Self {
            id,
            method,
            params,
            sent_meta: None,
            envelope,
        }
    }

    /// `params` as one object again, `_meta` included (for notifications and logs).
    pub fn into_params(self) -> Option<Value> {
        let meta = match self.envelope {
            Some(meta) => serde_json::to_value(meta).ok(),
            None => self.sent_meta.map(SentMeta::into_value),
        };
        rejoin(meta, Some(self.params))
    }
}

/// Puts `_meta` back among the params.
pub(super) fn rejoin(meta: Option<Value>, params: Option<JsonObject>) -> Option<Value> {
    let mut params = match (meta.is_some(), params) {
        (_, Some(params)) => params,
        (true, None) => JsonObject::new(),
        (false, None) => return None,
    };
    if let Some(meta) = meta {
        params.insert("_meta".to_owned(), meta);
    }
    Some(Value::Object(params))
}

/// The shape of `_meta`, then its typed reading.
fn read_meta(meta: Option<Value>) -> Result<RequestMeta, ServerError> {
    let Some(meta) = meta else {
        return Err(ServerError::MissingMeta {
            missing: vec!["_meta"],
        });
    };
    let Some(object) = meta.as_object() else {
        return Err(ServerError::InvalidMeta {
            key: "_meta",
            problem: "must be an object".into(),
        });
    };
    let missing: Vec<&'static str> = [PROTOCOL_VERSION_KEY, CLIENT_CAPABILITIES_KEY]
        .into_iter()
        .filter(|k| !object.contains_key(*k))
        .collect();
    if !missing.is_empty() {
        return Err(ServerError::MissingMeta { missing });
    }
    if !object
        .get(PROTOCOL_VERSION_KEY)
        .is_some_and(Value::is_string)
    {
        return Err(ServerError::InvalidMeta {
            key: PROTOCOL_VERSION_KEY,
            problem: "must be a string".into(),
        });
    }
    if !object
        .get(CLIENT_CAPABILITIES_KEY)
        .is_some_and(Value::is_object)
    {
        return Err(ServerError::InvalidMeta {
            key: CLIENT_CAPABILITIES_KEY,
            problem: "must be an object".into(),
        });
    }
    RequestMeta::deserialize(meta).map_err(|e| ServerError::InvalidMeta {
        key: "_meta",
        problem: e.to_string(),
    })
}

/// The shape rule for a `_meta` read typed (its members' types held in the
/// reading): both required keys present.
fn check_typed(meta: Box<RequestMeta>) -> Result<Box<RequestMeta>, ServerError> {
    let missing: Vec<&'static str> = [
        (PROTOCOL_VERSION_KEY, meta.protocol_version.is_none()),
        (CLIENT_CAPABILITIES_KEY, meta.client_capabilities.is_none()),
    ]
    .into_iter()
    .filter_map(|(key, absent)| absent.then_some(key))
    .collect();
    if missing.is_empty() {
        Ok(meta)
    } else {
        Err(ServerError::MissingMeta { missing })
    }
}

/// Whether the envelope names a version this server serves.
fn check_supported(meta: &RequestMeta) -> Result<(), ServerError> {
    match meta.protocol_version.as_deref() {
        Some(v) if STATELESS_PROTOCOL_VERSIONS.contains(&v) => Ok(()),
        requested => Err(ServerError::UnsupportedVersion {
            requested: requested.map(str::to_owned),
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn request(params: Value) -> Request {
        Request::new(RequestId::from(1), "tools/list", Some(params))
    }

    #[test]
    fn a_full_envelope_passes() {
        let mut r = request(json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}));
        let meta = r.modern_meta().unwrap();
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
    }

    #[test]
    fn each_envelope_problem_has_its_error() {
        let check = |params: Value| request(params).modern_meta().map(|_| ());
        assert!(matches!(
            Request::new(RequestId::from(1), "m", None).modern_meta(),
            Err(ServerError::MissingMeta { missing }) if missing == ["_meta"]
        ));
        assert!(matches!(
            check(json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}})),
            Err(ServerError::MissingMeta { missing }) if missing == [CLIENT_CAPABILITIES_KEY]
        ));
        assert!(matches!(
            check(json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}})),
            Err(ServerError::MissingMeta { missing }) if missing == [PROTOCOL_VERSION_KEY]
        ));
        assert!(matches!(
            check(json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2099-01-01", "io.modelcontextprotocol/clientCapabilities": {}}})),
            Err(ServerError::UnsupportedVersion { requested: Some(v) }) if v == "2099-01-01"
        ));
        assert!(matches!(
            check(json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": "all"}})),
            Err(ServerError::InvalidMeta { key, .. }) if key == CLIENT_CAPABILITIES_KEY
        ));
        assert!(matches!(
            check(
                json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28", "io.modelcontextprotocol/clientCapabilities": {}, "io.modelcontextprotocol/logLevel": "loud"}})
            ),
            Err(ServerError::InvalidMeta { .. })
        ));
    }

    #[test]
    fn eras() {
        let modern = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
        let era = |header: Option<&str>, method: &str, params: Value| {
            Request::new(RequestId::from(1), method, Some(params)).era(header)
        };
        assert_eq!(
            era(Some("2026-07-28"), "tools/list", modern.clone()),
            RequestEra::Modern
        );
        assert_eq!(era(None, "tools/list", modern.clone()), RequestEra::Modern);
        assert_eq!(
            era(Some("2099-01-01"), "tools/list", json!({})),
            RequestEra::Modern
        );
        assert_eq!(
            era(Some("2025-11-25"), "tools/list", json!({})),
            RequestEra::Legacy(Some("2025-11-25".into()))
        );
        assert_eq!(
            era(None, "initialize", json!({"protocolVersion": "2025-06-18"})),
            RequestEra::Legacy(Some("2025-06-18".into()))
        );
        assert_eq!(era(None, "tools/list", json!({})), RequestEra::Legacy(None));
        assert_eq!(
            era(Some("2026-07-28"), "initialize", modern),
            RequestEra::Modern
        );
    }
}

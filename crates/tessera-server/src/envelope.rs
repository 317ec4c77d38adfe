//! The per-request `_meta` envelope of a 2026-07-28 request.

use serde::Deserialize;
use serde_json::Value;
use tessera_protocol::{
    CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, RequestMeta, STATELESS_PROTOCOL_VERSIONS,
};

use crate::ServerError;

/// Checks the shape of `params._meta`: present, an object, with the required
/// keys (`protocolVersion` a string, `clientCapabilities` an object). Transports
/// run this first, before comparing headers with the body.
pub fn check_envelope(params: Option<&Value>) -> Result<(), ServerError> {
    let Some(meta) = params.and_then(|p| p.get("_meta")) else {
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
    Ok(())
}

/// Reads `params._meta`: its shape ([`check_envelope`]), then a supported
/// version, then the typed envelope, which is moved out of `params`.
pub(crate) fn read_meta(params: Option<&mut Value>) -> Result<RequestMeta, ServerError> {
    check_envelope(params.as_deref())?;
    let meta = params
        .and_then(Value::as_object_mut)
        .and_then(|p| p.remove("_meta"))
        .unwrap_or(Value::Null);
    if let Some(v) = meta.get(PROTOCOL_VERSION_KEY).and_then(Value::as_str)
        && !STATELESS_PROTOCOL_VERSIONS.contains(&v)
    {
        return Err(ServerError::UnsupportedVersion {
            requested: Some(v.to_owned()),
        });
    }
    RequestMeta::deserialize(meta).map_err(|e| ServerError::InvalidMeta {
        key: "_meta",
        problem: e.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(mut params: Value) -> Result<RequestMeta, ServerError> {
        read_meta(Some(&mut params))
    }

    #[test]
    fn a_full_envelope_passes() {
        let meta = check(json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}))
        .unwrap();
        assert_eq!(meta.protocol_version.as_deref(), Some("2026-07-28"));
    }

    #[test]
    fn each_problem_has_its_error() {
        assert!(
            matches!(read_meta(None), Err(ServerError::MissingMeta { missing }) if missing == ["_meta"])
        );
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
}

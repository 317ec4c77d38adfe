//! Telling 2026-07-28 requests from initialize-era ones.

use serde_json::Value;
use tessera_protocol::{PROTOCOL_VERSION_KEY, is_legacy_version};

/// The era of a request, from its version header and body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum RequestEra {
    /// Per-request `_meta` (2026-07-28 and later, or an unknown version to refuse).
    Modern,
    /// Initialize era; the version when the request named one.
    Legacy(Option<String>),
}

/// Decides the era: an `initialize` without modern markers, a legacy version
/// header, or a request naming no version anywhere, is initialize-era.
pub(crate) fn detect(
    header_version: Option<&str>,
    method: &str,
    params: Option<&Value>,
) -> RequestEra {
    let body_version = params
        .and_then(|p| p.get("_meta"))
        .and_then(|m| m.get(PROTOCOL_VERSION_KEY))
        .and_then(Value::as_str);
    match (header_version, body_version) {
        (Some(h), _) if is_legacy_version(h) => RequestEra::Legacy(Some(h.to_owned())),
        (Some(_), _) | (None, Some(_)) => RequestEra::Modern,
        (None, None) if method == "initialize" => RequestEra::Legacy(
            params
                .and_then(|p| p.get("protocolVersion"))
                .and_then(Value::as_str)
                .map(str::to_owned),
        ),
        (None, None) => RequestEra::Legacy(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn eras() {
        let modern = json!({"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}});
        assert_eq!(
            detect(Some("2026-07-28"), "tools/list", Some(&modern)),
            RequestEra::Modern
        );
        assert_eq!(
            detect(None, "tools/list", Some(&modern)),
            RequestEra::Modern
        );
        assert_eq!(
            detect(Some("2099-01-01"), "tools/list", None),
            RequestEra::Modern
        );
        assert_eq!(
            detect(Some("2025-11-25"), "tools/list", None),
            RequestEra::Legacy(Some("2025-11-25".into()))
        );
        assert_eq!(
            detect(
                None,
                "initialize",
                Some(&json!({"protocolVersion": "2025-06-18"}))
            ),
            RequestEra::Legacy(Some("2025-06-18".into()))
        );
        assert_eq!(
            detect(None, "tools/list", Some(&json!({}))),
            RequestEra::Legacy(None)
        );
        assert_eq!(
            detect(Some("2026-07-28"), "initialize", Some(&modern)),
            RequestEra::Modern
        );
    }
}

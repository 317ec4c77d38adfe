//! Protocol revisions: the one served statelessly and the initialize-era ones.

/// The protocol revision this crate models.
pub const LATEST_PROTOCOL_VERSION: &str = "2026-07-28";

/// Revisions a stateless (per-request `_meta`) server can serve.
pub const STATELESS_PROTOCOL_VERSIONS: &[&str] = &[LATEST_PROTOCOL_VERSION];

/// Initialize-era revisions: clients that open with `initialize`.
pub const LEGACY_PROTOCOL_VERSIONS: &[&str] =
    &["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];

/// The params member the `Mcp-Name` header mirrors for `method`: `name` for
/// `tools/call` and `prompts/get`, `uri` for `resources/read`, none otherwise.
pub fn name_param(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        crate::TASKS_GET | crate::TASKS_UPDATE | crate::TASKS_CANCEL => Some("taskId"),
        _ => None,
    }
}

/// Whether `version` is one of the initialize-era revisions.
pub fn is_legacy_version(version: &str) -> bool {
    LEGACY_PROTOCOL_VERSIONS.contains(&version)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eras_are_disjoint() {
        for v in STATELESS_PROTOCOL_VERSIONS {
            assert!(!is_legacy_version(v));
        }
        assert!(is_legacy_version("2025-11-25"));
        assert!(is_legacy_version("2025-06-18"));
    }
}

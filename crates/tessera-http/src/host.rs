//! DNS-rebinding protection: which `Host` and `Origin` values are allowed.

use crate::EndpointOptions;

const LOOPBACK_NAMES: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

/// The host name of a `Host` header value, without the port, lowercased.
fn host_name(host: &str) -> String {
    let host = host.trim().to_ascii_lowercase();
    if host.starts_with('[') {
        // [::1]:8080 -> [::1]
        return host
            .split_once(']')
            .map_or(host.clone(), |(h, _)| format!("{h}]"));
    }
    host.split_once(':')
        .map_or(host.clone(), |(h, _)| h.to_owned())
}

/// Whether a `Host` header value is allowed.
pub(crate) fn host_allowed(options: &EndpointOptions, host: &str) -> bool {
    if options.any_host {
        return true;
    }
    let name = host_name(host);
    LOOPBACK_NAMES.contains(&name.as_str())
        || options.allowed_hosts.iter().any(|h| host_name(h) == name)
}

/// Whether an `Origin` header value is allowed: loopback origins on any port, or configured ones.
pub(crate) fn origin_allowed(options: &EndpointOptions, origin: &str) -> bool {
    let origin = origin.trim().to_ascii_lowercase();
    if options
        .allowed_origins
        .iter()
        .any(|o| o == &origin || o == "*")
    {
        return true;
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    matches!(scheme, "http" | "https") && LOOPBACK_NAMES.contains(&host_name(rest).as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_hosts_and_origins() {
        let o = EndpointOptions::default();
        for h in [
            "localhost",
            "localhost:8787",
            "127.0.0.1:1",
            "[::1]:80",
            "LOCALHOST",
        ] {
            assert!(host_allowed(&o, h), "{h}");
        }
        for h in [
            "evil.example",
            "evil.example:8787",
            "127.0.0.1.evil.com",
            "localhost.evil.com",
        ] {
            assert!(!host_allowed(&o, h), "{h}");
        }
        assert!(origin_allowed(&o, "http://localhost:5173"));
        assert!(origin_allowed(&o, "https://127.0.0.1"));
        assert!(!origin_allowed(&o, "http://evil.example"));
        assert!(!origin_allowed(&o, "null"));
        let o = EndpointOptions::default()
            .allow_host("mcp.example.com")
            .allow_origin("https://app.example.com");
        assert!(host_allowed(&o, "mcp.example.com:443"));
        assert!(origin_allowed(&o, "https://app.example.com"));
    }
}

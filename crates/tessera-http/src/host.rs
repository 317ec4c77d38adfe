//! DNS-rebinding protection: which `Host` and `Origin` values are allowed.

use crate::EndpointOptions;

const LOOPBACK_NAMES: &[&str] = &["localhost", "127.0.0.1", "[::1]"];

/// The host name of a `Host` header value, without the port (compare it ignoring case).
fn host_name(host: &str) -> &str {
    let host = host.trim();
    if host.starts_with('[') {
        // [::1]:8080 -> [::1]
        return host
            .find(']')
            .and_then(|end| host.get(..=end))
            .unwrap_or(host);
    }
    host.split_once(':').map_or(host, |(h, _)| h)
}

/// Whether `name` (a host name from [`host_name`]) is a loopback name.
fn is_loopback(name: &str) -> bool {
    LOOPBACK_NAMES.iter().any(|l| l.eq_ignore_ascii_case(name))
}

/// Whether a `Host` header value is allowed.
pub(crate) fn host_allowed(options: &EndpointOptions, host: &str) -> bool {
    if options.any_host {
        return true;
    }
    let name = host_name(host);
    is_loopback(name)
        || options
            .allowed_hosts
            .iter()
            .any(|h| host_name(h).eq_ignore_ascii_case(name))
}

/// Whether an `Origin` header value is allowed: loopback origins on any port, or configured ones.
pub(crate) fn origin_allowed(options: &EndpointOptions, origin: &str) -> bool {
    let origin = origin.trim();
    if options
        .allowed_origins
        .iter()
        .any(|o| o.eq_ignore_ascii_case(origin) || o == "*")
    {
        return true;
    }
    let Some((scheme, rest)) = origin.split_once("://") else {
        return false;
    };
    (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
        && is_loopback(host_name(rest))
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

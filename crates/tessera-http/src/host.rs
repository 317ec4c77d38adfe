//! DNS-rebinding protection: `Host` and `Origin` read as RFC 3986 authorities
//! (no userinfo, brackets only around IPv6 literals, digits-only ports) and
//! compared with the loopback names and the configured ones.

use std::net::{Ipv4Addr, Ipv6Addr};

use crate::EndpointOptions;

/// The host of an authority, borrowed from the header (checked on every request: no allocation).
#[derive(Debug, Clone, Copy)]
enum Host<'a> {
    /// A registered name (`localhost`, `mcp.example.com`), compared ignoring case.
    Name(&'a str),
    /// An IPv4 address.
    V4(Ipv4Addr),
    /// An IPv6 literal (written in brackets).
    V6(Ipv6Addr),
}

/// Reads `host[:port]`; `None` for anything else (userinfo, paths, stray
/// brackets, non-digit or out-of-range ports, characters a host cannot have).
fn parse_authority(text: &str) -> Option<Host<'_>> {
    let (host, port) = if let Some(rest) = text.strip_prefix('[') {
        let (literal, after) = rest.split_once(']')?;
        let port = match after {
            "" => None,
            p => Some(p.strip_prefix(':')?),
        };
        (Host::V6(literal.parse().ok()?), port)
    } else {
        let (name, port) = match text.split_once(':') {
            Some((n, p)) => (n, Some(p)),
            None => (text, None),
        };
        let host = match name.parse::<Ipv4Addr>() {
            Ok(v4) => Host::V4(v4),
            Err(_) if is_reg_name(name) => Host::Name(name),
            Err(_) => return None,
        };
        (host, port)
    };
    let valid_port = |p: &str| {
        (1..=5).contains(&p.len())
            && p.bytes().all(|b| b.is_ascii_digit())
            && p.parse::<u16>().is_ok()
    };
    if port.is_some_and(|p| !valid_port(p)) {
        return None;
    }
    Some(host)
}

/// `text` read as the endpoint reads a `Host` or `Origin` authority: the
/// host it names, or `None` (for the fuzz targets only).
#[cfg(fuzzing)]
pub fn fuzz_authority(text: &str) -> Option<String> {
    parse_authority(text).map(|host| match host {
        Host::Name(name) => name.to_owned(),
        Host::V4(v4) => v4.to_string(),
        Host::V6(v6) => format!("[{v6}]"),
    })
}

/// A DNS name: labels of letters, digits, `-` and `_`, separated by dots.
fn is_reg_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && label
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        })
}

impl PartialEq for Host<'_> {
    fn eq(&self, other: &Self) -> bool {
        match (self, other) {
            (Host::Name(a), Host::Name(b)) => a.eq_ignore_ascii_case(b),
            (Host::V4(a), Host::V4(b)) => a == b,
            (Host::V6(a), Host::V6(b)) => a == b,
            _ => false,
        }
    }
}

fn is_loopback(host: &Host<'_>) -> bool {
    match host {
        Host::Name(n) => n.eq_ignore_ascii_case("localhost"),
        Host::V4(a) => *a == Ipv4Addr::LOCALHOST,
        Host::V6(a) => *a == Ipv6Addr::LOCALHOST,
    }
}

/// Whether `host` is loopback or one of `allowed` (each a host, with or without a port).
fn host_in(host: &Host<'_>, allowed: &[String]) -> bool {
    is_loopback(host)
        || allowed
            .iter()
            .any(|a| parse_authority(a).as_ref() == Some(host))
}

/// Whether a `Host` header value is allowed.
pub(crate) fn host_allowed(options: &EndpointOptions, host: &str) -> bool {
    if options.any_host {
        return true;
    }
    parse_authority(host).is_some_and(|h| host_in(&h, &options.allowed_hosts))
}

/// Whether an `Origin` header value is allowed: loopback origins on any port, or configured ones.
pub(crate) fn origin_allowed(options: &EndpointOptions, origin: &str) -> bool {
    if options
        .allowed_origins
        .iter()
        .any(|o| o.eq_ignore_ascii_case(origin) || o == "*")
    {
        return true;
    }
    let Some((scheme, authority)) = origin.split_once("://") else {
        return false;
    };
    (scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https"))
        && parse_authority(authority).is_some_and(|h| is_loopback(&h))
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
            "[::1]",
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
        assert!(host_allowed(&o, "MCP.example.com"));
        assert!(origin_allowed(&o, "https://app.example.com"));
    }

    /// RFC 3986 §3.2: `authority = [ userinfo "@" ] host [ ":" port ]`; a
    /// `Host` header carries no userinfo, `port = *DIGIT`, and brackets
    /// enclose only an IP literal.
    #[test]
    fn hosts_that_are_not_plain_authorities_are_refused() {
        let o = EndpointOptions::default();
        for h in [
            "localhost:80@evil.example",
            "user@localhost",
            "[::1]evil.example",
            "[::1]:80x",
            "[localhost]",
            "[::1",
            "localhost:",
            "localhost:8o",
            "localhost:99999",
            "localhost:-1",
            "localhost:+80",
            "localhost/evil",
            "localhost evil",
            "localhost\tevil",
            "localhost..",
            "",
            ":80",
            "127.0.0.1:80:80",
            "[::1]:80:80",
        ] {
            assert!(!host_allowed(&o, h), "{h:?}");
        }
        for origin in [
            "http://localhost:80@evil.example",
            "http://[::1]evil.example",
            "http://localhost/path",
            "ftp://localhost",
        ] {
            assert!(!origin_allowed(&o, origin), "{origin:?}");
        }
    }
}

//! The standard request headers of the 2026-07-28 transport and their checks.

use http::{HeaderMap, HeaderName};
use tessera_protocol::decode_header_value as decode_sentinel;

/// `MCP-Protocol-Version`.
pub(crate) const PROTOCOL_VERSION: HeaderName = HeaderName::from_static("mcp-protocol-version");
/// `Mcp-Method`.
pub(crate) const METHOD: HeaderName = HeaderName::from_static("mcp-method");
/// `Mcp-Name`.
pub(crate) const NAME: HeaderName = HeaderName::from_static("mcp-name");

/// A header problem, described for the -32020 message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Mismatch {
    pub header: String,
    pub body: String,
}

/// The MCP headers of a request, read once from its head: each trimmed,
/// visible ASCII, and sent at most once (a header repeated with another
/// value is refused, as a repeated `Host` is, never resolved "first wins").
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct McpHeaders<'a> {
    /// `MCP-Protocol-Version`.
    pub protocol_version: Option<&'a str>,
    /// `Mcp-Method`.
    pub method: Option<&'a str>,
    /// `Mcp-Name`, as sent (possibly Base64-encoded).
    pub name: Option<&'a str>,
}

impl<'a> McpHeaders<'a> {
    /// Reads the three headers from `headers`.
    pub(crate) fn read(headers: &'a HeaderMap) -> Result<Self, Mismatch> {
        Ok(Self {
            protocol_version: header_value(headers, &PROTOCOL_VERSION)?,
            method: header_value(headers, &METHOD)?,
            name: header_value(headers, &NAME)?,
        })
    }
}

/// The trimmed value of header `name`: `Err` when it is not visible ASCII or
/// is sent again with a different value.
fn header_value<'a>(
    headers: &'a HeaderMap,
    name: &HeaderName,
) -> Result<Option<&'a str>, Mismatch> {
    let mut values = headers.get_all(name).iter();
    let Some(first) = values.next() else {
        return Ok(None);
    };
    let text = |v: &'a http::HeaderValue| {
        v.to_str().map(str::trim).map_err(|_| Mismatch {
            header: "(invalid characters)".into(),
            body: format!("the {name} header contains characters that are not visible ASCII"),
        })
    };
    let value = text(first)?;
    for other in values {
        let other = text(other)?;
        if other != value {
            return Err(Mismatch {
                header: format!("{value}, {other}"),
                body: format!("the {name} header is sent more than once, with different values"),
            });
        }
    }
    Ok(Some(value))
}

/// Checks `Mcp-Method` against the body's method, and `Mcp-Name` against
/// `params.name`/`params.uri` for the methods that require it. `required`:
/// whether a missing header is refused (2026-07-28), or only headers sent
/// are compared (the initialize era, whose clients need not send them, but
/// whose requests must not say one thing to a proxy and another to the server).
pub(crate) fn check_method_and_name(
    headers: &McpHeaders<'_>,
    method: &str,
    name: Option<&str>,
    required: bool,
) -> Result<(), Mismatch> {
    match headers.method {
        None if !required => {}
        None => {
            return Err(Mismatch {
                header: "(missing)".into(),
                body: format!(
                    "the body names method {method} but the required Mcp-Method header is absent"
                ),
            });
        }
        Some(h) if h != method => {
            return Err(Mismatch {
                header: h.to_owned(),
                body: format!("the body names method {method} but the Mcp-Method header names {h}"),
            });
        }
        Some(_) => {}
    }
    let Some(field) = tessera_protocol::name_param(method) else {
        return Ok(());
    };
    let Some(body_name) = name else {
        // The body lacks the name; the server reports that as invalid params.
        return Ok(());
    };
    match headers.name {
        None if !required => Ok(()),
        None => Err(Mismatch {
            header: "(missing)".into(),
            body: format!(
                "the body carries params.{field}={body_name:?} but the required Mcp-Name header is absent"
            ),
        }),
        Some(raw) => {
            let decoded = decode_sentinel(raw).map_err(|problem| Mismatch {
                header: raw.to_owned(),
                body: format!("the Mcp-Name header is malformed: {problem}"),
            })?;
            if decoded == body_name {
                Ok(())
            } else {
                Err(Mismatch {
                    header: raw.to_owned(),
                    body: format!(
                        "the body carries params.{field}={body_name:?} but the Mcp-Name header names {decoded:?}"
                    ),
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.insert(
                http::HeaderName::from_bytes(k.as_bytes()).unwrap(),
                v.parse().unwrap(),
            );
        }
        h
    }

    fn check_method_and_name(
        headers: &HeaderMap,
        method: &str,
        name: Option<&str>,
    ) -> Result<(), Mismatch> {
        super::check_method_and_name(&McpHeaders::read(headers)?, method, name, true)
    }

    #[test]
    fn a_header_repeated_with_another_value_is_refused() {
        let mut h = HeaderMap::new();
        h.append("mcp-method", "tools/call".parse().unwrap());
        h.append("mcp-method", "tools/list".parse().unwrap());
        let err = McpHeaders::read(&h).unwrap_err();
        assert!(err.body.contains("more than once"), "{err:?}");
        let mut same = HeaderMap::new();
        same.append("mcp-protocol-version", "2026-07-28".parse().unwrap());
        same.append("mcp-protocol-version", " 2026-07-28".parse().unwrap());
        assert_eq!(
            McpHeaders::read(&same).unwrap().protocol_version,
            Some("2026-07-28")
        );
    }

    #[test]
    fn method_and_name_checks() {
        let ok = headers(&[
            ("mcp-method", "tools/call"),
            ("MCP-NAME", " increase-counter "),
        ]);
        assert!(check_method_and_name(&ok, "tools/call", Some("increase-counter")).is_ok());
        let case = headers(&[
            ("mcp-method", "TOOLS/CALL"),
            ("mcp-name", "increase-counter"),
        ]);
        assert!(check_method_and_name(&case, "tools/call", Some("increase-counter")).is_err());
        let no_name = headers(&[("mcp-method", "tools/call")]);
        let err = check_method_and_name(&no_name, "tools/call", Some("x")).unwrap_err();
        assert!(err.body.contains("Mcp-Name header is absent"));
        let stray = headers(&[("mcp-method", "tools/list"), ("mcp-name", "whatever")]);
        assert!(check_method_and_name(&stray, "tools/list", None).is_ok());
        let uri = headers(&[
            ("mcp-method", "resources/read"),
            ("mcp-name", "file:///a.txt"),
        ]);
        assert!(check_method_and_name(&uri, "resources/read", Some("file:///a.txt")).is_ok());
        let missing = headers(&[]);
        assert!(check_method_and_name(&missing, "tools/list", None).is_err());
        // Initialize era: only what is sent is compared.
        let sent = |h: &HeaderMap, name| {
            super::check_method_and_name(&McpHeaders::read(h).unwrap(), "tools/call", name, false)
        };
        assert!(sent(&missing, Some("x")).is_ok());
        assert!(sent(&no_name, Some("x")).is_ok());
        assert!(sent(&ok, Some("other-tool")).is_err());
        assert!(sent(&headers(&[("mcp-method", "tools/list")]), None).is_err());
    }
}

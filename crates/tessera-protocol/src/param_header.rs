//! Tool parameters mirrored into `Mcp-Param-{Name}` headers (`x-mcp-header`
//! in a tool's `inputSchema`): finding and validating the annotations, the
//! header a client sends, and the server's check that a header matches the body.

use serde_json::Value;

use crate::{decode_header_value, encode_header_value};

/// One annotated parameter: where it sits in the arguments and its header name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeader {
    /// The chain of `properties` keys from the schema root to the parameter.
    pub path: Vec<String>,
    /// The `{Name}` of `Mcp-Param-{Name}`, as annotated.
    pub name: String,
}

impl ParamHeader {
    /// The full header name, `Mcp-Param-{Name}`.
    pub fn header_name(&self) -> String {
        format!("Mcp-Param-{}", self.name)
    }

    /// The argument's value, when present and not null (only then is a header sent).
    pub fn value_in<'a>(&self, arguments: &'a Value) -> Option<&'a Value> {
        self.path
            .iter()
            .try_fold(arguments, |v, k| v.get(k))
            .filter(|v| !v.is_null())
    }

    /// The header value a client sends for `value` (Value Encoding applied).
    pub fn header_value(value: &Value) -> Option<String> {
        match value {
            Value::String(s) => Some(encode_header_value(s)),
            Value::Bool(b) => Some(b.to_string()),
            Value::Number(n) if n.is_i64() || n.is_u64() => Some(n.to_string()),
            Value::Number(n) => Some(encode_header_value(&n.to_string())),
            _ => None,
        }
    }

    /// Checks a received header against the body's value, after decoding:
    /// strings exactly, integers numerically (`42.0` equals `42`), booleans as
    /// `true`/`false`. The error says what disagrees, for a -32020 answer.
    pub fn check(&self, header: Option<&[u8]>, body: Option<&Value>) -> Result<(), String> {
        let name = self.header_name();
        // An argument of another type is the tool's validation to refuse (-32602).
        if body.is_some_and(|b| !(b.is_string() || b.is_number() || b.is_boolean())) {
            return Ok(());
        }
        let (header, body) = match (header, body) {
            (None, None) => return Ok(()),
            (None, Some(_)) => {
                return Err(format!("{name} is missing but the argument has a value"));
            }
            (Some(_), None) => {
                return Err(format!("{name} is present but the argument has no value"));
            }
            (Some(h), Some(b)) => (h, b),
        };
        // Visible ASCII, space and tab only (RFC 9110 field values).
        if !header
            .iter()
            .all(|&c| c == b'\t' || (0x20..=0x7e).contains(&c))
        {
            return Err(format!(
                "{name} contains characters a header value cannot carry"
            ));
        }
        let text = std::str::from_utf8(header)
            .unwrap_or_default()
            .trim_matches([' ', '\t']);
        let decoded = decode_header_value(text).map_err(|e| format!("{name}: {e}"))?;
        let same = match body {
            Value::String(s) => decoded == *s,
            Value::Bool(b) => decoded == b.to_string(),
            Value::Number(n) => same_number(&decoded, n),
            _ => false,
        };
        if same {
            Ok(())
        } else {
            Err(format!("{name} does not match the argument's value"))
        }
    }
}

/// An integer argument against its header, exactly: the header is decimal
/// digits (a `.0…` fraction allowed: "42.0 and 42 are considered equal"),
/// compared as integers, never through a float that would round 2^53 + 1.
fn same_number(header: &str, body: &serde_json::Number) -> bool {
    let integer = body
        .as_i64()
        .map(i128::from)
        .or_else(|| body.as_u64().map(i128::from));
    let Some(body) = integer else {
        // A non-integer argument (no conforming tool annotates one): exact text.
        return header == body.to_string();
    };
    let (whole, fraction) = header.split_once('.').unwrap_or((header, ""));
    let digits = whole.strip_prefix('-').unwrap_or(whole);
    if digits.is_empty()
        || !digits.bytes().all(|b| b.is_ascii_digit())
        || !fraction.bytes().all(|b| b == b'0')
        || (header.contains('.') && fraction.is_empty())
    {
        return false;
    }
    whole.parse::<i128>().is_ok_and(|h| h == body)
}

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// Every `x-mcp-header` in a tool's `inputSchema`, validated against the
/// spec's constraints (non-empty field-name token, unique ignoring case, on a
/// string, integer or boolean property reachable through `properties` only).
/// An error says why the tool definition is invalid.
///
/// ```
/// use serde_json::json;
/// use tessera_protocol::param_headers;
/// let schema = json!({"type": "object", "properties": {
///     "region": {"type": "string", "x-mcp-header": "Region"}}});
/// assert_eq!(param_headers(&schema).unwrap()[0].header_name(), "Mcp-Param-Region");
/// let number = json!({"type": "object", "properties": {
///     "score": {"type": "number", "x-mcp-header": "Score"}}});
/// assert!(param_headers(&number).is_err());
/// ```
pub fn param_headers(input_schema: &Value) -> Result<Vec<ParamHeader>, String> {
    let mut found = Vec::new();
    walk(input_schema, &mut Vec::new(), true, &mut found)?;
    let mut seen: Vec<String> = Vec::new();
    for a in &found {
        if a.name.is_empty() {
            return Err("x-mcp-header must not be empty".into());
        }
        if !a.name.chars().all(is_tchar) {
            return Err(format!(
                "x-mcp-header {:?} is not a valid HTTP field name",
                a.name
            ));
        }
        let lower = a.name.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Err(format!(
                "x-mcp-header {:?} is used twice (case-insensitively)",
                a.name
            ));
        }
        seen.push(lower);
    }
    Ok(found)
}

fn walk(
    node: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut Vec<ParamHeader>,
) -> Result<(), String> {
    match node {
        Value::Object(o) => {
            if let Some(h) = o.get("x-mcp-header") {
                if !reachable || path.is_empty() {
                    return Err("x-mcp-header on a property that is not statically reachable through `properties`".into());
                }
                let name = h.as_str().ok_or("x-mcp-header must be a string")?;
                // One primitive type; `null` beside it is allowed (a null value sends no header).
                let types: Vec<&str> = match o.get("type") {
                    Some(Value::String(t)) => vec![t.as_str()],
                    Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
                    _ => Vec::new(),
                };
                let primitive: Vec<&str> = types.into_iter().filter(|t| *t != "null").collect();
                if !matches!(primitive.as_slice(), ["string" | "integer" | "boolean"]) {
                    return Err(format!(
                        "x-mcp-header {name:?} annotates a property of type {}; only string, integer and boolean are allowed",
                        o.get("type").map_or("(none)".to_owned(), Value::to_string)
                    ));
                }
                found.push(ParamHeader {
                    path: path.clone(),
                    name: name.to_owned(),
                });
            }
            for (key, child) in o {
                if key == "properties" {
                    if let Some(props) = child.as_object() {
                        for (name, prop) in props {
                            path.push(name.clone());
                            walk(prop, path, reachable, found)?;
                            path.pop();
                        }
                    }
                } else if key != "x-mcp-header" {
                    walk(child, path, false, found)?;
                }
            }
            Ok(())
        }
        Value::Array(items) => items.iter().try_for_each(|i| walk(i, path, false, found)),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn region() -> ParamHeader {
        ParamHeader {
            path: vec!["region".into()],
            name: "Region".into(),
        }
    }

    #[test]
    fn invalid_annotations_are_named() {
        let cases = [
            json!({"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": ""}}}),
            json!({"type": "object", "properties": {"r": {"type": "object", "x-mcp-header": "R"}}}),
            json!({"type": "object", "properties": {"r": {"type": "number", "x-mcp-header": "R"}}}),
            json!({"type": "object", "properties": {"r": {"type": "null", "x-mcp-header": "R"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "R"}, "b": {"type": "string", "x-mcp-header": "R"}}}),
            json!({"type": "object", "properties": {"a": {"type": "string", "x-mcp-header": "MyField"}, "b": {"type": "string", "x-mcp-header": "myfield"}}}),
            json!({"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "My Region"}}}),
            json!({"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "Region:Primary"}}}),
            json!({"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "Région"}}}),
            json!({"type": "object", "properties": {"r": {"type": "string", "x-mcp-header": "Region\t1"}}}),
            json!({"type": "object", "properties": {"r": {"type": "array", "items": {"type": "string", "x-mcp-header": "R"}}}}),
            json!({"type": "object", "oneOf": [{"properties": {"r": {"type": "string", "x-mcp-header": "R"}}}]}),
        ];
        for c in cases {
            assert!(param_headers(&c).is_err(), "{c}");
        }
        let nullable = json!({"type": "object", "properties": {
            "p": {"type": ["integer", "null"], "x-mcp-header": "P"}}});
        assert!(param_headers(&nullable).is_ok());
        let two = json!({"type": "object", "properties": {
            "p": {"type": ["integer", "string"], "x-mcp-header": "P"}}});
        assert!(param_headers(&two).is_err());
        let nested = json!({"type": "object", "properties": {"a": {"type": "object", "properties": {
            "b": {"type": "integer", "x-mcp-header": "B"}}}}});
        assert_eq!(param_headers(&nested).unwrap()[0].path, ["a", "b"]);
    }

    /// "Server MUST validate header matches body"; "Server MUST NOT expect
    /// the header" when the value is null or absent; "Client omits header but
    /// value is in body: Server MUST reject the request".
    #[test]
    fn the_server_check_follows_the_spec_table() {
        let r = region();
        let hello = json!("Hello");
        assert!(r.check(Some(b"Hello"), Some(&hello)).is_ok());
        assert!(r.check(None, None).is_ok());
        assert!(r.check(None, Some(&hello)).is_err());
        assert!(r.check(Some(b"Hello"), None).is_err());
        assert!(r.check(Some(b"Hullo"), Some(&hello)).is_err());
        // Decoded before comparing; strict base64 (padding, alphabet).
        assert!(r.check(Some(b"=?base64?SGVsbG8=?="), Some(&hello)).is_ok());
        assert!(r.check(Some(b"=?base64?SGVsbG8?="), Some(&hello)).is_err());
        assert!(
            r.check(Some(b"=?base64?SGVs!!!bG8=?="), Some(&hello))
                .is_err()
        );
        // Without the full prefix and suffix a value is literal.
        assert!(r.check(Some(b"SGVsbG8="), Some(&json!("SGVsbG8="))).is_ok());
        assert!(
            r.check(
                Some(b"=?base64?SGVsbG8="),
                Some(&json!("=?base64?SGVsbG8="))
            )
            .is_ok()
        );
        // "servers SHOULD compare ... numerically (e.g., 42.0 and 42 are considered equal)".
        assert!(r.check(Some(b"42.0"), Some(&json!(42))).is_ok());
        assert!(r.check(Some(b"43"), Some(&json!(42))).is_err());
        // Exactly, not through a float: 2^53 + 1 is not 2^53; no exponents or signs.
        assert!(
            r.check(
                Some(b"9007199254740992"),
                Some(&json!(9_007_199_254_740_993_u64))
            )
            .is_err()
        );
        assert!(
            r.check(
                Some(b"9007199254740993"),
                Some(&json!(9_007_199_254_740_993_u64))
            )
            .is_ok()
        );
        for loose in ["1e0", "+1", ".5", "1.", "1.5", "0x1", " "] {
            assert!(
                r.check(Some(loose.as_bytes()), Some(&json!(1))).is_err(),
                "{loose}"
            );
        }
        assert!(r.check(Some(b"-7"), Some(&json!(-7))).is_ok());
        // An argument of another type is left to the tool's own validation.
        assert!(r.check(None, Some(&json!({"a": 1}))).is_ok());
        assert!(r.check(Some(b"true"), Some(&json!(true))).is_ok());
        assert!(r.check(Some(b"True"), Some(&json!(true))).is_err());
        // "A header value contains invalid characters."
        assert!(
            r.check(Some("Héllo".as_bytes()), Some(&json!("Héllo")))
                .is_err()
        );
        assert!(
            r.check(Some(b"=?base64?SMOpbGxv?="), Some(&json!("Héllo")))
                .is_ok()
        );
    }

    #[test]
    fn clients_encode_what_servers_accept() {
        let r = region();
        for v in [
            json!("us-west1"),
            json!(" padded "),
            json!("Hello, 世界"),
            json!(7),
            json!(false),
        ] {
            let header = ParamHeader::header_value(&v).unwrap();
            assert!(r.check(Some(header.as_bytes()), Some(&v)).is_ok(), "{v}");
        }
    }
}

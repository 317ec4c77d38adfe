//! The standard and mirrored request headers of the 2026-07-28 HTTP transport.

use serde_json::Value;

pub use tessera_protocol::encode_header_value;

fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// An annotated property: the path of property names from the root, and the header name.
#[derive(Debug, Clone, PartialEq)]
struct Annotation {
    path: Vec<String>,
    header: String,
}

/// Finds every `x-mcp-header` in `schema`, failing if one is not statically reachable.
fn annotations(schema: &Value) -> Result<Vec<Annotation>, String> {
    let mut found = Vec::new();
    walk(schema, &mut Vec::new(), true, &mut found)?;
    Ok(found)
}

fn walk(
    node: &Value,
    path: &mut Vec<String>,
    reachable: bool,
    found: &mut Vec<Annotation>,
) -> Result<(), String> {
    match node {
        Value::Object(o) => {
            if let Some(h) = o.get("x-mcp-header") {
                if !reachable || path.is_empty() {
                    return Err("x-mcp-header on a property that is not statically reachable through `properties`".into());
                }
                let header = h.as_str().ok_or("x-mcp-header must be a string")?;
                let ty = o.get("type").and_then(Value::as_str);
                if !matches!(ty, Some("string" | "integer" | "boolean")) {
                    return Err(format!(
                        "x-mcp-header {header:?} annotates a property of type {}; only string, integer and boolean are allowed",
                        o.get("type").map_or("(none)".to_owned(), Value::to_string)
                    ));
                }
                found.push(Annotation {
                    path: path.clone(),
                    header: header.to_owned(),
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

/// Why a tool's `x-mcp-header` annotations are invalid (such a tool must be dropped), or `None`.
pub fn invalid_header_annotation(input_schema: &Value) -> Option<String> {
    let found = match annotations(input_schema) {
        Ok(f) => f,
        Err(e) => return Some(e),
    };
    let mut seen: Vec<String> = Vec::new();
    for a in &found {
        if a.header.is_empty() {
            return Some("x-mcp-header must not be empty".into());
        }
        if !a.header.chars().all(is_tchar) {
            return Some(format!(
                "x-mcp-header {:?} is not a valid HTTP field name",
                a.header
            ));
        }
        let lower = a.header.to_ascii_lowercase();
        if seen.contains(&lower) {
            return Some(format!(
                "x-mcp-header {:?} is used twice (case-insensitively)",
                a.header
            ));
        }
        seen.push(lower);
    }
    None
}

/// The `Mcp-Param-*` headers for `arguments` under `input_schema` (null or absent values give none).
pub(crate) fn param_headers(input_schema: &Value, arguments: &Value) -> Vec<(String, String)> {
    let Ok(found) = annotations(input_schema) else {
        return Vec::new();
    };
    found
        .into_iter()
        .filter_map(|a| {
            let value = a.path.iter().try_fold(arguments, |v, k| v.get(k))?;
            let text = match value {
                Value::String(s) => encode_header_value(s),
                Value::Bool(b) => b.to_string(),
                Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
                Value::Number(n) => encode_header_value(&n.to_string()),
                _ => return None,
            };
            Some((format!("Mcp-Param-{}", a.header), text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn annotations_are_validated() {
        let ok = json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
        assert_eq!(invalid_header_annotation(&ok), None);
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
        ];
        for c in cases {
            assert!(invalid_header_annotation(&c).is_some(), "{c}");
        }
    }

    #[test]
    fn params_are_mirrored() {
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "priority": {"type": "integer", "x-mcp-header": "Priority"},
            "verbose": {"type": "boolean", "x-mcp-header": "Verbose"},
            "empty": {"type": "string", "x-mcp-header": "EmptyVal"},
            "query": {"type": "string"}
        }});
        let mut headers = param_headers(
            &schema,
            &json!({"region": "us-west1", "priority": 42, "verbose": null, "empty": "", "query": "x"}),
        );
        headers.sort();
        assert_eq!(
            headers,
            vec![
                ("Mcp-Param-EmptyVal".to_owned(), String::new()),
                ("Mcp-Param-Priority".to_owned(), "42".to_owned()),
                ("Mcp-Param-Region".to_owned(), "us-west1".to_owned()),
            ]
        );
    }
}

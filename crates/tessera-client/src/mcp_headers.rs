//! The standard and mirrored request headers of the 2026-07-28 HTTP transport.

use serde_json::Value;

use tessera_protocol::ParamHeader;
pub use tessera_protocol::encode_header_value;

/// Why a tool's `x-mcp-header` annotations are invalid (such a tool must be dropped), or `None`.
pub fn invalid_header_annotation(input_schema: &Value) -> Option<String> {
    tessera_protocol::param_headers(input_schema).err()
}

/// The `Mcp-Param-*` headers for `arguments` under `input_schema` (null or absent values give none).
pub(crate) fn param_headers(input_schema: &Value, arguments: &Value) -> Vec<(String, String)> {
    let Ok(found) = tessera_protocol::param_headers(input_schema) else {
        return Vec::new();
    };
    found
        .into_iter()
        .filter_map(|p| {
            let text = ParamHeader::header_value(p.value_in(arguments)?)?;
            Some((p.header_name(), text))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn invalid_annotations_leave_the_tool_out() {
        // The rules themselves are tested in tessera_protocol::param_header.
        let ok = json!({"type": "object", "properties": {"region": {"type": "string", "x-mcp-header": "Region"}}});
        assert_eq!(invalid_header_annotation(&ok), None);
        let number =
            json!({"type": "object", "properties": {"r": {"type": "number", "x-mcp-header": "R"}}});
        assert!(invalid_header_annotation(&number).is_some());
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

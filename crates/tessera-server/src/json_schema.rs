//! JSON Schemas of Rust types (`schemars`): tool inputs and structured outputs.

use serde_json::{Map, Value};
use tessera_protocol::JsonObject;

/// Formats schemars emits for Rust number types; not JSON Schema formats, so dropped.
const RUST_NUMBER_FORMATS: &[&str] = &[
    "double", "float", "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8",
    "uint16", "uint32", "uint64", "uint128",
];

pub(crate) fn strip_number_formats(value: &mut Value) {
    match value {
        Value::Object(o) => {
            if o.get("format")
                .and_then(Value::as_str)
                .is_some_and(|f| RUST_NUMBER_FORMATS.contains(&f))
            {
                o.remove("format");
            }
            o.values_mut().for_each(strip_number_formats);
        }
        Value::Array(a) => a.iter_mut().for_each(strip_number_formats),
        _ => {}
    }
}

/// The object schema of `A` (a tool's arguments or structured output).
pub(crate) fn object_schema_of<A: schemars::JsonSchema>() -> JsonObject {
    let mut value = serde_json::to_value(schemars::schema_for!(A)).unwrap_or(Value::Null);
    strip_number_formats(&mut value);
    let mut object = match value {
        Value::Object(o) => o,
        _ => Map::new(),
    };
    object.remove("title");
    if object.get("type").and_then(Value::as_str) != Some("object") {
        // A type that is not a struct (e.g. `()`): accept an empty object.
        object = Map::new();
        object.insert("type".into(), Value::String("object".into()));
    }
    object
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Args {
        /// Current counter value
        current: f64,
    }

    #[test]
    fn object_schema_is_clean() {
        let s = Value::Object(object_schema_of::<Args>());
        assert_eq!(s["type"], "object");
        assert_eq!(
            s["properties"]["current"],
            json!({"type": "number", "description": "Current counter value"})
        );
        assert_eq!(s["required"], json!(["current"]));
        assert_eq!(
            Value::Object(object_schema_of::<()>()),
            json!({"type": "object"})
        );
    }
}

//! JSON Schemas from Rust types (`schemars`), for tool inputs and forms.

use serde_json::{Map, Value};
use tessera_protocol::{ElicitationSchema, FormSchemaError, JsonObject};

/// Formats schemars emits for Rust number types; not JSON Schema formats, so dropped.
const RUST_NUMBER_FORMATS: &[&str] = &[
    "double", "float", "int", "int8", "int16", "int32", "int64", "int128", "uint", "uint8",
    "uint16", "uint32", "uint64", "uint128",
];

fn strip_number_formats(value: &mut Value) {
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

/// The input schema of a tool whose arguments deserialize into `A`: an object schema.
pub(crate) fn input_schema_of<A: schemars::JsonSchema>() -> JsonObject {
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

/// The elicitation form for `T`'s fields, or the first field a form cannot show.
pub(crate) fn form_schema_of<T: schemars::JsonSchema>() -> Result<ElicitationSchema, FormSchemaError>
{
    let mut value = serde_json::to_value(schemars::schema_for!(T)).unwrap_or(Value::Null);
    strip_number_formats(&mut value);
    if let Some(props) = value.get_mut("properties").and_then(Value::as_object_mut) {
        for (name, field) in props.iter_mut() {
            let Some(field) = field.as_object_mut() else {
                continue;
            };
            if field.contains_key("$ref")
                || field.contains_key("allOf")
                || field.contains_key("anyOf")
            {
                return Err(FormSchemaError {
                    field: Some(name.clone()),
                    problem: "nested or composite types are not allowed in an elicitation form; use string, number, integer, boolean or enum fields".into(),
                });
            }
            // `Option<T>` is `type: [T, "null"]`: an optional field of type T.
            if let Some(Value::Array(types)) = field.get("type") {
                let non_null: Vec<Value> = types
                    .iter()
                    .filter(|t| t.as_str() != Some("null"))
                    .cloned()
                    .collect();
                if let [only] = non_null.as_slice() {
                    field.insert("type".into(), only.clone());
                }
            }
            if field.get("default").is_some_and(Value::is_null) {
                field.remove("default");
            }
        }
    }
    if let Some(o) = value.as_object_mut() {
        o.remove("$schema");
        o.remove("title");
        o.remove("description");
    }
    ElicitationSchema::from_value(&value)
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

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Flat {
        name: String,
        age: Option<u32>,
        ok: bool,
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        x: i32,
    }

    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        inner: Inner,
    }

    #[test]
    fn input_schema_is_a_clean_object_schema() {
        let s = Value::Object(input_schema_of::<Args>());
        assert_eq!(s["type"], "object");
        assert_eq!(
            s["properties"]["current"],
            json!({"type": "number", "description": "Current counter value"})
        );
        assert_eq!(s["required"], json!(["current"]));
        assert_eq!(
            Value::Object(input_schema_of::<()>()),
            json!({"type": "object"})
        );
    }

    #[test]
    fn flat_types_become_forms() {
        let form = form_schema_of::<Flat>().unwrap();
        assert!(form.is_required("name"));
        assert!(!form.is_required("age"));
        assert_eq!(form.properties.len(), 3);
    }

    #[test]
    fn nested_types_are_refused_naming_the_field() {
        let err = form_schema_of::<Nested>().unwrap_err();
        assert_eq!(err.field.as_deref(), Some("inner"));
    }
}

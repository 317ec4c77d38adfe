//! Form schemas from Rust types: the restricted schema of a flat struct.

use serde_json::Value;
use tessera_protocol::{ElicitationSchema, FormSchemaError};

use crate::json_schema::strip_number_formats;

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

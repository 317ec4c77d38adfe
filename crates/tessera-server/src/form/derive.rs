//! Form schemas from Rust types: the restricted schema of a flat struct.

use serde::de::{DeserializeOwned, Visitor};
use serde_json::Value;
use tessera_protocol::{ElicitationSchema, FormSchemaError};

use crate::json_schema::strip_number_formats;

/// The elicitation form for `T`'s fields, or the first field a form cannot show.
///
/// The fields keep the order the struct declares them in (the order a
/// client asks them): schemars hands its properties over in a map sorted by
/// name, so they are put back in the order serde's derive lists them.
pub(crate) fn form_schema_of<T: schemars::JsonSchema + DeserializeOwned>()
-> Result<ElicitationSchema, FormSchemaError> {
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
    let mut schema = ElicitationSchema::from_value(&value)?;
    let declared = declared_fields::<T>();
    schema.properties.sort_by_cached_key(|name, _| {
        declared
            .iter()
            .position(|d| d == name)
            .unwrap_or(usize::MAX)
    });
    Ok(schema)
}

/// The field names serde's derive gives `T` (after renames), in declaration
/// order; empty for a type that is not deserialized as a struct.
fn declared_fields<T: DeserializeOwned>() -> &'static [&'static str] {
    let mut fields: &'static [&'static str] = &[];
    let _ = T::deserialize(FieldNames(&mut fields));
    fields
}

/// A deserializer that reads nothing: it records the field list a derived
/// `Deserialize` passes to `deserialize_struct`, then stops.
struct FieldNames<'a>(&'a mut &'static [&'static str]);

#[derive(Debug)]
struct Stop;

impl std::fmt::Display for Stop {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("field names recorded")
    }
}

impl std::error::Error for Stop {}

impl serde::de::Error for Stop {
    fn custom<M: std::fmt::Display>(_: M) -> Self {
        Stop
    }
}

impl<'de> serde::Deserializer<'de> for FieldNames<'_> {
    type Error = Stop;

    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, Stop> {
        Err(Stop)
    }

    fn deserialize_struct<V: Visitor<'de>>(
        self,
        _name: &'static str,
        fields: &'static [&'static str],
        _visitor: V,
    ) -> Result<V::Value, Stop> {
        *self.0 = fields;
        Err(Stop)
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf option unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    struct Flat {
        name: String,
        age: Option<u32>,
        ok: bool,
    }

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[allow(dead_code)]
    struct Inner {
        x: i32,
    }

    #[derive(schemars::JsonSchema, serde::Deserialize)]
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

    #[derive(schemars::JsonSchema, serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)]
    struct ReleaseGate {
        ticket: String,
        rollout_percent: u8,
        approve: bool,
        #[serde(rename = "aNote")]
        note: Option<String>,
    }

    #[test]
    fn fields_keep_their_declaration_order_after_renames() {
        let form = form_schema_of::<ReleaseGate>().unwrap();
        let names: Vec<&str> = form.properties.keys().map(String::as_str).collect();
        assert_eq!(names, ["ticket", "rolloutPercent", "approve", "aNote"]);
        let wire = serde_json::to_string(&form).unwrap();
        let at = |k: &str| wire.find(&format!("\"{k}\":")).unwrap();
        assert!(
            at("ticket") < at("rolloutPercent") && at("approve") < at("aNote"),
            "{wire}"
        );
    }

    #[test]
    fn nested_types_are_refused_naming_the_field() {
        let err = form_schema_of::<Nested>().unwrap_err();
        assert_eq!(err.field.as_deref(), Some("inner"));
    }
}

//! The restricted JSON Schema of an elicitation form: a flat object of primitive fields.

use indexmap::IndexMap;
use serde::de::{self, Deserializer};
use serde::ser::SerializeMap;
use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Number, Value};

/// The `requestedSchema` of a form elicitation: `type: "object"` with primitive properties.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ElicitationSchema {
    /// The `$schema` dialect, if given.
    pub dialect: Option<String>,
    /// The fields, in display order.
    pub properties: IndexMap<String, PrimitiveSchema>,
    /// Names of the fields the user must fill in (`None` when the key is absent).
    pub required: Option<Vec<String>>,
}

/// One field of a form.
#[derive(Debug, Clone, PartialEq)]
pub enum PrimitiveSchema {
    /// A text field.
    String(StringSchema),
    /// A number or integer field.
    Number(NumberSchema),
    /// A yes/no field.
    Boolean(BooleanSchema),
    /// Pick one of several strings.
    SingleSelect(SingleSelectSchema),
    /// Pick several of several strings.
    MultiSelect(MultiSelectSchema),
}

/// A text field.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct StringSchema {
    /// Label.
    pub title: Option<String>,
    /// Help text.
    pub description: Option<String>,
    /// Minimum length in characters.
    pub min_length: Option<u64>,
    /// Maximum length in characters.
    pub max_length: Option<u64>,
    /// A format the value must have.
    pub format: Option<StringFormat>,
    /// Pre-filled value.
    pub default: Option<String>,
}

/// The formats a form's text field may require.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum StringFormat {
    /// An e-mail address.
    Email,
    /// An absolute URI.
    Uri,
    /// A calendar date, `YYYY-MM-DD`.
    Date,
    /// An RFC 3339 date and time.
    DateTime,
}

impl StringFormat {
    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Email => "email",
            Self::Uri => "uri",
            Self::Date => "date",
            Self::DateTime => "date-time",
        }
    }

    /// The format with wire name `s`, if it is one of the four.
    pub fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "email" => Self::Email,
            "uri" => Self::Uri,
            "date" => Self::Date,
            "date-time" => Self::DateTime,
            _ => return None,
        })
    }
}

/// A number or integer field.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NumberSchema {
    /// `true` for `type: "integer"`, `false` for `type: "number"`.
    pub integer: bool,
    /// Label.
    pub title: Option<String>,
    /// Help text.
    pub description: Option<String>,
    /// Smallest allowed value.
    pub minimum: Option<Number>,
    /// Largest allowed value.
    pub maximum: Option<Number>,
    /// Pre-filled value.
    pub default: Option<Number>,
}

/// A yes/no field.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct BooleanSchema {
    /// Label.
    pub title: Option<String>,
    /// Help text.
    pub description: Option<String>,
    /// Pre-filled value.
    pub default: Option<bool>,
}

/// The choices of a select field.
#[derive(Debug, Clone, PartialEq)]
pub enum EnumOptions {
    /// Plain values, shown as they are.
    Untitled(Vec<String>),
    /// Values with display labels.
    Titled(Vec<EnumOption>),
}

impl EnumOptions {
    /// Whether `value` is one of the choices.
    pub fn contains(&self, value: &str) -> bool {
        match self {
            Self::Untitled(v) => v.iter().any(|x| x == value),
            Self::Titled(v) => v.iter().any(|x| x.value == value),
        }
    }

    /// The choices as `(value, label)` pairs.
    pub fn pairs(&self) -> Vec<(&str, &str)> {
        match self {
            Self::Untitled(v) => v.iter().map(|x| (x.as_str(), x.as_str())).collect(),
            Self::Titled(v) => v
                .iter()
                .map(|x| (x.value.as_str(), x.title.as_str()))
                .collect(),
        }
    }
}

/// A value with its display label.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EnumOption {
    /// The value sent back.
    pub value: String,
    /// The label shown.
    pub title: String,
}

/// A single-select field.
#[derive(Debug, Clone, PartialEq)]
pub struct SingleSelectSchema {
    /// Label.
    pub title: Option<String>,
    /// Help text.
    pub description: Option<String>,
    /// The choices.
    pub options: EnumOptions,
    /// `true` when the choices came as the deprecated `enum` + `enumNames` pair.
    pub legacy_names: bool,
    /// Pre-selected value.
    pub default: Option<String>,
}

/// A multi-select field.
#[derive(Debug, Clone, PartialEq)]
pub struct MultiSelectSchema {
    /// Label.
    pub title: Option<String>,
    /// Help text.
    pub description: Option<String>,
    /// The choices.
    pub options: EnumOptions,
    /// Fewest choices.
    pub min_items: Option<u64>,
    /// Most choices.
    pub max_items: Option<u64>,
    /// Pre-selected values.
    pub default: Option<Vec<String>>,
}

/// Why a schema is not a valid elicitation form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{}", match &self.field {
    Some(field) => format!("form field `{field}`: {}", self.problem),
    None => format!("form schema: {}", self.problem),
})]
pub struct FormSchemaError {
    /// The field at fault, when one is.
    pub field: Option<String>,
    /// What is wrong.
    pub problem: String,
}

fn problem(field: &str, p: impl Into<String>) -> FormSchemaError {
    FormSchemaError {
        field: Some(field.to_owned()),
        problem: p.into(),
    }
}

impl ElicitationSchema {
    /// Reads a form schema from JSON, naming the first field that is not allowed.
    pub fn from_value(value: &Value) -> Result<Self, FormSchemaError> {
        let top = |p: &str| FormSchemaError {
            field: None,
            problem: p.to_owned(),
        };
        let obj = value
            .as_object()
            .ok_or_else(|| top("must be a JSON object"))?;
        let props = obj
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.iter().map(|(k, v)| (k.clone(), v.clone())).collect());
        Self::from_parts(obj, props)
    }

    /// Reads a form schema from its top-level members and its properties in display order.
    fn from_parts(
        obj: &Map<String, Value>,
        props: Option<IndexMap<String, Value>>,
    ) -> Result<Self, FormSchemaError> {
        let top = |p: &str| FormSchemaError {
            field: None,
            problem: p.to_owned(),
        };
        if obj.get("type").and_then(Value::as_str) != Some("object") {
            return Err(top("`type` must be \"object\""));
        }
        let props = props.ok_or_else(|| top("`properties` must be an object"))?;
        let mut properties = IndexMap::with_capacity(props.len());
        for (name, field) in &props {
            properties.insert(name.clone(), PrimitiveSchema::from_value(name, field)?);
        }
        let required = match obj.get("required") {
            None => None,
            Some(Value::Array(items)) => Some(
                items
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(|| top("`required` must be an array of strings"))?,
            ),
            Some(_) => return Err(top("`required` must be an array of strings")),
        };
        if let Some(missing) = required
            .iter()
            .flatten()
            .find(|r| !properties.contains_key(r.as_str()))
        {
            return Err(problem(
                missing,
                "listed in `required` but not defined in `properties`",
            ));
        }
        let dialect = obj
            .get("$schema")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok(Self {
            dialect,
            properties,
            required,
        })
    }

    /// The schema as JSON (field order is kept on the wire by `Serialize`;
    /// a `Value` object orders keys its own way).
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Whether `field` must be filled in.
    pub fn is_required(&self, field: &str) -> bool {
        self.required.iter().flatten().any(|r| r == field)
    }
}

fn opt_str(
    obj: &Map<String, Value>,
    key: &str,
    field: &str,
) -> Result<Option<String>, FormSchemaError> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(problem(field, format!("`{key}` must be a string"))),
    }
}

fn opt_u64(
    obj: &Map<String, Value>,
    key: &str,
    field: &str,
) -> Result<Option<u64>, FormSchemaError> {
    match obj.get(key) {
        None => Ok(None),
        Some(v) => v
            .as_u64()
            .map(Some)
            .ok_or_else(|| problem(field, format!("`{key}` must be a non-negative integer"))),
    }
}

fn opt_number(
    obj: &Map<String, Value>,
    key: &str,
    field: &str,
) -> Result<Option<Number>, FormSchemaError> {
    match obj.get(key) {
        None => Ok(None),
        Some(Value::Number(n)) => Ok(Some(n.clone())),
        Some(_) => Err(problem(field, format!("`{key}` must be a number"))),
    }
}

fn string_list(v: &Value, what: &str, field: &str) -> Result<Vec<String>, FormSchemaError> {
    v.as_array()
        .and_then(|items| {
            items
                .iter()
                .map(|i| i.as_str().map(str::to_owned))
                .collect()
        })
        .ok_or_else(|| problem(field, format!("`{what}` must be an array of strings")))
}

fn titled_list(v: &Value, what: &str, field: &str) -> Result<Vec<EnumOption>, FormSchemaError> {
    let err = || {
        problem(
            field,
            format!("`{what}` must be an array of {{\"const\", \"title\"}} objects"),
        )
    };
    v.as_array()
        .ok_or_else(err)?
        .iter()
        .map(|o| {
            let value = o.get("const").and_then(Value::as_str).ok_or_else(err)?;
            let title = o.get("title").and_then(Value::as_str).ok_or_else(err)?;
            Ok(EnumOption {
                value: value.to_owned(),
                title: title.to_owned(),
            })
        })
        .collect()
}

impl PrimitiveSchema {
    /// Reads one form field, naming it in any error.
    pub fn from_value(field: &str, value: &Value) -> Result<Self, FormSchemaError> {
        let obj = value
            .as_object()
            .ok_or_else(|| problem(field, "must be a JSON object"))?;
        let title = opt_str(obj, "title", field)?;
        let description = opt_str(obj, "description", field)?;
        let ty = obj.get("type").and_then(Value::as_str);
        match ty {
            Some("string") => {
                if let Some(choices) = obj.get("oneOf") {
                    return Ok(Self::SingleSelect(SingleSelectSchema {
                        title,
                        description,
                        options: EnumOptions::Titled(titled_list(choices, "oneOf", field)?),
                        legacy_names: false,
                        default: opt_str(obj, "default", field)?,
                    }));
                }
                if let Some(values) = obj.get("enum") {
                    let values = string_list(values, "enum", field)?;
                    let (options, legacy_names) = match obj.get("enumNames") {
                        None => (EnumOptions::Untitled(values), false),
                        Some(names) => {
                            let names = string_list(names, "enumNames", field)?;
                            if names.len() != values.len() {
                                return Err(problem(
                                    field,
                                    "`enumNames` must have one name per `enum` value",
                                ));
                            }
                            let titled = values
                                .into_iter()
                                .zip(names)
                                .map(|(value, title)| EnumOption { value, title })
                                .collect();
                            (EnumOptions::Titled(titled), true)
                        }
                    };
                    return Ok(Self::SingleSelect(SingleSelectSchema {
                        title,
                        description,
                        options,
                        legacy_names,
                        default: opt_str(obj, "default", field)?,
                    }));
                }
                let format = match obj.get("format") {
                    None => None,
                    Some(Value::String(f)) => Some(StringFormat::parse(f).ok_or_else(|| {
                        problem(
                            field,
                            format!(
                                "format {f:?} is not allowed; use email, uri, date or date-time"
                            ),
                        )
                    })?),
                    Some(_) => return Err(problem(field, "`format` must be a string")),
                };
                Ok(Self::String(StringSchema {
                    title,
                    description,
                    min_length: opt_u64(obj, "minLength", field)?,
                    max_length: opt_u64(obj, "maxLength", field)?,
                    format,
                    default: opt_str(obj, "default", field)?,
                }))
            }
            Some(t @ ("number" | "integer")) => Ok(Self::Number(NumberSchema {
                integer: t == "integer",
                title,
                description,
                minimum: opt_number(obj, "minimum", field)?,
                maximum: opt_number(obj, "maximum", field)?,
                default: opt_number(obj, "default", field)?,
            })),
            Some("boolean") => Ok(Self::Boolean(BooleanSchema {
                title,
                description,
                default: match obj.get("default") {
                    None => None,
                    Some(Value::Bool(b)) => Some(*b),
                    Some(_) => return Err(problem(field, "`default` must be a boolean")),
                },
            })),
            Some("array") => {
                let items = obj.get("items").and_then(Value::as_object).ok_or_else(|| {
                    problem(
                        field,
                        "an array field needs `items` with `enum` or `anyOf` choices",
                    )
                })?;
                let options = if let Some(choices) = items.get("anyOf") {
                    EnumOptions::Titled(titled_list(choices, "items.anyOf", field)?)
                } else if let Some(values) = items.get("enum") {
                    EnumOptions::Untitled(string_list(values, "items.enum", field)?)
                } else {
                    return Err(problem(
                        field,
                        "arrays are allowed only as multi-select enums (`items` with `enum` or `anyOf`)",
                    ));
                };
                let default = match obj.get("default") {
                    None => None,
                    Some(d) => Some(string_list(d, "default", field)?),
                };
                Ok(Self::MultiSelect(MultiSelectSchema {
                    title,
                    description,
                    options,
                    min_items: opt_u64(obj, "minItems", field)?,
                    max_items: opt_u64(obj, "maxItems", field)?,
                    default,
                }))
            }
            Some("object") => Err(problem(
                field,
                "nested objects are not allowed; elicitation forms take only string, number, integer, boolean and enum fields",
            )),
            Some(other) => Err(problem(
                field,
                format!("type {other:?} is not allowed in an elicitation form"),
            )),
            None => Err(problem(field, "`type` is missing")),
        }
    }

    /// The field as JSON.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// Writes the field's members, in wire order, without building JSON values.
    fn write<M: SerializeMap>(&self, map: &mut M) -> Result<(), M::Error> {
        let (title, description) = match self {
            Self::String(s) => (&s.title, &s.description),
            Self::Number(s) => (&s.title, &s.description),
            Self::Boolean(s) => (&s.title, &s.description),
            Self::SingleSelect(s) => (&s.title, &s.description),
            Self::MultiSelect(s) => (&s.title, &s.description),
        };
        let ty = match self {
            Self::String(_) | Self::SingleSelect(_) => "string",
            Self::Number(n) if n.integer => "integer",
            Self::Number(_) => "number",
            Self::Boolean(_) => "boolean",
            Self::MultiSelect(_) => "array",
        };
        map.serialize_entry("type", ty)?;
        if let Some(t) = title {
            map.serialize_entry("title", t)?;
        }
        if let Some(d) = description {
            map.serialize_entry("description", d)?;
        }
        match self {
            Self::String(s) => {
                if let Some(v) = s.min_length {
                    map.serialize_entry("minLength", &v)?;
                }
                if let Some(v) = s.max_length {
                    map.serialize_entry("maxLength", &v)?;
                }
                if let Some(f) = s.format {
                    map.serialize_entry("format", f.as_str())?;
                }
                if let Some(d) = &s.default {
                    map.serialize_entry("default", d)?;
                }
            }
            Self::Number(n) => {
                if let Some(v) = &n.minimum {
                    map.serialize_entry("minimum", v)?;
                }
                if let Some(v) = &n.maximum {
                    map.serialize_entry("maximum", v)?;
                }
                if let Some(d) = &n.default {
                    map.serialize_entry("default", d)?;
                }
            }
            Self::Boolean(b) => {
                if let Some(d) = b.default {
                    map.serialize_entry("default", &d)?;
                }
            }
            Self::SingleSelect(s) => {
                match (&s.options, s.legacy_names) {
                    (EnumOptions::Untitled(v), _) => map.serialize_entry("enum", v)?,
                    (EnumOptions::Titled(v), true) => {
                        map.serialize_entry(
                            "enum",
                            &v.iter().map(|o| &o.value).collect::<Vec<_>>(),
                        )?;
                        map.serialize_entry(
                            "enumNames",
                            &v.iter().map(|o| &o.title).collect::<Vec<_>>(),
                        )?;
                    }
                    (EnumOptions::Titled(v), false) => map.serialize_entry("oneOf", &Choices(v))?,
                }
                if let Some(d) = &s.default {
                    map.serialize_entry("default", d)?;
                }
            }
            Self::MultiSelect(m) => {
                if let Some(v) = m.min_items {
                    map.serialize_entry("minItems", &v)?;
                }
                if let Some(v) = m.max_items {
                    map.serialize_entry("maxItems", &v)?;
                }
                map.serialize_entry("items", &Items(&m.options))?;
                if let Some(d) = &m.default {
                    map.serialize_entry("default", d)?;
                }
            }
        }
        Ok(())
    }

    /// The label to show: the title, else `None`.
    pub fn title(&self) -> Option<&str> {
        match self {
            Self::String(s) => s.title.as_deref(),
            Self::Number(s) => s.title.as_deref(),
            Self::Boolean(s) => s.title.as_deref(),
            Self::SingleSelect(s) => s.title.as_deref(),
            Self::MultiSelect(s) => s.title.as_deref(),
        }
    }

    /// The help text, if any.
    pub fn description(&self) -> Option<&str> {
        match self {
            Self::String(s) => s.description.as_deref(),
            Self::Number(s) => s.description.as_deref(),
            Self::Boolean(s) => s.description.as_deref(),
            Self::SingleSelect(s) => s.description.as_deref(),
            Self::MultiSelect(s) => s.description.as_deref(),
        }
    }
}

impl Serialize for ElicitationSchema {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        struct Properties<'a>(&'a IndexMap<String, PrimitiveSchema>);
        impl Serialize for Properties<'_> {
            fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                let mut map = s.serialize_map(Some(self.0.len()))?;
                for (name, field) in self.0 {
                    map.serialize_entry(name, field)?;
                }
                map.end()
            }
        }
        let mut map = s.serialize_map(None)?;
        if let Some(d) = &self.dialect {
            map.serialize_entry("$schema", d)?;
        }
        map.serialize_entry("type", "object")?;
        map.serialize_entry("properties", &Properties(&self.properties))?;
        if let Some(r) = &self.required {
            map.serialize_entry("required", r)?;
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for ElicitationSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        // `properties` is read in document order, one small value per field.
        #[derive(Deserialize)]
        struct Wire {
            #[serde(rename = "$schema", default)]
            dialect: Option<Value>,
            #[serde(rename = "type", default)]
            ty: Option<Value>,
            #[serde(default)]
            properties: Option<IndexMap<String, Value>>,
            #[serde(default)]
            required: Option<Value>,
        }
        let wire = Wire::deserialize(d)?;
        let mut top = Map::new();
        if let Some(v) = wire.dialect {
            top.insert("$schema".into(), v);
        }
        if let Some(v) = wire.ty {
            top.insert("type".into(), v);
        }
        if let Some(v) = wire.required {
            top.insert("required".into(), v);
        }
        Self::from_parts(&top, wire.properties).map_err(de::Error::custom)
    }
}

impl Serialize for PrimitiveSchema {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        self.write(&mut map)?;
        map.end()
    }
}

/// Titled choices as `[{"const": value, "title": label}, ...]`.
struct Choices<'a>(&'a [EnumOption]);

impl Serialize for Choices<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let mut seq = s.serialize_seq(Some(self.0.len()))?;
        for o in self.0 {
            seq.serialize_element(&ChoiceOut {
                value: &o.value,
                title: &o.title,
            })?;
        }
        seq.end()
    }
}

#[derive(Serialize)]
struct ChoiceOut<'a> {
    #[serde(rename = "const")]
    value: &'a str,
    title: &'a str,
}

/// The `items` of a multi-select.
struct Items<'a>(&'a EnumOptions);

impl Serialize for Items<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        match self.0 {
            EnumOptions::Untitled(v) => {
                map.serialize_entry("type", "string")?;
                map.serialize_entry("enum", v)?;
            }
            EnumOptions::Titled(v) => map.serialize_entry("anyOf", &Choices(v))?,
        }
        map.end()
    }
}

impl<'de> Deserialize<'de> for PrimitiveSchema {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Self::from_value("(field)", &Value::deserialize(d)?).map_err(de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_object_is_rejected_naming_the_field() {
        let err = ElicitationSchema::from_value(&json!({
            "type": "object",
            "properties": {"address": {"type": "object", "properties": {}}}
        }))
        .unwrap_err();
        assert_eq!(err.field.as_deref(), Some("address"));
        assert!(
            err.to_string().contains("nested objects are not allowed"),
            "{err}"
        );
    }

    #[test]
    fn arrays_of_non_enums_are_rejected() {
        let err = ElicitationSchema::from_value(&json!({
            "type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}}}
        }))
        .unwrap_err();
        assert!(err.to_string().contains("`tags`"), "{err}");
    }

    #[test]
    fn unknown_format_and_required_without_property_are_rejected() {
        let err = ElicitationSchema::from_value(&json!({
            "type": "object",
            "properties": {"p": {"type": "string", "format": "ipv4"}}
        }))
        .unwrap_err();
        assert!(err.to_string().contains("ipv4"), "{err}");
        let err = ElicitationSchema::from_value(&json!({
            "type": "object", "properties": {}, "required": ["ghost"]
        }))
        .unwrap_err();
        assert!(err.to_string().contains("`ghost`"), "{err}");
    }

    #[test]
    fn field_order_survives_parsing_and_serialising() {
        let text = r#"{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"boolean"},"mid":{"type":"number"}},"required":["zeta"]}"#;
        let schema: ElicitationSchema = serde_json::from_str(text).unwrap();
        assert_eq!(
            schema.properties.keys().collect::<Vec<_>>(),
            ["zeta", "alpha", "mid"]
        );
        assert_eq!(serde_json::to_string(&schema).unwrap(), text);
    }

    #[test]
    fn every_field_kind_round_trips() {
        let v = json!({
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "minLength": 1, "maxLength": 9, "format": "email", "default": "a@b.c"},
                "n": {"type": "integer", "minimum": 1, "maximum": 10, "default": 5},
                "x": {"type": "number", "minimum": 0.5},
                "ok": {"type": "boolean", "default": true},
                "c1": {"type": "string", "enum": ["r", "g"]},
                "c2": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}]},
                "c3": {"type": "string", "enum": ["r"], "enumNames": ["Red"]},
                "m1": {"type": "array", "items": {"type": "string", "enum": ["a"]}, "minItems": 1},
                "m2": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}, "default": ["a"]}
            },
            "required": ["name"]
        });
        let schema = ElicitationSchema::from_value(&v).unwrap();
        assert_eq!(schema.to_value(), v);
    }
}

//! What checking an answer to a form needs, in the ticket's compact shape.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Number;
use tessera_protocol::{
    BooleanSchema, ElicitationSchema, EnumOptions, MultiSelectSchema, NumberSchema,
    PrimitiveSchema, SingleSelectSchema, StringFormat, StringSchema,
};

/// What checking an answer to a form needs, in the ticket's compact shape:
/// field kinds, bounds, formats, choices and which fields are required.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub(crate) struct FormCheck {
    #[serde(rename = "p")]
    fields: Vec<(String, FieldCheck)>,
    #[serde(rename = "r", default, skip_serializing_if = "Vec::is_empty")]
    required: Vec<String>,
}

/// One field's checks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
enum FieldCheck {
    #[serde(rename = "s")]
    Text {
        #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
        min: Option<u64>,
        #[serde(rename = "x", default, skip_serializing_if = "Option::is_none")]
        max: Option<u64>,
        #[serde(rename = "f", default, skip_serializing_if = "Option::is_none")]
        format: Option<String>,
    },
    #[serde(rename = "n")]
    Number {
        #[serde(rename = "i", default)]
        integer: bool,
        #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
        min: Option<Number>,
        #[serde(rename = "x", default, skip_serializing_if = "Option::is_none")]
        max: Option<Number>,
    },
    #[serde(rename = "b")]
    Boolean,
    #[serde(rename = "e")]
    OneOf(Vec<String>),
    #[serde(rename = "m")]
    AnyOf {
        #[serde(rename = "o")]
        options: Vec<String>,
        #[serde(rename = "n", default, skip_serializing_if = "Option::is_none")]
        min: Option<u64>,
        #[serde(rename = "x", default, skip_serializing_if = "Option::is_none")]
        max: Option<u64>,
    },
}

fn values(options: &EnumOptions) -> Vec<String> {
    options
        .pairs()
        .into_iter()
        .map(|(v, _)| v.to_owned())
        .collect()
}

impl FormCheck {
    /// The checks of `schema`.
    pub(crate) fn of(schema: &ElicitationSchema) -> Self {
        let fields = schema
            .properties
            .iter()
            .map(|(name, field)| {
                let check = match field {
                    PrimitiveSchema::String(s) => FieldCheck::Text {
                        min: s.min_length,
                        max: s.max_length,
                        format: s.format.map(|f| f.as_str().to_owned()),
                    },
                    PrimitiveSchema::Number(n) => FieldCheck::Number {
                        integer: n.integer,
                        min: n.minimum.clone(),
                        max: n.maximum.clone(),
                    },
                    PrimitiveSchema::Boolean(_) => FieldCheck::Boolean,
                    PrimitiveSchema::SingleSelect(s) => FieldCheck::OneOf(values(&s.options)),
                    PrimitiveSchema::MultiSelect(m) => FieldCheck::AnyOf {
                        options: values(&m.options),
                        min: m.min_items,
                        max: m.max_items,
                    },
                };
                (name.clone(), check)
            })
            .collect();
        Self {
            fields,
            required: schema.required.clone().unwrap_or_default(),
        }
    }

    /// The form schema these checks come from (without titles and descriptions).
    pub(crate) fn to_schema(&self) -> ElicitationSchema {
        let properties = self
            .fields
            .iter()
            .map(|(name, check)| {
                let field = match check {
                    FieldCheck::Text { min, max, format } => {
                        PrimitiveSchema::String(StringSchema {
                            min_length: *min,
                            max_length: *max,
                            format: format.as_deref().and_then(StringFormat::parse),
                            ..StringSchema::default()
                        })
                    }
                    FieldCheck::Number { integer, min, max } => {
                        PrimitiveSchema::Number(NumberSchema {
                            integer: *integer,
                            minimum: min.clone(),
                            maximum: max.clone(),
                            ..NumberSchema::default()
                        })
                    }
                    FieldCheck::Boolean => PrimitiveSchema::Boolean(BooleanSchema::default()),
                    FieldCheck::OneOf(options) => {
                        PrimitiveSchema::SingleSelect(SingleSelectSchema {
                            title: None,
                            description: None,
                            options: EnumOptions::Untitled(options.clone()),
                            legacy_names: false,
                            default: None,
                        })
                    }
                    FieldCheck::AnyOf { options, min, max } => {
                        PrimitiveSchema::MultiSelect(MultiSelectSchema {
                            title: None,
                            description: None,
                            options: EnumOptions::Untitled(options.clone()),
                            min_items: *min,
                            max_items: *max,
                            default: None,
                        })
                    }
                };
                (name.clone(), field)
            })
            .collect::<IndexMap<_, _>>();
        ElicitationSchema {
            dialect: None,
            properties,
            required: (!self.required.is_empty()).then(|| self.required.clone()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn checks_survive_the_ticket_and_check_the_same() {
        let full = ElicitationSchema::from_value(&json!({
            "type": "object",
            "properties": {
                "n": {"type": "integer", "title": "N", "minimum": 1, "maximum": 9},
                "s": {"type": "string", "format": "email", "minLength": 3},
                "b": {"type": "boolean"},
                "c": {"type": "string", "oneOf": [{"const": "r", "title": "Red"}]},
                "m": {"type": "array", "items": {"enum": ["a", "b"]}, "maxItems": 1}
            },
            "required": ["n"]
        }))
        .unwrap();
        let check = FormCheck::of(&full);
        let back: FormCheck =
            serde_json::from_str(&serde_json::to_string(&check).unwrap()).unwrap();
        assert_eq!(back, check);
        let schema = back.to_schema();
        for content in [
            json!({"n": 2, "s": "a@b.co", "b": true, "c": "r", "m": ["a"]}),
            json!({"n": 0}),
            json!({"n": 1, "s": "nope"}),
            json!({"n": 1, "c": "x"}),
            json!({"n": 1, "m": ["a", "b"]}),
            json!({"s": "a@b.co"}),
        ] {
            let c = content.as_object().unwrap();
            assert_eq!(
                full.check_content(c).is_ok(),
                schema.check_content(c).is_ok(),
                "{content}"
            );
        }
    }
}

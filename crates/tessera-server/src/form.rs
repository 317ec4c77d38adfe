//! Building elicitation forms that can only be what the spec allows.

use indexmap::IndexMap;
use tessera_protocol::{
    BooleanSchema, ElicitationSchema, EnumOption, EnumOptions, FormSchemaError, MultiSelectSchema,
    NumberSchema, PrimitiveSchema, SingleSelectSchema, StringFormat, StringSchema,
};

/// A form to show the user: a message and a flat list of primitive fields.
///
/// ```
/// use tessera_server::{ElicitForm, FormField};
/// let form = ElicitForm::new("By how much should the counter increase?")
///     .required("amount", FormField::number().title("Amount"));
/// assert!(form.schema().is_required("amount"));
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ElicitForm {
    pub(crate) message: String,
    pub(crate) schema: ElicitationSchema,
}

impl ElicitForm {
    /// An empty form with the message shown to the user.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            schema: ElicitationSchema {
                dialect: None,
                properties: IndexMap::new(),
                required: None,
            },
        }
    }

    /// Adds an optional field (replacing one of the same name).
    pub fn field(mut self, name: impl Into<String>, field: FormField) -> Self {
        self.schema.properties.insert(name.into(), field.0);
        self
    }

    /// Adds a field the user must fill in.
    pub fn required(mut self, name: impl Into<String>, field: FormField) -> Self {
        let name = name.into();
        let required = self.schema.required.get_or_insert_with(Vec::new);
        if !required.contains(&name) {
            required.push(name.clone());
        }
        self.schema.properties.insert(name, field.0);
        self
    }

    /// A form whose fields come from a Rust type's JSON Schema (`schemars`).
    ///
    /// Fails, naming the field, when the type has nested objects, arrays of
    /// non-enums or anything else a form cannot show.
    pub fn from_type<T: schemars::JsonSchema>(
        message: impl Into<String>,
    ) -> Result<Self, FormSchemaError> {
        let schema = crate::schema::form_schema_of::<T>()?;
        Ok(Self {
            message: message.into(),
            schema,
        })
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The form's schema.
    pub fn schema(&self) -> &ElicitationSchema {
        &self.schema
    }
}

/// One field of an [`ElicitForm`].
#[derive(Debug, Clone, PartialEq)]
pub struct FormField(PrimitiveSchema);

impl FormField {
    /// A text field.
    pub fn string() -> Self {
        Self(PrimitiveSchema::String(StringSchema::default()))
    }

    /// A text field that must have `format`.
    pub fn formatted(format: StringFormat) -> Self {
        Self(PrimitiveSchema::String(StringSchema {
            format: Some(format),
            ..StringSchema::default()
        }))
    }

    /// A number field.
    pub fn number() -> Self {
        Self(PrimitiveSchema::Number(NumberSchema::default()))
    }

    /// An integer field.
    pub fn integer() -> Self {
        Self(PrimitiveSchema::Number(NumberSchema {
            integer: true,
            ..NumberSchema::default()
        }))
    }

    /// A yes/no field.
    pub fn boolean() -> Self {
        Self(PrimitiveSchema::Boolean(BooleanSchema::default()))
    }

    /// Pick one of `values` (shown as they are).
    pub fn select<I: IntoIterator<Item = S>, S: Into<String>>(values: I) -> Self {
        Self(PrimitiveSchema::SingleSelect(SingleSelectSchema {
            title: None,
            description: None,
            options: EnumOptions::Untitled(values.into_iter().map(Into::into).collect()),
            legacy_names: false,
            default: None,
        }))
    }

    /// Pick one of `(value, label)` pairs.
    pub fn select_titled<I: IntoIterator<Item = (V, L)>, V: Into<String>, L: Into<String>>(
        options: I,
    ) -> Self {
        Self(PrimitiveSchema::SingleSelect(SingleSelectSchema {
            title: None,
            description: None,
            options: titled(options),
            legacy_names: false,
            default: None,
        }))
    }

    /// Pick any of `values`.
    pub fn multi_select<I: IntoIterator<Item = S>, S: Into<String>>(values: I) -> Self {
        Self(PrimitiveSchema::MultiSelect(MultiSelectSchema {
            title: None,
            description: None,
            options: EnumOptions::Untitled(values.into_iter().map(Into::into).collect()),
            min_items: None,
            max_items: None,
            default: None,
        }))
    }

    /// Pick any of `(value, label)` pairs.
    pub fn multi_select_titled<I: IntoIterator<Item = (V, L)>, V: Into<String>, L: Into<String>>(
        options: I,
    ) -> Self {
        Self(PrimitiveSchema::MultiSelect(MultiSelectSchema {
            title: None,
            description: None,
            options: titled(options),
            min_items: None,
            max_items: None,
            default: None,
        }))
    }

    /// Sets the label.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        let t = Some(title.into());
        match &mut self.0 {
            PrimitiveSchema::String(s) => s.title = t,
            PrimitiveSchema::Number(s) => s.title = t,
            PrimitiveSchema::Boolean(s) => s.title = t,
            PrimitiveSchema::SingleSelect(s) => s.title = t,
            PrimitiveSchema::MultiSelect(s) => s.title = t,
        }
        self
    }

    /// Sets the help text.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        let d = Some(description.into());
        match &mut self.0 {
            PrimitiveSchema::String(s) => s.description = d,
            PrimitiveSchema::Number(s) => s.description = d,
            PrimitiveSchema::Boolean(s) => s.description = d,
            PrimitiveSchema::SingleSelect(s) => s.description = d,
            PrimitiveSchema::MultiSelect(s) => s.description = d,
        }
        self
    }

    /// Bounds a text field's length in characters.
    pub fn length(mut self, min: Option<u64>, max: Option<u64>) -> Self {
        if let PrimitiveSchema::String(s) = &mut self.0 {
            s.min_length = min;
            s.max_length = max;
        }
        self
    }

    /// Bounds a number field (no effect on other kinds).
    pub fn range(mut self, min: Option<f64>, max: Option<f64>) -> Self {
        if let PrimitiveSchema::Number(n) = &mut self.0 {
            n.minimum = min.map(tessera_protocol::json_number);
            n.maximum = max.map(tessera_protocol::json_number);
        }
        self
    }

    /// Bounds how many choices a multi-select takes.
    pub fn items(mut self, min: Option<u64>, max: Option<u64>) -> Self {
        if let PrimitiveSchema::MultiSelect(m) = &mut self.0 {
            m.min_items = min;
            m.max_items = max;
        }
        self
    }

    /// Pre-fills a text or single-select field.
    pub fn default_text(mut self, value: impl Into<String>) -> Self {
        match &mut self.0 {
            PrimitiveSchema::String(s) => s.default = Some(value.into()),
            PrimitiveSchema::SingleSelect(s) => s.default = Some(value.into()),
            _ => {}
        }
        self
    }

    /// Pre-fills a number field.
    pub fn default_number(mut self, value: f64) -> Self {
        if let PrimitiveSchema::Number(n) = &mut self.0 {
            n.default = Some(tessera_protocol::json_number(value));
        }
        self
    }

    /// Pre-fills a boolean field.
    pub fn default_bool(mut self, value: bool) -> Self {
        if let PrimitiveSchema::Boolean(b) = &mut self.0 {
            b.default = Some(value);
        }
        self
    }

    /// Pre-selects choices of a multi-select.
    pub fn default_choices<I: IntoIterator<Item = S>, S: Into<String>>(
        mut self,
        values: I,
    ) -> Self {
        if let PrimitiveSchema::MultiSelect(m) = &mut self.0 {
            m.default = Some(values.into_iter().map(Into::into).collect());
        }
        self
    }
}

fn titled<I: IntoIterator<Item = (V, L)>, V: Into<String>, L: Into<String>>(
    options: I,
) -> EnumOptions {
    EnumOptions::Titled(
        options
            .into_iter()
            .map(|(v, l)| EnumOption {
                value: v.into(),
                title: l.into(),
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn builder_produces_the_counter_form() {
        let form = ElicitForm::new("By how much should the counter increase?").required(
            "amount",
            FormField::number()
                .title("Amount")
                .description("The amount to add to the current value"),
        );
        assert_eq!(
            form.schema().to_value(),
            json!({
                "type": "object",
                "properties": {"amount": {"type": "number", "title": "Amount", "description": "The amount to add to the current value"}},
                "required": ["amount"]
            })
        );
    }

    #[test]
    fn every_builder_output_reparses() {
        let form = ElicitForm::new("m")
            .field(
                "s",
                FormField::formatted(StringFormat::Email)
                    .length(Some(3), Some(50))
                    .default_text("a@b.c"),
            )
            .field(
                "i",
                FormField::integer()
                    .range(Some(1.0), Some(9.0))
                    .default_number(3.0),
            )
            .field("b", FormField::boolean().default_bool(true))
            .field("e", FormField::select(["a", "b"]).default_text("a"))
            .field("t", FormField::select_titled([("r", "Red")]))
            .field(
                "m",
                FormField::multi_select(["x", "y"])
                    .items(Some(1), None)
                    .default_choices(["x"]),
            )
            .field("mt", FormField::multi_select_titled([("x", "X")]));
        let v = form.schema().to_value();
        assert_eq!(ElicitationSchema::from_value(&v).unwrap().to_value(), v);
        assert_eq!(v["properties"]["i"]["default"], json!(3));
    }
}

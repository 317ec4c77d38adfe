//! Forms: a question declared once, as a Rust type.
//!
//! A [`Form`] is a flat struct: its fields are the form's fields, its doc
//! comments and `schemars` attributes their titles and descriptions, its
//! `serde` derive the parsing, and [`Form::KEY`] the input request's key. The
//! restricted schema the client shows is derived from the type once and
//! cached; the compact [`FormCheck`] travels in the ticket so the answer can
//! be checked against exactly what was asked.

mod check;
mod derive;

use std::any::TypeId;
use std::collections::HashMap;
use std::sync::{Arc, OnceLock, RwLock};

use serde::de::DeserializeOwned;
use tessera_protocol::{ElicitationSchema, FormSchemaError};

pub(crate) use check::FormCheck;

/// A question the user answers with a form, declared once as a flat Rust type.
///
/// With the `macros` feature of the `tessera` crate, `#[tessera::form]`
/// implements it (and the serde and schemars derives it needs); by hand it is
/// one constant:
///
/// ```
/// use tessera_server::Form;
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Amount {
///     /// The amount to add to the current value
///     #[schemars(title = "Amount")]
///     amount: f64,
/// }
///
/// impl Form for Amount {
///     const KEY: &'static str = "amount";
/// }
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a form: a question is asked with a `#[tessera::form]` struct",
    label = "`ctx.ask` takes a form (a struct whose fields are the questions)",
    note = "a `#[tessera::form]` enum is a choice: make it a field of a form struct, e.g. `#[tessera::form] struct Confirm {{ answer: {Self} }}`"
)]
pub trait Form: DeserializeOwned + schemars::JsonSchema + Send + 'static {
    /// The key of the input request (and of its answer in `inputResponses`).
    const KEY: &'static str;
}

/// A type a form field can hold: text, numbers, yes/no, a [`FormChoice`], a
/// `Vec` of choices (a multi-select), and `Option`s of them.
///
/// `#[tessera::form]` requires it of every field, so a nested struct is
/// refused when the program is compiled, not when a user first meets the form.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot be a form field",
    label = "a form shows only flat fields",
    note = "use String, a number type, bool, a #[tessera::form] enum, a Vec of one, or an Option of these"
)]
pub trait FormValue {}

/// An enum of unit variants a form shows as a list to pick from; `#[tessera::form]`
/// on an enum implements it (with `#[schemars(inline)]`, so the field's schema
/// lists the values in place).
pub trait FormChoice: FormValue {}

macro_rules! form_values {
    ($($t:ty),*) => {$(impl FormValue for $t {})*};
}
form_values!(
    String, bool, f32, f64, i8, i16, i32, i64, isize, u8, u16, u32, u64, usize
);
impl<T: FormValue> FormValue for Option<T> {}
impl<T: FormChoice> FormValue for Vec<T> {}

/// A form as it is asked: the message shown and the schema of its fields.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct AskedForm {
    pub(crate) message: String,
    pub(crate) schema: Arc<ElicitationSchema>,
}

type SchemaCache = RwLock<HashMap<TypeId, Result<Arc<ElicitationSchema>, FormSchemaError>>>;

/// The schema of `T`'s form, derived once per type and shared afterwards.
pub(crate) fn schema_of<T: Form>() -> Result<Arc<ElicitationSchema>, FormSchemaError> {
    static CACHE: OnceLock<SchemaCache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let id = TypeId::of::<T>();
    if let Some(found) = cache.read().ok().and_then(|c| c.get(&id).cloned()) {
        return found;
    }
    let derived = derive::form_schema_of::<T>()
        .map(Arc::new)
        .map_err(|e| FormSchemaError {
            problem: format!("{} ({})", e.problem, std::any::type_name::<T>()),
            ..e
        });
    if let Ok(mut c) = cache.write() {
        c.insert(id, derived.clone());
    }
    derived
}

#[cfg(test)]
mod tests {
    use super::*;

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Amount {
        /// The amount to add to the current value
        #[schemars(title = "Amount")]
        amount: f64,
    }
    impl Form for Amount {
        const KEY: &'static str = "amount";
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        x: i32,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        inner: Inner,
    }
    impl Form for Nested {
        const KEY: &'static str = "nested";
    }

    #[test]
    fn the_schema_is_derived_once_and_matches_the_counter_form() {
        let a = schema_of::<Amount>().unwrap();
        let b = schema_of::<Amount>().unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(
            a.to_value(),
            serde_json::json!({
                "type": "object",
                "properties": {"amount": {"type": "number", "title": "Amount", "description": "The amount to add to the current value"}},
                "required": ["amount"]
            })
        );
    }

    #[test]
    fn a_nested_form_names_its_field_and_type() {
        let e = schema_of::<Nested>().unwrap_err();
        assert_eq!(e.field.as_deref(), Some("inner"));
        assert!(e.problem.contains("Nested"), "{}", e.problem);
    }
}

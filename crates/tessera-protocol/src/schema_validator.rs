//! JSON Schema validation of tool inputs and structured outputs, through the
//! `jsonschema` crate: 2020-12 by default, the draft named by `$schema` when
//! there is one (the spec's tools page: "Defaults to 2020-12 if no `$schema`
//! field is present"; draft-07 spellings such as `definitions` and array
//! `items` keep working under their `$schema`).
//!
//! Two choices are Tessera's own. `pattern` runs on the `regex` engine, whose
//! matching is linear in the input, so a tool's pattern cannot be turned into
//! a denial of service by a crafted argument (nor a hostile server's pattern
//! by a client's own data). And references are resolved inside the document
//! only: a schema that points elsewhere is refused when it is compiled, never
//! fetched.

use std::fmt;
use std::sync::Arc;

use serde_json::Value;

use crate::JsonObject;

/// A compiled JSON Schema: [`SchemaValidator::check`] says whether a value satisfies it.
///
/// ```
/// use tessera_protocol::SchemaValidator;
///
/// let schema = serde_json::json!({
///     "type": "object",
///     "properties": { "total": { "type": "number", "minimum": 0 } },
///     "required": ["total"]
/// });
/// let validator = SchemaValidator::new(schema.as_object().unwrap()).unwrap();
/// assert!(validator.check(&serde_json::json!({ "total": 3 })).is_ok());
/// let problem = validator.check(&serde_json::json!({ "total": -1 })).unwrap_err();
/// assert_eq!((problem.path.as_str(), problem.keyword.as_str()), ("/total", "minimum"));
/// assert_eq!(problem.to_string(), "/total: -1 is less than the minimum of 0");
/// ```
#[derive(Clone)]
pub struct SchemaValidator {
    schema: Arc<Value>,
    validator: Arc<jsonschema::Validator>,
}

impl fmt::Debug for SchemaValidator {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SchemaValidator")
            .field("schema", &self.schema)
            .finish_non_exhaustive()
    }
}

/// Why a schema cannot be used (found when it is compiled).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnusableSchema {
    /// Where in the schema (a JSON Pointer; empty for the root).
    pub at: String,
    /// What is wrong with it.
    pub problem: String,
}

impl fmt::Display for UnusableSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.at.as_str() {
            "" => f.write_str(&self.problem),
            at => write!(f, "{} (at {at})", self.problem),
        }
    }
}

impl std::error::Error for UnusableSchema {}

/// Where a value fails its schema, and which rule it breaks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaMismatch {
    /// The failing part of the value, as a JSON Pointer (`""` is the whole
    /// value; for a missing required member, where it should be).
    pub path: String,
    /// The schema keyword it breaks (`minimum`, `pattern`, `required`, ...).
    pub keyword: String,
    /// What the schema wanted there, in words.
    pub problem: String,
}

impl fmt::Display for SchemaMismatch {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = if self.path.is_empty() {
            "(the whole value)"
        } else {
            &self.path
        };
        write!(f, "{path}: {}", self.problem)
    }
}

impl std::error::Error for SchemaMismatch {}

impl SchemaValidator {
    /// Compiles `schema`; refuses one that is not a valid schema of its
    /// draft, or that refers outside itself.
    pub fn new(schema: &JsonObject) -> Result<Self, UnusableSchema> {
        let schema = Value::Object(schema.clone());
        let validator = jsonschema::options()
            .with_pattern_options(jsonschema::PatternOptions::regex())
            .build(&schema)
            .map_err(|e| UnusableSchema {
                at: e.schema_path().to_string(),
                problem: e.to_string(),
            })?;
        Ok(Self {
            schema: Arc::new(schema),
            validator: Arc::new(validator),
        })
    }

    /// The schema this validator was compiled from.
    pub fn schema(&self) -> &Value {
        &self.schema
    }

    /// `Ok` when `value` satisfies the schema; otherwise the first failing place.
    pub fn check(&self, value: &Value) -> Result<(), SchemaMismatch> {
        self.validator.validate(value).map_err(|e| {
            let mut path = e.instance_path().to_string();
            // A missing member is named by where it should be.
            if let jsonschema::error::ValidationErrorKind::Required {
                property: Value::String(member),
            } = e.kind()
            {
                path = format!("{path}/{}", member.replace('~', "~0").replace('/', "~1"));
            }
            SchemaMismatch {
                path,
                keyword: e.kind().keyword().to_owned(),
                problem: e.to_string(),
            }
        })
    }

    /// A tool result against the validator of its `outputSchema`: a result
    /// that is not an error (`is_error`) must carry `structuredContent`
    /// satisfying it. The problem reads "it has no structuredContent" or
    /// "structuredContent at /path: ...". Server and client share the rule.
    pub fn check_tool_result(
        &self,
        is_error: bool,
        structured_content: Option<&Value>,
    ) -> Result<(), String> {
        match structured_content {
            _ if is_error => Ok(()),
            None => Err("it has no structuredContent".to_owned()),
            Some(content) => self
                .check(content)
                .map_err(|mismatch| format!("structuredContent at {mismatch}")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn check(schema: Value, value: Value) -> Result<(), String> {
        SchemaValidator::new(schema.as_object().unwrap())
            .unwrap()
            .check(&value)
            .map_err(|e| e.to_string())
    }

    fn keyword(schema: Value, value: Value) -> String {
        SchemaValidator::new(schema.as_object().unwrap())
            .unwrap()
            .check(&value)
            .unwrap_err()
            .keyword
    }

    #[test]
    fn failures_name_the_place_and_the_rule() {
        let schema = json!({
            "type": "object",
            "properties": {
                "items": { "type": "array", "items": { "type": "object",
                    "properties": { "price": { "type": "number" } }, "required": ["price"] } }
            }
        });
        assert!(
            check(
                schema.clone(),
                json!({"items": [{"price": 1}, {"price": 2.5}]})
            )
            .is_ok()
        );
        let e = check(
            schema.clone(),
            json!({"items": [{"price": 1}, {"price": "2"}]}),
        );
        assert!(e.unwrap_err().starts_with("/items/1/price: "));
        assert_eq!(keyword(schema.clone(), json!({"items": [{}]})), "required");
        let missing = check(schema, json!({"items": [{}]})).unwrap_err();
        assert!(missing.starts_with("/items/0/price: "), "{missing}");
    }

    #[test]
    fn the_rules_a_tool_schema_uses_are_enforced() {
        let schema = json!({"type": "object", "properties": {
            "n": {"type": "integer", "minimum": 1, "maximum": 10},
            "code": {"type": "string", "pattern": "^[A-Z]{3}$", "maxLength": 3},
            "color": {"enum": ["red", "green"]}
        }, "additionalProperties": false});
        assert!(
            check(
                schema.clone(),
                json!({"n": 3, "code": "ABC", "color": "red"})
            )
            .is_ok()
        );
        for (value, rule) in [
            (json!({"n": 0}), "minimum"),
            (json!({"n": 11}), "maximum"),
            (json!({"n": 1.5}), "type"),
            (json!({"code": "abc"}), "pattern"),
            (json!({"code": "ABCD"}), "maxLength"),
            (json!({"color": "blue"}), "enum"),
            (json!({"stray": 1}), "additionalProperties"),
        ] {
            assert_eq!(keyword(schema.clone(), value.clone()), rule, "{value}");
        }
    }

    #[test]
    fn draft_07_is_read_as_draft_07() {
        let draft7 = json!({"$schema": "http://json-schema.org/draft-07/schema#",
            "items": [{"type": "string"}], "additionalItems": {"type": "integer"},
            "definitions": {"n": {"minimum": 0}}, "properties": {"x": {"$ref": "#/definitions/n"}}});
        assert!(check(draft7.clone(), json!(["a", 1])).is_ok());
        assert!(check(draft7.clone(), json!(["a", "b"])).is_err());
        assert!(check(draft7, json!({"x": -1})).is_err());
    }

    #[test]
    fn annotations_and_unknown_keywords_are_ignored() {
        let schema =
            json!({"type": "string", "format": "email", "title": "t", "x-mcp-header": "H"});
        assert!(check(schema, json!("not an email")).is_ok());
    }

    #[test]
    fn what_cannot_be_used_is_refused_when_compiled() {
        for schema in [
            json!({"$ref": "https://example.com/s.json"}),
            json!({"$ref": "#/$defs/Missing"}),
            json!({"type": "no-such-type"}),
            json!({"minimum": "one"}),
        ] {
            assert!(
                SchemaValidator::new(schema.as_object().unwrap()).is_err(),
                "{schema}"
            );
        }
    }

    #[test]
    fn patterns_match_in_linear_time() {
        // Catastrophic for a backtracking engine; the regex engine refuses
        // nothing here and answers at once.
        let schema = json!({"type": "string", "pattern": "^(a+)+$"});
        let input = format!("{}!", "a".repeat(50_000));
        let started = std::time::Instant::now();
        assert!(check(schema, json!(input)).is_err());
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn schemas_that_refer_to_themselves_end() {
        for schema in [
            json!({"$ref": "#"}),
            json!({"$defs": {"a": {"anyOf": [{"$ref": "#/$defs/a"}, {"$ref": "#/$defs/a"}]}},
                   "$ref": "#/$defs/a"}),
        ] {
            if let Ok(validator) = SchemaValidator::new(schema.as_object().unwrap()) {
                let _ = validator.check(&json!(1));
            }
        }
    }
}

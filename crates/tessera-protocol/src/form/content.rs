//! Checking submitted form content against the form that asked for it.

use serde_json::{Number, Value};

use crate::{ElicitationSchema, EnumOptions, JsonObject, PrimitiveSchema, StringFormat};

/// Why submitted content does not fit its form.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("`{field}`: {problem}")]
pub struct FormContentError {
    /// The field at fault.
    pub field: String,
    /// What is wrong with it.
    pub problem: String,
}

impl ElicitationSchema {
    /// Checks accepted content: required fields present, each value of its
    /// field's type, within its bounds, format and choices. Keys the form did
    /// not ask for are ignored.
    pub fn check_content(&self, content: &JsonObject) -> Result<(), FormContentError> {
        for field in self.required.iter().flatten() {
            if !content.contains_key(field) {
                return Err(FormContentError {
                    field: field.clone(),
                    problem: "is required but missing".into(),
                });
            }
        }
        for (name, schema) in &self.properties {
            if let Some(value) = content.get(name) {
                schema
                    .check_value(value)
                    .map_err(|problem| FormContentError {
                        field: name.clone(),
                        problem,
                    })?;
            }
        }
        Ok(())
    }
}

impl PrimitiveSchema {
    /// Checks one submitted value against this field, describing the first problem.
    pub fn check_value(&self, value: &Value) -> Result<(), String> {
        match self {
            Self::String(s) => {
                let text = value.as_str().ok_or_else(|| expected("a string", value))?;
                let len = text.chars().count() as u64;
                if let Some(min) = s.min_length.filter(|&m| len < m) {
                    return Err(format!("must be at least {min} characters long"));
                }
                if let Some(max) = s.max_length.filter(|&m| len > m) {
                    return Err(format!("must be at most {max} characters long"));
                }
                match s.format {
                    Some(format) if !format.matches(text) => {
                        Err(format!("{text:?} is not a valid {}", format.as_str()))
                    }
                    _ => Ok(()),
                }
            }
            Self::Number(n) => {
                let Value::Number(number) = value else {
                    return Err(expected(
                        if n.integer { "an integer" } else { "a number" },
                        value,
                    ));
                };
                let x = as_f64(number);
                if n.integer && !(number.is_i64() || number.is_u64() || x.fract() == 0.0) {
                    return Err(format!("{number} is not an integer"));
                }
                if let Some(min) = n.minimum.as_ref().filter(|m| x < as_f64(m)) {
                    return Err(format!("{number} is below the minimum {min}"));
                }
                if let Some(max) = n.maximum.as_ref().filter(|m| x > as_f64(m)) {
                    return Err(format!("{number} is above the maximum {max}"));
                }
                Ok(())
            }
            Self::Boolean(_) => value
                .is_boolean()
                .then_some(())
                .ok_or_else(|| expected("true or false", value)),
            Self::SingleSelect(s) => {
                let choice = value
                    .as_str()
                    .ok_or_else(|| expected("one of the choices", value))?;
                check_choice(&s.options, choice)
            }
            Self::MultiSelect(m) => {
                let items = value
                    .as_array()
                    .ok_or_else(|| expected("a list of choices", value))?;
                let count = items.len() as u64;
                if let Some(min) = m.min_items.filter(|&v| count < v) {
                    return Err(format!("needs at least {min} choices, got {count}"));
                }
                if let Some(max) = m.max_items.filter(|&v| count > v) {
                    return Err(format!("allows at most {max} choices, got {count}"));
                }
                for item in items {
                    let choice = item
                        .as_str()
                        .ok_or_else(|| expected("a choice (string)", item))?;
                    check_choice(&m.options, choice)?;
                }
                Ok(())
            }
        }
    }
}

fn check_choice(options: &EnumOptions, choice: &str) -> Result<(), String> {
    if options.contains(choice) {
        Ok(())
    } else {
        let allowed: Vec<&str> = options.pairs().into_iter().map(|(v, _)| v).collect();
        Err(format!("{choice:?} is not one of {allowed:?}"))
    }
}

fn expected(what: &str, got: &Value) -> String {
    let kind = match got {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    };
    format!("expected {what}, got {kind}")
}

fn as_f64(n: &Number) -> f64 {
    n.as_f64().unwrap_or(f64::NAN)
}

impl StringFormat {
    /// Whether `text` has this format (a practical check, not a full RFC parser).
    pub fn matches(self, text: &str) -> bool {
        match self {
            Self::Email => is_email(text),
            Self::Uri => is_uri(text),
            Self::Date => is_date(text),
            Self::DateTime => is_date_time(text),
        }
    }
}

fn is_email(s: &str) -> bool {
    let Some((local, domain)) = s.rsplit_once('@') else {
        return false;
    };
    !local.is_empty()
        && domain.contains('.')
        && !domain.starts_with('.')
        && !domain.ends_with('.')
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn is_uri(s: &str) -> bool {
    let Some((scheme, rest)) = s.split_once(':') else {
        return false;
    };
    let mut chars = scheme.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '-' | '.'))
        && !rest.is_empty()
        && !s.chars().any(|c| c.is_whitespace() || c.is_control())
}

fn digits(s: &str) -> Option<u32> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

fn is_date(s: &str) -> bool {
    let mut parts = s.split('-');
    let (Some(y), Some(m), Some(d), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    let (Some(year), Some(month), Some(day)) = (digits(y), digits(m), digits(d)) else {
        return false;
    };
    if y.len() != 4 || m.len() != 2 || d.len() != 2 || !(1..=12).contains(&month) {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        2 if leap => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    };
    (1..=days).contains(&day)
}

fn is_time(s: &str) -> bool {
    let (clock, offset) = if let Some(c) = s.strip_suffix(['Z', 'z']) {
        (c, None)
    } else if let Some(i) = s.rfind(['+', '-']) {
        (&s[..i], Some(&s[i + 1..]))
    } else {
        return false;
    };
    if let Some(off) = offset {
        let Some((h, m)) = off.split_once(':') else {
            return false;
        };
        if h.len() != 2
            || m.len() != 2
            || digits(h).is_none_or(|h| h > 23)
            || digits(m).is_none_or(|m| m > 59)
        {
            return false;
        }
    }
    let (hms, frac) = match clock.split_once('.') {
        Some((hms, frac)) => (hms, Some(frac)),
        None => (clock, None),
    };
    if frac.is_some_and(|f| f.is_empty() || !f.bytes().all(|b| b.is_ascii_digit())) {
        return false;
    }
    let mut parts = hms.split(':');
    let (Some(h), Some(m), Some(sec), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return false;
    };
    [(h, 23), (m, 59), (sec, 60)]
        .iter()
        .all(|(p, max)| p.len() == 2 && digits(p).is_some_and(|v| v <= *max))
}

fn is_date_time(s: &str) -> bool {
    match s.split_once(['T', 't']) {
        Some((date, time)) => is_date(date) && is_time(time),
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn form() -> ElicitationSchema {
        ElicitationSchema::from_value(&json!({
            "type": "object",
            "properties": {
                "amount": {"type": "number", "minimum": 0, "maximum": 100},
                "count": {"type": "integer"},
                "name": {"type": "string", "minLength": 2, "maxLength": 5},
                "mail": {"type": "string", "format": "email"},
                "ok": {"type": "boolean"},
                "color": {"type": "string", "enum": ["red", "green"]},
                "tags": {"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}, {"const": "b", "title": "B"}]}, "maxItems": 1}
            },
            "required": ["amount"]
        }))
        .unwrap()
    }

    fn check(content: serde_json::Value) -> Result<(), FormContentError> {
        form().check_content(content.as_object().unwrap())
    }

    #[test]
    fn valid_content_passes_and_extra_keys_are_ignored() {
        check(json!({"amount": 5, "count": 3, "name": "abc", "mail": "a@b.co", "ok": true, "color": "red", "tags": ["a"], "extra": {}})).unwrap();
        check(json!({"amount": 2.5})).unwrap();
    }

    #[test]
    fn each_kind_of_misfit_is_named() {
        let cases = [
            (json!({}), "amount", "required"),
            (
                json!({"amount": "five"}),
                "amount",
                "expected a number, got a string",
            ),
            (json!({"amount": 101}), "amount", "above the maximum"),
            (json!({"amount": -1}), "amount", "below the minimum"),
            (
                json!({"amount": 1, "count": 1.5}),
                "count",
                "not an integer",
            ),
            (json!({"amount": 1, "name": "a"}), "name", "at least 2"),
            (json!({"amount": 1, "name": "abcdef"}), "name", "at most 5"),
            (
                json!({"amount": 1, "mail": "nope"}),
                "mail",
                "not a valid email",
            ),
            (
                json!({"amount": 1, "ok": "yes"}),
                "ok",
                "expected true or false",
            ),
            (json!({"amount": 1, "color": "blue"}), "color", "not one of"),
            (
                json!({"amount": 1, "tags": ["a", "b"]}),
                "tags",
                "at most 1",
            ),
            (json!({"amount": 1, "tags": ["c"]}), "tags", "not one of"),
        ];
        for (content, field, problem) in cases {
            let err = check(content.clone()).unwrap_err();
            assert_eq!(err.field, field, "{content}");
            assert!(err.problem.contains(problem), "{content}: {err}");
        }
    }

    #[test]
    fn formats() {
        assert!(StringFormat::Uri.matches("https://example.com/x"));
        assert!(!StringFormat::Uri.matches("not a uri"));
        assert!(StringFormat::Date.matches("2024-02-29"));
        assert!(!StringFormat::Date.matches("2023-02-29"));
        assert!(!StringFormat::Date.matches("2023-13-01"));
        assert!(StringFormat::DateTime.matches("2026-07-28T12:30:00Z"));
        assert!(StringFormat::DateTime.matches("2026-07-28T12:30:00.123+02:00"));
        assert!(!StringFormat::DateTime.matches("2026-07-28 12:30"));
        assert!(!StringFormat::Email.matches("a@b"));
    }
}

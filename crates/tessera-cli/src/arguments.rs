//! Tool arguments from the command line, coerced by the tool's input schema.

use serde_json::{Map, Value};

/// `name=value` pairs as a prompt's arguments: every value a string, as prompts take them.
pub fn strings(pairs: &[String]) -> Result<Map<String, Value>, String> {
    let mut args = Map::new();
    for pair in pairs {
        let (name, value) = pair
            .split_once('=')
            .ok_or_else(|| format!("argument {pair:?} is not name=value"))?;
        if name.is_empty() {
            return Err(format!("argument {pair:?} has no name"));
        }
        args.insert(name.to_owned(), Value::String(value.to_owned()));
    }
    Ok(args)
}

/// Parses `name=value` pairs (JSON when it parses, else a string) over `--args-json`,
/// then coerces each value to the type its property declares.
pub fn build(
    pairs: &[String],
    json: Option<&str>,
    schema: Option<&Value>,
) -> Result<Value, String> {
    let mut args = match json {
        None => Map::new(),
        Some(text) => match serde_json::from_str(text) {
            Ok(Value::Object(o)) => o,
            Ok(_) => return Err("--args-json must be a JSON object".into()),
            Err(e) => return Err(format!("--args-json is not valid JSON: {e}")),
        },
    };
    for pair in pairs {
        let (name, raw) = pair
            .split_once('=')
            .ok_or_else(|| format!("argument {pair:?} is not name=value"))?;
        if name.is_empty() {
            return Err(format!("argument {pair:?} has no name"));
        }
        let declared = schema
            .and_then(|s| s.get("properties"))
            .and_then(|p| p.get(name))
            .and_then(|p| p.get("type"))
            .and_then(Value::as_str);
        args.insert(name.to_owned(), coerce(raw, declared));
    }
    Ok(Value::Object(args))
}

/// `raw` as the declared type when it fits, else as JSON when it parses, else as a string.
pub fn coerce(raw: &str, declared: Option<&str>) -> Value {
    let parsed = serde_json::from_str::<Value>(raw).ok();
    match (declared, &parsed) {
        (Some("string"), _) => Value::String(raw.to_owned()),
        (Some("number" | "integer"), Some(v @ Value::Number(_))) => v.clone(),
        (Some("boolean"), Some(v @ Value::Bool(_))) => v.clone(),
        (_, Some(v)) => v.clone(),
        (_, None) => Value::String(raw.to_owned()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn pairs_are_json_or_strings_and_follow_the_schema() {
        let schema =
            json!({"properties": {"current": {"type": "number"}, "label": {"type": "string"}}});
        let args = build(
            &[
                "current=10".into(),
                "label=42".into(),
                "other=hello".into(),
                "flag=true".into(),
            ],
            None,
            Some(&schema),
        )
        .unwrap();
        assert_eq!(
            args,
            json!({"current": 10, "label": "42", "other": "hello", "flag": true})
        );
        let args = build(&["a=1".into()], Some(r#"{"a": 0, "b": [1]}"#), None).unwrap();
        assert_eq!(args, json!({"a": 1, "b": [1]}));
        assert!(build(&["novalue".into()], None, None).is_err());
        assert!(build(&[], Some("[1]"), None).is_err());
    }
}

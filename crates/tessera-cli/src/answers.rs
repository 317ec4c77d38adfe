//! Scripted answers from `--answers FILE` and `--answer key.field=value`.

use std::path::Path;

use serde_json::Value;
use tessera_client::{ScriptedAnswer, ScriptedElicitor};

use crate::arguments::coerce;

/// Builds the script: the file first, then each `--answer` on top.
pub fn load(file: Option<&Path>, answers: &[String]) -> Result<ScriptedElicitor, String> {
    let mut script = match file {
        None => ScriptedElicitor::default(),
        Some(path) => {
            let text = std::fs::read_to_string(path)
                .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
            let value: Value = serde_json::from_str(&text)
                .map_err(|e| format!("{} is not valid JSON: {e}", path.display()))?;
            ScriptedElicitor::from_json(&value).map_err(|e| format!("{}: {e}", path.display()))?
        }
    };
    for answer in answers {
        let (target, raw) = answer.split_once('=').ok_or_else(|| {
            format!("--answer {answer:?} is not key.field=value or key=decline|cancel")
        })?;
        match target.split_once('.') {
            None => {
                let a = ScriptedAnswer::from_value(target, &Value::String(raw.to_owned()))?;
                script.insert(target, a);
            }
            Some((key, field)) => {
                let mut content = match script.answer_for(key) {
                    Some(ScriptedAnswer::Accept(c)) => c.clone(),
                    _ => Default::default(),
                };
                content.insert(field.to_owned(), coerce(raw, None));
                script.insert(key, ScriptedAnswer::Accept(content));
            }
        }
    }
    Ok(script)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn answers_combine() {
        let s = load(
            None,
            &[
                "amount.amount=5".into(),
                "confirmation.confirm=true".into(),
                "other=decline".into(),
            ],
        )
        .unwrap();
        assert_eq!(
            s.answer_for("amount"),
            Some(&ScriptedAnswer::Accept(
                json!({"amount": 5}).as_object().unwrap().clone()
            ))
        );
        assert_eq!(s.answer_for("other"), Some(&ScriptedAnswer::Decline));
        assert!(load(None, &["nonsense".into()]).is_err());
        assert!(load(None, &["k=maybe".into()]).is_err());
    }
}

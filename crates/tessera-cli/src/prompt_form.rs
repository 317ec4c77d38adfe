//! Drawing a form in the terminal: one prompt per field, a review, explicit decline and cancel.

use inquire::validator::Validation;
use inquire::{Confirm, InquireError, MultiSelect, Select, Text};
use serde_json::{Map, Value};
use tessera_client::ClientError;
use tessera_protocol::{
    ElicitFormParams, ElicitResult, ElicitUrlParams, EnumOptions, PrimitiveSchema,
};

const BOLD: &str = "\x1b[1m";
const HOST: &str = "\x1b[1;33m";
const RESET: &str = "\x1b[0m";

/// Server-supplied text without control characters (no terminal escapes), newlines kept.
fn clean(text: &str) -> String {
    text.chars()
        .filter(|c| *c == '\n' || !c.is_control())
        .collect()
}

/// The user left the form (Esc or Ctrl-C).
struct Left;

fn left(e: InquireError) -> Result<Left, ClientError> {
    match e {
        InquireError::OperationCanceled | InquireError::OperationInterrupted => Ok(Left),
        other => Err(ClientError::Elicitation(format!(
            "terminal prompt failed: {other}"
        ))),
    }
}

/// Asks for one field; `None` when an optional field is left empty.
fn ask_field(
    name: &str,
    field: &PrimitiveSchema,
    required: bool,
) -> Result<Result<Option<Value>, Left>, ClientError> {
    let label = clean(&format!("{}:", field.title().unwrap_or(name)));
    let help = field.description().map(str::to_owned).unwrap_or_else(|| {
        if required {
            "required".into()
        } else {
            "optional; leave empty to skip".into()
        }
    });
    let outcome = match field {
        PrimitiveSchema::Boolean(b) => Confirm::new(&label)
            .with_default(b.default.unwrap_or(false))
            .with_help_message(&help)
            .prompt()
            .map(|v| Some(Value::Bool(v))),
        PrimitiveSchema::SingleSelect(s) => {
            let pairs = s.options.pairs();
            let mut labels: Vec<String> = pairs.iter().map(|(_, l)| (*l).to_owned()).collect();
            if !required {
                labels.push("(none)".into());
            }
            let start = s
                .default
                .as_deref()
                .and_then(|d| pairs.iter().position(|(v, _)| *v == d))
                .unwrap_or(0);
            Select::new(&label, labels)
                .with_starting_cursor(start)
                .with_help_message(&help)
                .raw_prompt()
                .map(|choice| {
                    pairs
                        .get(choice.index)
                        .map(|(v, _)| Value::String((*v).to_owned()))
                })
        }
        PrimitiveSchema::MultiSelect(m) => {
            let pairs = m.options.pairs();
            let labels: Vec<String> = pairs.iter().map(|(_, l)| (*l).to_owned()).collect();
            let defaults: Vec<usize> = m
                .default
                .iter()
                .flatten()
                .filter_map(|d| pairs.iter().position(|(v, _)| v == d))
                .collect();
            let check = field.clone();
            let values: Vec<String> = pairs.iter().map(|(v, _)| (*v).to_owned()).collect();
            MultiSelect::new(&label, labels)
                .with_default(&defaults)
                .with_help_message(&help)
                .with_validator(
                    move |chosen: &[inquire::list_option::ListOption<&String>]| {
                        let picked: Vec<Value> = chosen
                            .iter()
                            .filter_map(|o| values.get(o.index))
                            .map(|v| Value::String(v.clone()))
                            .collect();
                        Ok(match check.check_value(&Value::Array(picked)) {
                            Ok(()) => Validation::Valid,
                            Err(e) => Validation::Invalid(e.into()),
                        })
                    },
                )
                .raw_prompt()
                .map(|chosen| {
                    let picked: Vec<Value> = chosen
                        .iter()
                        .filter_map(|o| pairs.get(o.index))
                        .map(|(v, _)| Value::String((*v).to_owned()))
                        .collect();
                    (!picked.is_empty() || required).then_some(Value::Array(picked))
                })
        }
        PrimitiveSchema::String(_) | PrimitiveSchema::Number(_) => {
            let check = field.clone();
            let default = match field {
                PrimitiveSchema::String(s) => s.default.clone(),
                PrimitiveSchema::Number(n) => n.default.as_ref().map(ToString::to_string),
                _ => None,
            };
            let mut prompt = Text::new(&label).with_help_message(&help);
            if let Some(d) = default.as_deref() {
                prompt = prompt.with_default(d);
            }
            prompt
                .with_validator(move |input: &str| {
                    if input.is_empty() && !required {
                        return Ok(Validation::Valid);
                    }
                    Ok(
                        match to_value(&check, input).and_then(|v| check.check_value(&v)) {
                            Ok(()) => Validation::Valid,
                            Err(e) => Validation::Invalid(e.into()),
                        },
                    )
                })
                .prompt()
                .map(|input| {
                    if input.is_empty() && !required {
                        None
                    } else {
                        to_value(field, &input).ok()
                    }
                })
        }
    };
    match outcome {
        Ok(v) => Ok(Ok(v)),
        Err(e) => left(e).map(Err),
    }
}

/// Text typed for a field, as the JSON value its type wants.
fn to_value(field: &PrimitiveSchema, input: &str) -> Result<Value, String> {
    match field {
        PrimitiveSchema::Number(n) if n.integer => input
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| format!("{input:?} is not a whole number")),
        PrimitiveSchema::Number(_) => input
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(|f| Value::Number(tessera_protocol::json_number(f)))
            .ok_or_else(|| format!("{input:?} is not a number")),
        _ => Ok(Value::String(input.to_owned())),
    }
}

/// Shows a form, field by field, then a review with Send, Edit, Decline and Cancel.
pub fn ask_form(
    server: &str,
    key: &str,
    params: &ElicitFormParams,
) -> Result<ElicitResult, ClientError> {
    let schema = &params.requested_schema;
    eprintln!(
        "\n{BOLD}{server}{RESET} asks ({}): {}",
        clean(key),
        clean(&params.message)
    );
    eprintln!("(Esc cancels)");
    loop {
        let mut content = Map::new();
        for (name, field) in &schema.properties {
            match ask_field(name, field, schema.is_required(name))? {
                Ok(Some(v)) => {
                    content.insert(name.clone(), v);
                }
                Ok(None) => {}
                Err(Left) => return Ok(ElicitResult::cancel()),
            }
        }
        eprintln!("\nYou will send:");
        for (name, value) in &content {
            let label = schema
                .properties
                .get(name)
                .and_then(PrimitiveSchema::title)
                .unwrap_or(name);
            eprintln!("  {label}: {}", show(schema.properties.get(name), value));
        }
        let choice = Select::new(
            "Send these answers?",
            vec!["Send", "Edit", "Decline", "Cancel"],
        )
        .prompt();
        match choice {
            Ok("Send") => match schema.check_content(&content) {
                Ok(()) => return Ok(ElicitResult::accept(content)),
                Err(e) => eprintln!("Not sent: {e}"),
            },
            Ok("Edit") => {}
            Ok("Decline") => return Ok(ElicitResult::decline()),
            Ok(_) => return Ok(ElicitResult::cancel()),
            Err(e) => {
                left(e)?;
                return Ok(ElicitResult::cancel());
            }
        }
    }
}

fn show(field: Option<&PrimitiveSchema>, value: &Value) -> String {
    let label_of = |options: &EnumOptions, v: &str| {
        options
            .pairs()
            .into_iter()
            .find(|(value, _)| *value == v)
            .map_or(v.to_owned(), |(_, l)| l.to_owned())
    };
    match (field, value) {
        (Some(PrimitiveSchema::SingleSelect(s)), Value::String(v)) => label_of(&s.options, v),
        (Some(PrimitiveSchema::MultiSelect(m)), Value::Array(items)) => items
            .iter()
            .filter_map(Value::as_str)
            .map(|v| label_of(&m.options, v))
            .collect::<Vec<_>>()
            .join(", "),
        (_, Value::String(s)) => s.clone(),
        (_, other) => other.to_string(),
    }
}

/// The URL with its host highlighted, so a look-alike domain stands out.
fn highlight(url: &str) -> String {
    match url.split_once("://") {
        Some((scheme, rest)) => {
            let end = rest.find(['/', '?', '#']).unwrap_or(rest.len());
            format!("{scheme}://{HOST}{}{RESET}{}", &rest[..end], &rest[end..])
        }
        None => url.to_owned(),
    }
}

/// Asks consent before anything opens a URL; never opens it without a yes.
pub fn ask_url(
    server: &str,
    key: &str,
    params: &ElicitUrlParams,
) -> Result<ElicitResult, ClientError> {
    eprintln!(
        "\n{BOLD}{server}{RESET} asks you to open a page ({key}): {}",
        params.message
    );
    eprintln!("  {}", highlight(&params.url));
    match Confirm::new("Open this URL?").with_default(false).prompt() {
        Ok(true) => {
            let opener = if cfg!(target_os = "macos") {
                "open"
            } else {
                "xdg-open"
            };
            if std::process::Command::new(opener)
                .arg(&params.url)
                .spawn()
                .is_err()
            {
                eprintln!("Could not start {opener}; open the URL above yourself.");
            }
            Ok(ElicitResult::accept(Map::new()))
        }
        Ok(false) => Ok(ElicitResult::decline()),
        Err(e) => {
            left(e)?;
            Ok(ElicitResult::cancel())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_highlighted_and_numbers_parsed() {
        assert_eq!(
            highlight("https://evil.example/login?x=1"),
            format!("https://{HOST}evil.example{RESET}/login?x=1")
        );
        let n = PrimitiveSchema::Number(Default::default());
        assert_eq!(to_value(&n, "5").unwrap(), Value::from(5));
        assert_eq!(to_value(&n, "2.5").unwrap(), serde_json::json!(2.5));
        assert!(to_value(&n, "five").is_err());
    }
}

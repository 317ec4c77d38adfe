//! Drawing a form in the terminal: one prompt per field, a review, explicit decline and cancel.

use inquire::validator::Validation;
use inquire::{Confirm, InquireError, MultiSelect, Select, Text};
use serde_json::{Map, Value};
use tessera_client::ClientError;
use tessera_protocol::{
    ElicitFormParams, ElicitResult, ElicitUrlParams, EnumOptions, PrimitiveSchema,
};

use crate::shown::{line, text};

use crate::style;

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
    let label = format!("{}:", line(field.title().unwrap_or(name)));
    let mut help = field.description().map_or_else(
        || {
            if required {
                "required".into()
            } else {
                "optional; leave empty to skip".into()
            }
        },
        |d| line(d).into_owned(),
    );
    let outcome = match field {
        PrimitiveSchema::Boolean(b) => Confirm::new(&label)
            .with_default(b.default.unwrap_or(false))
            .with_help_message(&help)
            .prompt()
            .map(|v| Some(Value::Bool(v))),
        PrimitiveSchema::SingleSelect(s) => {
            let pairs = s.options.pairs();
            let mut labels: Vec<String> = pairs.iter().map(|(_, l)| line(l).into_owned()).collect();
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
            let labels: Vec<String> = pairs.iter().map(|(_, l)| line(l).into_owned()).collect();
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
            // A default is what Enter sends, so it is offered only when it
            // can be shown as itself.
            let default = match default {
                Some(d) if matches!(line(&d), std::borrow::Cow::Borrowed(_)) => Some(d),
                Some(d) => {
                    help = format!(
                        "{help} (the server's default {} is not offered: it holds control characters)",
                        line(&d)
                    );
                    None
                }
                None => None,
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
        "\n{} asks ({}): {}",
        style::asker(&line(server)),
        line(key),
        text(&params.message)
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
            eprintln!(
                "  {}: {}",
                line(label),
                line(&show(schema.properties.get(name), value))
            );
        }
        let choice = Select::new(
            "Send these answers?",
            vec!["Send", "Edit", "Decline", "Cancel"],
        )
        .prompt();
        match choice {
            Ok("Send") => match schema.check_content(&content) {
                Ok(()) => return Ok(ElicitResult::accept(content)),
                Err(e) => eprintln!("Not sent: {}", text(&e.to_string())),
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

/// A URL the terminal may offer to open: http(s) only, with its host apart.
#[derive(Debug, PartialEq)]
struct Openable {
    /// The URL as parsed: what is shown and what is opened, never the raw text.
    url: String,
    /// The whole URL as it is shown, its host highlighted.
    shown: String,
    /// The host, as the browser will resolve it (IDNs in their punycode form).
    host: String,
    /// Why the URL deserves a second look.
    warnings: Vec<&'static str>,
}

/// Checks a URL-mode `url`: anything but an absolute http(s) URL with a host
/// is refused, with the reason; the host is taken from the parsed URL (not
/// from the text), so `userinfo@` and look-alike tricks do not hide it.
fn openable(raw: &str) -> Result<Openable, String> {
    let parsed = url::Url::parse(raw)
        .map_err(|e| format!("the server's URL {} is not a valid URL ({e})", line(raw)))?;
    if !matches!(parsed.scheme(), "https" | "http") {
        return Err(format!(
            "the server asked to open a {}: URL ({}); only http and https URLs are opened",
            line(parsed.scheme()),
            line(raw)
        ));
    }
    let Some(host) = parsed.host_str().map(str::to_owned) else {
        return Err(format!("the server's URL {} names no host", line(raw)));
    };
    let mut warnings = Vec::new();
    if host.split('.').any(|label| label.starts_with("xn--")) {
        warnings.push(
            "the host is an internationalised name (punycode): check it is the site you expect",
        );
    }
    if !parsed.username().is_empty() || parsed.password().is_some() {
        warnings.push(
            "the URL carries a user name before the host: check the host, not the text before @",
        );
    }
    if parsed.scheme() == "http" {
        warnings.push("the page is not served over https");
    }
    // The serialised URL is ASCII with nothing to escape; the host is found
    // where it is, after any userinfo, not wherever its text first appears.
    let url = line(parsed.as_str()).into_owned();
    let authority = url.find("://").map_or(0, |i| i + 3);
    let authority_end = url[authority..]
        .find(['/', '?', '#'])
        .map_or(url.len(), |i| authority + i);
    let at = url[authority..authority_end]
        .rfind('@')
        .map_or(authority, |i| authority + i + 1);
    let shown = if url[at..].starts_with(&host) {
        format!(
            "{}{}{}",
            &url[..at],
            style::host(&host),
            &url[at + host.len()..]
        )
    } else {
        url.clone()
    };
    Ok(Openable {
        url,
        shown,
        host,
        warnings,
    })
}

/// Asks consent before anything opens a URL; never opens it without a yes,
/// and never one that is not http(s).
pub fn ask_url(
    server: &str,
    key: &str,
    params: &ElicitUrlParams,
) -> Result<ElicitResult, ClientError> {
    eprintln!(
        "\n{} asks you to open a page ({}): {}",
        style::asker(&line(server)),
        line(key),
        text(&params.message)
    );
    let target = match openable(&params.url) {
        Ok(target) => target,
        Err(refused) => {
            eprintln!("Not opened: {refused}.");
            return Ok(ElicitResult::decline());
        }
    };
    eprintln!("  {}", target.shown);
    eprintln!("  host: {}", style::host(&target.host));
    for warning in &target.warnings {
        eprintln!("  warning: {warning}");
    }
    match Confirm::new(&format!("Open this page on {}?", target.host))
        .with_default(false)
        .prompt()
    {
        Ok(true) => {
            if !crate::browser::open(&target.url) {
                eprintln!("Could not start a browser; open the URL above yourself.");
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
    fn only_http_urls_open_and_their_host_is_shown_apart() {
        let ok = openable("https://evil.example/login?x=1").unwrap();
        assert_eq!(
            ok.shown,
            format!("https://{}/login?x=1", style::host("evil.example"))
        );
        assert_eq!(ok.host, "evil.example");
        assert!(ok.warnings.is_empty());
        for refused in [
            "file:///etc/passwd",
            "javascript:alert(1)",
            "ssh://h/x",
            "not a url",
        ] {
            assert!(openable(refused).is_err(), "{refused}");
        }
        let tricked = openable("https://evil.example@evil.example.net/").unwrap();
        assert_eq!(tricked.host, "evil.example.net");
        assert_eq!(
            tricked.shown,
            format!("https://evil.example@{}/", style::host("evil.example.net")),
            "the real host is highlighted, not its text in the user name"
        );
        assert_eq!(tricked.warnings.len(), 1);
        let idn = openable("http://u@exаmple.com/").unwrap();
        assert_eq!(idn.host, "xn--exmple-4nf.com");
        assert_eq!(idn.warnings.len(), 3, "punycode, user name and plain http");
        // What is opened is the parsed URL, not the raw text.
        let spaced = openable(" https://h.example/a\tb").unwrap();
        assert_eq!(spaced.url, "https://h.example/ab");
        let escaped = openable("https://h.example/\x1b[2J").unwrap();
        assert!(!escaped.shown.contains("\x1b[2J"));
        let n = PrimitiveSchema::Number(Default::default());
        assert_eq!(to_value(&n, "5").unwrap(), Value::from(5));
        assert_eq!(to_value(&n, "2.5").unwrap(), serde_json::json!(2.5));
        assert!(to_value(&n, "five").is_err());
    }
}

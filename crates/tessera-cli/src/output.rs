//! What `tessera` prints: results on stdout, notifications on stderr; every
//! server-provided string through [`shown`](crate::shown).

use serde_json::Value;
use tessera_protocol::{DiscoverResult, Tool};

use crate::shown::{line, text};

/// The string at `v`, shown on one line (`default` when absent).
fn field<'a>(v: Option<&'a Value>, default: &'a str) -> std::borrow::Cow<'a, str> {
    line(v.and_then(Value::as_str).unwrap_or(default))
}

/// Prints a tool result: text blocks as they are, other blocks summarised.
pub fn print_result(result: &Value) {
    for block in result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        match block.get("type").and_then(Value::as_str) {
            Some("text") => println!(
                "{}",
                text(block.get("text").and_then(Value::as_str).unwrap_or(""))
            ),
            Some(kind @ ("image" | "audio")) => println!(
                "[{kind} {}, {} base64 characters]",
                field(block.get("mimeType"), "?"),
                block
                    .get("data")
                    .and_then(Value::as_str)
                    .map_or(0, str::len)
            ),
            Some("resource_link") => println!("[link {}]", field(block.get("uri"), "?")),
            Some("resource") => {
                println!("[resource {}]", field(block.pointer("/resource/uri"), "?"))
            }
            _ => println!("{block}"),
        }
    }
    if let Some(structured) = result.get("structuredContent")
        && result
            .get("content")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    {
        println!("{structured}");
    }
}

/// Prints the tool list, one tool a line.
pub fn print_tools(tools: &[Tool]) {
    for tool in tools {
        match &tool.description {
            Some(d) => println!("{}  {}", line(&tool.name), line(d)),
            None => println!("{}", line(&tool.name)),
        }
    }
}

/// Prints what `server/discover` said.
pub fn print_discover(d: &DiscoverResult) {
    if let Some(info) = d.meta.as_ref().and_then(|m| m.server_info.as_ref()) {
        println!("server: {} {}", line(&info.name), line(&info.version));
    }
    println!("versions: {}", line(&d.supported_versions.join(", ")));
    let caps = serde_json::to_value(&d.capabilities).unwrap_or_default();
    let names: Vec<&String> = caps
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    println!(
        "capabilities: {}",
        names.iter().map(|s| line(s)).collect::<Vec<_>>().join(", ")
    );
    if let Some(i) = &d.instructions {
        println!("instructions: {}", text(i));
    }
}

/// Shows progress and log notifications on stderr.
pub fn print_notification(n: &Value) {
    match n.get("method").and_then(Value::as_str) {
        Some("notifications/progress") => {
            let p = &n["params"];
            let total = p.get("total").map(|t| format!("/{t}")).unwrap_or_default();
            let message = p
                .get("message")
                .and_then(Value::as_str)
                .map(|m| format!(" {}", line(m)))
                .unwrap_or_default();
            eprintln!(
                "progress: {}{total}{message}",
                p.get("progress").unwrap_or(&Value::Null)
            );
        }
        Some("notifications/message") => {
            let p = &n["params"];
            // Data that is not a string prints as JSON, which escapes control characters.
            let data = match p.get("data") {
                Some(Value::String(s)) => text(s).into_owned(),
                other => other.unwrap_or(&Value::Null).to_string(),
            };
            eprintln!("[{}] {data}", field(p.get("level"), "log"));
        }
        _ => eprintln!("notification: {n}"),
    }
}

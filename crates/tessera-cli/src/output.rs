//! What `tessera` prints: results on stdout, notifications on stderr; every
//! server-provided string through [`shown`](crate::shown).

use serde_json::Value;
use tessera_protocol::{DiscoverResult, Tool};

use crate::shown::{json, line, text};

/// The string at `v`, shown on one line (`default` when absent).
fn field<'a>(v: Option<&'a Value>, default: &'a str) -> std::borrow::Cow<'a, str> {
    line(v.and_then(Value::as_str).unwrap_or(default))
}

/// Prints JSON text that came from a server, its invisible characters escaped.
pub fn print_json(printed: serde_json::Result<String>) {
    println!("{}", json(&printed.unwrap_or_default()));
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
            _ => println!("{}", json(&block.to_string())),
        }
    }
    if let Some(structured) = result.get("structuredContent")
        && result
            .get("content")
            .and_then(Value::as_array)
            .is_none_or(Vec::is_empty)
    {
        println!("{}", json(&structured.to_string()));
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
            let data = match p.get("data") {
                Some(Value::String(s)) => text(s).into_owned(),
                other => json(&other.unwrap_or(&Value::Null).to_string()).into_owned(),
            };
            eprintln!("[{}] {data}", field(p.get("level"), "log"));
        }
        _ => eprintln!("notification: {}", json(&n.to_string())),
    }
}

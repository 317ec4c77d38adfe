//! What `tessera` prints: results on stdout, notifications on stderr.

use serde_json::Value;
use tessera_protocol::{DiscoverResult, Tool};

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
                block.get("text").and_then(Value::as_str).unwrap_or("")
            ),
            Some(kind @ ("image" | "audio")) => println!(
                "[{kind} {}, {} base64 characters]",
                block.get("mimeType").and_then(Value::as_str).unwrap_or("?"),
                block
                    .get("data")
                    .and_then(Value::as_str)
                    .map_or(0, str::len)
            ),
            Some("resource_link") => println!(
                "[link {}]",
                block.get("uri").and_then(Value::as_str).unwrap_or("?")
            ),
            Some("resource") => println!(
                "[resource {}]",
                block
                    .pointer("/resource/uri")
                    .and_then(Value::as_str)
                    .unwrap_or("?")
            ),
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
            Some(d) => println!("{}  {}", tool.name, d),
            None => println!("{}", tool.name),
        }
    }
}

/// Prints what `server/discover` said.
pub fn print_discover(d: &DiscoverResult) {
    if let Some(info) = d.meta.as_ref().and_then(|m| m.server_info.as_ref()) {
        println!("server: {} {}", info.name, info.version);
    }
    println!("versions: {}", d.supported_versions.join(", "));
    let caps = serde_json::to_value(&d.capabilities).unwrap_or_default();
    let names: Vec<&String> = caps
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    println!(
        "capabilities: {}",
        names
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if let Some(i) = &d.instructions {
        println!("instructions: {i}");
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
                .map(|m| format!(" {m}"))
                .unwrap_or_default();
            eprintln!(
                "progress: {}{total}{message}",
                p.get("progress").unwrap_or(&Value::Null)
            );
        }
        Some("notifications/message") => {
            let p = &n["params"];
            eprintln!(
                "[{}] {}",
                p.get("level").and_then(Value::as_str).unwrap_or("log"),
                p.get("data").unwrap_or(&Value::Null)
            );
        }
        _ => eprintln!("notification: {n}"),
    }
}

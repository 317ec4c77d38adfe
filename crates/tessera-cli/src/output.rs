//! What `tessera` prints: results on stdout, notifications on stderr; every
//! server-provided string through [`shown`](crate::shown).

use serde_json::Value;
use tessera_protocol::{
    DiscoverResult, GetPromptResult, Prompt, ReadResourceResult, Resource, SkillEntry,
    SkillResources, Tool,
};

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

/// Prints the skill list, one skill a line: name, description, and its URI
/// with what fetching all of it would cost.
pub fn print_skills(skills: &[SkillEntry]) {
    for skill in skills {
        let name = field(skill.frontmatter.get("name"), "?");
        let description = field(skill.frontmatter.get("description"), "");
        let files = match &skill.resources {
            SkillResources::Manifest(files) => format!(
                "{} files, {} bytes",
                files.len(),
                tessera_protocol::manifest_bytes(files)
                    .map_or_else(|| "too many".to_owned(), |b| b.to_string())
            ),
            SkillResources::Dynamic(_) => "dynamic".to_owned(),
        };
        println!("{name}  {description}  ({}, {files})", line(&skill.uri));
    }
}

/// Prints the prompt list, one prompt a line, with its arguments.
pub fn print_prompts(prompts: &[Prompt]) {
    for prompt in prompts {
        let args: Vec<String> = prompt
            .arguments
            .iter()
            .flatten()
            .map(|a| {
                let name = line(&a.name);
                if a.required == Some(true) {
                    format!("{name}=…")
                } else {
                    format!("[{name}=…]")
                }
            })
            .collect();
        let mut shown = line(&prompt.name).into_owned();
        if !args.is_empty() {
            shown = format!("{shown} {}", args.join(" "));
        }
        match &prompt.description {
            Some(d) => println!("{shown}  {}", line(d)),
            None => println!("{shown}"),
        }
    }
}

/// Prints a prompt's messages: each role, then its content as a tool result's.
pub fn print_prompt(result: &GetPromptResult) {
    let value = serde_json::to_value(result).unwrap_or_default();
    for message in value
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        println!("{}:", field(message.get("role"), "?"));
        let block = message.get("content").cloned().unwrap_or_default();
        print_result(&serde_json::json!({"content": [block]}));
    }
}

/// Prints the resource list, one resource a line: URI, name, MIME type.
pub fn print_resources(resources: &[Resource]) {
    for r in resources {
        let mime = r
            .mime_type
            .as_deref()
            .map(|m| format!("  ({})", line(m)))
            .unwrap_or_default();
        println!("{}  {}{mime}", line(&r.uri), line(&r.name));
    }
}

/// Prints what a resource read returned: text as it is, blobs summarised.
pub fn print_contents(result: &ReadResourceResult) {
    let value = serde_json::to_value(result).unwrap_or_default();
    for contents in value
        .get("contents")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(t) = contents.get("text").and_then(Value::as_str) {
            println!("{}", text(t));
        } else {
            println!(
                "[blob {} {}, {} base64 characters]",
                field(contents.get("uri"), "?"),
                field(contents.get("mimeType"), "?"),
                contents
                    .get("blob")
                    .and_then(Value::as_str)
                    .map_or(0, str::len)
            );
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

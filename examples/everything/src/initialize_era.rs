//! The tools only the 2025-11-25 requirement set calls, served to
//! initialize-era clients (and to any other): logging, sampling and
//! elicitation with the schema features of SEP-1034 (defaults) and SEP-1330
//! (titled, untitled and legacy enums). Each is written once, as every tool
//! here: its questions are `input_required` rounds for a 2026-07-28 client,
//! and requests pushed on the call's stream for an initialize-era one.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tessera::protocol::{ElicitationSchema, LoggingLevel};
use tessera::{Arguments, Context, ToolDef};

use crate::tools::{sampled_text, sampling};

/// The initialize-era set's tools, in listing order.
pub fn all() -> Vec<ToolDef> {
    vec![
        test_tool_with_logging_tool(),
        test_sampling_tool(),
        test_elicitation_tool(),
        test_elicitation_sep1034_defaults_tool(),
        test_elicitation_sep1330_enums_tool(),
    ]
}

/// Logs three messages 50 ms apart, then answers
#[tessera::tool]
async fn test_tool_with_logging(ctx: &Context) -> &'static str {
    for (i, text) in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ]
    .into_iter()
    .enumerate()
    {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.log(
            LoggingLevel::Info,
            Some("test_tool_with_logging"),
            json!(text),
        );
    }
    "Logging test completed."
}

/// `test_sampling`'s arguments.
#[tessera::arguments]
pub struct PromptArgs {
    /// What to ask the client's model
    prompt: String,
}

/// Asks the client's model the prompt (sampling), then returns its answer
#[tessera::tool]
async fn test_sampling(
    ctx: &Context,
    Arguments(PromptArgs { prompt }): Arguments<PromptArgs>,
) -> tessera::Result<String> {
    let answer = ctx.sample("sampling", sampling(&prompt, 100))?;
    Ok(format!("LLM response: {}", sampled_text(&answer)))
}

/// `test_elicitation`'s arguments.
#[tessera::arguments]
pub struct MessageArgs {
    /// The message shown above the form
    message: String,
}

/// Asks for a username and an email (elicitation), then returns the answer
#[tessera::tool]
async fn test_elicitation(
    ctx: &Context,
    Arguments(MessageArgs { message }): Arguments<MessageArgs>,
) -> tessera::Result<String> {
    let form = schema(json!({
        "type": "object",
        "properties": {
            "username": {"type": "string", "description": "Your username"},
            "email": {"type": "string", "description": "Your email address"}
        },
        "required": ["username", "email"]
    }));
    let outcome = match ctx.ask_form("user_info", message, form) {
        Ok(content) => format!("action=accept, content={}", json!(content)),
        Err(i) => match refusal(&i) {
            Some(action) => format!("action={action}"),
            None => return Err(i.into()),
        },
    };
    Ok(format!("User response: {outcome}"))
}

/// Asks with a default on every field type (SEP-1034), then returns the answer
#[tessera::tool]
async fn test_elicitation_sep1034_defaults(ctx: &Context) -> tessera::Result<String> {
    let form = schema(json!({
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "User name", "default": "John Doe"},
            "age": {"type": "integer", "description": "User age", "default": 30},
            "score": {"type": "number", "description": "User score", "default": 95.5},
            "status": {
                "type": "string",
                "description": "User status",
                "enum": ["active", "inactive", "pending"],
                "default": "active"
            },
            "verified": {"type": "boolean", "description": "Verification status", "default": true}
        },
        "required": []
    }));
    answered(ctx.ask_form(
        "defaults",
        "Please review and update the form fields with defaults",
        form,
    ))
}

/// Asks with every enum shape (SEP-1330), then returns the answer
#[tessera::tool]
async fn test_elicitation_sep1330_enums(ctx: &Context) -> tessera::Result<String> {
    let form = schema(json!({
        "type": "object",
        "properties": {
            "untitledSingle": {"type": "string", "enum": ["option1", "option2", "option3"]},
            "titledSingle": {"type": "string", "oneOf": [
                {"const": "value1", "title": "First Option"},
                {"const": "value2", "title": "Second Option"},
                {"const": "value3", "title": "Third Option"}
            ]},
            "legacyEnum": {
                "type": "string",
                "enum": ["opt1", "opt2", "opt3"],
                "enumNames": ["Option One", "Option Two", "Option Three"]
            },
            "untitledMulti": {
                "type": "array",
                "items": {"type": "string", "enum": ["option1", "option2", "option3"]}
            },
            "titledMulti": {
                "type": "array",
                "items": {"anyOf": [
                    {"const": "value1", "title": "First Choice"},
                    {"const": "value2", "title": "Second Choice"},
                    {"const": "value3", "title": "Third Choice"}
                ]}
            }
        },
        "required": []
    }));
    answered(ctx.ask_form("enums", "Please pick from each kind of list", form))
}

/// A form schema written as JSON (the fixture's are constant and valid).
fn schema(value: serde_json::Value) -> Arc<ElicitationSchema> {
    Arc::new(ElicitationSchema::from_value(&value).expect("the fixture's form schemas are valid"))
}

/// The result text of a form answered, declined or cancelled.
fn answered(
    outcome: Result<tessera::protocol::JsonObject, tessera::Interrupt>,
) -> tessera::Result<String> {
    match outcome {
        Ok(content) => Ok(format!(
            "Elicitation completed: action=accept, content={}",
            json!(content)
        )),
        Err(i) => match refusal(&i) {
            Some(action) => Ok(format!("Elicitation completed: action={action}")),
            // An invalid answer is asked again.
            None => Err(i.into()),
        },
    }
}

/// The action of a declined or cancelled form; `None` for anything else.
fn refusal(interrupt: &tessera::Interrupt) -> Option<&'static str> {
    match interrupt {
        tessera::Interrupt::Declined { .. } => Some("decline"),
        tessera::Interrupt::Cancelled { .. } => Some("cancel"),
        _ => None,
    }
}

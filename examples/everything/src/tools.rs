//! The plain tools: content of every kind, tool errors, progress, logging,
//! and the protocol probes of the `server-stateless` scenario.

use std::time::Duration;

use serde_json::{Value, json};
use tessera::protocol::{
    AudioContent, CallToolResult, ContentBlock, CreateMessageRequestParams, CreateMessageResult,
    EmbeddedResource, ImageContent, JsonObject, LoggingLevel, ResourceContents, Role,
    SamplingContent, SamplingContentList, SamplingMessage, TextContent,
};
use tessera::{Arguments, Context, HandlerError, ToolDef};

use crate::media::{PNG_BASE64, WAV_BASE64};

/// The content tools, the error tool, progress, logging and the `server-stateless` probes, in listing order.
pub fn all() -> Vec<ToolDef> {
    vec![
        test_simple_text_tool(),
        test_image_content_tool(),
        test_audio_content_tool(),
        test_embedded_resource_tool(),
        test_multiple_content_types_tool(),
        test_error_handling_tool(),
        test_tool_with_progress_tool(),
        test_logging_tool_tool(),
        test_missing_capability_tool(),
        test_streaming_elicitation_tool(),
        json_schema_2020_12_tool_tool().input_schema(json_schema_2020_12()),
        test_x_mcp_header_tool(),
    ]
}

/// `test_x_mcp_header`'s arguments: `region` is mirrored as `Mcp-Param-Region`.
#[tessera::arguments]
pub struct RegionArgs {
    /// The region to run in
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: String,
}

/// Echoes its region, which clients mirror into the Mcp-Param-Region header
#[tessera::tool]
async fn test_x_mcp_header(Arguments(RegionArgs { region }): Arguments<RegionArgs>) -> String {
    format!("Region: {region}")
}

/// Returns a simple text response
#[tessera::tool]
async fn test_simple_text() -> &'static str {
    "This is a simple text response for testing."
}

/// Returns a 1x1 PNG image
#[tessera::tool]
async fn test_image_content() -> CallToolResult {
    content(vec![image()])
}

/// Returns a short WAV clip
#[tessera::tool]
async fn test_audio_content() -> CallToolResult {
    content(vec![ContentBlock::Audio(AudioContent {
        data: WAV_BASE64.into(),
        mime_type: "audio/wav".into(),
        annotations: None,
        meta: None,
    })])
}

/// Returns an embedded text resource
#[tessera::tool]
async fn test_embedded_resource() -> CallToolResult {
    content(vec![embedded(
        "test://embedded-resource",
        "text/plain",
        "This is an embedded resource content.",
    )])
}

/// Returns text, an image and an embedded resource
#[tessera::tool]
async fn test_multiple_content_types() -> CallToolResult {
    content(vec![
        ContentBlock::text("Multiple content types test:"),
        image(),
        embedded(
            "test://mixed-content-resource",
            "application/json",
            r#"{"test":"data","value":123}"#,
        ),
    ])
}

/// Always fails with a tool error (isError: true)
#[tessera::tool]
async fn test_error_handling() -> tessera::Result<String> {
    Err(HandlerError::msg(
        "This tool intentionally returns an error for testing",
    ))
}

/// Lists a JSON Schema 2020-12 input schema ($defs, $anchor, allOf/anyOf, if/then/else) verbatim
#[tessera::tool]
async fn json_schema_2020_12_tool() -> &'static str {
    "ok"
}

/// The input schema of `json_schema_2020_12_tool`, as the suite expects it back.
fn json_schema_2020_12() -> JsonObject {
    let schema = json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
        "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    });
    match schema {
        Value::Object(o) => o,
        _ => JsonObject::new(),
    }
}

/// A complete result holding `blocks`.
fn content(blocks: Vec<ContentBlock>) -> CallToolResult {
    CallToolResult {
        content: blocks,
        ..CallToolResult::default()
    }
}

/// The sample PNG as an image block.
pub(crate) fn image() -> ContentBlock {
    ContentBlock::Image(ImageContent {
        data: PNG_BASE64.into(),
        mime_type: "image/png".into(),
        annotations: None,
        meta: None,
    })
}

/// An embedded text resource block.
pub(crate) fn embedded(uri: &str, mime_type: &str, text: &str) -> ContentBlock {
    ContentBlock::Resource(EmbeddedResource {
        resource: ResourceContents::text(uri, Some(mime_type), text),
        annotations: None,
        meta: None,
    })
}

/// A one-message sampling request asking `question`.
pub(crate) fn sampling(question: &str, max_tokens: u64) -> CreateMessageRequestParams {
    CreateMessageRequestParams {
        messages: vec![SamplingMessage {
            role: Role::User,
            content: SamplingContentList::One(SamplingContent::Text(TextContent {
                text: question.into(),
                annotations: None,
                meta: None,
            })),
            meta: None,
        }],
        max_tokens,
        ..CreateMessageRequestParams::default()
    }
}

/// The text of a sampling answer (its first text block), or a placeholder.
pub(crate) fn sampled_text(result: &CreateMessageResult) -> String {
    let first = match &result.content {
        SamplingContentList::One(c) => Some(c),
        SamplingContentList::Many(cs) => cs.first(),
    };
    match first {
        Some(SamplingContent::Text(t)) => t.text.clone(),
        _ => format!("(non-text answer from {})", result.model),
    }
}

/// Reports progress 0, 50 and 100 of 100 (when asked with a progressToken), then answers
#[tessera::tool]
async fn test_tool_with_progress(ctx: &Context) -> &'static str {
    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.progress(step, Some(100.0), Some(&format!("step {} of 3", i + 1)));
    }
    "Progress test completed (3 steps)."
}

/// Logs three messages (sent only when the request sets a logLevel), then answers
#[tessera::tool]
async fn test_logging_tool(ctx: &Context) -> &'static str {
    for text in [
        "Tool execution started",
        "Tool processing data",
        "Tool execution completed",
    ] {
        ctx.log(LoggingLevel::Info, Some("test_logging_tool"), json!(text));
    }
    "Logging test completed."
}

/// Needs sampling: asks the client's model, so a client without sampling gets -32021
#[tessera::tool]
async fn test_missing_capability(ctx: &Context) -> tessera::Result<String> {
    let answer = ctx.sample("summary", sampling("Say hello in one word.", 20))?;
    Ok(format!("Sampled: {}", sampled_text(&answer)))
}

/// What a user is called.
#[tessera::form]
pub(crate) struct UserName {
    pub(crate) name: String,
}

/// Asks for a name with a form, then greets
#[tessera::tool(on_refusal = "No name given.")]
async fn test_streaming_elicitation(ctx: &Context) -> tessera::Result<String> {
    let UserName { name } = ctx.ask("What is your name?")?;
    Ok(format!("Hello, {name}!"))
}

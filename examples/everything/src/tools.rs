//! The plain tools: content of every kind, tool errors, progress, logging,
//! and the protocol probes of the `server-stateless` scenario.

use std::time::Duration;

use serde::Deserialize;
use serde_json::{Value, json};
use tessera_protocol::{
    AudioContent, CallToolResult, ContentBlock, CreateMessageRequestParams, EmbeddedResource,
    ImageContent, JsonObject, LoggingLevel, ResourceContents, Role, SamplingContent,
    SamplingContentList, SamplingMessage, TextContent,
};
use tessera_server::{
    Answer, ElicitForm, FormField, InputRequired, RequestContext, ToolDef, ToolReply,
};

use crate::media::{PNG_BASE64, WAV_BASE64};

/// Arguments of a tool that takes none (`{}` or no `arguments` at all).
#[derive(Debug, Default, Deserialize, schemars::JsonSchema)]
pub struct NoArgs {}

/// The content tools, the error tool, progress, logging and the `server-stateless` probes, in listing order.
pub fn all() -> Vec<ToolDef> {
    vec![
        ToolDef::new("test_simple_text")
            .description("Returns a simple text response")
            .handler(|_ctx: RequestContext, _: NoArgs| async {
                ToolReply::from(CallToolResult::text(
                    "This is a simple text response for testing.",
                ))
            }),
        ToolDef::new("test_image_content")
            .description("Returns a 1x1 PNG image")
            .handler(|_ctx: RequestContext, _: NoArgs| async {
                ToolReply::from(content(vec![image()]))
            }),
        ToolDef::new("test_audio_content")
            .description("Returns a short WAV clip")
            .handler(|_ctx: RequestContext, _: NoArgs| async {
                ToolReply::from(content(vec![ContentBlock::Audio(AudioContent {
                    data: WAV_BASE64.into(),
                    mime_type: "audio/wav".into(),
                    annotations: None,
                    meta: None,
                })]))
            }),
        ToolDef::new("test_embedded_resource")
            .description("Returns an embedded text resource")
            .handler(|_ctx: RequestContext, _: NoArgs| async {
                ToolReply::from(content(vec![embedded(
                    "test://embedded-resource",
                    "text/plain",
                    "This is an embedded resource content.",
                )]))
            }),
        ToolDef::new("test_multiple_content_types")
            .description("Returns text, an image and an embedded resource")
            .handler(|_ctx: RequestContext, _: NoArgs| async {
                ToolReply::from(content(vec![
                    ContentBlock::text("Multiple content types test:"),
                    image(),
                    embedded(
                        "test://mixed-content-resource",
                        "application/json",
                        r#"{"test":"data","value":123}"#,
                    ),
                ]))
            }),
        ToolDef::new("test_error_handling")
            .description("Always fails with a tool error (isError: true)")
            .handler(|_ctx: RequestContext, _: NoArgs| async {
                ToolReply::from(CallToolResult::error(
                    "This tool intentionally returns an error for testing",
                ))
            }),
        ToolDef::new("test_tool_with_progress")
            .description("Reports progress 0, 50 and 100 of 100 (when asked with a progressToken), then answers")
            .handler(with_progress),
        ToolDef::new("test_logging_tool")
            .description("Logs three messages (sent only when the request sets a logLevel), then answers")
            .handler(logging),
        ToolDef::new("test_missing_capability")
            .description("Needs sampling: asks the client's model, so a client without sampling gets -32021")
            .handler(missing_capability),
        ToolDef::new("test_streaming_elicitation")
            .description("Asks for a name with a form, then greets")
            .handler(streaming_elicitation),
        ToolDef::new("json_schema_2020_12_tool")
            .description("Lists a JSON Schema 2020-12 input schema ($defs, $anchor, allOf/anyOf, if/then/else) verbatim")
            .handler(|_ctx: RequestContext, _: NoArgs| async {
                ToolReply::from(CallToolResult::text("ok"))
            })
            // After `handler`, which would otherwise replace it with the schema of `NoArgs`.
            .input_schema(json_schema_2020_12()),
    ]
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
pub(crate) fn sampled_text(answer: &Answer<'_>) -> Option<String> {
    let Answer::Sampled(result) = answer else {
        return None;
    };
    let first = match &result.content {
        SamplingContentList::One(c) => Some(c),
        SamplingContentList::Many(cs) => cs.first(),
    };
    Some(match first {
        Some(SamplingContent::Text(t)) => t.text.clone(),
        _ => format!("(non-text answer from {})", result.model),
    })
}

async fn with_progress(ctx: RequestContext, _: NoArgs) -> ToolReply {
    for (i, step) in [0.0, 50.0, 100.0].into_iter().enumerate() {
        if i > 0 {
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        ctx.progress(step, Some(100.0), Some(&format!("step {} of 3", i + 1)));
    }
    CallToolResult::text("Progress test completed (3 steps).").into()
}

async fn logging(ctx: RequestContext, _: NoArgs) -> ToolReply {
    for (level, text) in [
        (LoggingLevel::Info, "Tool execution started"),
        (LoggingLevel::Info, "Tool processing data"),
        (LoggingLevel::Info, "Tool execution completed"),
    ] {
        ctx.log(level, Some("test_logging_tool"), json!(text));
    }
    CallToolResult::text("Logging test completed.").into()
}

async fn missing_capability(ctx: RequestContext, _: NoArgs) -> ToolReply {
    match sampled_text(&ctx.answer("summary")) {
        Some(text) => CallToolResult::text(format!("Sampled: {text}")).into(),
        None => InputRequired::new()
            .sample("summary", sampling("Say hello in one word.", 20))
            .into(),
    }
}

#[derive(Deserialize)]
struct Name {
    name: String,
}

async fn streaming_elicitation(ctx: RequestContext, _: NoArgs) -> ToolReply {
    match (ctx.accepted::<Name>("user_name"), ctx.answer("user_name")) {
        (Some(Name { name }), _) => CallToolResult::text(format!("Hello, {name}!")).into(),
        (None, Answer::Declined | Answer::Cancelled) => {
            CallToolResult::text("No name given.").into()
        }
        (None, _) => InputRequired::new()
            .elicit(
                "user_name",
                ElicitForm::new("What is your name?").required("name", FormField::string()),
            )
            .into(),
    }
}

//! The prompts (plain, with arguments, an embedded resource, an image, and
//! one that asks for input first) and argument completion.

use serde::Deserialize;
use tessera_protocol::{
    CompleteRequestParams, Completion, CompletionReference, GetPromptResult, PromptMessage, Role,
};
use tessera_server::{
    CompletionHandler, ElicitForm, FormField, InputRequired, PromptArguments, PromptDef,
    PromptReply, RequestContext,
};

use crate::tools::{embedded, image};

/// Every prompt, in listing order.
pub fn all() -> Vec<PromptDef> {
    vec![
        PromptDef::new("test_simple_prompt")
            .description("A simple prompt without arguments")
            .handler(|_ctx: RequestContext, _args| async {
                PromptReply::from(messages(vec![PromptMessage::user_text(
                    "This is a simple prompt for testing.",
                )]))
            }),
        PromptDef::new("test_prompt_with_arguments")
            .description("A prompt that repeats its two arguments")
            .argument("arg1", "First test argument", true)
            .argument("arg2", "Second test argument", true)
            .handler(|_ctx: RequestContext, args| async move {
                let arg = |name: &str| args.get(name).cloned().unwrap_or_default();
                PromptReply::from(messages(vec![PromptMessage::user_text(format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    arg("arg1"),
                    arg("arg2")
                ))]))
            }),
        PromptDef::new("test_prompt_with_embedded_resource")
            .description("A prompt that embeds the resource it is given")
            .argument("resourceUri", "URI of the resource to embed", true)
            .handler(|_ctx: RequestContext, args| async move {
                let uri = args.get("resourceUri").cloned().unwrap_or_default();
                PromptReply::from(messages(vec![
                    PromptMessage {
                        role: Role::User,
                        content: embedded(
                            &uri,
                            "text/plain",
                            "Embedded resource content for testing.",
                        ),
                    },
                    PromptMessage::user_text("Please process the embedded resource above."),
                ]))
            }),
        PromptDef::new("test_prompt_with_image")
            .description("A prompt that shows an image")
            .handler(|_ctx: RequestContext, _args| async {
                PromptReply::from(messages(vec![
                    PromptMessage {
                        role: Role::User,
                        content: image(),
                    },
                    PromptMessage::user_text("Please analyze the image above."),
                ]))
            }),
        PromptDef::new("test_input_required_result_prompt")
            .description("Asks for context (elicitation under key user_context) before rendering")
            .handler(context_prompt),
    ]
}

/// A prompt result holding `messages`.
fn messages(messages: Vec<PromptMessage>) -> GetPromptResult {
    GetPromptResult {
        messages,
        ..GetPromptResult::default()
    }
}

#[derive(Deserialize)]
struct Context {
    context: String,
}

async fn context_prompt(ctx: RequestContext, _args: PromptArguments) -> PromptReply {
    match ctx.accepted::<Context>("user_context") {
        Some(Context { context }) => messages(vec![PromptMessage::user_text(format!(
            "Answer with this context in mind: {context}"
        ))])
        .into(),
        None => InputRequired::new()
            .elicit(
                "user_context",
                ElicitForm::new("What context should the prompt use?")
                    .required("context", FormField::string()),
            )
            .into(),
    }
}

/// Values offered for `test_prompt_with_arguments`' arguments.
const SUGGESTIONS: &[&str] = &["testValue1", "testValue2", "test-alpha", "other"];

/// Completes the arguments of `test_prompt_with_arguments` from a fixed list, by prefix.
pub fn completion() -> CompletionHandler {
    CompletionHandler::new(|params: CompleteRequestParams| async move {
        let known = matches!(
            &params.reference,
            CompletionReference::Prompt { name, .. } if name == "test_prompt_with_arguments"
        ) && matches!(params.argument.name.as_str(), "arg1" | "arg2");
        let values: Vec<String> = if known {
            SUGGESTIONS
                .iter()
                .filter(|s| s.starts_with(params.argument.value.as_str()))
                .map(|s| (*s).to_owned())
                .collect()
        } else {
            Vec::new()
        };
        Completion {
            total: Some(values.len() as u64),
            has_more: Some(false),
            values,
        }
    })
}

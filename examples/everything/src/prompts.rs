//! The prompts (plain, with arguments, an embedded resource, an image, and
//! one that asks for input first) and argument completion.

use tessera::protocol::{PromptMessage, Role};
use tessera::{Context, PartialArgument, PromptDef};

use crate::tools::{embedded, image};

/// Every prompt, in listing order.
pub fn all() -> Vec<PromptDef> {
    vec![
        test_simple_prompt_prompt(),
        test_prompt_with_arguments_prompt()
            .complete("arg1", suggest)
            .complete("arg2", suggest),
        test_prompt_with_embedded_resource_prompt(),
        test_prompt_with_image_prompt(),
        test_input_required_result_prompt_prompt(),
    ]
}

/// A simple prompt without arguments
#[tessera::prompt]
async fn test_simple_prompt() -> String {
    "This is a simple prompt for testing.".into()
}

/// A prompt that repeats its two arguments
#[tessera::prompt]
async fn test_prompt_with_arguments(
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
) -> String {
    format!("Prompt with arguments: arg1='{arg1}', arg2='{arg2}'")
}

/// A prompt that embeds the resource it is given
#[tessera::prompt]
async fn test_prompt_with_embedded_resource(
    /// URI of the resource to embed
    #[serde(rename = "resourceUri")]
    resource_uri: String,
) -> Vec<PromptMessage> {
    vec![
        PromptMessage {
            role: Role::User,
            content: embedded(
                &resource_uri,
                "text/plain",
                "Embedded resource content for testing.",
            ),
        },
        PromptMessage::user_text("Please process the embedded resource above."),
    ]
}

/// A prompt that shows an image
#[tessera::prompt]
async fn test_prompt_with_image() -> Vec<PromptMessage> {
    vec![
        PromptMessage {
            role: Role::User,
            content: image(),
        },
        PromptMessage::user_text("Please analyze the image above."),
    ]
}

/// What the prompt should keep in mind.
#[tessera::form(key = "user_context")]
struct UserContext {
    context: String,
}

/// Asks for context (elicitation under key user_context) before rendering
#[tessera::prompt]
async fn test_input_required_result_prompt(ctx: &Context) -> tessera::Result<String> {
    let UserContext { context } = ctx.ask("What context should the prompt use?")?;
    Ok(format!("Answer with this context in mind: {context}"))
}

/// Values offered for `test_prompt_with_arguments`' arguments.
const SUGGESTIONS: &[&str] = &["testValue1", "testValue2", "test-alpha", "other"];

/// Completes an argument of `test_prompt_with_arguments` from a fixed list, by prefix.
async fn suggest(_ctx: Context, typed: PartialArgument) -> Vec<String> {
    typed.matching(SUGGESTIONS.iter().copied())
}

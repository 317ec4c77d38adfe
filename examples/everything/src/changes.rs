//! The triggers of the `server-stateless` subscription checks: each publishes
//! a list change to every `subscriptions/listen` stream that asked for it.

use tessera::{Notifier, State, ToolDef};

/// The trigger tools.
pub fn all() -> Vec<ToolDef> {
    vec![
        test_trigger_tool_change_tool(),
        test_trigger_prompt_change_tool(),
    ]
}

/// Announces that the tool list changed
#[tessera::tool]
async fn test_trigger_tool_change(
    State(notifier): State<Notifier>,
) -> tessera::Result<&'static str> {
    notifier.tools_list_changed().await?;
    Ok("notifications/tools/list_changed published")
}

/// Announces that the prompt list changed
#[tessera::tool]
async fn test_trigger_prompt_change(
    State(notifier): State<Notifier>,
) -> tessera::Result<&'static str> {
    notifier.prompts_list_changed().await?;
    Ok("notifications/prompts/list_changed published")
}

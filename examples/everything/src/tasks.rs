//! The tools the conformance suite's `tasks-*` scenarios call (the tasks
//! extension, SEP-2663): calls that go on as tasks the client polls, answers
//! through `tasks/update`, and cancels.

use std::time::Duration;

use serde_json::json;
use tessera::protocol::CallToolResult;
use tessera::{Context, TaskSupport, ToolDef};

use crate::tools::UserName;

/// The task tools, in listing order.
pub fn all() -> Vec<ToolDef> {
    vec![
        greet_tool(),
        slow_compute_tool().task_support(TaskSupport::Optional),
        failing_job_tool().task_support(TaskSupport::Required),
        protocol_error_job_tool()
            .task_support(TaskSupport::Required)
            .output_schema(
                json!({"type": "object", "properties": {"answer": {"type": "integer"}},
                       "required": ["answer"]})
                .as_object()
                .cloned()
                .unwrap_or_default(),
            ),
        confirm_delete_tool().task_support(TaskSupport::Required),
        multi_input_tool().task_support(TaskSupport::Required),
        test_tool_with_task_tool().task_support(TaskSupport::Required),
    ]
}

/// Greets someone (never a task)
#[tessera::tool]
async fn greet(
    /** Who to greet */
    name: String,
) -> String {
    format!("Hello, {name}!")
}

/// Works for the given number of seconds; a task when the client can poll
#[tessera::tool]
async fn slow_compute(
    ctx: &Context,
    /// How long to work, in seconds
    seconds: f64,
    /// A label echoed in the result
    label: Option<String>,
) -> tessera::Result<String> {
    if seconds > 0.0 {
        ctx.begin_task()?;
        tokio::time::sleep(Duration::from_secs_f64(seconds.min(3600.0))).await;
    }
    Ok(format!(
        "Computed {} for {seconds} s.",
        label.as_deref().unwrap_or("(no label)")
    ))
}

/// A task that ends in a tool error (isError)
#[tessera::tool]
async fn failing_job(ctx: &Context) -> tessera::Result<String> {
    ctx.begin_task()?;
    tokio::time::sleep(Duration::from_millis(300)).await;
    Err(tessera::HandlerError::msg(
        "The job failed: the input data is corrupt.",
    ))
}

/// A task whose result breaks its output schema, so the task fails with a JSON-RPC error
#[tessera::tool]
async fn protocol_error_job(ctx: &Context) -> tessera::Result<CallToolResult> {
    ctx.begin_task()?;
    Ok(CallToolResult::structured(json!({"answer": "forty-two"})))
}

/// Whether to go ahead.
#[tessera::form(key = "confirm")]
struct Confirm {
    confirm: bool,
}

/// Asks, inside the task, whether to delete the file
#[tessera::tool]
async fn confirm_delete(
    ctx: &Context,
    /** The file */
    filename: String,
) -> tessera::Result<String> {
    ctx.begin_task()?;
    let Confirm { confirm } = ctx.ask(format!("Delete {filename}?"))?;
    Ok(if confirm {
        format!("Deleted {filename}.")
    } else {
        format!("Kept {filename}.")
    })
}

/// A name and a confirmation, either way round.
#[tessera::form(key = "name")]
struct NameAnswer {
    name: String,
}

/// A confirmation that may also carry a name.
#[tessera::form(key = "confirm_name")]
struct ConfirmAnswer {
    confirm: bool,
}

/// Asks two questions at once inside the task
#[tessera::tool]
async fn multi_input(ctx: &Context) -> tessera::Result<String> {
    ctx.begin_task()?;
    let name = ctx.ask::<NameAnswer>("Your name?");
    let confirm = ctx.ask::<ConfirmAnswer>("Go ahead?");
    let (NameAnswer { name }, ConfirmAnswer { confirm }) = (name?, confirm?);
    Ok(format!("name={name}; confirm={confirm}"))
}

/// Asks for a name in the call's own rounds, then greets from a task
#[tessera::tool]
async fn test_tool_with_task(ctx: &Context) -> tessera::Result<String> {
    let UserName { name } = ctx.ask("What is your name?")?;
    ctx.begin_task()?;
    Ok(format!("Hello, {name}! (from a task)"))
}

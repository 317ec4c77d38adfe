//! A test Worker for the Durable Object task store (`TASK_STORE`): served by
//! `wrangler dev`, it answers
//!
//! - `/mcp`: an MCP server whose tools run as tasks (`confirm-delete` asks
//!   inside its task, `slow` works for a given time), their tasks kept in
//!   the Durable Object and run on the request's `waitUntil` (with the var
//!   `TASKS_IN_MEMORY = "true"`, kept in the builder's in-memory default,
//!   on which the Worker runs none);
//! - `/check-task-store`: the `TaskStore` contract
//!   (`tessera_server::testing::check_task_store`) run here, inside workerd,
//!   against fresh objects: 200 `kept` when every rule holds; a broken rule
//!   panics, naming itself in the log.

use std::time::Duration;

use tessera::worker::{DurableObjectTaskStore, McpBody, TASK_STORE_BINDING, WorkerTasks};
use tessera::{Context, TaskSupport};
use worker::send::SendFuture;
use worker::{Env, HttpRequest, event};

/// The Durable Object class keeping the tasks (bound as `TASK_STORE`).
pub use tessera::worker::TaskStoreObject;

/// Whether to go ahead.
#[tessera::form(key = "confirm")]
struct Confirm {
    confirm: bool,
}

/// Asks, inside the task, whether to delete the file
#[tessera::tool(name = "confirm-delete")]
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

/// Works for the given number of seconds, as a task
#[tessera::tool]
async fn slow(
    ctx: &Context,
    /// How long to work, in seconds
    seconds: f64,
) -> tessera::Result<String> {
    ctx.begin_task()?;
    SendFuture::new(worker::Delay::from(Duration::from_secs_f64(
        seconds.clamp(0.0, 3600.0),
    )))
    .await;
    Ok(format!("Worked for {seconds} s."))
}

/// Every request to the Worker.
#[event(fetch)]
async fn fetch(
    request: HttpRequest,
    env: Env,
    ctx: worker::Context,
) -> worker::Result<http::Response<McpBody>> {
    if request.uri().path() == "/check-task-store" {
        return check_task_store(&env, ctx).await;
    }
    Ok(tessera::worker::serve(request, &env, ctx, |setup| {
        let store = setup.task_store.clone().ok_or_else(|| {
            tessera::BuildError(format!(
                "this Worker needs the {TASK_STORE_BINDING} binding"
            ))
        })?;
        let builder = tessera::McpServer::builder("tessera-tasks-test", env!("CARGO_PKG_VERSION"))
            .request_state(setup.codec.clone())
            .tool(confirm_delete_tool().task_support(TaskSupport::Required))
            .tool(slow_tool().task_support(TaskSupport::Required));
        // TASKS_IN_MEMORY = "true": the builder's in-memory default, on which
        // a Worker must run no task.
        let in_memory = setup
            .env
            .var("TASKS_IN_MEMORY")
            .is_ok_and(|v| v.to_string() == "true");
        if in_memory {
            builder.build()
        } else {
            builder.task_store(store).build()
        }
    })
    .await)
}

/// Runs the store contract against objects no other run uses.
async fn check_task_store(
    env: &Env,
    ctx: worker::Context,
) -> worker::Result<http::Response<McpBody>> {
    // A broken rule panics; the request then hangs (the wasm aborts) and the
    // test shows the log. console.error from a panic hook never reaches
    // wrangler dev's log; console.log does.
    std::panic::set_hook(Box::new(|info| {
        worker::console_log!("check-task-store: {info}")
    }));
    let namespace = env.durable_object(TASK_STORE_BINDING)?;
    let run = format!("contract-{}", worker::Date::now().as_millis());
    let mut checks = 0;
    tessera_server::testing::check_task_store(
        |policy| {
            checks += 1;
            let store =
                DurableObjectTaskStore::new(namespace.clone(), &format!("{run}-{checks}"), policy);
            async move { store }
        },
        &WorkerTasks::new(ctx),
    )
    .await;
    Ok(http::Response::new(McpBody::full(
        format!("kept: {checks} checks\n").into(),
    )))
}

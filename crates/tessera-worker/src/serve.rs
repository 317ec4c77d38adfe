//! One `fetch` event through the endpoint.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;

use http_body_util::BodyExt;
use tessera_http::{McpBody, McpEndpoint, RequestTaskRuntime, misconfigured};
use tessera_server::{BuildError, McpServer};
use worker::{Context, Env, HttpRequest};

use crate::{WorkerConfig, WorkerSetup, WorkerTasks};

thread_local! {
    /// The endpoint, built by the first request of this isolate.
    static ENDPOINT: RefCell<Option<Rc<Served>>> = const { RefCell::new(None) };
}

/// What the isolate serves with.
struct Served {
    endpoint: McpEndpoint,
    /// Whether tasks run: only when the server keeps them in a shared store
    /// (the Durable Object one), so that a task never lives in one
    /// isolate's memory, out of reach of the others.
    runs_tasks: bool,
}

/// Serves one request: builds the server with `build` on the isolate's first
/// request (from [`WorkerConfig::from_env`]), then runs the check ladder and
/// the handler. When the server keeps its tasks in a shared store
/// ([`WorkerSetup::task_store`], the `TASK_STORE` binding), calls that go on
/// as tasks run on the event's `waitUntil` ([`WorkerTasks`]); with the
/// in-memory default none does (a call that would start one gets -32603
/// saying so). A configuration error answers 500 naming the fix (and is
/// not kept: the next request reads the environment again). The server built
/// first serves the isolate's whole life: one Worker, one server.
pub async fn serve<F>(
    request: HttpRequest,
    env: &Env,
    ctx: Context,
    build: F,
) -> http::Response<McpBody>
where
    F: FnOnce(WorkerSetup) -> Result<McpServer, BuildError>,
{
    let served = match served(env, build) {
        Ok(served) => served,
        Err(message) => {
            worker::console_error!("tessera: {message}");
            return misconfigured(&message);
        }
    };
    // The endpoint needs a `Send + Sync` body error; the Worker's carries a JS value.
    let mut request = request.map(|body| body.map_err(|e| std::io::Error::other(e.to_string())));
    if served.runs_tasks {
        request
            .extensions_mut()
            .insert(RequestTaskRuntime(Arc::new(WorkerTasks::new(ctx))));
    }
    let mut service = served.endpoint.clone();
    match tower_service::Service::call(&mut service, request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

fn served<F>(env: &Env, build: F) -> Result<Rc<Served>, String>
where
    F: FnOnce(WorkerSetup) -> Result<McpServer, BuildError>,
{
    if let Some(served) = ENDPOINT.with(|e| e.borrow().clone()) {
        return Ok(served);
    }
    let WorkerConfig { options, setup } = WorkerConfig::from_env(env)?;
    let server = build(setup).map_err(|e| format!("the server could not be built: {e}"))?;
    let runs_tasks = server.task_store().is_some_and(|store| store.is_shared());
    let served = Rc::new(Served {
        endpoint: McpEndpoint::new(Arc::new(server), options),
        runs_tasks,
    });
    ENDPOINT.with(|e| *e.borrow_mut() = Some(Rc::clone(&served)));
    Ok(served)
}

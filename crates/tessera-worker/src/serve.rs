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
    static ENDPOINT: RefCell<Option<Rc<McpEndpoint>>> = const { RefCell::new(None) };
}

/// Serves one request: builds the server with `build` on the isolate's first
/// request (from [`WorkerConfig::from_env`]), then runs the check ladder and
/// the handler. Calls that go on as tasks run on the event's `waitUntil`
/// ([`WorkerTasks`]). A configuration error answers 500 naming the fix (and is
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
    let endpoint = match endpoint(env, build) {
        Ok(endpoint) => endpoint,
        Err(message) => {
            worker::console_error!("tessera: {message}");
            return misconfigured(&message);
        }
    };
    // The endpoint needs a `Send + Sync` body error; the Worker's carries a JS value.
    let mut request = request.map(|body| body.map_err(|e| std::io::Error::other(e.to_string())));
    request
        .extensions_mut()
        .insert(RequestTaskRuntime(Arc::new(WorkerTasks::new(ctx))));
    let mut service = (*endpoint).clone();
    match tower_service::Service::call(&mut service, request).await {
        Ok(response) => response,
        Err(never) => match never {},
    }
}

fn endpoint<F>(env: &Env, build: F) -> Result<Rc<McpEndpoint>, String>
where
    F: FnOnce(WorkerSetup) -> Result<McpServer, BuildError>,
{
    if let Some(endpoint) = ENDPOINT.with(|e| e.borrow().clone()) {
        return Ok(endpoint);
    }
    let WorkerConfig { options, setup } = WorkerConfig::from_env(env)?;
    let server = build(setup).map_err(|e| format!("the server could not be built: {e}"))?;
    let endpoint = Rc::new(McpEndpoint::new(Arc::new(server), options));
    ENDPOINT.with(|e| *e.borrow_mut() = Some(Rc::clone(&endpoint)));
    Ok(endpoint)
}

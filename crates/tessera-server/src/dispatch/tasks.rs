//! The tasks extension (SEP-2663): a tool call that goes on as a task, the
//! task's driver, and `tasks/get`, `tasks/update`, `tasks/cancel`.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;

use indexmap::IndexMap;
use serde_json::{Map, Value, json};
use tessera_protocol::clock::Instant;

use crate::latch::first_of;
use tessera_protocol::{
    CreateTaskResult, GetTaskResult, InputRequests, JsonObject, RequestId, RequestMeta,
    TASKS_EXTENSION, TaskResultType, declares_tasks, tasks_capability,
};

use super::capability_check::check_capabilities;
use super::handled::Json;
use super::{Incoming, required_str};
use crate::answer::{Slot, collect};
use crate::app_state::AppState;
use crate::context::{NextRound, TaskMode};
use crate::handler_error::Kind;
use crate::latch::Latch;
use crate::question::Asked;
use crate::task_store::{
    LEASE_RENEWAL, NewTask, RUNNER_LEASE, TaskOutcome, TaskStore, TaskStoreError,
};
use crate::{
    Context, HandlerError, Interrupt, McpServer, RequestFacts, ServerError, TaskSupport, ToolDef,
};

/// What a task's handler runs with, besides its answers: the request that started it.
struct Origin {
    id: RequestId,
    meta: Box<RequestMeta>,
    facts: RequestFacts,
    app: Arc<AppState>,
}

impl McpServer {
    /// Whether this call of `tool` may become a task; refuses a task-only tool
    /// to a client that did not declare the extension (-32021).
    pub(super) fn task_mode(
        &self,
        tool: &ToolDef,
        incoming: &Incoming,
    ) -> Result<TaskMode, ServerError> {
        let declared = declared_tasks(incoming);
        match (tool.task_support, declared) {
            (TaskSupport::Forbidden, _) => Ok(TaskMode::Synchronous),
            (_, true) if self.tasks.is_some() => Ok(TaskMode::MayStart),
            (TaskSupport::Required, _) => Err(tasks_needed(&format!(
                "tool {} runs only as a task",
                tool.tool.name
            ))),
            (TaskSupport::Optional, _) => Ok(TaskMode::Synchronous),
        }
    }

    /// Starts the task for the call `ctx` serves: its driver runs the handler
    /// again from the top with the answers given so far; the call answers
    /// with the task.
    pub(super) async fn start_task(
        &self,
        tool: &ToolDef,
        arguments: Value,
        ctx: Context,
    ) -> Result<Json, ServerError> {
        let Some(store) = &self.tasks else {
            return Err(ServerError::Internal {
                message: "this server keeps no tasks".into(),
            });
        };
        let Some(runtime) = ctx.inner.facts.tasks.clone() else {
            return Err(ServerError::Internal {
                message: "this transport runs no tasks (it gives no task runtime)".into(),
            });
        };
        // The driver keeps the arguments while the task runs: counted first.
        let held = self.running_tasks.hold(
            ctx.inner.facts.caller_key(),
            crate::answer::json_len(&arguments),
        )?;
        let record = store
            .create(NewTask {
                principal: ctx.principal().map(str::to_owned),
                caller: ctx.inner.facts.caller_key(),
                trace: crate::telemetry::task_trace(),
            })
            .await
            .map_err(store_error)?;
        let NextRound { carry, .. } = ctx.take_next();
        let origin = Origin {
            id: ctx.inner.id.clone(),
            meta: ctx.inner.meta.clone(),
            facts: ctx.inner.facts.clone(),
            app: Arc::clone(&ctx.inner.app),
        };
        let (earlier, carried) = ctx.into_answers();
        let created = CreateTaskResult {
            result_type: TaskResultType,
            task: record.view(store.policy()),
            meta: None,
        };
        tracing::info!(task = %record.id, tool = %tool.tool.name, "task started");
        let runner = Runner::start(
            record.id,
            Announcer {
                store: Arc::clone(store),
                bus: Arc::clone(&self.bus),
                principal: origin.facts.principal.clone(),
            },
            Arc::clone(&runtime),
        );
        let driven = drive(
            runner,
            tool.clone(),
            arguments,
            origin,
            earlier,
            carry.or(carried),
        );
        runtime.spawn(Box::pin(async move {
            let _held = held;
            driven.await;
        }));
        self.finish(created)
    }

    /// `tasks/get`, `tasks/update` and `tasks/cancel`.
    pub(super) async fn task_method(
        &self,
        method: &str,
        mut params: Option<Value>,
        incoming: &Incoming,
    ) -> Result<Json, ServerError> {
        // The capability comes before the task: a client that did not declare
        // the extension learns nothing about which ids exist.
        if !declared_tasks(incoming) {
            return Err(tasks_needed(&format!(
                "{method} belongs to the tasks extension"
            )));
        }
        let Some(store) = &self.tasks else {
            return Err(ServerError::MethodNotFound {
                method: method.to_owned(),
            });
        };
        let id = required_str(params.as_ref(), "taskId", method)?.to_owned();
        let principal = incoming.facts.principal.as_deref();
        // Ids are 32 hex digits: anything else names no task, and never
        // reaches a store (whose keys are built from it).
        let well_formed = id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit());
        let not_found = || {
            ServerError::invalid_params(format!(
                "Failed to retrieve task: no task {id} (unknown, expired, or another caller's)"
            ))
        };
        let ack = || Json::Value(json!({"resultType": "complete"}));
        if !well_formed {
            return Err(not_found());
        }
        match method {
            tessera_protocol::TASKS_GET => {
                let record = store
                    .get(&id, principal)
                    .await
                    .map_err(store_error)?
                    .ok_or_else(not_found)?;
                self.finish(GetTaskResult {
                    result_type: tessera_protocol::Complete,
                    task: record.view(store.policy()),
                    meta: None,
                })
            }
            tessera_protocol::TASKS_UPDATE => {
                link_to_start(store, &id, principal).await;
                let responses = match super::take(&mut params, tessera_protocol::INPUT_RESPONSES) {
                    Some(Value::Object(responses)) => responses,
                    None | Some(Value::Null) => Map::new(),
                    Some(_) => {
                        return Err(ServerError::invalid_params(
                            "Invalid tasks/update params: inputResponses must be an object keyed by input request",
                        ));
                    }
                };
                let found = store
                    .answer(&id, principal, responses)
                    .await
                    .map_err(store_error)?;
                if found {
                    self.announcer(store, principal).announce(&id).await;
                }
                found.then(ack).ok_or_else(not_found)
            }
            _ => {
                link_to_start(store, &id, principal).await;
                let found = store.cancel(&id, principal).await.map_err(store_error)?;
                if found {
                    tracing::info!(task = %id, "task cancelled by the client");
                    self.announcer(store, principal).announce(&id).await;
                }
                found.then(ack).ok_or_else(not_found)
            }
        }
    }
}

impl McpServer {
    fn announcer(&self, store: &Arc<dyn TaskStore>, principal: Option<&str>) -> Announcer {
        Announcer {
            store: Arc::clone(store),
            bus: Arc::clone(&self.bus),
            principal: principal.map(str::to_owned),
        }
    }
}

/// The largest task a notification carries whole: 64 KiB of JSON; past it,
/// its `result` or `error` is left out (and fetched with `tasks/get`).
pub const MAX_ANNOUNCED_TASK_BYTES: usize = 64 * 1024;

/// Tells `subscriptions/listen` streams that asked for a task (`taskIds`)
/// its state after a change made here (a round of questions, answers, the
/// end, a cancel): the task as `tasks/get` would answer it, read back from
/// the store, published on the change bus so listeners on every instance
/// hear it. A task that ends `failed` because its instance died is seen by
/// the next `tasks/get`, not announced.
struct Announcer {
    store: Arc<dyn TaskStore>,
    bus: Arc<dyn crate::ChangeBus>,
    principal: Option<String>,
}

impl Announcer {
    /// Publishes task `id`'s state (a failure is logged: clients still poll).
    async fn announce(&self, id: &str) {
        let record = match self.store.get(id, self.principal.as_deref()).await {
            Ok(Some(record)) => record,
            Ok(None) => return,
            Err(e) => {
                tracing::debug!(task = %id, error = %e, "a task's state could not be read to announce it");
                return;
            }
        };
        let Ok(Value::Object(mut task)) = serde_json::to_value(record.view(self.store.policy()))
        else {
            return;
        };
        // A large result or error stays out of the bus (every instance hears
        // every change): listeners fetch it with tasks/get.
        if crate::answer::json_len(&task) > MAX_ANNOUNCED_TASK_BYTES {
            task.remove("result");
            task.remove("error");
        }
        let change = crate::Change::TaskStatus {
            principal: self.principal.clone(),
            task,
        };
        if let Err(e) = self.bus.publish(change).await {
            tracing::debug!(task = %id, error = %e, "a task's state could not be announced");
        }
    }
}

/// Links this request's span (a `tasks/update` or `tasks/cancel`) to the
/// span of the request that started task `id`, so a task's requests are one
/// story; the task is read only while spans are recorded.
async fn link_to_start(store: &Arc<dyn TaskStore>, id: &str, principal: Option<&str>) {
    #[cfg(feature = "otel")]
    if crate::telemetry::request_span().is_some()
        && let Ok(Some(record)) = store.get(id, principal).await
        && let Some(trace) = record.trace.as_deref()
    {
        crate::telemetry::link_to_task_start(trace);
    }
    #[cfg(not(feature = "otel"))]
    let _ = (store, id, principal);
}

/// A store's refusal as the client sees it: 503 with a retry hint.
fn store_error(error: TaskStoreError) -> ServerError {
    ServerError::Unavailable {
        message: error.to_string(),
        retry_after_secs: 5,
    }
}

/// Whether the request declares the tasks extension in its client capabilities.
pub(super) fn declared_tasks(incoming: &Incoming) -> bool {
    incoming
        .meta
        .client_capabilities
        .as_ref()
        .is_some_and(declares_tasks)
}

/// -32021 naming the tasks extension.
pub(super) fn tasks_needed(what: &str) -> ServerError {
    ServerError::MissingExtension {
        message: format!(
            "{what}: declare the {TASKS_EXTENSION} extension in the request's client capabilities"
        ),
        required: Box::new(tasks_capability()),
    }
}

/// The running side of one task: its id, where it is kept, the runtime its
/// driver sleeps on, and the latch its keeper sets when the work must stop.
struct Runner {
    id: String,
    store: Arc<dyn TaskStore>,
    announcer: Announcer,
    runtime: Arc<dyn crate::TaskRuntime>,
    stop: Arc<Latch>,
}

impl Runner {
    /// A runner of task `id`, its keeper started beside it.
    fn start(id: String, announcer: Announcer, runtime: Arc<dyn crate::TaskRuntime>) -> Self {
        let store = Arc::clone(&announcer.store);
        let stop = Arc::new(Latch::default());
        runtime.spawn(Box::pin(keep(
            id.clone(),
            Arc::clone(&store),
            Arc::clone(&runtime),
            Arc::clone(&stop),
        )));
        Self {
            id,
            store,
            announcer,
            runtime,
            stop,
        }
    }

    /// Ends the task with `outcome` (a store that fails is logged: the task
    /// then ends `failed` once its lease runs out).
    async fn finish(&self, outcome: TaskOutcome) {
        match self.store.finish(&self.id, outcome).await {
            Ok(()) => self.announcer.announce(&self.id).await,
            Err(e) => {
                tracing::warn!(task = %self.id, error = %e, "a task's outcome could not be kept")
            }
        }
    }

    /// `work`'s output, or `None` once the keeper says stop (`work` is
    /// dropped then).
    async fn until_stopped<F: Future>(&self, work: F) -> Option<F::Output> {
        let mut stop = pin!(self.stop.wait());
        let mut work = pin!(work);
        std::future::poll_fn(|cx| {
            if stop.as_mut().poll(cx).is_ready() {
                return Poll::Ready(None);
            }
            work.as_mut().poll(cx).map(Some)
        })
        .await
    }

    /// Logs that the driver stopped before the task ended here.
    fn stopped(&self) {
        tracing::info!(task = %self.id, "task stopped: cancelled, ended elsewhere, or expired");
    }

    /// The answers of the round, once every question has one.
    async fn answers(&self) -> JsonObject {
        loop {
            // Listening before looking: answers given in between still wake us.
            let changed = self.store.changed(&self.id);
            match self.store.take_answers(&self.id).await {
                Ok(Some(answers)) => return answers,
                Ok(None) => {}
                Err(e) => {
                    tracing::warn!(task = %self.id, error = %e, "a task's answers could not be read")
                }
            }
            first_of(changed, self.runtime.sleep(LEASE_RENEWAL)).await;
        }
    }
}

/// Keeps task `id`'s lease while its driver works, on a task of its own (a
/// handler busy between awaits cannot hold the lease back): renews it every
/// [`LEASE_RENEWAL`] and whenever the store says the task changed, and sets
/// `stop` once the task was cancelled, ended (by its driver or elsewhere) or
/// is gone, or once renewals have failed for a whole lease (the other
/// instances take the task for abandoned then, so its work must not go on).
async fn keep(
    id: String,
    store: Arc<dyn TaskStore>,
    runtime: Arc<dyn crate::TaskRuntime>,
    stop: Arc<Latch>,
) {
    let mut renewed = Instant::now();
    // The driver sets `stop` when it ends (a runner dropped), and the keeper goes.
    while !stop.is_set() {
        let changed = store.changed(&id);
        match store.renew(&id).await {
            Ok(Some(status)) if !status.is_terminal() => renewed = Instant::now(),
            Ok(_) => break,
            Err(e) if renewed.elapsed() >= RUNNER_LEASE => {
                tracing::warn!(task = %id, error = %e, "a task's lease could not be renewed for a whole lease; its work stops");
                break;
            }
            Err(e) => tracing::warn!(task = %id, error = %e, "a task's lease could not be renewed"),
        }
        first_of(changed, runtime.sleep(LEASE_RENEWAL)).await;
    }
    stop.set();
}

impl Drop for Runner {
    fn drop(&mut self) {
        // The driver ended: its keeper stops renewing.
        self.stop.set();
    }
}

/// Runs a task to its end: the handler from the top, again after every round
/// of answers, until it finishes or the task is cancelled.
async fn drive(
    runner: Runner,
    tool: ToolDef,
    arguments: Value,
    origin: Origin,
    mut earlier: IndexMap<String, Slot>,
    mut carried: Option<Value>,
) {
    let mut fresh = IndexMap::new();
    loop {
        let ctx = Context::new(
            Incoming {
                id: origin.id.clone(),
                meta: origin.meta.clone(),
                facts: origin.facts.clone(),
                keep_rounds: false,
            },
            &tool.tool.name,
            &origin.app,
            std::mem::take(&mut fresh),
            earlier.clone(),
            carried.clone(),
            TaskMode::Running,
        );
        let Some(ran) = runner
            .until_stopped((tool.handler)(ctx.clone(), arguments.clone()))
            .await
        else {
            return runner.stopped();
        };
        let error = match ran {
            Ok(result) => {
                runner.finish(checked(&tool, Ok(result))).await;
                break;
            }
            // Questions: the same rule as a call's rounds (an invalid answer
            // is asked again, the reason in the question, unless the tool refuses it).
            Err(HandlerError(Kind::Interrupt(Interrupt::InputRequired))) => None,
            Err(HandlerError(Kind::Interrupt(Interrupt::Invalid { .. })))
                if !tool.refuse_invalid =>
            {
                None
            }
            Err(error) => Some(error),
        };
        if let Some(error) = error {
            runner.finish(checked(&tool, Err(error))).await;
            break;
        }
        // A round of questions: ask them through the task, wait for the answers.
        let NextRound {
            questions, carry, ..
        } = ctx.take_next();
        if carry.is_some() {
            carried = carry;
        }
        // A key asked again is answered again: its earlier answer no longer counts.
        let (given, _) = ctx.into_answers();
        earlier = given
            .into_iter()
            .filter(|(key, _)| !questions.contains_key(key))
            .collect();
        if questions.is_empty() {
            // A round that only carries state: run again after a short pause.
            let pause = runner.runtime.sleep(std::time::Duration::from_millis(50));
            if runner.until_stopped(pause).await.is_none() {
                return runner.stopped();
            }
            continue;
        }
        if let Err(e) = check_capabilities(&questions, origin.capabilities()) {
            runner
                .finish(TaskOutcome::Failed(e.to_error_object()))
                .await;
            break;
        }
        let (asked, wire): (IndexMap<String, Asked>, InputRequests) = questions
            .into_iter()
            .map(|(key, q)| ((key.clone(), q.asked()), (key, q.into_wire())))
            .unzip();
        if let Err(e) = runner.store.ask(&runner.id, wire).await {
            tracing::warn!(task = %runner.id, error = %e, "a task's questions could not be kept");
            runner
                .finish(TaskOutcome::Failed(store_error(e).to_error_object()))
                .await;
            break;
        }
        runner.announcer.announce(&runner.id).await;
        let Some(responses) = runner.until_stopped(runner.answers()).await else {
            return runner.stopped();
        };
        fresh = collect(&asked, Some(responses));
    }
    tracing::info!(task = %runner.id, "task ended");
}

/// How a run of the handler ends the task: its result (checked against the
/// output schema) or its error, as the tool shapes them.
fn checked(
    tool: &ToolDef,
    ran: Result<tessera_protocol::CallToolResult, HandlerError>,
) -> TaskOutcome {
    let result = match ran {
        Ok(result) => tool.check_output(&result).map(|()| result),
        Err(error) => tool.outcome_of(error),
    };
    match result {
        Ok(result) => TaskOutcome::Completed(json!(result)),
        Err(e) => TaskOutcome::Failed(e.to_error_object()),
    }
}

impl Origin {
    fn capabilities(&self) -> &tessera_protocol::ClientCapabilities {
        self.meta
            .client_capabilities
            .as_ref()
            .unwrap_or(&crate::context::NO_CAPABILITIES)
    }
}

//! The tasks extension (SEP-2663): a tool call that goes on as a task, the
//! task's driver, and `tasks/get`, `tasks/update`, `tasks/cancel`.

use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::Poll;

use indexmap::IndexMap;
use serde_json::{Map, Value, json};
use tessera_protocol::{
    CreateTaskResult, GetTaskResult, RequestId, RequestMeta, TASKS_EXTENSION, TaskResultType,
    declares_tasks, tasks_capability,
};

use super::capability_check::check_capabilities;
use super::handled::Json;
use super::{Incoming, required_str};
use crate::answer::{Slot, collect};
use crate::app_state::AppState;
use crate::context::{NextRound, TaskMode};
use crate::handler_error::Kind;
use crate::task_store::{CreateRefused, TaskEntry};
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
        let declared = !incoming.facts.era.is_legacy() && declared_tasks(incoming);
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
    pub(super) fn start_task(
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
        let (id, entry) = store
            .create(ctx.principal(), ctx.inner.facts.caller_key().as_deref())
            .map_err(|refused| match refused {
                CreateRefused::CallersLimit => ServerError::Unavailable {
                    message: format!(
                        "You have {} tasks running, as many as one caller may; wait for one to finish or cancel one",
                        crate::task_store::MAX_LIVE_TASKS_PER_PRINCIPAL
                    ),
                    retry_after_secs: 5,
                },
                CreateRefused::Full => ServerError::Unavailable {
                    message: "Too many tasks are running; try again shortly".into(),
                    retry_after_secs: 5,
                },
                CreateRefused::NoRandom => ServerError::Internal {
                    message: "no randomness for a task id".into(),
                },
            })?;
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
            task: entry.view(&id, store),
            meta: None,
        };
        tracing::info!(task = %id, tool = %tool.tool.name, "task started");
        runtime.spawn(Box::pin(drive(
            id,
            entry,
            tool.clone(),
            arguments,
            origin,
            earlier,
            carry.or(carried),
        )));
        self.finish(created)
    }

    /// `tasks/get`, `tasks/update` and `tasks/cancel`.
    pub(super) fn task_method(
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
        let entry = store
            .get(&id, incoming.facts.principal.as_deref())
            .ok_or_else(|| {
                ServerError::invalid_params(format!(
                    "Failed to retrieve task: no task {id} (unknown, expired, or another caller's)"
                ))
            })?;
        let ack = || Json::Value(json!({"resultType": "complete"}));
        match method {
            tessera_protocol::TASKS_GET => self.finish(GetTaskResult {
                result_type: tessera_protocol::Complete,
                task: entry.view(&id, store),
                meta: None,
            }),
            tessera_protocol::TASKS_UPDATE => {
                let responses = match super::take(&mut params, "inputResponses") {
                    Some(Value::Object(responses)) => responses,
                    None | Some(Value::Null) => Map::new(),
                    Some(_) => {
                        return Err(ServerError::invalid_params(
                            "Invalid tasks/update params: inputResponses must be an object keyed by input request",
                        ));
                    }
                };
                entry.answer(responses);
                Ok(ack())
            }
            _ => {
                entry.cancel();
                tracing::info!(task = %id, "task cancelled by the client");
                Ok(ack())
            }
        }
    }
}

/// Whether the request declares the tasks extension in its client capabilities.
fn declared_tasks(incoming: &Incoming) -> bool {
    incoming
        .meta
        .client_capabilities
        .as_ref()
        .is_some_and(declares_tasks)
}

/// -32021 naming the tasks extension.
fn tasks_needed(what: &str) -> ServerError {
    ServerError::MissingExtension {
        message: format!(
            "{what}: declare the {TASKS_EXTENSION} extension in the request's client capabilities"
        ),
        required: Box::new(tasks_capability()),
    }
}

/// Runs a task to its end: the handler from the top, again after every round
/// of answers, until it finishes or the task is cancelled.
async fn drive(
    id: String,
    entry: Arc<TaskEntry>,
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
            },
            &tool.tool.name,
            &origin.app,
            std::mem::take(&mut fresh),
            earlier.clone(),
            carried.clone(),
            TaskMode::Running,
        );
        let Some(ran) =
            until_cancelled(&entry, (tool.handler)(ctx.clone(), arguments.clone())).await
        else {
            return;
        };
        let error = match ran {
            Ok(result) => {
                match tool.check_output(&result) {
                    Ok(()) => entry.complete(json!(result)),
                    Err(e) => entry.fail(e.to_error_object()),
                }
                break;
            }
            // Questions: the same rule as a call's rounds (an invalid answer
            // is asked again, the reason in the question).
            Err(HandlerError(Kind::Interrupt(
                Interrupt::InputRequired | Interrupt::Invalid { .. },
            ))) => None,
            Err(error) => Some(error),
        };
        if let Some(error) = error {
            match tool.outcome_of(error) {
                Ok(result) => entry.complete(json!(result)),
                Err(e) => entry.fail(e.to_error_object()),
            }
            break;
        }
        // A round of questions: ask them through the task, wait for the answers.
        let NextRound { questions, carry } = ctx.take_next();
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
            let pause = origin
                .facts
                .tasks
                .as_ref()
                .map(|runtime| runtime.sleep(std::time::Duration::from_millis(50)));
            if until_cancelled(&entry, async move {
                if let Some(pause) = pause {
                    pause.await;
                }
            })
            .await
            .is_none()
            {
                return;
            }
            continue;
        }
        if let Err(e) = check_capabilities(&questions, origin.capabilities()) {
            entry.fail(e.to_error_object());
            break;
        }
        entry.ask(
            questions
                .into_iter()
                .map(|(key, q)| {
                    let asked = q.asked();
                    (key, (q.into_wire(), asked))
                })
                .collect(),
        );
        loop {
            // Listening before looking: answers given in between still wake us.
            let answered = entry.answered.listen();
            if let Some((asked, responses)) = entry.take_answers() {
                fresh = collect(&asked, Some(responses));
                break;
            }
            if until_cancelled(&entry, answered).await.is_none() {
                return;
            }
        }
    }
    tracing::info!(task = %id, "task ended");
}

impl Origin {
    fn capabilities(&self) -> &tessera_protocol::ClientCapabilities {
        self.meta
            .client_capabilities
            .as_ref()
            .unwrap_or(&crate::context::NO_CAPABILITIES)
    }
}

/// `work`'s output, or `None` once the task is cancelled (`work` is dropped then).
async fn until_cancelled<F: Future>(entry: &TaskEntry, work: F) -> Option<F::Output> {
    let mut stop = pin!(entry.cancelled.wait());
    let mut work = pin!(work);
    std::future::poll_fn(|cx| {
        if stop.as_mut().poll(cx).is_ready() {
            return Poll::Ready(None);
        }
        work.as_mut().poll(cx).map(Some)
    })
    .await
}

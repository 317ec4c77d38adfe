//! Where tasks (the tasks extension) are kept: their status, their
//! outstanding questions and the answers given, their result.
//!
//! A task's handler runs on the instance that started it; the store is what
//! every instance reads and writes, so `tasks/get`, `tasks/update` and
//! `tasks/cancel` may reach any of them when the store is shared
//! ([`MemoryTaskStore`](crate::MemoryTaskStore) keeps them in this process;
//! `tessera-redis` and `tessera-worker` have shared ones).
//!
//! The instance running a task renews its lease every
//! [`LEASE_RENEWAL`]; a task whose lease ran out ([`RUNNER_LEASE`]) was
//! left by a runner that stopped (a crash, a kill, a panicking handler), and
//! the next read ends it `failed`, saying so, instead of leaving it working
//! for ever.

use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_protocol::clock::{SystemTime, UNIX_EPOCH};
use tessera_protocol::{
    BoxFuture, ErrorObject, InputRequests, JsonObject, Rfc3339, Task, TaskStatus,
};

/// How long a task is kept after it was created (default).
pub const DEFAULT_TASK_TTL: Duration = Duration::from_secs(3600);
/// How often clients are told to poll (default).
pub const DEFAULT_POLL_INTERVAL: Duration = Duration::from_millis(500);
/// Tasks not yet finished, at most, per server (more are refused with 503).
pub const MAX_LIVE_TASKS: usize = 1024;
/// Tasks kept at most, finished or not (past it the oldest finished one goes;
/// with none finished, more are refused with 503 until some expire).
pub const MAX_KEPT_TASKS: usize = 4 * MAX_LIVE_TASKS;
/// Tasks not yet finished, at most, per caller (its principal; an anonymous
/// caller by its address when the transport knows it, else all anonymous
/// callers together): more are refused with 503, so one caller cannot take
/// every slot.
pub const MAX_LIVE_TASKS_PER_PRINCIPAL: usize = 64;
/// Tasks kept at most per caller, finished or not: past it the caller's
/// oldest finished task goes.
pub const MAX_KEPT_TASKS_PER_PRINCIPAL: usize = 256;
/// The largest result a task keeps (its JSON, in bytes); a larger one ends
/// the task `failed`, saying so.
pub const MAX_TASK_RESULT_BYTES: usize = 4 * 1024 * 1024;
/// The bytes of results one caller's kept tasks may hold together (counted
/// like [`MAX_LIVE_TASKS_PER_PRINCIPAL`]); a result past it ends its task
/// `failed`, saying so, until older tasks expire.
pub const MAX_KEPT_RESULT_BYTES_PER_PRINCIPAL: usize = 64 * 1024 * 1024;
/// The bytes of results every kept task may hold together.
pub const MAX_KEPT_RESULT_BYTES: usize = 512 * 1024 * 1024;

/// How long a runner's lease on its task lasts: a task not renewed for this
/// long ends `failed` at its next read.
pub const RUNNER_LEASE: Duration = Duration::from_secs(3);
/// How often the instance running a task renews its lease (and looks whether
/// the task was cancelled elsewhere, should the store's wake-up be lost).
pub const LEASE_RENEWAL: Duration = Duration::from_secs(1);

/// How long tasks are kept, how often clients poll, and the quotas a store
/// enforces. The defaults are the constants of this module.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskPolicy {
    /// How long a task is kept after it was created.
    pub ttl: Duration,
    /// How often clients are told to poll.
    pub poll_interval: Duration,
    /// Unfinished tasks, at most, in the store.
    pub max_live: usize,
    /// Tasks kept at most, finished or not.
    pub max_kept: usize,
    /// Unfinished tasks, at most, per caller.
    pub max_live_per_caller: usize,
    /// Tasks kept at most per caller (past it the oldest finished one goes).
    pub max_kept_per_caller: usize,
    /// The largest result or error one task keeps, in bytes of JSON.
    pub max_result_bytes: usize,
    /// The bytes of results one caller's tasks keep together.
    pub max_kept_bytes_per_caller: usize,
    /// The bytes of results all tasks keep together.
    pub max_kept_bytes: usize,
}

impl Default for TaskPolicy {
    fn default() -> Self {
        Self {
            ttl: DEFAULT_TASK_TTL,
            poll_interval: DEFAULT_POLL_INTERVAL,
            max_live: MAX_LIVE_TASKS,
            max_kept: MAX_KEPT_TASKS,
            max_live_per_caller: MAX_LIVE_TASKS_PER_PRINCIPAL,
            max_kept_per_caller: MAX_KEPT_TASKS_PER_PRINCIPAL,
            max_result_bytes: MAX_TASK_RESULT_BYTES,
            max_kept_bytes_per_caller: MAX_KEPT_RESULT_BYTES_PER_PRINCIPAL,
            max_kept_bytes: MAX_KEPT_RESULT_BYTES,
        }
    }
}

impl TaskPolicy {
    /// The policy with tasks kept for `ttl`.
    pub fn with_ttl(mut self, ttl: Duration) -> Self {
        self.ttl = ttl;
        self
    }

    /// The policy with clients told to poll every `interval`.
    pub fn with_poll_interval(mut self, interval: Duration) -> Self {
        self.poll_interval = interval;
        self
    }

    /// Small quotas, for tests of a store's limits (the store contract uses them).
    pub fn small() -> Self {
        Self {
            ttl: Duration::from_secs(60),
            poll_interval: Duration::from_millis(100),
            max_live: 8,
            max_kept: 12,
            max_live_per_caller: 3,
            max_kept_per_caller: 5,
            max_result_bytes: 1000,
            max_kept_bytes_per_caller: 2500,
            max_kept_bytes: 4000,
        }
    }
}

/// A task as a store keeps it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskRecord {
    /// The task's id.
    pub id: String,
    /// Where it is.
    pub status: TaskStatus,
    /// A sentence about the status.
    pub message: Option<String>,
    /// When it was created, in milliseconds since the Unix epoch.
    pub created_ms: u64,
    /// When its status last changed, in milliseconds since the Unix epoch.
    pub updated_ms: u64,
    /// The outstanding questions (status `input_required`).
    pub input_requests: InputRequests,
    /// The result (status `completed`).
    pub result: Option<Value>,
    /// The error (status `failed`).
    pub error: Option<ErrorObject>,
    /// The span context of the request that started it
    /// ([`NewTask::trace`]): later task requests link to it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

impl TaskRecord {
    /// A record of a task just created (working, nothing asked).
    pub fn working(id: String, created_ms: u64) -> Self {
        Self {
            id,
            status: TaskStatus::Working,
            message: None,
            created_ms,
            updated_ms: created_ms,
            input_requests: InputRequests::new(),
            result: None,
            error: None,
            trace: None,
        }
    }

    /// The task as `tasks/get` shows it, under `policy`.
    pub fn view(&self, policy: &TaskPolicy) -> Task {
        let at = |ms: u64| Rfc3339::millis(UNIX_EPOCH + Duration::from_millis(ms)).to_string();
        Task {
            task_id: self.id.clone(),
            status: self.status,
            status_message: self.message.clone(),
            created_at: at(self.created_ms),
            last_updated_at: at(self.updated_ms),
            ttl_ms: Some(policy.ttl.as_millis() as u64),
            poll_interval_ms: Some(policy.poll_interval.as_millis() as u64),
            input_requests: (self.status == TaskStatus::InputRequired)
                .then(|| self.input_requests.clone()),
            result: self.result.clone(),
            error: self.error.clone(),
        }
    }
}

/// Who a new task belongs to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct NewTask {
    /// Whose task it is: only the same principal (or anonymous caller) sees it.
    pub principal: Option<String>,
    /// Whom its quotas count against ([`caller_key`](crate::caller_key)).
    pub caller: Option<String>,
    /// The span context of the request that started it, when spans are
    /// recorded (`{trace id}-{span id}-{flags}` in hex): `tasks/update` and
    /// `tasks/cancel` link to it, so the task's requests are one story.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

/// How a task ended, as its runner reports it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TaskOutcome {
    /// The call's result, as JSON.
    Completed(Value),
    /// A JSON-RPC error.
    Failed(ErrorObject),
}

/// A store could not do what was asked.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TaskStoreError {
    /// The store holds as many tasks as it may.
    #[error("Too many tasks are running; try again shortly")]
    Full,
    /// The caller has as many unfinished tasks as one caller may.
    #[error(
        "You have {0} tasks running, as many as one caller may; wait for one to finish or cancel one"
    )]
    CallerFull(usize),
    /// The store's backend did not answer or refused (the text says how).
    #[error("the task store is unavailable: {0}")]
    Unavailable(String),
}

/// What a task store answers with.
pub type TaskStoreFuture<'a, T> = BoxFuture<'a, Result<T, TaskStoreError>>;

/// Keeps tasks for every instance that serves them. Each method is one
/// atomic step; a task that already ended does not change any more (its
/// `finish`, `ask` and `cancel` do nothing). Implementations pass
/// `testing::check_task_store` (feature `testing`).
pub trait TaskStore: Send + Sync + 'static {
    /// The policy the store keeps tasks under.
    fn policy(&self) -> &TaskPolicy;

    /// Creates a working task (an id of 32 hex digits, a runner's lease of
    /// [`RUNNER_LEASE`]), forgetting expired tasks and, past a quota, the
    /// oldest finished ones; or refuses under the quotas.
    fn create(&self, new: NewTask) -> TaskStoreFuture<'_, TaskRecord>;

    /// The task `id` as `principal` may see it: `None` for an unknown or
    /// expired task, or another principal's. An unfinished task whose lease
    /// ran out is ended `failed` first ([`runner_stopped`]).
    fn get<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
    ) -> TaskStoreFuture<'a, Option<TaskRecord>>;

    /// Waits for answers to `questions`: status `input_required`, earlier
    /// answers not taken dropped.
    fn ask<'a>(&'a self, id: &'a str, questions: InputRequests) -> TaskStoreFuture<'a, ()>;

    /// Records answers to outstanding questions (other keys are ignored);
    /// once none is outstanding the task is working again and its runner is
    /// woken. `false` when `principal` has no task `id`.
    fn answer<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
        responses: JsonObject,
    ) -> TaskStoreFuture<'a, bool>;

    /// The answers of the round once every question has one, taken (a
    /// second take finds none).
    fn take_answers<'a>(&'a self, id: &'a str) -> TaskStoreFuture<'a, Option<JsonObject>>;

    /// Ends the task with `outcome`, under the byte quotas (a result past
    /// them ends the task `failed`, saying which).
    fn finish<'a>(&'a self, id: &'a str, outcome: TaskOutcome) -> TaskStoreFuture<'a, ()>;

    /// Cancels the task and wakes its runner. `false` when `principal` has
    /// no task `id`; a task that already ended stays as it was.
    fn cancel<'a>(&'a self, id: &'a str, principal: Option<&'a str>) -> TaskStoreFuture<'a, bool>;

    /// Renews the runner's lease for [`RUNNER_LEASE`]; the task's status, or
    /// `None` once it is gone (expired).
    fn renew<'a>(&'a self, id: &'a str) -> TaskStoreFuture<'a, Option<TaskStatus>>;

    /// Completes when task `id` may have changed for its runner (answers
    /// complete, cancelled); listening starts when this is called, so a
    /// change between the call and the first poll still wakes it. Stores
    /// whose wake-ups can be lost need not be exact: the runner also looks
    /// every [`LEASE_RENEWAL`].
    fn changed(&self, id: &str) -> BoxFuture<'static, ()>;

    /// Whether every instance serving the store sees the same tasks (true
    /// unless a store says otherwise; the in-memory store keeps them in its
    /// process). Hosts whose instances come and go per request (Workers)
    /// run tasks only on a shared store.
    fn is_shared(&self) -> bool {
        true
    }
}

/// The error a task ends with when its runner stopped renewing its lease.
pub fn runner_stopped() -> ErrorObject {
    ErrorObject::new(
        tessera_protocol::INTERNAL_ERROR,
        format!(
            "The server instance running this task stopped (no sign of it for {} s); call the tool again",
            RUNNER_LEASE.as_secs()
        ),
    )
}

/// The error a task ends with when its result is past a byte quota: `which`
/// says whose ("this caller's tasks", "the server's tasks").
pub fn result_over_budget(which: &str, limit: usize) -> ErrorObject {
    ErrorObject::new(
        tessera_protocol::INTERNAL_ERROR,
        format!(
            "the results {which} keep would pass {limit} bytes; they are freed as the tasks expire"
        ),
    )
}

/// The error a task ends with when its own result or error is too large to keep.
pub fn result_too_large(what: &str, bytes: usize, limit: usize) -> ErrorObject {
    ErrorObject::new(
        tessera_protocol::INTERNAL_ERROR,
        format!("the task's {what} is {bytes} bytes; a task keeps at most {limit} bytes"),
    )
}

/// The message of a cancelled task.
pub const CANCELLED_MESSAGE: &str = "Cancelled at the client's request.";
/// The message of a task waiting for answers.
pub const WAITING_MESSAGE: &str = "Waiting for input (tasks/update).";

/// Milliseconds since the Unix epoch, now.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as u64)
}

/// The JSON of `outcome` as a task keeps it, and its size: an outcome
/// larger than `policy` lets one task keep is replaced by an error saying
/// so (an error keeps its code).
pub fn kept_outcome(outcome: TaskOutcome, policy: &TaskPolicy) -> (TaskOutcome, usize) {
    let (what, bytes, code) = match &outcome {
        TaskOutcome::Completed(result) => (
            "result",
            serde_json::to_vec(result).map_or(usize::MAX, |b| b.len()),
            tessera_protocol::INTERNAL_ERROR,
        ),
        TaskOutcome::Failed(error) => (
            "error",
            serde_json::to_vec(error).map_or(usize::MAX, |b| b.len()),
            error.code,
        ),
    };
    if bytes <= policy.max_result_bytes {
        return (outcome, bytes);
    }
    let mut error = result_too_large(what, bytes, policy.max_result_bytes);
    error.code = code;
    let bytes = serde_json::to_vec(&error).map_or(0, |b| b.len());
    (TaskOutcome::Failed(error), bytes)
}

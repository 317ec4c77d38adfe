//! The tasks a server is running or has finished (the tasks extension): their
//! status, their outstanding questions and the answers given, their result.
//!
//! Tasks live in this process's memory until their TTL runs out: a task is
//! served by the instance that started it (route `tasks/*` by `Mcp-Name`,
//! which carries the task id, to keep a client on it).

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use event_listener::Event;
use indexmap::IndexMap;
use serde_json::Value;
use tessera_protocol::clock::SystemTime;
use tessera_protocol::{ErrorObject, InputRequest, JsonObject, Rfc3339, Task, TaskStatus};

use crate::question::Asked;

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

/// The bytes kept results hold, overall and per principal.
#[derive(Default)]
struct ResultBytes {
    kept: Mutex<(usize, HashMap<Option<String>, usize>)>,
}

impl ResultBytes {
    fn lock(&self) -> MutexGuard<'_, (usize, HashMap<Option<String>, usize>)> {
        self.kept.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Takes `bytes` for `caller`, or says which budget they would pass.
    fn reserve(&self, caller: &Option<String>, bytes: usize) -> Result<(), String> {
        let mut kept = self.lock();
        let mine = kept.1.get(caller).copied().unwrap_or(0);
        if mine.saturating_add(bytes) > MAX_KEPT_RESULT_BYTES_PER_PRINCIPAL {
            return Err(format!(
                "the results this caller's tasks keep would pass {MAX_KEPT_RESULT_BYTES_PER_PRINCIPAL} bytes; \
                 they are freed as the tasks expire"
            ));
        }
        if kept.0.saturating_add(bytes) > MAX_KEPT_RESULT_BYTES {
            return Err(format!(
                "the results the server's tasks keep would pass {MAX_KEPT_RESULT_BYTES} bytes; \
                 they are freed as the tasks expire"
            ));
        }
        kept.0 += bytes;
        *kept.1.entry(caller.clone()).or_default() += bytes;
        Ok(())
    }

    fn release(&self, caller: &Option<String>, bytes: usize) {
        let mut kept = self.lock();
        kept.0 = kept.0.saturating_sub(bytes);
        if let Some(mine) = kept.1.get_mut(caller) {
            *mine = mine.saturating_sub(bytes);
            if *mine == 0 {
                kept.1.remove(caller);
            }
        }
    }
}

/// The server's tasks, by id.
pub(crate) struct TaskStore {
    tasks: Mutex<HashMap<String, Arc<TaskEntry>>>,
    result_bytes: Arc<ResultBytes>,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
}

/// One task: its state, and how its driver is woken.
pub(crate) struct TaskEntry {
    /// Whose task it is: only the same principal (or anonymous caller) sees it.
    principal: Option<String>,
    /// Whom its quotas count against ([`caller_key`](crate::caller_key)).
    caller: Option<String>,
    created: SystemTime,
    state: Mutex<TaskState>,
    /// Where the bytes of its result are counted, and how many.
    result_bytes: (Arc<ResultBytes>, std::sync::atomic::AtomicUsize),
    /// Woken when answers complete the outstanding questions.
    pub(crate) answered: Event,
    /// Set once the task is cancelled.
    pub(crate) cancelled: crate::latch::Latch,
}

struct TaskState {
    status: TaskStatus,
    message: Option<String>,
    updated: SystemTime,
    /// Outstanding questions: as sent, and what an answer must fit.
    pending: IndexMap<String, (InputRequest, Asked)>,
    /// Answers given to the outstanding questions, not yet taken by the driver.
    answers: JsonObject,
    /// What was asked in this round (the driver checks answers against it).
    asked: IndexMap<String, Asked>,
    result: Option<Value>,
    error: Option<ErrorObject>,
}

/// Why a task could not be created.
#[derive(Debug)]
pub(crate) enum CreateRefused {
    /// Too many tasks are running.
    Full,
    /// The caller has as many unfinished tasks as one caller may.
    CallersLimit,
    /// No randomness for an id.
    NoRandom,
}

impl TaskStore {
    pub(crate) fn new(ttl: Duration, poll_interval: Duration) -> Self {
        Self {
            tasks: Mutex::new(HashMap::new()),
            result_bytes: Arc::default(),
            ttl,
            poll_interval,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<TaskEntry>>> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new working task of `principal`, counted against `caller`; forgets
    /// expired tasks first.
    pub(crate) fn create(
        &self,
        principal: Option<&str>,
        caller: Option<&str>,
    ) -> Result<(String, Arc<TaskEntry>), CreateRefused> {
        let now = SystemTime::now();
        let mut tasks = self.lock();
        tasks.retain(|_, t| {
            let keep = now.duration_since(t.created).unwrap_or_default() < self.ttl;
            if !keep {
                // An expired task's driver stops too.
                t.cancelled.set();
            }
            keep
        });
        let mine = |t: &TaskEntry| t.caller.as_deref() == caller;
        let live_mine = tasks
            .values()
            .filter(|t| mine(t) && !t.state().status.is_terminal())
            .count();
        if live_mine >= MAX_LIVE_TASKS_PER_PRINCIPAL {
            return Err(CreateRefused::CallersLimit);
        }
        if tasks.values().filter(|t| mine(t)).count() >= MAX_KEPT_TASKS_PER_PRINCIPAL {
            evict_oldest_finished(&mut tasks, |t| mine(t));
        }
        let live = tasks
            .values()
            .filter(|t| !t.state().status.is_terminal())
            .count();
        if tasks.len() >= MAX_KEPT_TASKS {
            evict_oldest_finished(&mut tasks, |_| true);
        }
        if live >= MAX_LIVE_TASKS || tasks.len() >= MAX_KEPT_TASKS {
            return Err(CreateRefused::Full);
        }
        let id = tessera_state::random_id().ok_or(CreateRefused::NoRandom)?;
        let entry = Arc::new(TaskEntry {
            principal: principal.map(str::to_owned),
            caller: caller.map(str::to_owned),
            created: now,
            state: Mutex::new(TaskState {
                status: TaskStatus::Working,
                message: None,
                updated: now,
                pending: IndexMap::new(),
                answers: JsonObject::new(),
                asked: IndexMap::new(),
                result: None,
                error: None,
            }),
            result_bytes: (Arc::clone(&self.result_bytes), 0.into()),
            answered: Event::new(),
            cancelled: crate::latch::Latch::default(),
        });
        tasks.insert(id.clone(), Arc::clone(&entry));
        Ok((id, entry))
    }

    /// The task `id` as `principal` may see it (another principal's task is not found).
    pub(crate) fn get(&self, id: &str, principal: Option<&str>) -> Option<Arc<TaskEntry>> {
        let entry = self.lock().get(id).cloned()?;
        let expired = SystemTime::now()
            .duration_since(entry.created)
            .unwrap_or_default()
            >= self.ttl;
        (!expired && entry.principal.as_deref() == principal).then_some(entry)
    }
}

/// Forgets the oldest finished task `which` selects, if there is one.
fn evict_oldest_finished(
    tasks: &mut HashMap<String, Arc<TaskEntry>>,
    which: impl Fn(&TaskEntry) -> bool,
) {
    let oldest = tasks
        .iter()
        .filter(|(_, t)| which(t) && t.state().status.is_terminal())
        .min_by_key(|(_, t)| t.created)
        .map(|(id, _)| id.clone());
    if let Some(id) = oldest {
        tasks.remove(&id);
    }
}

impl TaskEntry {
    fn state(&self) -> MutexGuard<'_, TaskState> {
        self.state.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The task as `tasks/get` shows it.
    pub(crate) fn view(&self, id: &str, store: &TaskStore) -> Task {
        let state = self.state();
        Task {
            task_id: id.to_owned(),
            status: state.status,
            status_message: state.message.clone(),
            created_at: Rfc3339::millis(self.created).to_string(),
            last_updated_at: Rfc3339::millis(state.updated).to_string(),
            ttl_ms: Some(store.ttl.as_millis() as u64),
            poll_interval_ms: Some(store.poll_interval.as_millis() as u64),
            input_requests: (state.status == TaskStatus::InputRequired).then(|| {
                state
                    .pending
                    .iter()
                    .map(|(k, (request, _))| (k.clone(), request.clone()))
                    .collect()
            }),
            result: state.result.clone(),
            error: state.error.clone(),
        }
    }

    /// Moves to `status` unless the task already ended; says whether it moved.
    fn set(&self, status: TaskStatus, f: impl FnOnce(&mut TaskState)) -> bool {
        let mut state = self.state();
        if state.status.is_terminal() {
            return false;
        }
        state.status = status;
        state.updated = SystemTime::now();
        f(&mut state);
        true
    }

    /// Ends the task with `result` (the call's result as JSON).
    pub(crate) fn complete(&self, result: Value) {
        let bytes = serde_json::to_vec(&result).map_or(usize::MAX, |b| b.len());
        match self.take_room(bytes, "result") {
            Ok(()) => self.end(TaskStatus::Completed, bytes, |s| {
                s.message = None;
                s.result = Some(result);
            }),
            Err(message) => self.fail(ErrorObject::new(tessera_protocol::INTERNAL_ERROR, message)),
        }
    }

    /// Ends the task with a JSON-RPC error, kept under the same bounds as a
    /// result (an error too large to keep is replaced by one saying so).
    pub(crate) fn fail(&self, error: ErrorObject) {
        let bytes = serde_json::to_vec(&error).map_or(usize::MAX, |b| b.len());
        let (error, reserved) = match self.take_room(bytes, "error") {
            Ok(()) => (error, bytes),
            Err(message) => (ErrorObject::new(error.code, message), 0),
        };
        self.end(TaskStatus::Failed, reserved, |s| {
            s.message = Some(error.message.clone());
            s.error = Some(error);
        });
    }

    /// Takes room for `bytes` of kept JSON (the task's `what`): one task's
    /// bound, then its caller's and the server's budgets; or says which it passes.
    fn take_room(&self, bytes: usize, what: &str) -> Result<(), String> {
        if bytes > MAX_TASK_RESULT_BYTES {
            return Err(format!(
                "the task's {what} is {bytes} bytes; a task keeps at most {MAX_TASK_RESULT_BYTES} bytes"
            ));
        }
        self.result_bytes.0.reserve(&self.caller, bytes)
    }

    /// Ends the task with `status`, its kept JSON counted as `reserved`
    /// bytes (given back when the task had ended already).
    fn end(&self, status: TaskStatus, reserved: usize, f: impl FnOnce(&mut TaskState)) {
        let (budget, held) = &self.result_bytes;
        if self.set(status, f) {
            held.store(reserved, std::sync::atomic::Ordering::Relaxed);
        } else {
            budget.release(&self.caller, reserved);
        }
    }

    /// Cancels the task (nothing happens to one that already ended) and stops its driver.
    pub(crate) fn cancel(&self) {
        self.set(TaskStatus::Cancelled, |s| {
            s.message = Some("Cancelled at the client's request.".into());
            s.pending.clear();
        });
        self.cancelled.set();
    }

    /// Waits for answers to `questions` (keys new to this task).
    pub(crate) fn ask(&self, questions: IndexMap<String, (InputRequest, Asked)>) {
        self.set(TaskStatus::InputRequired, |s| {
            s.message = Some("Waiting for input (tasks/update).".into());
            s.asked = questions
                .iter()
                .map(|(k, (_, asked))| (k.clone(), asked.clone()))
                .collect();
            s.pending = questions;
            s.answers = JsonObject::new();
        });
    }

    /// Records answers to outstanding questions (others are ignored); once
    /// none is outstanding the task works again and its driver wakes.
    pub(crate) fn answer(&self, responses: JsonObject) {
        let mut state = self.state();
        if state.status != TaskStatus::InputRequired {
            return;
        }
        for (key, response) in responses {
            if state.pending.shift_remove(&key).is_some() {
                state.answers.insert(key, response);
            }
        }
        if state.pending.is_empty() {
            state.status = TaskStatus::Working;
            state.message = None;
            state.updated = SystemTime::now();
            drop(state);
            self.answered.notify(usize::MAX);
        }
    }

    /// The answers of the round, with what was asked, once every question has one.
    pub(crate) fn take_answers(&self) -> Option<(IndexMap<String, Asked>, JsonObject)> {
        let mut state = self.state();
        (state.status == TaskStatus::Working && state.pending.is_empty()).then(|| {
            (
                std::mem::take(&mut state.asked),
                std::mem::take(&mut state.answers),
            )
        })
    }
}

impl Drop for TaskEntry {
    fn drop(&mut self) {
        let (budget, held) = &mut self.result_bytes;
        budget.release(&self.caller, *held.get_mut());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_seen_only_by_its_principal_and_ends_once() {
        let store = TaskStore::new(DEFAULT_TASK_TTL, DEFAULT_POLL_INTERVAL);
        let (id, task) = store
            .create(Some("alice"), Some("principal alice"))
            .unwrap();
        assert_eq!(id.len(), 32);
        assert!(store.get(&id, Some("alice")).is_some());
        assert!(store.get(&id, Some("bob")).is_none());
        assert!(store.get(&id, None).is_none());
        task.complete(serde_json::json!({"content": []}));
        task.cancel();
        assert_eq!(task.view(&id, &store).status, TaskStatus::Completed);
    }

    #[test]
    fn one_caller_cannot_take_every_slot() {
        let store = TaskStore::new(DEFAULT_TASK_TTL, DEFAULT_POLL_INTERVAL);
        for _ in 0..MAX_LIVE_TASKS_PER_PRINCIPAL {
            store
                .create(Some("mallory"), Some("principal mallory"))
                .unwrap();
        }
        assert!(matches!(
            store.create(Some("mallory"), Some("principal mallory")),
            Err(CreateRefused::CallersLimit)
        ));
        assert!(store.create(Some("alice"), Some("principal alice")).is_ok());
        assert!(store.create(None, None).is_ok());
        // Anonymous callers are counted by address.
        for _ in 0..MAX_LIVE_TASKS_PER_PRINCIPAL {
            store.create(None, Some("address 192.0.2.1")).unwrap();
        }
        assert!(matches!(
            store.create(None, Some("address 192.0.2.1")),
            Err(CreateRefused::CallersLimit)
        ));
        assert!(store.create(None, Some("address 192.0.2.2")).is_ok());
    }

    #[test]
    fn a_callers_oldest_finished_task_makes_room() {
        let store = TaskStore::new(DEFAULT_TASK_TTL, DEFAULT_POLL_INTERVAL);
        let (first, task) = store
            .create(Some("alice"), Some("principal alice"))
            .unwrap();
        task.complete(serde_json::json!({"content": []}));
        for _ in 1..MAX_KEPT_TASKS_PER_PRINCIPAL {
            let (_, t) = store
                .create(Some("alice"), Some("principal alice"))
                .unwrap();
            t.complete(serde_json::json!({"content": []}));
        }
        assert!(store.get(&first, Some("alice")).is_some());
        store
            .create(Some("alice"), Some("principal alice"))
            .unwrap();
        assert!(
            store.get(&first, Some("alice")).is_none(),
            "the oldest went"
        );
    }

    #[test]
    fn a_result_too_large_to_keep_fails_the_task() {
        let store = TaskStore::new(DEFAULT_TASK_TTL, DEFAULT_POLL_INTERVAL);
        let (id, task) = store.create(None, None).unwrap();
        task.complete(serde_json::json!({"text": "x".repeat(MAX_TASK_RESULT_BYTES)}));
        let view = task.view(&id, &store);
        assert_eq!(view.status, TaskStatus::Failed);
        assert!(view.result.is_none());
        assert!(view.status_message.unwrap().contains("at most"));
    }

    #[test]
    fn kept_results_have_a_byte_budget_per_principal() {
        let store = TaskStore::new(DEFAULT_TASK_TTL, DEFAULT_POLL_INTERVAL);
        let big = || serde_json::json!({"text": "x".repeat(MAX_TASK_RESULT_BYTES - 100)});
        let fits = MAX_KEPT_RESULT_BYTES_PER_PRINCIPAL / MAX_TASK_RESULT_BYTES;
        let mut first = None;
        for _ in 0..fits {
            let (id, task) = store
                .create(Some("mallory"), Some("principal mallory"))
                .unwrap();
            task.complete(big());
            assert_eq!(task.view(&id, &store).status, TaskStatus::Completed);
            first.get_or_insert(id);
        }
        let (id, task) = store
            .create(Some("mallory"), Some("principal mallory"))
            .unwrap();
        task.complete(big());
        let view = task.view(&id, &store);
        assert_eq!(view.status, TaskStatus::Failed);
        assert!(
            view.status_message
                .unwrap()
                .contains("this caller's tasks keep")
        );
        // Another caller is not refused, and a task forgotten frees its bytes.
        let (id, task) = store
            .create(Some("alice"), Some("principal alice"))
            .unwrap();
        task.complete(big());
        assert_eq!(task.view(&id, &store).status, TaskStatus::Completed);
        store.lock().remove(&first.unwrap());
        let (id, task) = store
            .create(Some("mallory"), Some("principal mallory"))
            .unwrap();
        task.complete(big());
        assert_eq!(task.view(&id, &store).status, TaskStatus::Completed);
    }

    #[test]
    fn an_error_too_large_to_keep_is_replaced_by_one_saying_so() {
        let store = TaskStore::new(DEFAULT_TASK_TTL, DEFAULT_POLL_INTERVAL);
        let (id, task) = store.create(None, None).unwrap();
        task.fail(ErrorObject::new(-32603, "x".repeat(MAX_TASK_RESULT_BYTES)));
        let view = task.view(&id, &store);
        assert_eq!(view.status, TaskStatus::Failed);
        let error = view.error.unwrap();
        assert!(error.message.len() < 200, "{}", error.message.len());
        assert!(error.message.contains("keeps at most"));
    }

    #[test]
    fn expired_tasks_are_gone() {
        let store = TaskStore::new(Duration::ZERO, DEFAULT_POLL_INTERVAL);
        let (id, _) = store.create(None, None).unwrap();
        assert!(store.get(&id, None).is_none());
    }
}

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
/// Tasks kept at most, finished or not (more are refused with 503 until some expire).
pub const MAX_KEPT_TASKS: usize = 4 * MAX_LIVE_TASKS;

/// The server's tasks, by id.
pub(crate) struct TaskStore {
    tasks: Mutex<HashMap<String, Arc<TaskEntry>>>,
    pub(crate) ttl: Duration,
    pub(crate) poll_interval: Duration,
}

/// One task: its state, and how its driver is woken.
pub(crate) struct TaskEntry {
    /// Whose task it is: only the same principal (or anonymous caller) sees it.
    principal: Option<String>,
    created: SystemTime,
    state: Mutex<TaskState>,
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
    /// No randomness for an id.
    NoRandom,
}

impl TaskStore {
    pub(crate) fn new(ttl: Duration, poll_interval: Duration) -> Self {
        Self {
            tasks: Mutex::new(HashMap::new()),
            ttl,
            poll_interval,
        }
    }

    fn lock(&self) -> MutexGuard<'_, HashMap<String, Arc<TaskEntry>>> {
        self.tasks.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A new working task of `principal`; forgets expired tasks first.
    pub(crate) fn create(
        &self,
        principal: Option<&str>,
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
        let live = tasks
            .values()
            .filter(|t| !t.state().status.is_terminal())
            .count();
        if live >= MAX_LIVE_TASKS || tasks.len() >= MAX_KEPT_TASKS {
            return Err(CreateRefused::Full);
        }
        let id = tessera_state::random_id().ok_or(CreateRefused::NoRandom)?;
        let entry = Arc::new(TaskEntry {
            principal: principal.map(str::to_owned),
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
        self.set(TaskStatus::Completed, |s| {
            s.message = None;
            s.result = Some(result);
        });
    }

    /// Ends the task with a JSON-RPC error.
    pub(crate) fn fail(&self, error: ErrorObject) {
        self.set(TaskStatus::Failed, |s| {
            s.message = Some(error.message.clone());
            s.error = Some(error);
        });
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_task_is_seen_only_by_its_principal_and_ends_once() {
        let store = TaskStore::new(DEFAULT_TASK_TTL, DEFAULT_POLL_INTERVAL);
        let (id, task) = store.create(Some("alice")).unwrap();
        assert_eq!(id.len(), 32);
        assert!(store.get(&id, Some("alice")).is_some());
        assert!(store.get(&id, Some("bob")).is_none());
        assert!(store.get(&id, None).is_none());
        task.complete(serde_json::json!({"content": []}));
        task.cancel();
        assert_eq!(task.view(&id, &store).status, TaskStatus::Completed);
    }

    #[test]
    fn expired_tasks_are_gone() {
        let store = TaskStore::new(Duration::ZERO, DEFAULT_POLL_INTERVAL);
        let (id, _) = store.create(None).unwrap();
        assert!(store.get(&id, None).is_none());
    }
}

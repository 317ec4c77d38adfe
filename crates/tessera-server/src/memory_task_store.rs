//! The tasks of one process, in its memory (the default store).

use std::collections::HashMap;
use std::future::ready;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use event_listener::Event;
use tessera_protocol::{BoxFuture, InputRequests, JsonObject, TaskStatus};

use crate::task_store::{
    CANCELLED_MESSAGE, NewTask, RUNNER_LEASE, TaskOutcome, TaskPolicy, TaskRecord, TaskStore,
    TaskStoreError, TaskStoreFuture, WAITING_MESSAGE, kept_outcome, now_ms, result_over_budget,
    runner_stopped,
};

/// Keeps tasks in this process's memory until their TTL runs out, under the
/// quotas of its [`TaskPolicy`]. With several instances behind a load
/// balancer, a task is then served only by the instance that started it
/// (route `tasks/*` by `Mcp-Name`, which carries the task id), or use a
/// shared store (`tessera_redis::RedisTaskStore`).
pub struct MemoryTaskStore {
    policy: TaskPolicy,
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    tasks: HashMap<String, Kept>,
    /// Tasks created so far: orders tasks created in the same millisecond.
    created: u64,
    /// Bytes of kept results, overall and per caller.
    bytes: usize,
    bytes_by_caller: HashMap<Option<String>, usize>,
}

struct Kept {
    record: TaskRecord,
    /// Its place in creation order.
    seq: u64,
    principal: Option<String>,
    caller: Option<String>,
    /// Until when its runner is known to be alive (ms since the epoch).
    lease_until: u64,
    /// Outstanding question keys and the answers given to them.
    pending: Vec<String>,
    answers: JsonObject,
    /// Bytes of its kept result, counted against its caller.
    bytes: usize,
    changed: Arc<Event>,
}

impl MemoryTaskStore {
    /// A store keeping tasks under `policy`.
    pub fn new(policy: TaskPolicy) -> Self {
        Self {
            policy,
            inner: Mutex::default(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Default for MemoryTaskStore {
    fn default() -> Self {
        Self::new(TaskPolicy::default())
    }
}

impl Inner {
    /// Forgets task `id`, giving back the bytes its result held.
    fn forget(&mut self, id: &str) {
        if let Some(task) = self.tasks.remove(id) {
            self.release(&task.caller, task.bytes);
            // A runner still waiting stops (its task is gone).
            task.changed.notify(usize::MAX);
        }
    }

    fn release(&mut self, caller: &Option<String>, bytes: usize) {
        self.bytes = self.bytes.saturating_sub(bytes);
        if let Some(mine) = self.bytes_by_caller.get_mut(caller) {
            *mine = mine.saturating_sub(bytes);
            if *mine == 0 {
                self.bytes_by_caller.remove(caller);
            }
        }
    }

    /// Forgets the oldest finished (or abandoned: its runner's lease ran
    /// out) task `which` selects, if there is one.
    fn evict_oldest_finished(&mut self, now: u64, which: impl Fn(&Kept) -> bool) {
        let oldest = self
            .tasks
            .iter()
            .filter(|(_, t)| which(t) && (t.record.status.is_terminal() || t.lease_until < now))
            .min_by_key(|(_, t)| t.seq)
            .map(|(id, _)| id.clone());
        if let Some(id) = oldest {
            self.forget(&id);
        }
    }
}

impl Kept {
    /// Moves to `status` unless the task ended; says whether it moved.
    fn set(&mut self, status: TaskStatus, now: u64, message: Option<&str>) -> bool {
        if self.record.status.is_terminal() {
            return false;
        }
        self.record.status = status;
        self.record.message = message.map(str::to_owned);
        self.record.updated_ms = now;
        true
    }

    /// Ends an unfinished task whose runner's lease ran out.
    fn end_if_abandoned(&mut self, now: u64) {
        if !self.record.status.is_terminal() && self.lease_until < now {
            let error = runner_stopped();
            self.set(TaskStatus::Failed, now, Some(&error.message));
            self.record.input_requests.clear();
            self.record.error = Some(error);
            self.changed.notify(usize::MAX);
        }
    }
}

impl TaskStore for MemoryTaskStore {
    fn policy(&self) -> &TaskPolicy {
        &self.policy
    }

    fn create(&self, new: NewTask) -> TaskStoreFuture<'_, TaskRecord> {
        Box::pin(ready(self.create_now(new)))
    }

    fn get<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
    ) -> TaskStoreFuture<'a, Option<TaskRecord>> {
        let now = now_ms();
        let mut inner = self.lock();
        let found = self.live(&mut inner, id, now).and_then(|task| {
            task.end_if_abandoned(now);
            (task.principal.as_deref() == principal).then(|| task.record.clone())
        });
        Box::pin(ready(Ok(found)))
    }

    fn ask<'a>(&'a self, id: &'a str, questions: InputRequests) -> TaskStoreFuture<'a, ()> {
        let now = now_ms();
        let mut inner = self.lock();
        if let Some(task) = self.live(&mut inner, id, now)
            && task.set(TaskStatus::InputRequired, now, Some(WAITING_MESSAGE))
        {
            task.pending = questions.keys().cloned().collect();
            task.answers = JsonObject::new();
            task.record.input_requests = questions;
        }
        Box::pin(ready(Ok(())))
    }

    fn answer<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
        responses: JsonObject,
    ) -> TaskStoreFuture<'a, bool> {
        let now = now_ms();
        let mut inner = self.lock();
        let Some(task) = self
            .live(&mut inner, id, now)
            .filter(|t| t.principal.as_deref() == principal)
        else {
            return Box::pin(ready(Ok(false)));
        };
        if task.record.status == TaskStatus::InputRequired {
            for (key, response) in responses {
                if let Some(at) = task.pending.iter().position(|k| *k == key) {
                    task.pending.swap_remove(at);
                    task.record.input_requests.shift_remove(&key);
                    task.answers.insert(key, response);
                }
            }
            if task.pending.is_empty() {
                task.set(TaskStatus::Working, now, None);
                task.record.input_requests.clear();
                task.changed.notify(usize::MAX);
            }
        }
        Box::pin(ready(Ok(true)))
    }

    fn take_answers<'a>(&'a self, id: &'a str) -> TaskStoreFuture<'a, Option<JsonObject>> {
        let now = now_ms();
        let mut inner = self.lock();
        let taken = self.live(&mut inner, id, now).and_then(|task| {
            (task.record.status == TaskStatus::Working
                && task.pending.is_empty()
                && !task.answers.is_empty())
            .then(|| std::mem::take(&mut task.answers))
        });
        Box::pin(ready(Ok(taken)))
    }

    fn finish<'a>(&'a self, id: &'a str, outcome: TaskOutcome) -> TaskStoreFuture<'a, ()> {
        let now = now_ms();
        let (outcome, bytes) = kept_outcome(outcome, &self.policy);
        let mut inner = self.lock();
        let Some(caller) = self
            .live(&mut inner, id, now)
            .filter(|t| !t.record.status.is_terminal())
            .map(|t| t.caller.clone())
        else {
            return Box::pin(ready(Ok(())));
        };
        let mine = inner.bytes_by_caller.get(&caller).copied().unwrap_or(0);
        let (outcome, bytes) = if mine.saturating_add(bytes) > self.policy.max_kept_bytes_per_caller
        {
            let limit = self.policy.max_kept_bytes_per_caller;
            (
                TaskOutcome::Failed(result_over_budget("this caller's tasks", limit)),
                0,
            )
        } else if inner.bytes.saturating_add(bytes) > self.policy.max_kept_bytes {
            let limit = self.policy.max_kept_bytes;
            (
                TaskOutcome::Failed(result_over_budget("the server's tasks", limit)),
                0,
            )
        } else {
            (outcome, bytes)
        };
        inner.bytes += bytes;
        *inner.bytes_by_caller.entry(caller).or_default() += bytes;
        let Some(task) = inner.tasks.get_mut(id) else {
            return Box::pin(ready(Ok(())));
        };
        task.bytes = bytes;
        match outcome {
            TaskOutcome::Completed(result) => {
                task.set(TaskStatus::Completed, now, None);
                task.record.result = Some(result);
            }
            TaskOutcome::Failed(error) => {
                task.set(TaskStatus::Failed, now, Some(&error.message));
                task.record.error = Some(error);
            }
        }
        task.record.input_requests.clear();
        Box::pin(ready(Ok(())))
    }

    fn cancel<'a>(&'a self, id: &'a str, principal: Option<&'a str>) -> TaskStoreFuture<'a, bool> {
        let now = now_ms();
        let mut inner = self.lock();
        let Some(task) = self
            .live(&mut inner, id, now)
            .filter(|t| t.principal.as_deref() == principal)
        else {
            return Box::pin(ready(Ok(false)));
        };
        if task.set(TaskStatus::Cancelled, now, Some(CANCELLED_MESSAGE)) {
            task.record.input_requests.clear();
            task.pending.clear();
        }
        task.changed.notify(usize::MAX);
        Box::pin(ready(Ok(true)))
    }

    fn renew<'a>(&'a self, id: &'a str) -> TaskStoreFuture<'a, Option<TaskStatus>> {
        let now = now_ms();
        let mut inner = self.lock();
        let status = self.live(&mut inner, id, now).map(|task| {
            if !task.record.status.is_terminal() {
                task.lease_until = now + RUNNER_LEASE.as_millis() as u64;
            }
            task.record.status
        });
        Box::pin(ready(Ok(status)))
    }

    fn changed(&self, id: &str) -> BoxFuture<'static, ()> {
        match self.lock().tasks.get(id) {
            Some(task) => {
                let listener = task.changed.listen();
                Box::pin(listener)
            }
            // A task that is gone changes no more: its runner's keeper
            // learns so when it renews (an answer waiting here must not spin).
            None => Box::pin(std::future::pending()),
        }
    }
}

impl MemoryTaskStore {
    /// Task `id` unless it expired (an expired one is forgotten).
    fn live<'i>(&self, inner: &'i mut Inner, id: &str, now: u64) -> Option<&'i mut Kept> {
        let ttl = self.policy.ttl.as_millis() as u64;
        let expired = inner
            .tasks
            .get(id)
            .is_some_and(|t| now.saturating_sub(t.record.created_ms) >= ttl);
        if expired {
            inner.forget(id);
        }
        inner.tasks.get_mut(id)
    }

    fn create_now(&self, new: NewTask) -> Result<TaskRecord, TaskStoreError> {
        let now = now_ms();
        let ttl = self.policy.ttl.as_millis() as u64;
        let mut inner = self.lock();
        let expired: Vec<String> = inner
            .tasks
            .iter()
            .filter(|(_, t)| now.saturating_sub(t.record.created_ms) >= ttl)
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            inner.forget(&id);
        }
        let mine = |t: &Kept| t.caller == new.caller;
        let live = |t: &Kept| !t.record.status.is_terminal() && t.lease_until >= now;
        let live_mine = inner.tasks.values().filter(|t| mine(t) && live(t)).count();
        if live_mine >= self.policy.max_live_per_caller {
            return Err(TaskStoreError::CallerFull(self.policy.max_live_per_caller));
        }
        if inner.tasks.values().filter(|t| mine(t)).count() >= self.policy.max_kept_per_caller {
            inner.evict_oldest_finished(now, |t| mine(t));
        }
        if inner.tasks.len() >= self.policy.max_kept {
            inner.evict_oldest_finished(now, |_| true);
        }
        let live_all = inner.tasks.values().filter(|t| live(t)).count();
        if live_all >= self.policy.max_live || inner.tasks.len() >= self.policy.max_kept {
            return Err(TaskStoreError::Full);
        }
        let id = tessera_state::random_id()
            .ok_or_else(|| TaskStoreError::Unavailable("no randomness for a task id".into()))?;
        let record = TaskRecord::working(id.clone(), now);
        inner.created += 1;
        let seq = inner.created;
        inner.tasks.insert(
            id,
            Kept {
                record: record.clone(),
                seq,
                principal: new.principal,
                caller: new.caller,
                lease_until: now + RUNNER_LEASE.as_millis() as u64,
                pending: Vec::new(),
                answers: JsonObject::new(),
                bytes: 0,
                changed: Arc::new(Event::new()),
            },
        );
        Ok(record)
    }
}

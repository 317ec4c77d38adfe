//! The tasks of one process, in its memory (the default store).

use std::collections::HashMap;
use std::future::ready;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use event_listener::Event;
use tessera_protocol::{BoxFuture, InputRequests, JsonObject, TaskStatus};

use crate::task_entry::{TaskEntry, within_budgets};
use crate::task_store::{
    NewTask, TaskOutcome, TaskPolicy, TaskRecord, TaskStore, TaskStoreError, TaskStoreFuture,
    kept_outcome, now_ms,
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
    entry: TaskEntry,
    /// Its place in creation order.
    seq: u64,
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
            self.release(&task.entry.caller, task.entry.bytes);
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
    fn evict_oldest_finished(&mut self, now: u64, which: impl Fn(&TaskEntry) -> bool) {
        let oldest = self
            .tasks
            .iter()
            .filter(|(_, t)| which(&t.entry) && t.entry.is_evictable(now))
            .min_by_key(|(_, t)| t.seq)
            .map(|(id, _)| id.clone());
        if let Some(id) = oldest {
            self.forget(&id);
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
            if task.entry.end_if_abandoned(now) {
                task.changed.notify(usize::MAX);
            }
            task.entry
                .is_owned_by(principal)
                .then(|| task.entry.record.clone())
        });
        Box::pin(ready(Ok(found)))
    }

    fn ask<'a>(&'a self, id: &'a str, questions: InputRequests) -> TaskStoreFuture<'a, ()> {
        let now = now_ms();
        let mut inner = self.lock();
        if let Some(task) = self.live(&mut inner, id, now) {
            task.entry.ask(questions, now);
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
            .filter(|t| t.entry.is_owned_by(principal))
        else {
            return Box::pin(ready(Ok(false)));
        };
        if task.entry.answer(responses, now) {
            task.changed.notify(usize::MAX);
        }
        Box::pin(ready(Ok(true)))
    }

    fn take_answers<'a>(&'a self, id: &'a str) -> TaskStoreFuture<'a, Option<JsonObject>> {
        let now = now_ms();
        let mut inner = self.lock();
        let taken = self
            .live(&mut inner, id, now)
            .and_then(|task| task.entry.take_answers());
        Box::pin(ready(Ok(taken)))
    }

    fn finish<'a>(&'a self, id: &'a str, outcome: TaskOutcome) -> TaskStoreFuture<'a, ()> {
        let now = now_ms();
        let (outcome, bytes) = kept_outcome(outcome, &self.policy);
        let mut inner = self.lock();
        let Some(caller) = self
            .live(&mut inner, id, now)
            .filter(|t| !t.entry.record.status.is_terminal())
            .map(|t| t.entry.caller.clone())
        else {
            return Box::pin(ready(Ok(())));
        };
        let mine = inner.bytes_by_caller.get(&caller).copied().unwrap_or(0);
        let (outcome, bytes) = within_budgets(outcome, bytes, mine, inner.bytes, &self.policy);
        inner.bytes += bytes;
        *inner.bytes_by_caller.entry(caller).or_default() += bytes;
        if let Some(task) = inner.tasks.get_mut(id) {
            task.entry.finish(outcome, bytes, now);
        }
        Box::pin(ready(Ok(())))
    }

    fn cancel<'a>(&'a self, id: &'a str, principal: Option<&'a str>) -> TaskStoreFuture<'a, bool> {
        let now = now_ms();
        let mut inner = self.lock();
        let Some(task) = self
            .live(&mut inner, id, now)
            .filter(|t| t.entry.is_owned_by(principal))
        else {
            return Box::pin(ready(Ok(false)));
        };
        task.entry.cancel(now);
        task.changed.notify(usize::MAX);
        Box::pin(ready(Ok(true)))
    }

    fn renew<'a>(&'a self, id: &'a str) -> TaskStoreFuture<'a, Option<TaskStatus>> {
        let now = now_ms();
        let mut inner = self.lock();
        let status = self
            .live(&mut inner, id, now)
            .map(|task| task.entry.renew(now));
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

    fn is_shared(&self) -> bool {
        false
    }
}

impl MemoryTaskStore {
    /// Task `id` unless it expired (an expired one is forgotten).
    fn live<'i>(&self, inner: &'i mut Inner, id: &str, now: u64) -> Option<&'i mut Kept> {
        let expired = inner
            .tasks
            .get(id)
            .is_some_and(|t| t.entry.is_expired(now, &self.policy));
        if expired {
            inner.forget(id);
        }
        inner.tasks.get_mut(id)
    }

    fn create_now(&self, new: NewTask) -> Result<TaskRecord, TaskStoreError> {
        let now = now_ms();
        let mut inner = self.lock();
        let expired: Vec<String> = inner
            .tasks
            .iter()
            .filter(|(_, t)| t.entry.is_expired(now, &self.policy))
            .map(|(id, _)| id.clone())
            .collect();
        for id in expired {
            inner.forget(&id);
        }
        let mine = |t: &TaskEntry| t.caller == new.caller;
        let live_mine = inner
            .tasks
            .values()
            .filter(|t| mine(&t.entry) && t.entry.is_live(now))
            .count();
        if live_mine >= self.policy.max_live_per_caller {
            return Err(TaskStoreError::CallerFull(self.policy.max_live_per_caller));
        }
        if inner.tasks.values().filter(|t| mine(&t.entry)).count()
            >= self.policy.max_kept_per_caller
        {
            inner.evict_oldest_finished(now, mine);
        }
        if inner.tasks.len() >= self.policy.max_kept {
            inner.evict_oldest_finished(now, |_| true);
        }
        let live_all = inner
            .tasks
            .values()
            .filter(|t| t.entry.is_live(now))
            .count();
        if live_all >= self.policy.max_live || inner.tasks.len() >= self.policy.max_kept {
            return Err(TaskStoreError::Full);
        }
        let id = tessera_state::random_id()
            .ok_or_else(|| TaskStoreError::Unavailable("no randomness for a task id".into()))?;
        let entry = TaskEntry::new(id.clone(), new, now);
        let record = entry.record.clone();
        inner.created += 1;
        let seq = inner.created;
        inner.tasks.insert(
            id,
            Kept {
                entry,
                seq,
                changed: Arc::new(Event::new()),
            },
        );
        Ok(record)
    }
}

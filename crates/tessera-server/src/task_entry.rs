//! One task as a store keeps it, and the steps that change it: the rules of
//! the [`TaskStore`](crate::TaskStore) contract that concern a single task,
//! written once for the stores that run Rust next to their data (the
//! in-memory store, the Durable Object store of `tessera-worker`). The
//! quotas, which concern all tasks, stay with each store.

use serde::{Deserialize, Serialize};
use tessera_protocol::{InputRequests, JsonObject, TaskStatus};

use crate::task_store::{
    CANCELLED_MESSAGE, NewTask, RUNNER_LEASE, TaskOutcome, TaskPolicy, TaskRecord, WAITING_MESSAGE,
    result_over_budget, runner_stopped,
};

/// A task with what only its store sees: whose it is, its runner's lease,
/// the questions still open and the answers given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[non_exhaustive]
pub struct TaskEntry {
    /// The task as `tasks/get` shows it.
    pub record: TaskRecord,
    /// Whose task it is.
    pub principal: Option<String>,
    /// Whom its quotas count against.
    pub caller: Option<String>,
    /// Until when its runner is known to be alive (ms since the epoch).
    pub lease_until: u64,
    /// The keys of the questions not answered yet.
    pub pending: Vec<String>,
    /// The answers given this round, not taken yet.
    pub answers: JsonObject,
    /// Bytes of its kept result or error, counted against its caller.
    pub bytes: usize,
}

impl TaskEntry {
    /// A working task `id` of `new`'s principal, created at `now`, its
    /// runner's lease starting.
    pub fn new(id: String, new: NewTask, now: u64) -> Self {
        Self {
            record: TaskRecord {
                trace: new.trace,
                ..TaskRecord::working(id, now)
            },
            principal: new.principal,
            caller: new.caller,
            lease_until: now + RUNNER_LEASE.as_millis() as u64,
            pending: Vec::new(),
            answers: JsonObject::new(),
            bytes: 0,
        }
    }

    /// Whether `principal` (or the anonymous caller, `None`) owns it.
    pub fn is_owned_by(&self, principal: Option<&str>) -> bool {
        self.principal.as_deref() == principal
    }

    /// Whether its TTL ran out at `now`.
    pub fn is_expired(&self, now: u64, policy: &TaskPolicy) -> bool {
        now.saturating_sub(self.record.created_ms) >= policy.ttl.as_millis() as u64
    }

    /// Whether it is unfinished with its runner alive at `now` (it counts
    /// against the live quotas).
    pub fn is_live(&self, now: u64) -> bool {
        !self.record.status.is_terminal() && self.lease_until >= now
    }

    /// Whether it may be forgotten to make room: finished, or abandoned
    /// (its runner's lease ran out).
    pub fn is_evictable(&self, now: u64) -> bool {
        self.record.status.is_terminal() || self.lease_until < now
    }

    /// Whether its runner has something to look at: it ended, or every
    /// question has an answer not taken yet. Stores that cannot push a
    /// wake-up poll this.
    pub fn wants_runner(&self) -> bool {
        self.record.status.is_terminal()
            || (self.record.status == TaskStatus::Working
                && self.pending.is_empty()
                && !self.answers.is_empty())
    }

    /// Moves to `status` unless it ended; says whether it moved.
    fn set(&mut self, status: TaskStatus, now: u64, message: Option<&str>) -> bool {
        if self.record.status.is_terminal() {
            return false;
        }
        self.record.status = status;
        self.record.message = message.map(str::to_owned);
        self.record.updated_ms = now;
        true
    }

    /// Ends it `failed` if it is unfinished and its runner's lease ran out;
    /// says whether it ended (its runner, if any, should be woken).
    pub fn end_if_abandoned(&mut self, now: u64) -> bool {
        if self.record.status.is_terminal() || self.lease_until >= now {
            return false;
        }
        let error = runner_stopped();
        self.set(TaskStatus::Failed, now, Some(&error.message));
        self.record.input_requests.clear();
        self.record.error = Some(error);
        true
    }

    /// Waits for answers to `questions`, dropping earlier answers not taken;
    /// `false` (nothing changed) when it ended.
    pub fn ask(&mut self, questions: InputRequests, now: u64) -> bool {
        if !self.set(TaskStatus::InputRequired, now, Some(WAITING_MESSAGE)) {
            return false;
        }
        self.pending = questions.keys().cloned().collect();
        self.answers = JsonObject::new();
        self.record.input_requests = questions;
        true
    }

    /// Records the answers to outstanding questions (other keys are
    /// ignored); says whether that answered the last one (the task works
    /// again and its runner should be woken).
    pub fn answer(&mut self, responses: JsonObject, now: u64) -> bool {
        if self.record.status != TaskStatus::InputRequired {
            return false;
        }
        for (key, response) in responses {
            if let Some(at) = self.pending.iter().position(|k| *k == key) {
                self.pending.swap_remove(at);
                self.record.input_requests.shift_remove(&key);
                self.answers.insert(key, response);
            }
        }
        if !self.pending.is_empty() {
            return false;
        }
        self.set(TaskStatus::Working, now, None);
        self.record.input_requests.clear();
        true
    }

    /// The round's answers once every question has one, taken.
    pub fn take_answers(&mut self) -> Option<JsonObject> {
        (self.record.status == TaskStatus::Working
            && self.pending.is_empty()
            && !self.answers.is_empty())
        .then(|| std::mem::take(&mut self.answers))
    }

    /// Ends it with `outcome`, kept in `bytes` (from
    /// [`kept_outcome`](crate::task_store::kept_outcome) and
    /// [`within_budgets`]). A task that ended stays as it was.
    pub fn finish(&mut self, outcome: TaskOutcome, bytes: usize, now: u64) {
        if self.record.status.is_terminal() {
            return;
        }
        self.bytes = bytes;
        match outcome {
            TaskOutcome::Completed(result) => {
                self.set(TaskStatus::Completed, now, None);
                self.record.result = Some(result);
            }
            TaskOutcome::Failed(error) => {
                self.set(TaskStatus::Failed, now, Some(&error.message));
                self.record.error = Some(error);
            }
        }
        self.record.input_requests.clear();
    }

    /// Cancels it, unless it ended.
    pub fn cancel(&mut self, now: u64) {
        if self.set(TaskStatus::Cancelled, now, Some(CANCELLED_MESSAGE)) {
            self.record.input_requests.clear();
            self.pending.clear();
        }
    }

    /// Renews its runner's lease (unless it ended): its status.
    pub fn renew(&mut self, now: u64) -> TaskStatus {
        if !self.record.status.is_terminal() {
            self.lease_until = now + RUNNER_LEASE.as_millis() as u64;
        }
        self.record.status
    }
}

/// `outcome` (of `bytes`, from [`kept_outcome`](crate::task_store::kept_outcome))
/// if keeping it stays within `policy`'s byte budgets, given the bytes its
/// caller's tasks (`callers`) and all tasks (`all`) keep already; else the
/// error saying which budget it would pass, kept in no bytes.
pub fn within_budgets(
    outcome: TaskOutcome,
    bytes: usize,
    callers: usize,
    all: usize,
    policy: &TaskPolicy,
) -> (TaskOutcome, usize) {
    if callers.saturating_add(bytes) > policy.max_kept_bytes_per_caller {
        let limit = policy.max_kept_bytes_per_caller;
        (
            TaskOutcome::Failed(result_over_budget("this caller's tasks", limit)),
            0,
        )
    } else if all.saturating_add(bytes) > policy.max_kept_bytes {
        let limit = policy.max_kept_bytes;
        (
            TaskOutcome::Failed(result_over_budget("the server's tasks", limit)),
            0,
        )
    } else {
        (outcome, bytes)
    }
}

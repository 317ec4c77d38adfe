//! The Durable Object that keeps a Worker's tasks, in its SQLite storage.
//!
//! One row per task: the task itself ([`TaskEntry`], as JSON) beside the
//! columns the quotas count by (caller, until when it is live, its bytes,
//! its creation order). A step reads and writes rows with no await in
//! between, so it runs whole before the object takes the next request; an
//! alarm forgets tasks whose TTL ran out when no step comes to do it.
// `#[durable_object]` generates the JavaScript-facing methods, undocumented.
#![allow(missing_docs)]

use serde::Deserialize;
use serde_json::Value;
use tessera_server::TaskPolicy;
use tessera_server::task_entry::{TaskEntry, within_budgets};
use tessera_server::task_store::now_ms;
use worker::{
    DurableObject, Env, Request, Response, Result, SqlStorage, SqlStorageValue, State,
    durable_object,
};

use crate::task_store::{Call, Created, Step};

const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS tasks (
    id TEXT PRIMARY KEY,
    seq INTEGER NOT NULL,
    caller TEXT,
    live_until INTEGER,
    expires INTEGER NOT NULL,
    bytes INTEGER NOT NULL,
    entry TEXT NOT NULL
)";

/// The Durable Object class behind [`DurableObjectTaskStore`](crate::DurableObjectTaskStore):
/// export it from the Worker (`pub use tessera_worker::TaskStoreObject;`)
/// and bind it as `TASK_STORE` with a `new_sqlite_classes` migration.
#[durable_object]
pub struct TaskStoreObject {
    state: State,
}

impl DurableObject for TaskStoreObject {
    fn new(state: State, _env: Env) -> Self {
        Self { state }
    }

    /// `POST /step` with a store step as JSON: its answer as JSON, or 400 naming what
    /// was wrong with the call, or 500 naming what storage said.
    async fn fetch(&self, mut request: Request) -> Result<Response> {
        let call: Call = match serde_json::from_str(&request.text().await?) {
            Ok(call) => call,
            Err(e) => return Response::error(format!("not a task store step: {e}"), 400),
        };
        let tasks = Tasks::open(self.state.storage().sql(), call.policy)?;
        let created = matches!(call.step, Step::Create { .. });
        let answer = match tasks.run(call.step) {
            Ok(answer) => answer,
            Err(e) => return Response::error(e, 500),
        };
        // The step is done: an alarm that cannot be set only delays the
        // sweep (expired tasks are also forgotten by the next create).
        if created && let Err(e) = self.arm_unless_armed().await {
            worker::console_error!("tessera: the task store's alarm could not be set: {e}");
        }
        Response::from_json(&answer)
    }

    /// Forgets the tasks whose TTL ran out, and wakes again for the next.
    async fn alarm(&self) -> Result<Response> {
        let sql = self.state.storage().sql();
        sql.exec(SCHEMA, None)?;
        forget_expired(&sql, now_ms())?;
        self.arm().await?;
        Response::ok("swept")
    }
}

impl TaskStoreObject {
    /// Sets the alarm unless one is set already.
    async fn arm_unless_armed(&self) -> Result<()> {
        if self.state.storage().get_alarm().await?.is_none() {
            self.arm().await?;
        }
        Ok(())
    }

    /// Sets the alarm for when the oldest task expires, if any is kept.
    async fn arm(&self) -> Result<()> {
        let next: Vec<Number> = self
            .state
            .storage()
            .sql()
            .exec("SELECT MIN(expires) AS n FROM tasks", None)?
            .to_array()?;
        if let Some(at) = next.first().and_then(|n| n.n) {
            let delay = (at as i64).saturating_sub(now_ms() as i64).max(0);
            self.state.storage().set_alarm(delay).await?;
        }
        Ok(())
    }
}

/// A number column of one row (`NULL` for an empty aggregate).
#[derive(Deserialize)]
struct Number {
    n: Option<f64>,
}

/// An entry column of one row.
#[derive(Deserialize)]
struct Row {
    seq: f64,
    entry: String,
}

/// Forgets the tasks whose TTL ran out by `now`.
fn forget_expired(sql: &SqlStorage, now: u64) -> Result<()> {
    sql.exec("DELETE FROM tasks WHERE expires <= ?", vec![int(now)])?;
    Ok(())
}

fn int(n: u64) -> SqlStorageValue {
    SqlStorageValue::Integer(i64::try_from(n).unwrap_or(i64::MAX))
}

fn text(s: Option<&str>) -> SqlStorageValue {
    s.map_or(SqlStorageValue::Null, |s| {
        SqlStorageValue::String(s.to_owned())
    })
}

/// The tasks table, under one call's policy, at one instant.
struct Tasks {
    sql: SqlStorage,
    policy: TaskPolicy,
    now: u64,
}

impl Tasks {
    fn open(sql: SqlStorage, policy: TaskPolicy) -> Result<Self> {
        sql.exec(SCHEMA, None)?;
        Ok(Self {
            sql,
            policy,
            now: now_ms(),
        })
    }

    fn count(&self, query: &str, bindings: Vec<SqlStorageValue>) -> Result<usize> {
        let rows: Vec<Number> = self.sql.exec(query, bindings)?.to_array()?;
        Ok(rows.first().and_then(|r| r.n).unwrap_or(0.0) as usize)
    }

    /// Task `id` unless it expired (an expired one is forgotten).
    fn load(&self, id: &str) -> std::result::Result<Option<(u64, TaskEntry)>, String> {
        let rows: Vec<Row> = self
            .sql
            .exec("SELECT seq, entry FROM tasks WHERE id = ?", vec![id.into()])
            .and_then(|c| c.to_array())
            .map_err(|e| e.to_string())?;
        let Some(row) = rows.into_iter().next() else {
            return Ok(None);
        };
        let entry: TaskEntry = serde_json::from_str(&row.entry)
            .map_err(|e| format!("task {id} in storage is not a task: {e}"))?;
        if entry.is_expired(self.now, &self.policy) {
            self.forget(id).map_err(|e| e.to_string())?;
            return Ok(None);
        }
        Ok(Some((row.seq as u64, entry)))
    }

    /// Writes `entry` as task `seq` in creation order.
    fn save(&self, seq: u64, entry: &TaskEntry) -> Result<()> {
        let json =
            serde_json::to_string(entry).map_err(|e| worker::Error::RustError(e.to_string()))?;
        let live_until = (!entry.record.status.is_terminal()).then_some(entry.lease_until);
        let expires = entry
            .record
            .created_ms
            .saturating_add(self.policy.ttl.as_millis() as u64);
        self.sql.exec(
            "INSERT OR REPLACE INTO tasks (id, seq, caller, live_until, expires, bytes, entry)
             VALUES (?, ?, ?, ?, ?, ?, ?)",
            vec![
                entry.record.id.as_str().into(),
                int(seq),
                text(entry.caller.as_deref()),
                live_until.map_or(SqlStorageValue::Null, int),
                int(expires),
                int(entry.bytes as u64),
                json.into(),
            ],
        )?;
        Ok(())
    }

    fn forget(&self, id: &str) -> Result<()> {
        self.sql
            .exec("DELETE FROM tasks WHERE id = ?", vec![id.into()])?;
        Ok(())
    }

    /// Changes task `id` with `change` (when it is kept and `principal`,
    /// if given, owns it), which says what to answer and whether the task
    /// changed; a changed task is written back (a result of a megabyte is
    /// not rewritten by every poll). What `change` said, or `None`.
    fn change<T>(
        &self,
        id: &str,
        principal: Option<Option<&str>>,
        change: impl FnOnce(&mut TaskEntry, u64) -> (T, bool),
    ) -> std::result::Result<Option<T>, String> {
        let Some((seq, mut entry)) = self.load(id)? else {
            return Ok(None);
        };
        if principal.is_some_and(|p| !entry.is_owned_by(p)) {
            return Ok(None);
        }
        let (said, changed) = change(&mut entry, self.now);
        if changed {
            self.save(seq, &entry).map_err(|e| e.to_string())?;
        }
        Ok(Some(said))
    }

    /// Runs `step`: its answer as JSON.
    fn run(&self, step: Step) -> std::result::Result<Value, String> {
        match step {
            Step::Create { id, new } => to_json(self.create(id, new).map_err(|e| e.to_string())?),
            Step::Get { id, principal } => {
                let record = self.change(&id, None, |entry, now| {
                    let ended = entry.end_if_abandoned(now);
                    let seen = entry
                        .is_owned_by(principal.as_deref())
                        .then(|| entry.record.clone());
                    (seen, ended)
                })?;
                to_json(record.flatten())
            }
            Step::Ask { id, questions } => {
                self.change(&id, None, |entry, now| ((), entry.ask(questions, now)))?;
                Ok(Value::Null)
            }
            Step::Answer {
                id,
                principal,
                responses,
            } => {
                let owned = self.change(&id, Some(principal.as_deref()), |entry, now| {
                    let before = (entry.record.status, entry.pending.len());
                    entry.answer(responses, now);
                    ((), before != (entry.record.status, entry.pending.len()))
                })?;
                to_json(owned.is_some())
            }
            Step::Take { id } => {
                let taken = self.change(&id, None, |entry, _| {
                    let taken = entry.take_answers();
                    let changed = taken.is_some();
                    (taken, changed)
                })?;
                to_json(taken.flatten())
            }
            Step::Finish { id, outcome, bytes } => {
                self.finish(&id, outcome, bytes)?;
                Ok(Value::Null)
            }
            Step::Cancel { id, principal } => {
                let owned = self.change(&id, Some(principal.as_deref()), |entry, now| {
                    let before = entry.record.status;
                    entry.cancel(now);
                    ((), entry.record.status != before)
                })?;
                to_json(owned.is_some())
            }
            Step::Renew { id } => to_json(self.change(&id, None, |entry, now| {
                let live = !entry.record.status.is_terminal();
                (entry.renew(now), live)
            })?),
            Step::WantsRunner { id } => to_json(
                self.load(&id)?
                    .is_none_or(|(_, entry)| entry.wants_runner()),
            ),
        }
    }

    fn finish(
        &self,
        id: &str,
        outcome: tessera_server::TaskOutcome,
        bytes: usize,
    ) -> std::result::Result<(), String> {
        let Some((seq, mut entry)) = self.load(id)? else {
            return Ok(());
        };
        if entry.record.status.is_terminal() {
            return Ok(());
        }
        let e = |e: worker::Error| e.to_string();
        let mine = self
            .count(
                "SELECT SUM(bytes) AS n FROM tasks WHERE caller IS ?",
                vec![text(entry.caller.as_deref())],
            )
            .map_err(e)?;
        let all = self
            .count("SELECT SUM(bytes) AS n FROM tasks", Vec::new())
            .map_err(e)?;
        let (outcome, bytes) = within_budgets(outcome, bytes, mine, all, &self.policy);
        entry.finish(outcome, bytes, self.now);
        self.save(seq, &entry).map_err(e)
    }

    /// Creates task `id` under the quotas (the same rules as the in-memory
    /// store: expired tasks forgotten first; past a kept quota, the oldest
    /// finished or abandoned task goes).
    fn create(&self, id: String, new: tessera_server::NewTask) -> Result<Created> {
        let now = self.now;
        let caller = || vec![text(new.caller.as_deref())];
        forget_expired(&self.sql, now)?;
        let live_mine = self.count(
            "SELECT COUNT(*) AS n FROM tasks WHERE caller IS ? AND live_until >= ?",
            [caller(), vec![int(now)]].concat(),
        )?;
        if live_mine >= self.policy.max_live_per_caller {
            return Ok(Created::CallerFull);
        }
        let evict_oldest = |mine: bool| {
            let query = format!(
                "DELETE FROM tasks WHERE id = (SELECT id FROM tasks
                 WHERE (live_until IS NULL OR live_until < ?) {}
                 ORDER BY seq LIMIT 1)",
                if mine { "AND caller IS ?" } else { "" }
            );
            let mut bindings = vec![int(now)];
            if mine {
                bindings.extend(caller());
            }
            self.sql.exec(&query, bindings).map(|_| ())
        };
        let kept_mine = self.count(
            "SELECT COUNT(*) AS n FROM tasks WHERE caller IS ?",
            caller(),
        )?;
        if kept_mine >= self.policy.max_kept_per_caller {
            evict_oldest(true)?;
        }
        let kept = |tasks: &Self| tasks.count("SELECT COUNT(*) AS n FROM tasks", Vec::new());
        if kept(self)? >= self.policy.max_kept {
            evict_oldest(false)?;
        }
        let live_all = self.count(
            "SELECT COUNT(*) AS n FROM tasks WHERE live_until >= ?",
            vec![int(now)],
        )?;
        if live_all >= self.policy.max_live || kept(self)? >= self.policy.max_kept {
            return Ok(Created::Full);
        }
        let seq = self.count("SELECT MAX(seq) AS n FROM tasks", Vec::new())? as u64 + 1;
        let entry = TaskEntry::new(id, new, now);
        self.save(seq, &entry)?;
        Ok(Created::Task(Box::new(entry.record)))
    }
}

fn to_json(answer: impl serde::Serialize) -> std::result::Result<Value, String> {
    serde_json::to_value(answer).map_err(|e| e.to_string())
}

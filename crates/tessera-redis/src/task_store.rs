//! Tasks every instance can answer: the task store in Redis.
//!
//! Each step is one Lua script, so it is atomic across instances. Keys,
//! under `tessera:{namespace}:tasks:`:
//!
//! - `t:{id}`: a hash (principal, caller, status, message, created,
//!   updated, lease, requests, result, error, trace), expiring with the task;
//!   `t:{id}:pending` (a set of outstanding question keys) and
//!   `t:{id}:answers` (a hash of the answers given) beside it;
//! - `kept`, `kept:{caller}`: sorted sets of kept tasks by creation (ms × 1000
//!   plus a sequence, so tasks of one millisecond keep their order);
//!   `live`, `live:{caller}`: unfinished tasks by the end of their runner's
//!   lease; `bytes` (kept result bytes, `*` for all and per caller) and
//!   `size` (each task's bytes and caller), so quotas hold across instances;
//! - channel `changed`: a task id, published when its answers are complete
//!   or it is cancelled, so the instance running it wakes at once.
//!
//! JSON (questions, results, errors) is stored as opaque strings: the
//! scripts never decode it (Redis's Lua JSON turns `[]` into `{}`). Times
//! are Redis's own (`TIME`), so instances whose clocks differ agree on
//! leases and expiry.
//!
//! On a Redis Cluster every key of the store shares one hash tag (the
//! prefix is `tessera:{namespace:tasks}:`), so the store lives in one slot:
//! the quotas (`live`, `kept`, `bytes`) are checked and changed in the same
//! script as the task itself, which Redis runs atomically only on keys of
//! one slot. Each script declares `seq` as its key, which routes it to that
//! slot's node; the wake-up channel is sharded in the same slot
//! (`SPUBLISH`). Tickets, rate-limit buckets, session notes and channels
//! other than this one spread over the slots.

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, Weak};

use event_listener::Event;
use tessera_protocol::{BoxFuture, InputRequests, JsonObject, TaskStatus};
use tessera_server::task_store::{
    CANCELLED_MESSAGE, RUNNER_LEASE, TaskStoreFuture, WAITING_MESSAGE, kept_outcome, now_ms,
    result_over_budget, runner_stopped,
};
use tessera_server::{NewTask, TaskOutcome, TaskPolicy, TaskRecord, TaskStore, TaskStoreError};

use crate::RedisConnection;
use crate::subscriber::{ChannelListener, subscribe_forever};

/// Keeps tasks in Redis, so that `tasks/get`, `tasks/update` and
/// `tasks/cancel` reach any instance: answers and cancels given to another
/// instance wake the one running the task over pub/sub (and it looks every
/// [`LEASE_RENEWAL`](tessera_server::task_store::LEASE_RENEWAL) as well,
/// should a message be lost); a task whose instance died ends `failed`
/// once its lease runs out. The quotas of its [`TaskPolicy`] hold for all
/// instances together. When Redis does not answer, task requests are
/// answered 503.
pub struct RedisTaskStore {
    conn: RedisConnection,
    prefix: String,
    publish: &'static str,
    channel: String,
    policy: TaskPolicy,
    wakers: Wakers,
    subscribed: Arc<(AtomicBool, Event)>,
    task: tokio::task::JoinHandle<()>,
}

/// The runners of this instance waiting on their tasks, by id.
type Wakers = Arc<Mutex<HashMap<String, Weak<Event>>>>;

impl RedisTaskStore {
    pub(crate) fn start(redis: &crate::Redis, namespace: &str, policy: TaskPolicy) -> Self {
        let prefix = if redis.is_cluster() {
            format!("tessera:{{{namespace}:tasks}}:")
        } else {
            format!("tessera:{namespace}:tasks:")
        };
        let channel = format!("{prefix}changed");
        let wakers: Wakers = Arc::default();
        let subscribed: Arc<(AtomicBool, Event)> = Arc::default();
        let task = tokio::spawn(subscribe_forever(
            redis.deployment.clone(),
            channel.clone(),
            "task store",
            TaskWaker {
                wakers: Arc::clone(&wakers),
                subscribed: Arc::clone(&subscribed),
            },
        ));
        Self {
            conn: redis.connection(),
            prefix,
            publish: redis.deployment.publish(),
            channel,
            policy,
            wakers,
            subscribed,
            task,
        }
    }

    /// Completes once the store hears wake-ups from other instances (its
    /// channel is subscribed); before, runners still see changes within
    /// [`LEASE_RENEWAL`](tessera_server::task_store::LEASE_RENEWAL).
    pub async fn subscribed(&self) {
        loop {
            let listener = self.subscribed.1.listen();
            if self.subscribed.0.load(Ordering::Acquire) {
                return;
            }
            listener.await;
        }
    }

    /// An invocation of `script` with the key prefix and the publish
    /// command as its first arguments, and `seq` as its key (which routes it
    /// to the store's node on a cluster).
    fn invocation(&self, script: &'static redis::Script) -> redis::ScriptInvocation<'static> {
        let mut invocation = script.prepare_invoke();
        invocation.key(format!("{}seq", self.prefix));
        invocation.arg(&self.prefix).arg(self.publish);
        invocation
    }

    /// Runs `invocation` on the shared connection.
    async fn run<T: redis::FromRedisValue>(
        &self,
        invocation: &redis::ScriptInvocation<'_>,
    ) -> Result<T, TaskStoreError> {
        let mut conn = self.conn.clone();
        invocation
            .invoke_async(&mut conn)
            .await
            .map_err(|e| TaskStoreError::Unavailable(format!("Redis: {e}")))
    }
}

impl Drop for RedisTaskStore {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// A principal or caller as the scripts keep it: `=name`, or `-` for none.
fn encode(who: Option<&str>) -> String {
    who.map_or_else(|| "-".to_owned(), |name| format!("={name}"))
}

/// The task a hash holds, from `HGETALL`'s pairs.
fn record(id: &str, fields: Vec<String>) -> Result<TaskRecord, TaskStoreError> {
    let bad =
        |what: &str| TaskStoreError::Unavailable(format!("task {id} in Redis has a bad {what}"));
    let mut map: HashMap<String, String> = HashMap::new();
    let mut pairs = fields.into_iter();
    while let (Some(k), Some(v)) = (pairs.next(), pairs.next()) {
        map.insert(k, v);
    }
    let number = |key: &str| map.get(key).and_then(|v| v.parse::<u64>().ok());
    let created = number("created").ok_or_else(|| bad("creation time"))?;
    let mut record = TaskRecord::working(id.to_owned(), created);
    record.updated_ms = number("updated").unwrap_or(created);
    record.trace = map.get("trace").cloned();
    record.status = map
        .get("status")
        .and_then(|s| serde_json::from_value(serde_json::Value::String(s.clone())).ok())
        .ok_or_else(|| bad("status"))?;
    record.message = map.get("message").cloned();
    if let Some(requests) = map.get("requests") {
        record.input_requests = serde_json::from_str(requests).map_err(|_| bad("question"))?;
    }
    if let Some(result) = map.get("result") {
        record.result = Some(serde_json::from_str(result).map_err(|_| bad("result"))?);
    }
    if let Some(error) = map.get("error") {
        record.error = Some(serde_json::from_str(error).map_err(|_| bad("error"))?);
    }
    Ok(record)
}

fn status_name(status: TaskStatus) -> String {
    match serde_json::to_value(status) {
        Ok(serde_json::Value::String(name)) => name,
        _ => "failed".into(),
    }
}

impl TaskStore for RedisTaskStore {
    fn policy(&self) -> &TaskPolicy {
        &self.policy
    }

    fn create(&self, new: NewTask) -> TaskStoreFuture<'_, TaskRecord> {
        Box::pin(async move {
            let id = tessera_state::random_id()
                .ok_or_else(|| TaskStoreError::Unavailable("no randomness for a task id".into()))?;
            let p = &self.policy;
            let answer: String = self
                .run(
                    self.invocation(&CREATE)
                        .arg(&id)
                        .arg(encode(new.principal.as_deref()))
                        .arg(encode(new.caller.as_deref()))
                        .arg(p.ttl.as_millis() as u64)
                        .arg(RUNNER_LEASE.as_millis() as u64)
                        .arg(p.max_live)
                        .arg(p.max_kept)
                        .arg(p.max_live_per_caller)
                        .arg(p.max_kept_per_caller)
                        .arg(new.trace.as_deref().unwrap_or("")),
                )
                .await?;
            match answer.as_str() {
                "caller" => Err(TaskStoreError::CallerFull(p.max_live_per_caller)),
                "full" => Err(TaskStoreError::Full),
                _ => Ok(TaskRecord::working(
                    id,
                    answer.parse().unwrap_or_else(|_| now_ms()),
                )),
            }
        })
    }

    fn get<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
    ) -> TaskStoreFuture<'a, Option<TaskRecord>> {
        Box::pin(async move {
            let dead = runner_stopped();
            let dead_json = serde_json::to_string(&dead).unwrap_or_default();
            let found: Option<(Vec<String>, Vec<String>)> = self
                .run(
                    self.invocation(&GET)
                        .arg(id)
                        .arg(encode(principal))
                        .arg(dead.message)
                        .arg(dead_json),
                )
                .await?;
            let Some((fields, pending)) = found else {
                return Ok(None);
            };
            let mut record = record(id, fields)?;
            // Only the questions still outstanding are shown.
            record
                .input_requests
                .retain(|key, _| pending.iter().any(|p| p == key));
            Ok(Some(record))
        })
    }

    fn ask<'a>(&'a self, id: &'a str, questions: InputRequests) -> TaskStoreFuture<'a, ()> {
        Box::pin(async move {
            let requests = serde_json::to_string(&questions)
                .map_err(|e| TaskStoreError::Unavailable(format!("questions as JSON: {e}")))?;
            let keys: Vec<&str> = questions.keys().map(String::as_str).collect();
            let _: i64 = self
                .run(
                    self.invocation(&ASK)
                        .arg(id)
                        .arg(WAITING_MESSAGE)
                        .arg(requests)
                        .arg(keys),
                )
                .await?;
            Ok(())
        })
    }

    fn answer<'a>(
        &'a self,
        id: &'a str,
        principal: Option<&'a str>,
        responses: JsonObject,
    ) -> TaskStoreFuture<'a, bool> {
        Box::pin(async move {
            let pairs: Vec<String> = responses
                .iter()
                .flat_map(|(key, response)| [key.clone(), response.to_string()])
                .collect();
            let answered: i64 = self
                .run(
                    self.invocation(&ANSWER)
                        .arg(id)
                        .arg(encode(principal))
                        .arg(&self.channel)
                        .arg(pairs),
                )
                .await?;
            Ok(answered >= 0)
        })
    }

    fn take_answers<'a>(&'a self, id: &'a str) -> TaskStoreFuture<'a, Option<JsonObject>> {
        Box::pin(async move {
            let pairs: Option<Vec<String>> = self.run(self.invocation(&TAKE).arg(id)).await?;
            let Some(pairs) = pairs else {
                return Ok(None);
            };
            let mut answers = JsonObject::new();
            let mut pairs = pairs.into_iter();
            while let (Some(key), Some(value)) = (pairs.next(), pairs.next()) {
                let value = serde_json::from_str(&value).map_err(|_| {
                    TaskStoreError::Unavailable(format!("task {id} in Redis has a bad answer"))
                })?;
                answers.insert(key, value);
            }
            Ok(Some(answers))
        })
    }

    fn finish<'a>(&'a self, id: &'a str, outcome: TaskOutcome) -> TaskStoreFuture<'a, ()> {
        Box::pin(async move {
            let (outcome, bytes) = kept_outcome(outcome, &self.policy);
            let mut outcome = outcome;
            let mut bytes = bytes;
            loop {
                let (status, message, field, json) = match &outcome {
                    TaskOutcome::Completed(result) => (
                        TaskStatus::Completed,
                        String::new(),
                        "result",
                        result.to_string(),
                    ),
                    TaskOutcome::Failed(error) => (
                        TaskStatus::Failed,
                        error.message.clone(),
                        "error",
                        serde_json::to_string(error).unwrap_or_default(),
                    ),
                };
                let finished: String = self
                    .run(
                        self.invocation(&FINISH)
                            .arg(id)
                            .arg(status_name(status))
                            .arg(message)
                            .arg(field)
                            .arg(json)
                            .arg(bytes)
                            .arg(self.policy.max_kept_bytes_per_caller)
                            .arg(self.policy.max_kept_bytes),
                    )
                    .await?;
                // Past a budget: the task fails, saying which (its error not counted).
                outcome = match finished.as_str() {
                    "caller" => TaskOutcome::Failed(result_over_budget(
                        "this caller's tasks",
                        self.policy.max_kept_bytes_per_caller,
                    )),
                    "server" => TaskOutcome::Failed(result_over_budget(
                        "the server's tasks",
                        self.policy.max_kept_bytes,
                    )),
                    _ => return Ok(()),
                };
                bytes = 0;
            }
        })
    }

    fn cancel<'a>(&'a self, id: &'a str, principal: Option<&'a str>) -> TaskStoreFuture<'a, bool> {
        Box::pin(async move {
            let found: i64 = self
                .run(
                    self.invocation(&CANCEL)
                        .arg(id)
                        .arg(encode(principal))
                        .arg(CANCELLED_MESSAGE)
                        .arg(&self.channel),
                )
                .await?;
            Ok(found == 1)
        })
    }

    fn renew<'a>(&'a self, id: &'a str) -> TaskStoreFuture<'a, Option<TaskStatus>> {
        Box::pin(async move {
            let status: Option<String> = self
                .run(
                    self.invocation(&RENEW)
                        .arg(id)
                        .arg(RUNNER_LEASE.as_millis() as u64),
                )
                .await?;
            Ok(status.and_then(|s| serde_json::from_value(serde_json::Value::String(s)).ok()))
        })
    }

    fn changed(&self, id: &str) -> BoxFuture<'static, ()> {
        let mut wakers = self.wakers.lock().unwrap_or_else(PoisonError::into_inner);
        let event = match wakers.get(id).and_then(Weak::upgrade) {
            Some(event) => event,
            None => {
                wakers.retain(|_, waker| waker.strong_count() > 0);
                let event = Arc::new(Event::new());
                wakers.insert(id.to_owned(), Arc::downgrade(&event));
                event
            }
        };
        let listener = event.listen();
        Box::pin(async move {
            // The runner's interest lasts as long as this future.
            let _event = event;
            listener.await;
        })
    }
}

/// This instance's side of the `changed` channel: wakes the runner of the
/// task named (and every runner when the connection was lost, so each
/// looks again).
struct TaskWaker {
    wakers: Wakers,
    subscribed: Arc<(AtomicBool, Event)>,
}

impl TaskWaker {
    fn wake(&self, which: impl Fn(&str) -> bool) {
        let wakers = self.wakers.lock().unwrap_or_else(PoisonError::into_inner);
        for (id, waker) in wakers.iter() {
            if which(id)
                && let Some(event) = waker.upgrade()
            {
                event.notify(usize::MAX);
            }
        }
    }
}

impl ChannelListener for TaskWaker {
    fn opened(&mut self) {
        self.subscribed.0.store(true, Ordering::Release);
        self.subscribed.1.notify(usize::MAX);
        self.wake(|_| true);
    }

    fn message(&mut self, payload: &str) {
        let wakers = self.wakers.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(event) = wakers.get(payload).and_then(Weak::upgrade) {
            event.notify(usize::MAX);
        }
    }

    fn lost(&mut self) {
        self.subscribed.0.store(false, Ordering::Release);
        self.wake(|_| true);
    }
}

/// What every script starts with: ARGV[1] the key prefix; the time, in ms,
/// from Redis's clock (one clock for every instance, and the one that
/// expires keys); `int` writes a number as digits (never an exponent);
/// `PUB` (ARGV[2]) the command that publishes a wake-up (`SPUBLISH` on a
/// cluster).
const PRELUDE: &str = r#"
local P = ARGV[1]
local PUB = ARGV[2]
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local function int(n) return string.format('%d', n) end
local function task(id) return P .. 't:' .. id end
local function terminal(s) return s == 'completed' or s == 'failed' or s == 'cancelled' end
local function free(id)
  local size = redis.call('HGET', P .. 'size', id)
  if size then
    local n, who = string.match(size, '^(%d+)|(.*)$')
    redis.call('HINCRBY', P .. 'bytes', '*', '-' .. n)
    if redis.call('HINCRBY', P .. 'bytes', who, '-' .. n) <= 0 then
      redis.call('HDEL', P .. 'bytes', who)
    end
    redis.call('HDEL', P .. 'size', id)
  end
end
local function unlive(id, caller)
  redis.call('ZREM', P .. 'live', id)
  if caller then redis.call('ZREM', P .. 'live:' .. caller, id) end
end
local function ended(k)
  redis.call('HDEL', k, 'requests')
  redis.call('DEL', k .. ':pending', k .. ':answers')
end
"#;

/// ARGV[3] id, [4] principal, [5] caller, [6] TTL ms, [7] lease ms,
/// [8..11] max live, max kept, max live per caller, max kept per caller,
/// [12] the starting request's span context ('' for none).
/// Answers the creation time, or `caller` / `full`.
const CREATE_BODY: &str = r#"
local id, principal, caller = ARGV[3], ARGV[4], ARGV[5]
local ttl, lease = tonumber(ARGV[6]), tonumber(ARGV[7])
local max_live, max_kept = tonumber(ARGV[8]), tonumber(ARGV[9])
local max_live_c, max_kept_c = tonumber(ARGV[10]), tonumber(ARGV[11])
local kept, live = P .. 'kept', P .. 'live'
local kept_c, live_c = P .. 'kept:' .. caller, P .. 'live:' .. caller
local horizon = int((now - ttl) * 1000 + 999)
for _, old in ipairs(redis.call('ZRANGEBYSCORE', kept, '-inf', horizon)) do
  free(old)
  redis.call('ZREM', kept, old)
end
redis.call('ZREMRANGEBYSCORE', kept_c, '-inf', horizon)
redis.call('ZREMRANGEBYSCORE', live, '-inf', '(' .. int(now))
redis.call('ZREMRANGEBYSCORE', live_c, '-inf', '(' .. int(now))
if redis.call('ZCARD', live_c) >= max_live_c then return 'caller' end
local function evict(zkey)
  for _, old in ipairs(redis.call('ZRANGE', zkey, 0, -1)) do
    if not redis.call('ZSCORE', live, old) then
      local who = redis.call('HGET', task(old), 'caller')
      free(old)
      redis.call('DEL', task(old), task(old) .. ':pending', task(old) .. ':answers')
      redis.call('ZREM', kept, old)
      redis.call('ZREM', zkey, old)
      if who then redis.call('ZREM', P .. 'kept:' .. who, old) end
      return
    end
  end
end
if redis.call('ZCARD', kept_c) >= max_kept_c then evict(kept_c) end
if redis.call('ZCARD', kept) >= max_kept then evict(kept) end
if redis.call('ZCARD', live) >= max_live or redis.call('ZCARD', kept) >= max_kept then
  return 'full'
end
local order = int(now * 1000 + redis.call('INCR', P .. 'seq') % 1000)
local k = task(id)
redis.call('HSET', k, 'principal', principal, 'caller', caller, 'status', 'working',
  'created', int(now), 'updated', int(now), 'lease', int(now + lease))
if ARGV[12] ~= '' then redis.call('HSET', k, 'trace', ARGV[12]) end
redis.call('PEXPIRE', k, ttl)
redis.call('ZADD', kept, order, id)
redis.call('ZADD', kept_c, order, id)
redis.call('ZADD', live, int(now + lease), id)
redis.call('ZADD', live_c, int(now + lease), id)
-- A caller's sets go with its last task.
redis.call('PEXPIRE', kept_c, ttl)
redis.call('PEXPIRE', live_c, ttl)
return int(now)
"#;

/// ARGV[3] id, [4] principal, [5] the message and [6] the error JSON of a
/// task whose runner stopped. Answers the hash's pairs and the outstanding
/// question keys, or nil.
const GET_BODY: &str = r#"
local id = ARGV[3]
local k = task(id)
if redis.call('HGET', k, 'principal') ~= ARGV[4] then return false end
local s = redis.call('HGET', k, 'status')
if not terminal(s) and tonumber(redis.call('HGET', k, 'lease')) < now then
  redis.call('HSET', k, 'status', 'failed', 'message', ARGV[5], 'error', ARGV[6], 'updated', int(now))
  ended(k)
  unlive(id, redis.call('HGET', k, 'caller'))
end
return {redis.call('HGETALL', k), redis.call('SMEMBERS', k .. ':pending')}
"#;

/// ARGV[3] id, [4] message, [5] the questions' JSON, [6..] their keys.
const ASK_BODY: &str = r#"
local k = task(ARGV[3])
local s = redis.call('HGET', k, 'status')
if not s or terminal(s) then return 0 end
redis.call('HSET', k, 'status', 'input_required', 'message', ARGV[4], 'requests', ARGV[5], 'updated', int(now))
redis.call('DEL', k .. ':pending', k .. ':answers')
if #ARGV >= 6 then
  redis.call('SADD', k .. ':pending', unpack(ARGV, 6))
  local ttl = redis.call('PTTL', k)
  if ttl > 0 then redis.call('PEXPIRE', k .. ':pending', ttl) end
end
return 1
"#;

/// ARGV[3] id, [4] principal, [5] the wake-up channel, [6..] key, answer
/// pairs. Answers -1 (no such task), 0 (not waiting), 1 (recorded), 2 (complete).
const ANSWER_BODY: &str = r#"
local id = ARGV[3]
local k = task(id)
if redis.call('HGET', k, 'principal') ~= ARGV[4] then return -1 end
if redis.call('HGET', k, 'status') ~= 'input_required' then return 0 end
for i = 6, #ARGV - 1, 2 do
  if redis.call('SREM', k .. ':pending', ARGV[i]) == 1 then
    redis.call('HSET', k .. ':answers', ARGV[i], ARGV[i + 1])
  end
end
local ttl = redis.call('PTTL', k)
if ttl > 0 and redis.call('EXISTS', k .. ':answers') == 1 then
  redis.call('PEXPIRE', k .. ':answers', ttl)
end
if redis.call('SCARD', k .. ':pending') == 0 then
  redis.call('HSET', k, 'status', 'working', 'updated', int(now))
  redis.call('HDEL', k, 'message', 'requests')
  redis.call(PUB, ARGV[5], id)
  return 2
end
return 1
"#;

/// ARGV[3] id. Answers the round's key, answer pairs once complete, or nil.
const TAKE_BODY: &str = r#"
local k = task(ARGV[3])
if redis.call('HGET', k, 'status') ~= 'working' or redis.call('SCARD', k .. ':pending') > 0 then
  return false
end
local answers = redis.call('HGETALL', k .. ':answers')
if #answers == 0 then return false end
redis.call('DEL', k .. ':answers')
return answers
"#;

/// ARGV[3] id, [4] status, [5] message ('' for none), [6] field (result or
/// error), [7] its JSON, [8] bytes to count, [9] the caller's budget, [10]
/// the store's. Answers ok, ended, or the budget it would pass (caller, server).
const FINISH_BODY: &str = r#"
local id = ARGV[3]
local k = task(id)
local s = redis.call('HGET', k, 'status')
if not s or terminal(s) then return 'ended' end
local caller = redis.call('HGET', k, 'caller')
local bytes = tonumber(ARGV[8])
if bytes > 0 then
  local mine = tonumber(redis.call('HGET', P .. 'bytes', caller) or '0')
  if mine + bytes > tonumber(ARGV[9]) then return 'caller' end
  local all = tonumber(redis.call('HGET', P .. 'bytes', '*') or '0')
  if all + bytes > tonumber(ARGV[10]) then return 'server' end
  redis.call('HINCRBY', P .. 'bytes', caller, bytes)
  redis.call('HINCRBY', P .. 'bytes', '*', bytes)
  redis.call('HSET', P .. 'size', id, bytes .. '|' .. caller)
end
redis.call('HSET', k, 'status', ARGV[4], 'updated', int(now), ARGV[6], ARGV[7])
if ARGV[5] == '' then redis.call('HDEL', k, 'message') else redis.call('HSET', k, 'message', ARGV[5]) end
ended(k)
unlive(id, caller)
return 'ok'
"#;

/// ARGV[3] id, [4] principal, [5] message, [6] the wake-up channel.
/// Answers 1, or 0 when the principal has no such task.
const CANCEL_BODY: &str = r#"
local id = ARGV[3]
local k = task(id)
if redis.call('HGET', k, 'principal') ~= ARGV[4] then return 0 end
if not terminal(redis.call('HGET', k, 'status')) then
  redis.call('HSET', k, 'status', 'cancelled', 'message', ARGV[5], 'updated', int(now))
  ended(k)
  unlive(id, redis.call('HGET', k, 'caller'))
end
redis.call(PUB, ARGV[6], id)
return 1
"#;

/// ARGV[3] id, [4] lease ms. Answers the status, or nil once the task is gone.
const RENEW_BODY: &str = r#"
local id = ARGV[3]
local k = task(id)
local s = redis.call('HGET', k, 'status')
if not s then return false end
if not terminal(s) then
  local lease = int(now + tonumber(ARGV[4]))
  redis.call('HSET', k, 'lease', lease)
  redis.call('ZADD', P .. 'live', lease, id)
  redis.call('ZADD', P .. 'live:' .. redis.call('HGET', k, 'caller'), lease, id)
end
return s
"#;

macro_rules! script {
    ($name:ident, $body:ident) => {
        static $name: std::sync::LazyLock<redis::Script> =
            std::sync::LazyLock::new(|| redis::Script::new(&format!("{PRELUDE}{}", $body)));
    };
}

script!(CREATE, CREATE_BODY);
script!(GET, GET_BODY);
script!(ASK, ASK_BODY);
script!(ANSWER, ANSWER_BODY);
script!(TAKE, TAKE_BODY);
script!(FINISH, FINISH_BODY);
script!(CANCEL, CANCEL_BODY);
script!(RENEW, RENEW_BODY);

//! Questions an initialize-era call has pushed on its event stream, waiting
//! for the answers the client POSTs.
//!
//! A pushed question is a JSON-RPC request (`elicitation/create`, …) written
//! on the call's SSE stream; the client answers with a JSON-RPC response in
//! a new POST carrying the same `Mcp-Session-Id`. The table pairs the two by
//! session and question id, so an answer reaches only the call of its own
//! session. It is bounded per session, per caller and in all; a question
//! whose asker is gone (the client closed the stream, the call was
//! cancelled) leaves it. At a full table no one caller keeps everyone else
//! out: as connection slots do, the caller holding the most gives way — its
//! oldest question is withdrawn (the client is told, the call ends with the
//! reason) for a caller that holds fewer.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use futures_channel::oneshot;
use serde_json::{Value, json};
use tessera_protocol::{ErrorObject, JsonRpcResponse, RequestId};
use tessera_server::bridge::{Asker, PeerFailure};
use tessera_server::{BoxFuture, NotificationSink, TaskRuntime};

/// Questions one session may have open at once: 16.
pub const MAX_QUESTIONS_PER_SESSION: usize = 16;

/// Questions one caller may have open at once, across its sessions: 256 (so
/// that one user cannot take the whole table). A caller is its principal, or
/// the address it connects from when anonymous (behind `serve`).
pub const MAX_QUESTIONS_PER_PRINCIPAL: usize = 256;

/// Questions open at once across every session of the endpoint: 10,000.
pub const MAX_QUESTIONS: usize = 10_000;

type Answer = oneshot::Sender<Result<Value, ErrorObject>>;

/// The open questions, by session and question id.
#[derive(Default)]
pub(crate) struct Questions {
    /// This instance's relay name, in every id it asks (when answers are relayed).
    instance: Option<String>,
    next_id: AtomicU64,
    open: Mutex<Open>,
}

/// How question ids begin.
const ID_PREFIX: &str = "tessera-q";

/// The instance that asked the question `id`, when ids name one.
pub(crate) fn holder_of(id: &RequestId) -> Option<&str> {
    let RequestId::String(id) = id else {
        return None;
    };
    let rest = id.strip_prefix(ID_PREFIX)?.strip_prefix('-')?;
    rest.rsplit_once('-').map(|(instance, _)| instance)
}

#[derive(Default)]
struct Open {
    /// Each question's answer channel, the caller it counts against, and
    /// when it was asked (its number, in the order asked).
    by_key: HashMap<(String, RequestId), (Answer, Option<String>, u64)>,
    per_session: HashMap<String, usize>,
    per_caller: HashMap<String, usize>,
}

/// Counts one more under `key`.
fn count_up(counts: &mut HashMap<String, usize>, key: &str) {
    *counts.entry(key.to_owned()).or_default() += 1;
}

/// Counts one less under `key`, forgetting it at zero.
fn count_down(counts: &mut HashMap<String, usize>, key: &str) {
    if let Some(n) = counts.get_mut(key) {
        *n -= 1;
        if *n == 0 {
            counts.remove(key);
        }
    }
}

impl Open {
    /// Makes room at a full table for a question of `caller`: withdraws the
    /// oldest question of the caller holding the most, when that caller
    /// holds more than `caller` would with one more. Dropping its answer
    /// channel tells its asker it was withdrawn. `false` when no one holds
    /// more (the table is shared fairly already).
    fn withdraw_for(&mut self, caller: Option<&str>) -> bool {
        let mine = caller.map_or(0, |c| self.per_caller.get(c).copied().unwrap_or(0));
        let Some((top, held)) = self
            .per_caller
            .iter()
            .max_by_key(|(_, n)| **n)
            .map(|(c, n)| (c.clone(), *n))
        else {
            return false;
        };
        if held <= mine + 1 {
            return false;
        }
        let Some(oldest) = self
            .by_key
            .iter()
            .filter(|(_, (_, c, _))| c.as_deref() == Some(top.as_str()))
            .min_by_key(|(_, (_, _, n))| *n)
            .map(|(key, _)| key.clone())
        else {
            return false;
        };
        if self.by_key.remove(&oldest).is_some() {
            count_down(&mut self.per_session, &oldest.0);
            count_down(&mut self.per_caller, &top);
        }
        true
    }
}

/// What became of a POSTed answer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Delivery {
    /// A waiting call took it.
    Delivered,
    /// No question of this session has that id (answered already, given up,
    /// or asked by a server instance that is gone).
    NoSuchQuestion,
}

impl Questions {
    /// Questions whose ids name `instance` as their holder (for a relay), or none.
    pub(crate) fn new(instance: Option<String>) -> Self {
        Self {
            instance,
            ..Self::default()
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Open> {
        self.open
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Opens a question for `session` (counted against `caller`, when known):
    /// its id and where the answer arrives.
    fn open(
        &self,
        session: &str,
        caller: Option<&str>,
    ) -> Result<(RequestId, oneshot::Receiver<Result<Value, ErrorObject>>), PeerFailure> {
        let mut open = self.lock();
        if open.per_session.get(session).copied().unwrap_or(0) >= MAX_QUESTIONS_PER_SESSION {
            return Err(PeerFailure::Malformed(format!(
                "this session already has {MAX_QUESTIONS_PER_SESSION} questions waiting for answers; answer or cancel one first"
            )));
        }
        if let Some(p) = caller
            && open.per_caller.get(p).copied().unwrap_or(0) >= MAX_QUESTIONS_PER_PRINCIPAL
        {
            return Err(PeerFailure::Malformed(format!(
                "your sessions already have {MAX_QUESTIONS_PER_PRINCIPAL} questions waiting for answers; answer or cancel some first"
            )));
        }
        if open.by_key.len() >= MAX_QUESTIONS && !open.withdraw_for(caller) {
            return Err(PeerFailure::Malformed(format!(
                "the server has {MAX_QUESTIONS} questions waiting for answers; try again later"
            )));
        }
        let n = self.next_id.fetch_add(1, Ordering::Relaxed);
        let id = RequestId::String(match &self.instance {
            Some(instance) => format!("{ID_PREFIX}-{instance}-{n}"),
            None => format!("{ID_PREFIX}{n}"),
        });
        let (tx, rx) = oneshot::channel();
        open.by_key.insert(
            (session.to_owned(), id.clone()),
            (tx, caller.map(str::to_owned), n),
        );
        count_up(&mut open.per_session, session);
        if let Some(p) = caller {
            count_up(&mut open.per_caller, p);
        }
        Ok((id, rx))
    }

    /// Takes the question off the table; `None` if it was not there.
    fn close(&self, session: &str, id: &RequestId) -> Option<Answer> {
        let mut open = self.lock();
        let (answer, caller, _) = open.by_key.remove(&(session.to_owned(), id.clone()))?;
        count_down(&mut open.per_session, session);
        if let Some(p) = caller {
            count_down(&mut open.per_caller, &p);
        }
        Some(answer)
    }

    /// Delivers the client's response to its question in `session`.
    pub(crate) fn deliver(&self, session: &str, response: JsonRpcResponse<Value>) -> Delivery {
        let (id, outcome) = match response {
            JsonRpcResponse::Result(r) => (Some(r.id), Ok(r.result)),
            JsonRpcResponse::Error(e) => (e.id, Err(e.error)),
        };
        let Some(answer) = id.and_then(|id| self.close(session, &id)) else {
            return Delivery::NoSuchQuestion;
        };
        match answer.send(outcome) {
            Ok(()) => Delivery::Delivered,
            Err(_) => Delivery::NoSuchQuestion,
        }
    }

    /// Questions open now (for tests and metrics).
    #[cfg(test)]
    pub(crate) fn len(&self) -> usize {
        self.lock().by_key.len()
    }
}

/// The era bridge's questions, pushed on one call's event stream.
pub(crate) struct StreamAsker {
    pub(crate) questions: Arc<Questions>,
    /// The session's key ([`OpenedSession::key`](tessera_server::bridge::OpenedSession::key)).
    pub(crate) session: String,
    /// The caller the questions count against ([`tessera_server::caller_key`]).
    pub(crate) caller: Option<String>,
    /// The call's event stream.
    pub(crate) stream: NotificationSink,
    /// How long a person may take to answer one question.
    pub(crate) patience: Duration,
    /// Where the patience is timed; without one, a question waits until the
    /// client answers or goes away.
    pub(crate) runtime: Option<Arc<dyn TaskRuntime>>,
}

impl Asker for StreamAsker {
    fn ask<'a>(
        &'a self,
        method: &'a str,
        params: Value,
    ) -> BoxFuture<'a, Result<Value, PeerFailure>> {
        Box::pin(async move {
            let (id, answer) = self.questions.open(&self.session, self.caller.as_deref())?;
            let withdraw = Withdraw {
                asker: self,
                id: &id,
            };
            self.stream
                .send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
            let outcome = match &self.runtime {
                Some(runtime) => first_of(answer, runtime.sleep(self.patience)).await,
                None => Some(answer.await),
            };
            drop(withdraw);
            match outcome {
                Some(Ok(Ok(result))) => Ok(result),
                Some(Ok(Err(error))) => Err(PeerFailure::Error(error)),
                // The channel is dropped unanswered only when the table
                // withdraws the question for a caller that holds fewer.
                Some(Err(oneshot::Canceled)) => {
                    self.stream.send(json!({
                        "jsonrpc": "2.0",
                        "method": tessera_protocol::CANCELLED_NOTIFICATION,
                        "params": {"requestId": id, "reason": WITHDRAWN}
                    }));
                    Err(PeerFailure::Malformed(WITHDRAWN.to_owned()))
                }
                None => Err(PeerFailure::TimedOut(self.patience)),
            }
        })
    }
}

/// Why a question was withdrawn to make room at a full table.
const WITHDRAWN: &str = "the server withdrew this question: it has as many questions waiting as it can hold, and your sessions hold the most; answer or cancel some first";

/// Takes a question off the table when its asker goes away, and tells the
/// client when it was still open (so a dialog does not stay up for nothing).
struct Withdraw<'a> {
    asker: &'a StreamAsker,
    id: &'a RequestId,
}

impl Drop for Withdraw<'_> {
    fn drop(&mut self) {
        if self
            .asker
            .questions
            .close(&self.asker.session, self.id)
            .is_some()
        {
            self.asker.stream.send(json!({
                "jsonrpc": "2.0",
                "method": tessera_protocol::CANCELLED_NOTIFICATION,
                "params": {"requestId": self.id, "reason": "the server no longer needs this answer"}
            }));
        }
    }
}

/// The first future's output, or `None` when the second completes first.
pub(crate) async fn first_of<A: Future, B: Future>(a: A, b: B) -> Option<A::Output> {
    let (mut a, mut b) = (std::pin::pin!(a), std::pin::pin!(b));
    std::future::poll_fn(|cx| {
        if let std::task::Poll::Ready(out) = a.as_mut().poll(cx) {
            return std::task::Poll::Ready(Some(out));
        }
        if b.as_mut().poll(cx).is_ready() {
            return std::task::Poll::Ready(None);
        }
        std::task::Poll::Pending
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;
    use tessera_protocol::{JsonRpcResultResponse, JsonRpcVersion};

    fn result(id: RequestId) -> JsonRpcResponse<Value> {
        JsonRpcResponse::Result(JsonRpcResultResponse {
            jsonrpc: JsonRpcVersion,
            id,
            result: json!({"action": "accept"}),
        })
    }

    #[test]
    fn an_answer_reaches_only_its_own_session() {
        let questions = Questions::default();
        let (id, mut rx) = questions.open("s1", None).unwrap();
        assert_eq!(
            questions.deliver("s2", result(id.clone())),
            Delivery::NoSuchQuestion
        );
        assert_eq!(
            questions.deliver("s1", result(id.clone())),
            Delivery::Delivered
        );
        assert_eq!(rx.try_recv().unwrap().unwrap().unwrap()["action"], "accept");
        // Answered once: a second answer finds nothing.
        assert_eq!(
            questions.deliver("s1", result(id)),
            Delivery::NoSuchQuestion
        );
        assert_eq!(questions.len(), 0);
    }

    #[test]
    fn question_ids_name_their_holder_when_answers_are_relayed() {
        let relayed = Questions::new(Some("a1-b2".into()));
        let (id, _rx) = relayed.open("s", None).unwrap();
        assert_eq!(holder_of(&id), Some("a1-b2"));
        let local = Questions::default();
        let (id, _rx) = local.open("s", None).unwrap();
        assert_eq!(holder_of(&id), None);
        assert_eq!(holder_of(&RequestId::from(7)), None);
    }

    #[test]
    fn a_session_and_a_principal_may_hold_only_so_many_questions() {
        let questions = Questions::default();
        let held: Vec<_> = (0..MAX_QUESTIONS_PER_SESSION)
            .map(|_| questions.open("s1", None).unwrap())
            .collect();
        assert!(matches!(
            questions.open("s1", None),
            Err(PeerFailure::Malformed(_))
        ));
        // Another session is not held back by this one.
        assert!(questions.open("s2", None).is_ok());
        drop(held);
        // One user's sessions together hold at most their share.
        let mine: Vec<_> = (0..MAX_QUESTIONS_PER_PRINCIPAL)
            .map(|i| questions.open(&format!("a{i}"), Some("alice")).unwrap())
            .collect();
        assert!(matches!(
            questions.open("a-next", Some("alice")),
            Err(PeerFailure::Malformed(_))
        ));
        assert!(questions.open("b1", Some("bob")).is_ok());
        // Answering frees a place.
        let (id, _rx) = &mine[0];
        assert_eq!(
            questions.deliver("a0", result(id.clone())),
            Delivery::Delivered
        );
        assert!(questions.open("a-next", Some("alice")).is_ok());
    }

    #[test]
    fn at_a_full_table_the_caller_holding_the_most_gives_way() {
        let questions = Questions::default();
        // One client from 40 addresses, 16 sessions × 16 questions each (within
        // every per-session and per-caller limit), offers more than the table holds.
        let mut held = Vec::new();
        for address in 0..40 {
            let caller = format!("address 127.0.0.{address}");
            for session in 0..16 {
                for _ in 0..MAX_QUESTIONS_PER_SESSION {
                    if let Ok(q) = questions.open(&format!("{address}/{session}"), Some(&caller)) {
                        held.push(q);
                    }
                }
            }
        }
        assert_eq!(questions.len(), MAX_QUESTIONS);
        let mut withdrawn = || {
            held.iter_mut()
                .filter_map(|(_, rx)| rx.try_recv().err())
                .count()
        };
        let before = withdrawn();
        // A bystander from a 41st address is served: the oldest question of a
        // caller holding the most is withdrawn for it.
        let (_, mut bystander) = questions.open("b", Some("address 10.0.0.1")).unwrap();
        assert_eq!(questions.len(), MAX_QUESTIONS);
        assert_eq!(withdrawn(), before + 1);
        assert!(matches!(bystander.try_recv(), Ok(None)), "still waiting");
        // A caller holding the most takes nothing from the others.
        let top = {
            let open = questions.lock();
            let (top, _) = open.per_caller.iter().max_by_key(|(_, n)| **n).unwrap();
            top.clone()
        };
        assert!(questions.open("top/extra", Some(&top)).is_err());
        assert_eq!(withdrawn(), before + 1);
    }
}

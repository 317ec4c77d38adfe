//! Resumable call streams for initialize-era sessions (2025-11-25 transport,
//! *Resumability and Redelivery*).
//!
//! A call served through the era bridge runs detached from its connection:
//! "Disconnection SHOULD NOT be interpreted as the client cancelling its
//! request." Its connection gets what it says as before — JSON when it
//! answers before saying anything, else an event stream — and once it has
//! said something, each message is numbered, sent with `id: {stream}.{n}`,
//! and appended to a [`StreamLog`]; the stream opens with an event of an id,
//! no data and a `retry` field. A client whose connection broke resumes with
//! `GET` and `Last-Event-ID`: it is sent what came after that event, from the
//! log. With a shared log (Redis) it resumes on any instance: there the log
//! is read every [`POLL`], here on every append.
//!
//! A detached call runs to its end, until `notifications/cancelled` stops
//! it, or until its session is ended here (`DELETE`). At most
//! [`MAX_DETACHED_CALLS`] run detached on one instance and
//! [`MAX_DETACHED_CALLS_PER_CALLER`] for one caller: past that, a call is
//! tied to its connection as before (a client that goes away cancels it).

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode};
use tessera_protocol::RequestId;
use tessera_server::bridge::{STREAM_LOG_TTL, StreamLog};
use tessera_server::intake::Request;
use tessera_server::{Handled, McpServer, NotificationSink, RequestFacts, Resolved, ServerError};

use super::questions::first_of;
use crate::stream::{FramedSink, RequestLog, Running, WeakFramedSink};
use crate::{McpBody, McpEndpoint, reject};

/// Calls one instance runs detached from their connections, at most: 1,024.
pub const MAX_DETACHED_CALLS: usize = 1024;

/// Calls one caller (principal, or address when anonymous) runs detached
/// on one instance, at most: 64.
pub const MAX_DETACHED_CALLS_PER_CALLER: usize = 64;

/// How often a follower reads the log when no append here wakes it (the
/// call runs on another instance): 250 ms.
pub const POLL: Duration = Duration::from_millis(250);

/// The `retry` a stream opens with: how long a client waits before it
/// reconnects, in milliseconds.
pub const RETRY_MS: u64 = 1000;

/// Messages a detached call may have waiting for the log, at most (past it,
/// the log misses them; the connection still gets them).
const QUEUED: usize = 4096;

/// The endpoint's resumable streams: their log, who to wake on an append,
/// and the detached calls.
pub(crate) struct Resumable {
    log: Arc<dyn StreamLog>,
    wakeups: Mutex<HashMap<String, Arc<event_listener::Event>>>,
    detached: Mutex<DetachedCalls>,
}

/// The calls running detached, by caller and by session.
#[derive(Default)]
struct DetachedCalls {
    total: usize,
    by_caller: HashMap<Option<String>, usize>,
    /// Each session's calls: ended when the session is (DELETE here).
    by_session: HashMap<String, Vec<Arc<Ending>>>,
}

/// Set when a detached call's session ends: the call stops.
#[derive(Default)]
struct Ending {
    ended: std::sync::atomic::AtomicBool,
    event: event_listener::Event,
}

/// A detached call's place, given back when the call ends.
struct Place {
    resumable: Arc<Resumable>,
    caller: Option<String>,
    session: String,
    ending: Arc<Ending>,
}

impl Drop for Place {
    fn drop(&mut self) {
        let mut d = self.resumable.detached();
        d.total -= 1;
        if let Some(n) = d.by_caller.get_mut(&self.caller) {
            *n -= 1;
            if *n == 0 {
                d.by_caller.remove(&self.caller);
            }
        }
        if let Some(calls) = d.by_session.get_mut(&self.session) {
            calls.retain(|c| !Arc::ptr_eq(c, &self.ending));
            if calls.is_empty() {
                d.by_session.remove(&self.session);
            }
        }
    }
}

/// What a call needs to run detached: where, its stream's name, its place.
pub(crate) struct Detachment {
    runtime: Arc<dyn tessera_server::TaskRuntime>,
    stream: String,
    place: Place,
}

/// The id of a stream's event `n`.
fn event_id(stream: &str, n: u64) -> String {
    format!("{stream}.{n}")
}

/// The stream and number a `Last-Event-ID` names (ours are `{32 hex}.{n}`).
pub(crate) fn parse_event_id(id: &str) -> Option<(&str, u64)> {
    let (stream, n) = id.rsplit_once('.')?;
    let ours = stream.len() == 32 && stream.bytes().all(|b| b.is_ascii_hexdigit());
    ours.then_some(())?;
    Some((stream, n.parse().ok()?))
}

/// One message framed as an event with its id.
fn framed(stream: &str, n: u64, message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 64);
    out.extend_from_slice(b"id: ");
    out.extend_from_slice(event_id(stream, n).as_bytes());
    out.extend_from_slice(b"\n");
    out.extend_from_slice(&crate::stream::event(message));
    Bytes::from(out)
}

/// The event a stream opens with: an id, no data, and `retry`.
fn priming(stream: &str) -> Bytes {
    Bytes::from(format!(
        "id: {}\nretry: {RETRY_MS}\ndata: \n\n",
        event_id(stream, 0)
    ))
}

/// Waits for `listener` (an append here) or [`POLL`], whichever is first.
async fn pause(
    listener: Option<event_listener::EventListener>,
    runtime: &dyn tessera_server::TaskRuntime,
) {
    match listener {
        Some(listener) => drop(first_of(listener, runtime.sleep(POLL)).await),
        None => runtime.sleep(POLL).await,
    }
}

impl Resumable {
    pub(crate) fn new(log: Arc<dyn StreamLog>) -> Arc<Self> {
        Arc::new(Self {
            log,
            wakeups: Mutex::default(),
            detached: Mutex::default(),
        })
    }

    fn detached(&self) -> std::sync::MutexGuard<'_, DetachedCalls> {
        self.detached.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A place for one more detached call of `caller` in `session`, unless
    /// there are as many as may be.
    fn place(self: &Arc<Self>, caller: Option<String>, session: &str) -> Option<Place> {
        let mut d = self.detached();
        let of_caller = d.by_caller.get(&caller).copied().unwrap_or(0);
        if d.total >= MAX_DETACHED_CALLS || of_caller >= MAX_DETACHED_CALLS_PER_CALLER {
            return None;
        }
        d.total += 1;
        *d.by_caller.entry(caller.clone()).or_default() += 1;
        let ending = Arc::new(Ending::default());
        d.by_session
            .entry(session.to_owned())
            .or_default()
            .push(Arc::clone(&ending));
        Some(Place {
            resumable: Arc::clone(self),
            caller,
            session: session.to_owned(),
            ending,
        })
    }

    /// Stops the detached calls of `session` running here (it was ended).
    pub(crate) fn end_session(&self, session: &str) {
        let calls = self
            .detached()
            .by_session
            .remove(session)
            .unwrap_or_default();
        for call in calls {
            call.ended.store(true, std::sync::atomic::Ordering::Release);
            call.event.notify(usize::MAX);
        }
    }

    fn wakeup(&self, key: &str) -> Option<Arc<event_listener::Event>> {
        self.wakeups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }

    /// Appends message `n` to `key`'s log (three tries: an append is kept
    /// once), then wakes its followers here.
    async fn append(
        &self,
        key: &str,
        n: u64,
        message: &[u8],
        last: bool,
        runtime: &dyn tessera_server::TaskRuntime,
    ) {
        for attempt in 0..3 {
            match self.log.append(key, n, message, last).await {
                Ok(()) => break,
                Err(e) if attempt == 2 => {
                    tracing::warn!(error = %e, "a call's stream event could not be logged; a client resuming misses it");
                }
                Err(_) => runtime.sleep(Duration::from_millis(100)).await,
            }
        }
        if let Some(wake) = self.wakeup(key) {
            wake.notify(usize::MAX);
        }
    }

    /// Writes `key`'s events after `after` to `sink` as they are logged
    /// (waiting while the connection is behind), until its last one (the
    /// response) or until the log no longer has it.
    async fn follow(
        &self,
        key: &str,
        stream: &str,
        mut after: u64,
        sink: &FramedSink,
        runtime: &dyn tessera_server::TaskRuntime,
    ) {
        loop {
            if !sink.has_room() {
                runtime.sleep(Duration::from_millis(50)).await;
                continue;
            }
            let listener = self.wakeup(key).map(|w| w.listen());
            match self.log.read_after(key, after).await {
                Ok(Some(read)) => {
                    let count = read.events.len();
                    for (i, (n, message)) in read.events.iter().enumerate() {
                        let event = framed(stream, *n, message);
                        if read.finished && i + 1 == count {
                            sink.send_last(event);
                            return;
                        }
                        sink.send(event);
                        after = *n;
                    }
                    if read.finished {
                        return;
                    }
                }
                Ok(None) => return,
                Err(e) => {
                    tracing::warn!(error = %e, "a call's stream could not be read; the connection ends (the client may resume)");
                    return;
                }
            }
            pause(listener, runtime).await;
        }
    }
}

/// A detached call as its connection and its writer share it.
struct Live {
    /// The connection that POSTed the call, while it is there.
    connection: Mutex<WeakFramedSink>,
    /// Messages said, numbered, waiting for the log.
    outbox: Mutex<Outbox>,
    /// The response, for the connection, once there is one.
    answer: Mutex<Option<Handled>>,
    answered: event_listener::Event,
    /// Set once the response was handed over (the connection may have taken it).
    answered_once: std::sync::atomic::AtomicBool,
}

#[derive(Default)]
struct Outbox {
    /// The number of the last message said.
    said: u64,
    queue: VecDeque<(u64, Vec<u8>)>,
    waker: Option<Waker>,
}

impl Live {
    /// A message of the call: to its connection (which has its events
    /// since the first, after the priming one) and, numbered, to the log.
    fn say(&self, stream: &str, message: Vec<u8>) {
        let mut o = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        o.said += 1;
        let n = o.said;
        if let Some(connection) = self
            .connection
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .upgrade()
        {
            if n == 1 {
                connection.send(priming(stream));
            }
            connection.send(framed(stream, n, &message));
        }
        if o.queue.len() < QUEUED {
            o.queue.push_back((n, message));
        }
        if let Some(w) = o.waker.take() {
            w.wake();
        }
    }

    fn next_queued(&self) -> Option<(u64, Vec<u8>)> {
        self.outbox
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .queue
            .pop_front()
    }

    /// The number the response gets, and whether anything came before it.
    fn response_number(&self) -> (u64, bool) {
        let o = self.outbox.lock().unwrap_or_else(PoisonError::into_inner);
        (o.said + 1, o.said > 0)
    }

    /// Hands the response to the connection, which writes it last.
    fn answer(&self, handled: Handled) {
        self.answered_once
            .store(true, std::sync::atomic::Ordering::Release);
        *self.answer.lock().unwrap_or_else(PoisonError::into_inner) = Some(handled);
        self.answered.notify(usize::MAX);
    }

    /// The response, once the call has one.
    async fn answered(&self) -> Handled {
        loop {
            let listener = self.answered.listen();
            if let Some(handled) = self
                .answer
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .take()
            {
                return handled;
            }
            listener.await;
        }
    }
}

/// Answers the connection if the writer ends without having done so (its
/// call panicked, or the runtime dropped it): the connection is never left
/// waiting for an answer that cannot come.
struct AnswerOnDrop {
    live: Arc<Live>,
    id: RequestId,
    /// Where the answer is logged too, when the call streamed.
    log: (Arc<Resumable>, String, Arc<dyn tessera_server::TaskRuntime>),
}

impl Drop for AnswerOnDrop {
    fn drop(&mut self) {
        let answered = self
            .live
            .answer
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .is_some()
            || self
                .live
                .answered_once
                .load(std::sync::atomic::Ordering::Acquire);
        if !answered {
            let handled = Handled {
                id: self.id.clone(),
                result: Err(ServerError::Internal {
                    message: "the call ended without an answer".into(),
                }),
            };
            let (n, streamed) = self.live.response_number();
            if streamed {
                // A client resuming the stream gets the answer too.
                let bytes = handled.to_bytes();
                let (resumable, key, runtime) = self.log.clone();
                let on = Arc::clone(&runtime);
                on.spawn(Box::pin(async move {
                    resumable.append(&key, n, &bytes, true, &*runtime).await;
                }));
            }
            self.live.answer(handled);
        }
    }
}

/// Takes `key`'s wake-ups away when its writer ends, however it ends.
struct WakeupsRemoved(Arc<Resumable>, String);

impl Drop for WakeupsRemoved {
    fn drop(&mut self) {
        self.0
            .wakeups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.1);
    }
}

impl McpEndpoint {
    /// A place for one more call detached from its connection, when there
    /// is a runtime to run it on, randomness to name its stream, and room.
    pub(crate) fn detachment(&self, facts: &RequestFacts, session: &str) -> Option<Detachment> {
        let runtime = self.options().task_runtime.clone()?;
        let stream = tessera_state::random_id()?;
        let place = self.sessions.resumable.place(facts.caller_key(), session)?;
        Some(Detachment {
            runtime,
            stream,
            place,
        })
    }

    /// Serves a bridged call detached from its connection, its stream
    /// resumable once it says something.
    pub(crate) async fn dispatch_detached<S, F>(
        &self,
        detachment: Detachment,
        request: Request,
        facts: RequestFacts,
        resolved: Resolved,
        serve: S,
    ) -> Response<McpBody>
    where
        S: FnOnce(Arc<McpServer>, Request, RequestFacts, Resolved) -> F + Send + 'static,
        F: Future<Output = Handled> + Send + 'static,
    {
        let Detachment {
            runtime,
            stream,
            place,
        } = detachment;
        let resumable = Arc::clone(&self.sessions.resumable);
        let key = format!("{}/{stream}", place.session);
        let log = RequestLog::new(
            &request.method,
            request.target(),
            &request.id,
            self.options().access_log.as_ref(),
        );
        let legacy = facts.legacy_version().is_some();
        let prepared = self.prepare(&request, &facts, &resolved);
        let live = Arc::new(Live {
            connection: Mutex::default(),
            outbox: Mutex::default(),
            answer: Mutex::default(),
            answered: event_listener::Event::new(),
            answered_once: std::sync::atomic::AtomicBool::new(false),
        });
        let sink = {
            let (live, stream) = (Arc::clone(&live), stream.clone());
            NotificationSink::new(move |n| {
                live.say(&stream, serde_json::to_vec(&n).unwrap_or_default());
            })
        };
        let call_id = request.id.clone();
        let call = prepared.serve(request, facts, resolved, serve, sink);
        resumable
            .wakeups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), Arc::new(event_listener::Event::new()));
        let writer = {
            let (resumable, live, key, runtime) = (
                Arc::clone(&resumable),
                Arc::clone(&live),
                key.clone(),
                Arc::clone(&runtime),
            );
            let unanswered = AnswerOnDrop {
                live: Arc::clone(&live),
                id: call_id.clone(),
                log: (Arc::clone(&resumable), key.clone(), Arc::clone(&runtime)),
            };
            async move {
                let _unanswered = unanswered;
                let _removed = WakeupsRemoved(Arc::clone(&resumable), key.clone());
                let ending = Arc::clone(&place.ending);
                let _place = place;
                let mut call = std::pin::pin!(call);
                let mut handled = None;
                let mut silence = runtime.sleep(STREAM_LOG_TTL / 3);
                loop {
                    if let Some((n, message)) = live.next_queued() {
                        resumable.append(&key, n, &message, false, &*runtime).await;
                        continue;
                    }
                    if let Some(handled) = handled.take() {
                        let handled: Handled = handled;
                        let (n, streamed) = live.response_number();
                        // A call that said nothing answers as JSON: nothing to resume.
                        if streamed {
                            let bytes = handled.to_bytes();
                            live.answer(handled);
                            resumable.append(&key, n, &bytes, true, &*runtime).await;
                        } else {
                            live.answer(handled);
                        }
                        return;
                    }
                    let mut ended = ending.event.listen();
                    std::future::poll_fn(|cx| {
                        if ending.ended.load(std::sync::atomic::Ordering::Acquire)
                            || std::pin::Pin::new(&mut ended).poll(cx).is_ready()
                        {
                            return Poll::Ready(());
                        }
                        if let Poll::Ready(out) = call.as_mut().poll(cx) {
                            handled = Some(out);
                            return Poll::Ready(());
                        }
                        if silence.as_mut().poll(cx).is_ready() {
                            silence = runtime.sleep(STREAM_LOG_TTL / 3);
                            let (_, streamed) = live.response_number();
                            if streamed {
                                // Kept while the call is silent.
                                let log = Arc::clone(&resumable.log);
                                let key = key.clone();
                                runtime.spawn(Box::pin(async move {
                                    let _ = log.touch(&key).await;
                                }));
                            }
                        }
                        let mut o = live.outbox.lock().unwrap_or_else(PoisonError::into_inner);
                        if o.queue.is_empty() {
                            o.waker = Some(cx.waker().clone());
                            Poll::Pending
                        } else {
                            Poll::Ready(())
                        }
                    })
                    .await;
                    if handled.is_none() && ending.ended.load(std::sync::atomic::Ordering::Acquire)
                    {
                        // The session was ended: the call stops here.
                        live.answer(Handled {
                            id: call_id,
                            result: Err(ServerError::Cancelled),
                        });
                        return;
                    }
                }
            }
        };
        let running = Running::framed(move |connection| {
            *live
                .connection
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = connection.downgrade();
            runtime.spawn(Box::pin(writer));
            Box::pin(async move { live.answered().await })
        });
        self.respond_running(running, log, legacy).await
    }

    /// A GET with `Last-Event-ID`: the call stream it names, resumed after
    /// that event, if it is one of this session's and still kept (else 400:
    /// a 404 would tell the client its session is gone). `hold` is kept
    /// while the stream is open (its place among the client's streams).
    pub(crate) async fn resume(
        &self,
        session_key: &str,
        last_event_id: &str,
        hold: Box<dyn Send>,
    ) -> Response<McpBody> {
        let unknown = || {
            reject::error(
                StatusCode::BAD_REQUEST,
                None,
                tessera_protocol::INVALID_REQUEST,
                "Bad Request: the Last-Event-ID names no stream of this session that can be resumed (it ended long ago, or it is not this server's)",
                None,
            )
        };
        let Some((stream, after)) = parse_event_id(last_event_id) else {
            return unknown();
        };
        let Some(runtime) = self.options().task_runtime.clone() else {
            return reject::method_not_allowed();
        };
        let resumable = Arc::clone(&self.sessions.resumable);
        let key = format!("{session_key}/{stream}");
        match resumable.log.read_after(&key, after).await {
            Ok(Some(_)) => {}
            Ok(None) => return unknown(),
            Err(e) => {
                tracing::warn!(error = %e, "a stream to resume could not be read");
                return reject::unavailable(
                    "Service Unavailable: the stream's events cannot be reached; retry",
                    1,
                );
            }
        }
        let stream = stream.to_owned();
        let id = RequestId::from(0);
        let log = RequestLog::new("GET", None, &id, self.options().access_log.as_ref());
        Running::framed(move |sink| {
            Box::pin(async move {
                let _hold = hold;
                resumable
                    .follow(&key, &stream, after, &sink, &*runtime)
                    .await;
                Handled {
                    id,
                    result: Err(ServerError::Cancelled),
                }
            })
        })
        .stream_framed(log)
        .keeping_alive(self.keep_alive())
        .into_response()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_our_event_ids_are_read() {
        let stream = "0123456789abcdef0123456789abcdef";
        assert_eq!(parse_event_id(&event_id(stream, 7)), Some((stream, 7)));
        for bad in [
            "",
            "7",
            "abc.7",
            &format!("{stream}.x"),
            &format!("{stream}7"),
        ] {
            assert_eq!(parse_event_id(bad), None, "{bad}");
        }
        let framed = framed(stream, 3, br#"{"jsonrpc":"2.0"}"#);
        assert_eq!(
            framed,
            Bytes::from(format!(
                "id: {stream}.3\nevent: message\ndata: {{\"jsonrpc\":\"2.0\"}}\n\n"
            ))
        );
    }
}

//! Resumable call streams for initialize-era sessions (2025-11-25 transport,
//! *Resumability and Redelivery*).
//!
//! A call served through the era bridge runs detached from its connection:
//! "Disconnection SHOULD NOT be interpreted as the client cancelling its
//! request." Everything it says — notifications, the questions it pushes,
//! its response — is appended to a [`StreamLog`] and numbered; the
//! connection that POSTed it, and any GET that resumes it with
//! `Last-Event-ID`, write the log's events with `id: {stream}.{n}`. The
//! stream opens with an event of an id and no data and a `retry` field, so
//! a client can resume even before the first message. With a shared log
//! (Redis) a client resumes on any instance: there the log is read every
//! [`POLL`], on the instance that runs the call at once.
//!
//! A detached call runs to its end, or until `notifications/cancelled`
//! stops it; a question it pushed times out as any other. At most
//! [`MAX_DETACHED_CALLS`] run detached on one instance: past that, a call
//! is tied to its connection as before (a client that goes away cancels it).

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::task::{Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use http::{Response, StatusCode};
use tessera_protocol::RequestId;
use tessera_server::bridge::StreamLog;
use tessera_server::intake::Request;
use tessera_server::{Handled, McpServer, NotificationSink, RequestFacts, Resolved, ServerError};

use super::questions::first_of;
use crate::stream::{FramedSink, RequestLog, Running};
use crate::{McpBody, McpEndpoint, reject};

/// Calls one instance runs detached from their connections, at most: 1,024.
pub const MAX_DETACHED_CALLS: usize = 1024;

/// How often a follower reads the log when no local append wakes it (the
/// call runs on another instance): 250 ms.
pub const POLL: Duration = Duration::from_millis(250);

/// The `retry` a stream opens with: how long a client waits before it
/// reconnects, in milliseconds.
pub const RETRY_MS: u64 = 1000;

/// Messages a detached call may have queued for the log, at most (past it,
/// notifications are dropped, as on a connection that is not read).
const QUEUED: usize = 4096;

/// The endpoint's resumable streams: their log, and who to wake on an append.
pub(crate) struct Resumable {
    log: Arc<dyn StreamLog>,
    wakeups: Mutex<HashMap<String, Arc<event_listener::Event>>>,
    detached: AtomicUsize,
}

/// A place among the detached calls, given back when the call ends.
struct Detached(Arc<Resumable>);

/// What a call needs to run detached: where, its stream's name, its place.
pub(crate) struct Detachment {
    runtime: Arc<dyn tessera_server::TaskRuntime>,
    stream: String,
    place: Detached,
}

impl Drop for Detached {
    fn drop(&mut self) {
        self.0.detached.fetch_sub(1, Ordering::AcqRel);
    }
}

/// The id of a stream's event `n`.
fn event_id(stream: &str, n: u64) -> String {
    format!("{stream}.{n}")
}

/// The stream and number a `Last-Event-ID` names (ours are `{hex}.{n}`).
pub(crate) fn parse_event_id(id: &str) -> Option<(&str, u64)> {
    let (stream, n) = id.rsplit_once('.')?;
    let ours = stream.len() == 32 && stream.bytes().all(|b| b.is_ascii_hexdigit());
    ours.then_some(())?;
    Some((stream, n.parse().ok()?))
}

/// One logged message framed as an event with its id.
fn framed(stream: &str, n: u64, message: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(message.len() + 64);
    out.extend_from_slice(b"id: ");
    out.extend_from_slice(event_id(stream, n).as_bytes());
    out.extend_from_slice(b"\n");
    out.extend_from_slice(&crate::stream::event(message));
    Bytes::from(out)
}

impl Resumable {
    pub(crate) fn new(log: Arc<dyn StreamLog>) -> Arc<Self> {
        Arc::new(Self {
            log,
            wakeups: Mutex::default(),
            detached: AtomicUsize::new(0),
        })
    }

    /// A place for one more detached call, unless there are as many as may be.
    fn detach(self: &Arc<Self>) -> Option<Detached> {
        let taken = self
            .detached
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |n| {
                (n < MAX_DETACHED_CALLS).then_some(n + 1)
            });
        taken.ok().map(|_| Detached(Arc::clone(self)))
    }

    fn wakeup(&self, key: &str) -> Option<Arc<event_listener::Event>> {
        self.wakeups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(key)
            .cloned()
    }

    /// Appends `message` to `key`'s log (three tries), then wakes its followers here.
    async fn append(
        &self,
        key: &str,
        message: &[u8],
        last: bool,
        runtime: &dyn tessera_server::TaskRuntime,
    ) {
        for attempt in 0..3 {
            match self.log.append(key, message, last).await {
                Ok(_) => break,
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

    /// Writes `key`'s events after `after` to `sink` as they are logged,
    /// until its last one (the response) or until the log no longer has it.
    async fn follow(
        &self,
        key: &str,
        stream: &str,
        mut after: u64,
        sink: &FramedSink,
        runtime: &dyn tessera_server::TaskRuntime,
    ) {
        loop {
            let listener = self.wakeup(key).map(|w| w.listen());
            match self.log.read_after(key, after).await {
                Ok(Some(read)) => {
                    for (n, message) in &read.events {
                        sink.send(framed(stream, *n, message));
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
            match listener {
                Some(listener) => drop(first_of(listener, runtime.sleep(POLL)).await),
                None => runtime.sleep(POLL).await,
            }
        }
    }
}

/// Messages a detached call said that are not logged yet.
#[derive(Default)]
struct Outbox {
    queue: VecDeque<Vec<u8>>,
    waker: Option<Waker>,
}

impl McpEndpoint {
    /// A place for one more call detached from its connection, when there
    /// is a runtime to run it on, randomness to name its stream, and fewer
    /// than [`MAX_DETACHED_CALLS`] running.
    pub(crate) fn detachment(&self) -> Option<Detachment> {
        let runtime = self.options().task_runtime.clone()?;
        let stream = tessera_state::random_id()?;
        let place = self.sessions.resumable.detach()?;
        Some(Detachment {
            runtime,
            stream,
            place,
        })
    }

    /// Serves a bridged call detached from its connection, its stream
    /// resumable.
    pub(crate) async fn dispatch_detached<S, F>(
        &self,
        detachment: Detachment,
        request: Request,
        facts: RequestFacts,
        resolved: Resolved,
        session_key: &str,
        serve: S,
    ) -> Response<McpBody>
    where
        S: FnOnce(Arc<McpServer>, Request, RequestFacts, Resolved) -> F + Send + 'static,
        F: Future<Output = Handled> + Send + 'static,
    {
        let resumable = Arc::clone(&self.sessions.resumable);
        let Detachment {
            runtime,
            stream,
            place,
        } = detachment;
        let key = format!("{session_key}/{stream}");
        let log = RequestLog::new(
            &request.method,
            request.target(),
            &request.id,
            self.options().access_log.as_ref(),
        );
        let id = request.id.clone();
        let server = Arc::clone(&self.server);
        let registration = self.in_flight.register(facts.principal.as_deref(), &id);
        let observed = server.observe(&request, &facts, &resolved);
        let outbox = Arc::new(Mutex::new(Outbox::default()));
        let sink = {
            let outbox = Arc::clone(&outbox);
            NotificationSink::new(move |n| {
                let mut o = outbox.lock().unwrap_or_else(PoisonError::into_inner);
                if o.queue.len() >= QUEUED {
                    return;
                }
                o.queue
                    .push_back(serde_json::to_vec(&n).unwrap_or_default());
                if let Some(w) = o.waker.take() {
                    w.wake();
                }
            })
        };
        resumable
            .wakeups
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(key.clone(), Arc::new(event_listener::Event::new()));
        let call_id = id.clone();
        let handler = observed.run(async move {
            let facts = facts.with_notifications(sink);
            let served = registration.run(serve(server, request, facts, resolved));
            served.await.unwrap_or(Handled {
                id: call_id,
                result: Err(ServerError::Cancelled),
            })
        });
        // The call and the writer of its log: detached, on the runtime.
        let writer = {
            let (resumable, key, runtime) =
                (Arc::clone(&resumable), key.clone(), Arc::clone(&runtime));
            async move {
                let _place = place;
                let mut handler = std::pin::pin!(handler);
                let mut answer = None;
                loop {
                    let next = outbox
                        .lock()
                        .unwrap_or_else(PoisonError::into_inner)
                        .queue
                        .pop_front();
                    if let Some(message) = next {
                        resumable.append(&key, &message, false, &*runtime).await;
                        continue;
                    }
                    if let Some(handled) = answer.take() {
                        let handled: Handled = handled;
                        // The response, last: it ends the stream for every follower.
                        resumable
                            .append(&key, &handled.to_bytes(), true, &*runtime)
                            .await;
                        break;
                    }
                    std::future::poll_fn(|cx| {
                        if let Poll::Ready(handled) = handler.as_mut().poll(cx) {
                            answer = Some(handled);
                            return Poll::Ready(());
                        }
                        let mut o = outbox.lock().unwrap_or_else(PoisonError::into_inner);
                        if o.queue.is_empty() {
                            o.waker = Some(cx.waker().clone());
                            Poll::Pending
                        } else {
                            Poll::Ready(())
                        }
                    })
                    .await;
                    // Messages said before the answer are logged before it.
                }
                resumable
                    .wakeups
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .remove(&key);
            }
        };
        runtime.spawn(Box::pin(writer));
        // JSON when the first thing logged is the response; else a stream.
        match first_logged(&resumable, &key, &*runtime).await {
            Begins::Answered(only) => {
                let mut log = log;
                log.finish(StatusCode::OK, "complete", None);
                return reject::json(StatusCode::OK, only);
            }
            Begins::Lost => {
                return reject::unavailable(
                    "Service Unavailable: the call's stream could not be kept; call again",
                    1,
                );
            }
            Begins::Streams => {}
        }
        follower(resumable, key, stream, 0, id, runtime, log, Box::new(()))
            .keeping_alive(self.keep_alive())
            .into_response()
    }

    /// A GET with `Last-Event-ID`: the call stream it names, resumed after
    /// that event, if it is one of this session's and still kept (else 404).
    /// `hold` is kept while the stream is open (its place among the client's streams).
    pub(crate) async fn resume(
        &self,
        session_key: &str,
        last_event_id: &str,
        hold: Box<dyn Send>,
    ) -> Response<McpBody> {
        let not_found = || {
            reject::error(
                StatusCode::NOT_FOUND,
                None,
                tessera_protocol::INVALID_REQUEST,
                "Not Found: the Last-Event-ID names no stream of this session that can be resumed (it ended long ago, or it is not this server's)",
                None,
            )
        };
        let Some((stream, after)) = parse_event_id(last_event_id) else {
            return not_found();
        };
        let Some(runtime) = self.options().task_runtime.clone() else {
            return reject::method_not_allowed();
        };
        let resumable = Arc::clone(&self.sessions.resumable);
        let key = format!("{session_key}/{stream}");
        match resumable.log.read_after(&key, after).await {
            Ok(Some(_)) => {}
            Ok(None) => return not_found(),
            Err(e) => {
                tracing::warn!(error = %e, "a stream to resume could not be read");
                return reject::unavailable(
                    "Service Unavailable: the stream's events cannot be reached; retry",
                    1,
                );
            }
        }
        let log = RequestLog::new(
            "GET",
            None,
            &RequestId::from(0),
            self.options().access_log.as_ref(),
        );
        follower(
            resumable,
            key,
            stream.to_owned(),
            after,
            RequestId::from(0),
            runtime,
            log,
            hold,
        )
        .keeping_alive(self.keep_alive())
        .into_response()
    }
}

/// How a detached call's stream begins.
enum Begins {
    /// With its response, logged first (the call asked and said nothing).
    Answered(Vec<u8>),
    /// With something else: it streams.
    Streams,
    /// The call ended here and nothing of it reached the log (unavailable).
    Lost,
}

/// Waits for the first event of `key`, which the call on this instance logs.
async fn first_logged(
    resumable: &Resumable,
    key: &str,
    runtime: &dyn tessera_server::TaskRuntime,
) -> Begins {
    loop {
        let listener = resumable.wakeup(key).map(|w| w.listen());
        match resumable.log.read_after(key, 0).await {
            Ok(Some(read)) if !read.events.is_empty() => {
                let alone = read.finished && read.events.len() == 1;
                return match read.events.into_iter().next() {
                    // Finished with one event: that one is the response.
                    Some((_, only)) if alone => Begins::Answered(only),
                    _ => Begins::Streams,
                };
            }
            _ if listener.is_none() => return Begins::Lost,
            _ => {}
        }
        match listener {
            Some(listener) => drop(first_of(listener, runtime.sleep(POLL)).await),
            None => runtime.sleep(POLL).await,
        }
    }
}

/// The event stream of `key` after event `after`: with `after` 0, it opens
/// with an event of an id, no data and a `retry`.
#[allow(clippy::too_many_arguments)]
fn follower(
    resumable: Arc<Resumable>,
    key: String,
    stream: String,
    after: u64,
    id: RequestId,
    runtime: Arc<dyn tessera_server::TaskRuntime>,
    log: RequestLog,
    hold: Box<dyn Send>,
) -> crate::stream::EventStream {
    Running::framed(move |sink| {
        Box::pin(async move {
            let _hold = hold;
            if after == 0 {
                sink.send(Bytes::from(format!(
                    "id: {}\nretry: {RETRY_MS}\ndata: \n\n",
                    event_id(&stream, 0)
                )));
            }
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

//! One stdio connection: read messages, serve requests concurrently, write responses.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tessera_protocol::{
    ErrorObject, INITIALIZE, INTERNAL_ERROR, INVALID_REQUEST, JsonRpcErrorResponse, LoggingLevel,
    RequestId, TRANSPORT_ERROR,
};
use tessera_server::bridge::{Bridge, LegacySession, is_bridged, requested_log_level};
use tessera_server::intake::{self, Message, Refusal, RefusalKind, Request, RequestEra};
use tessera_server::{Handled, McpServer, NotificationSink, RequestFacts, Resolved};
use tessera_tokio::{Line, LineReader};
use tokio::io::{AsyncRead, AsyncWrite};
use tokio::task::{AbortHandle, JoinSet};

use crate::StdioOptions;
use crate::outbox::Outbox;
use crate::peer_requests::{PeerRequests, PipeAsker};

/// What every request task of a connection shares.
struct Shared {
    server: Arc<McpServer>,
    outbox: Outbox,
    peer: PeerRequests,
    options: StdioOptions,
    /// What the initialize-era client last asked for with `logging/setLevel`.
    log_level: Mutex<LoggingLevel>,
}

/// Requests running now: by JSON-RPC id (for cancellation) and by task (for a panic's answer).
#[derive(Default)]
struct InFlight {
    by_id: HashMap<RequestId, AbortHandle>,
    by_task: HashMap<tokio::task::Id, RequestId>,
    /// The running `subscriptions/listen` requests: they end with the connection.
    listens: Vec<AbortHandle>,
}

/// Serves MCP over a newline-delimited JSON-RPC byte stream until the input
/// ends or `shutdown` completes; requests still running then get
/// [`StdioOptions::shutdown_grace`] to finish.
pub async fn serve_connection<R, W>(
    server: Arc<McpServer>,
    input: R,
    output: W,
    options: StdioOptions,
    shutdown: impl std::future::Future<Output = ()>,
) -> std::io::Result<()>
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin + Send + 'static,
{
    let (outbox, writer) = Outbox::start(output);
    let mut reader = LineReader::new(input, options.max_line_bytes);
    let shared = Arc::new(Shared {
        server,
        outbox,
        peer: PeerRequests::new(),
        options,
        log_level: Mutex::new(LoggingLevel::Debug),
    });
    let mut session: Option<Arc<LegacySession>> = None;
    let mut tasks = JoinSet::new();
    let in_flight = Arc::new(Mutex::new(InFlight::default()));
    tokio::pin!(shutdown);
    let mut signalled = false;
    let read_error = loop {
        let line = tokio::select! {
            line = reader.next() => line,
            Some(done) = tasks.join_next_with_id(), if !tasks.is_empty() => {
                finished(&shared, &in_flight, done).await;
                continue;
            }
            () = &mut shutdown => {
                // Subscriptions end gracefully: each gets its result before the output closes.
                shared.server.end_subscriptions();
                signalled = true;
                break None;
            }
            // The client closed our output: nothing it asks can be answered any more.
            () = shared.outbox.closed() => break None,
        };
        let bytes = match line {
            Ok(Line::Message(bytes)) => bytes,
            Ok(Line::End) => break None,
            Ok(Line::TooLong) => {
                let limit = shared.options.max_line_bytes;
                refuse(
                    &shared.outbox,
                    &Refusal::new(RefusalKind::TooLarge(limit), None),
                )
                .await;
                continue;
            }
            Err(e) => break Some(e),
        };
        let request = match read_message(&bytes, &shared.options.intake) {
            Ok(Some(request)) => request,
            Ok(None) => continue,
            Err(refusal) => {
                refuse(&shared.outbox, &refusal).await;
                continue;
            }
        };
        match request {
            Incoming::Request(request) => {
                let legacy = era_of(&request, &mut session);
                if legacy.is_some()
                    && let Some(level) = requested_log_level(&request)
                {
                    *lock(&shared.log_level) = level;
                }
                let facts = legacy
                    .as_ref()
                    .map_or_else(RequestFacts::modern, |s| {
                        RequestFacts::legacy(s.version.clone())
                    })
                    .with_task_runtime(Arc::new(tessera_tokio::TokioTasks))
                    .serving_initialize_era();
                start(&shared, &in_flight, &mut tasks, request, facts, legacy).await;
            }
            Incoming::Cancelled(id) => {
                let mut running = lock(&in_flight);
                if let Some(handle) = running.by_id.remove(&id) {
                    // Aborted, it sends nothing more for this request, as the spec requires.
                    handle.abort();
                    tracing::debug!(%id, "request cancelled by the client");
                }
            }
            Incoming::Notification(n) => {
                shared.server.handle_notification(&n.method, n.params).await
            }
            Incoming::BadResponse(id) => {
                // Never answered (its id is one of ours); the question it meant to answer fails.
                let error = ErrorObject::new(
                    INVALID_REQUEST,
                    "the client's response is not valid JSON-RPC",
                );
                if !id.is_some_and(|id| shared.peer.fail(&id, error)) {
                    tracing::warn!("a malformed response from the client; ignored");
                }
            }
            Incoming::Response(response) => {
                if !shared.peer.resolve(response) {
                    tracing::debug!("a response nothing waits for (its call ended); ignored");
                }
            }
        }
    };
    // Nothing more will be answered: questions waiting on the client fail now.
    shared.peer.close();
    // The client is gone (or stopped writing): its subscriptions end with the connection.
    if !signalled {
        for listen in std::mem::take(&mut lock(&in_flight).listens) {
            listen.abort();
        }
    }
    let grace = shared.options.shutdown_grace;
    let drain = async {
        while let Some(done) = tasks.join_next_with_id().await {
            finished(&shared, &in_flight, done).await;
        }
    };
    if tokio::time::timeout(grace, drain).await.is_err() {
        tracing::warn!(
            running = tasks.len(),
            "requests still running {grace:?} after the input ended; stopped"
        );
        tasks.shutdown().await;
    }
    drop(shared);
    // The writer ends when the last handle goes; a handler that leaked one must not hold the exit.
    let written = match tokio::time::timeout(std::time::Duration::from_secs(2), writer).await {
        Ok(written) => written,
        Err(_) => {
            tracing::warn!("output still held 2 s after the last request; closing");
            Ok(Ok(()))
        }
    };
    match written {
        Ok(Ok(())) | Err(_) => {}
        // The client closed its end of stdout: nothing more can be said to it.
        Ok(Err(e)) if e.kind() == std::io::ErrorKind::BrokenPipe => {}
        Ok(Err(e)) => return Err(e),
    }
    read_error.map_or(Ok(()), Err)
}

/// A message read from the input, sorted for the loop.
enum Incoming {
    Request(Request),
    Cancelled(RequestId),
    Notification(tessera_protocol::JsonRpcNotification<serde_json::Value>),
    Response(tessera_protocol::JsonRpcResponse<serde_json::Value>),
    /// Shaped like a response (no method) but not a valid one, with its id if it has one.
    BadResponse(Option<RequestId>),
}

/// Reads one line through the intake; `Ok(None)` for a notification needing nothing.
fn read_message(bytes: &[u8], limits: &intake::Limits) -> Result<Option<Incoming>, Refusal> {
    let message = match intake::read(bytes, limits) {
        Ok(message) => message,
        Err(refusal) if matches!(refusal.kind(), RefusalKind::InvalidResponse(_)) => {
            return Ok(Some(Incoming::BadResponse(refusal.id().cloned())));
        }
        Err(refusal) => return Err(refusal),
    };
    Ok(Some(match message {
        Message::Request(r) => Incoming::Request(r),
        Message::Response(r) => Incoming::Response(r),
        Message::Notification(n) => match intake::cancelled_request(&n) {
            Some(id) => Incoming::Cancelled(id),
            // A cancellation naming no request in flight needs nothing.
            None if n.method == tessera_protocol::CANCELLED_NOTIFICATION => return Ok(None),
            None => Incoming::Notification(n),
        },
    }))
}

/// The request's era: `Some(session)` for initialize-era. A request carrying
/// the 2026-07-28 envelope is modern even on a connection that initialized;
/// `initialize` opens (or reopens) the connection's legacy session.
fn era_of(
    request: &Request,
    session: &mut Option<Arc<LegacySession>>,
) -> Option<Arc<LegacySession>> {
    if request.era(None) == RequestEra::Modern {
        return None;
    }
    if request.method == INITIALIZE {
        let opened = Arc::new(LegacySession::from_initialize(&request.params));
        tracing::info!(version = %opened.version, "initialize-era client");
        *session = Some(Arc::clone(&opened));
        return Some(opened);
    }
    session.clone()
}

/// Starts serving `request` in its own task, unless too many run already or its id is in use.
async fn start(
    shared: &Arc<Shared>,
    in_flight: &Arc<Mutex<InFlight>>,
    tasks: &mut JoinSet<()>,
    request: Request,
    facts: RequestFacts,
    legacy: Option<Arc<LegacySession>>,
) {
    let id = request.id.clone();
    let refusal = {
        let running = lock(in_flight);
        if running.by_id.contains_key(&id) {
            Some((
                INVALID_REQUEST,
                format!(
                    "Invalid Request: request id {id} is already in flight; ids must be unique among running requests"
                ),
            ))
        } else if running.by_id.len() >= shared.options.max_in_flight {
            Some((
                TRANSPORT_ERROR,
                format!(
                    "Server busy: {} requests are running; retry when one has answered",
                    running.by_id.len()
                ),
            ))
        } else {
            None
        }
    };
    if let Some((code, message)) = refusal {
        reply_error(&shared.outbox, Some(id), code, message).await;
        return;
    }
    let task_shared = Arc::clone(shared);
    let listen = request.method == tessera_protocol::SUBSCRIPTIONS_LISTEN;
    let handle = tasks.spawn(async move {
        if let Some(bytes) = serve_request(&task_shared, request, facts, legacy).await {
            task_shared.outbox.send(bytes).await;
        }
    });
    let mut running = lock(in_flight);
    if listen {
        running.listens.retain(|h| !h.is_finished());
        running.listens.push(handle.clone());
    }
    running.by_task.insert(handle.id(), id.clone());
    running.by_id.insert(id, handle);
}

/// One request's response: through the bridge for an initialize-era call that may ask.
async fn serve_request(
    shared: &Shared,
    request: Request,
    facts: RequestFacts,
    legacy: Option<Arc<LegacySession>>,
) -> Option<Vec<u8>> {
    let outbox = shared.outbox.clone();
    let sink = NotificationSink::new(move |n| outbox.notify(&n));
    let facts = facts.with_transport(tessera_server::NetworkTransport::Pipe);
    let resolved = shared.server.resolve(&request, &facts);
    let observed = shared.server.observe(&request, &facts, &resolved);
    let handled = observed.run(serve_observed(
        shared, request, facts, resolved, legacy, sink,
    ));
    handled.await.map(|handled| handled.to_bytes())
}

/// [`serve_request`] inside the request's span.
async fn serve_observed(
    shared: &Shared,
    request: Request,
    facts: RequestFacts,
    resolved: Resolved,
    legacy: Option<Arc<LegacySession>>,
    sink: NotificationSink,
) -> Option<Handled> {
    match legacy {
        Some(session) if is_bridged(&request.method) => {
            let log_level = *lock(&shared.log_level);
            let asker = PipeAsker {
                peer: &shared.peer,
                outbox: &shared.outbox,
                patience: shared.options.question_timeout,
            };
            Bridge {
                server: &shared.server,
                session: &session,
                asker: &asker,
                facts: RequestFacts::modern()
                    .with_transport(tessera_server::NetworkTransport::Pipe)
                    .with_notifications(sink)
                    .with_task_runtime(Arc::new(tessera_tokio::TokioTasks)),
                max_rounds: shared.options.max_bridge_rounds,
                log_level,
            }
            .serve(request)
            .await
        }
        _ => Some(
            shared
                .server
                .serve_resolved(request, facts.with_notifications(sink), resolved)
                .await,
        ),
    }
}

/// A request task ended: forget it; a panic still gets its caller an answer.
async fn finished(
    shared: &Shared,
    in_flight: &Mutex<InFlight>,
    done: Result<(tokio::task::Id, ()), tokio::task::JoinError>,
) {
    let task = match &done {
        Ok((task, ())) => *task,
        Err(e) => e.id(),
    };
    let id = {
        let mut running = lock(in_flight);
        let id = running.by_task.remove(&task);
        // Only this task's entry: a cancelled request's id may already name a new one.
        if let Some(id) = &id
            && running.by_id.get(id).is_some_and(|h| h.id() == task)
        {
            running.by_id.remove(id);
        }
        id
    };
    if let Err(e) = done
        && e.is_panic()
    {
        tracing::error!(id = ?id, "a handler panicked");
        let message = "Internal error: the handler failed unexpectedly (see the server's log)";
        reply_error(&shared.outbox, id, INTERNAL_ERROR, message.into()).await;
    }
}

/// The intake's refusal of a line.
async fn refuse(outbox: &Outbox, refusal: &Refusal) {
    let response = JsonRpcErrorResponse::new(refusal.id().cloned(), refusal.to_error_object());
    outbox
        .send(serde_json::to_vec(&response).unwrap_or_default())
        .await;
}

async fn reply_error(outbox: &Outbox, id: Option<RequestId>, code: i32, message: String) {
    let response = JsonRpcErrorResponse::new(id, ErrorObject::new(code, message));
    outbox
        .send(serde_json::to_vec(&response).unwrap_or_default())
        .await;
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

//! Running a handler and framing what it says: JSON when it only answers,
//! an SSE stream when it sends notifications first. The stream owns the
//! handler's future, so a client that disconnects cancels the handler.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};

use bytes::Bytes;
use http::StatusCode;
use tessera_protocol::RequestId;
use tessera_server::{BoxFuture, Handled, NotificationSink};

/// Notifications a handler sent that the body has not written yet, as the
/// events the body will write.
#[derive(Default)]
struct Mailbox {
    queue: VecDeque<Bytes>,
    /// The bytes of the events in `queue`.
    bytes: usize,
    waker: Option<Waker>,
    /// Notifications dropped because the client was not reading.
    dropped: u64,
}

/// Notifications held for a client that is not reading, at most, and the
/// bytes they may take; later ones are dropped (and counted in the log)
/// rather than growing without bound.
const MAILBOX_LIMIT: usize = 4096;
const MAILBOX_BYTES: usize = 4 * 1024 * 1024;

/// What one request was, for the log line written when it finishes.
pub(crate) struct RequestLog {
    pub method: String,
    pub target: String,
    pub id: String,
    pub started: tessera_protocol::clock::Instant,
    /// Where the line goes instead of `tracing`, when the endpoint has an access log.
    pub access: Option<Arc<dyn crate::AccessLog>>,
}

impl RequestLog {
    /// What to log about a request: empty, without allocating, when nothing will be logged.
    pub(crate) fn new(
        method: &str,
        target: Option<&str>,
        id: &RequestId,
        access: Option<&Arc<dyn crate::AccessLog>>,
    ) -> Self {
        let started = tessera_protocol::clock::Instant::now();
        if access.is_none() && !tracing::enabled!(tracing::Level::INFO) {
            return Self {
                method: String::new(),
                target: String::new(),
                id: String::new(),
                started,
                access: None,
            };
        }
        // Request-derived text is escaped: no newline, ESC or quote reaches the log as itself.
        Self {
            method: escaped(method),
            target: escaped(target.unwrap_or("")),
            // Ids display as JSON, which escapes them already.
            id: id.to_string(),
            started,
            access: access.cloned(),
        }
    }

    pub(crate) fn finish(&mut self, status: StatusCode, outcome: &'static str, code: Option<i32>) {
        let latency = self.started.elapsed();
        if let Some(access) = self.access.take() {
            // Handed over whole: formatting and writing happen off the request path.
            access.record(crate::AccessRecord {
                method: std::mem::take(&mut self.method),
                target: std::mem::take(&mut self.target),
                id: std::mem::take(&mut self.id),
                status: status.as_u16(),
                outcome,
                code,
                latency,
                at: tessera_protocol::clock::SystemTime::now(),
            });
            return;
        }
        tracing::info!(
            method = %self.method,
            target = %self.target,
            id = %self.id,
            status = status.as_u16(),
            outcome,
            code,
            latency_us = latency.as_micros() as u64,
            "request finished"
        );
    }
}

/// `text` as `str::escape_debug` writes it, copied without the per-character
/// walk when it is plain printable ASCII (the usual method and tool names).
fn escaped(text: &str) -> String {
    let plain = text
        .bytes()
        .all(|b| (0x20..0x7f).contains(&b) && !matches!(b, b'"' | b'\'' | b'\\'));
    if plain {
        text.to_owned()
    } else {
        text.escape_debug().to_string()
    }
}

/// Where framed events go, held for the body to write, within the mailbox's bounds.
#[derive(Clone)]
pub(crate) struct FramedSink(Arc<Mutex<Mailbox>>);

impl FramedSink {
    /// Queues `event` for the body; dropped (and counted) past the bounds.
    pub(crate) fn send(&self, event: Bytes) {
        self.queue(event, false);
    }

    /// Queues `event`, the stream's last, whatever the bounds.
    pub(crate) fn send_last(&self, event: Bytes) {
        self.queue(event, true);
    }

    /// Whether the body has written enough that another event fits.
    pub(crate) fn has_room(&self) -> bool {
        self.0
            .lock()
            .is_ok_and(|m| m.queue.len() < MAILBOX_LIMIT / 2 && m.bytes < MAILBOX_BYTES / 2)
    }

    /// A handle that does not keep the body's mailbox alive: once the
    /// connection is gone, sending through it does nothing.
    pub(crate) fn downgrade(&self) -> WeakFramedSink {
        WeakFramedSink(Arc::downgrade(&self.0))
    }

    fn queue(&self, event: Bytes, last: bool) {
        let Ok(mut m) = self.0.lock() else { return };
        if !last && (m.queue.len() >= MAILBOX_LIMIT || m.bytes + event.len() > MAILBOX_BYTES) {
            m.dropped += 1;
            if m.dropped.is_power_of_two() {
                tracing::warn!(
                    dropped = m.dropped,
                    "a client is not reading its event stream: notifications dropped"
                );
            }
            return;
        }
        m.bytes += event.len();
        m.queue.push_back(event);
        if let Some(w) = m.waker.take() {
            w.wake();
        }
    }
}

/// A [`FramedSink`] of a body that may be gone.
#[derive(Clone, Default)]
pub(crate) struct WeakFramedSink(std::sync::Weak<Mutex<Mailbox>>);

impl WeakFramedSink {
    /// The sink, while its body is still being written.
    pub(crate) fn upgrade(&self) -> Option<FramedSink> {
        self.0.upgrade().map(FramedSink)
    }
}

/// A running handler, its pending notifications, and its answer once it has one.
pub(crate) struct Running {
    future: Option<BoxFuture<'static, Handled>>,
    answer: Option<Handled>,
    mailbox: Arc<Mutex<Mailbox>>,
}

/// How a handler began: it answered, or it spoke first (so the answer streams).
pub(crate) enum Start {
    Answered(Handled, RequestLog),
    Streaming(EventStream),
}

/// One step of a running handler.
enum Step {
    Notification(Bytes),
    Answer(Handled),
    Pending,
}

impl Running {
    /// Starts a handler: `make` gets the sink its notifications go to and returns its future.
    pub(crate) fn new(make: impl FnOnce(NotificationSink) -> BoxFuture<'static, Handled>) -> Self {
        Self::framed(move |framed| {
            make(NotificationSink::new(move |n| {
                framed.send(event(&serde_json::to_vec(&n).unwrap_or_default()));
            }))
        })
    }

    /// Starts a future that writes events framed already (with their `id:`
    /// lines): a resumable stream's follower.
    pub(crate) fn framed(make: impl FnOnce(FramedSink) -> BoxFuture<'static, Handled>) -> Self {
        let mailbox = Arc::new(Mutex::new(Mailbox::default()));
        let sink = FramedSink(Arc::clone(&mailbox));
        Self {
            future: Some(make(sink)),
            answer: None,
            mailbox,
        }
    }

    fn take_notification(&self) -> Option<Bytes> {
        let mut m = self.mailbox.lock().ok()?;
        let n = m.queue.pop_front()?;
        m.bytes -= n.len();
        Some(n)
    }

    fn has_notifications(&self) -> bool {
        self.mailbox.lock().is_ok_and(|m| !m.queue.is_empty())
    }

    /// Notifications first, then the answer; polls the handler only when both are empty.
    fn step(&mut self, cx: &mut Context<'_>) -> Step {
        if let Some(n) = self.take_notification() {
            return Step::Notification(n);
        }
        if self.answer.is_none()
            && let Some(future) = self.future.as_mut()
            && let Poll::Ready(handled) = future.as_mut().poll(cx)
        {
            self.future = None;
            self.answer = Some(handled);
        }
        if let Some(n) = self.take_notification() {
            return Step::Notification(n);
        }
        match self.answer.take() {
            Some(answer) => Step::Answer(answer),
            None => {
                if let Ok(mut m) = self.mailbox.lock() {
                    m.waker = Some(cx.waker().clone());
                }
                // A notification may have arrived between the check and storing the waker.
                if self.has_notifications() {
                    cx.waker().wake_by_ref();
                }
                Step::Pending
            }
        }
    }

    /// Runs until the handler answers (JSON) or sends its first notification (SSE).
    pub(crate) async fn start(mut self, log: RequestLog) -> Start {
        let first = std::future::poll_fn(|cx| match self.step(cx) {
            Step::Notification(n) => Poll::Ready(Err(n)),
            Step::Answer(a) => Poll::Ready(Ok(a)),
            Step::Pending => Poll::Pending,
        })
        .await;
        match first {
            Ok(answer) => Start::Answered(answer, log),
            Err(notification) => Start::Streaming(EventStream {
                first: Some(notification),
                running: self,
                log,
                done: false,
                answered: true,
                keep_alive: None,
                silence: None,
            }),
        }
    }

    /// Streams at once what the future writes, and no answer of its own at
    /// the end: a resumable stream, whose follower writes every event itself.
    pub(crate) fn stream_framed(self, log: RequestLog) -> EventStream {
        EventStream {
            first: None,
            running: self,
            log,
            done: false,
            answered: false,
            keep_alive: None,
            silence: None,
        }
    }

    /// Streams at once, and writes no answer at the end: an initialize-era
    /// session's standalone stream (notifications only; "the server MUST NOT
    /// send a JSON-RPC response on the stream"). It opens with a comment so
    /// the client sees the stream before the first notification.
    pub(crate) fn stream_now(self, log: RequestLog) -> EventStream {
        EventStream {
            first: Some(Bytes::from_static(b": stream open\n\n")),
            running: self,
            log,
            done: false,
            answered: false,
            keep_alive: None,
            silence: None,
        }
    }
}

/// The `text/event-stream` body: notifications as they come, then the final response.
pub(crate) struct EventStream {
    first: Option<Bytes>,
    running: Running,
    log: RequestLog,
    done: bool,
    /// Whether the handler's answer is the stream's last event.
    answered: bool,
    keep_alive: Option<KeepAlive>,
    /// The silence being timed, once the stream has nothing to write.
    silence: Option<BoxFuture<'static, ()>>,
}

/// A comment written after `every` of silence, timed on `runtime`.
pub(crate) struct KeepAlive {
    pub every: std::time::Duration,
    pub runtime: Arc<dyn tessera_server::TaskRuntime>,
}

/// What a silent stream writes: a comment, which event-stream readers skip.
const KEEP_ALIVE_COMMENT: &[u8] = b": keep-alive\n\n";

pub(crate) fn event(json: &[u8]) -> Bytes {
    let mut out = Vec::with_capacity(json.len() + 22);
    out.extend_from_slice(b"event: message\ndata: ");
    out.extend_from_slice(json);
    out.extend_from_slice(b"\n\n");
    Bytes::from(out)
}

impl EventStream {
    /// Writes a keep-alive comment whenever the stream has been silent for `keep_alive.every`.
    pub(crate) fn keeping_alive(mut self, keep_alive: Option<KeepAlive>) -> Self {
        self.keep_alive = keep_alive;
        self
    }

    /// A keep-alive comment when the stream has been silent long enough.
    fn poll_silence(&mut self, cx: &mut Context<'_>) -> Poll<Bytes> {
        let Some(keep_alive) = &self.keep_alive else {
            return Poll::Pending;
        };
        let silence = self
            .silence
            .get_or_insert_with(|| keep_alive.runtime.sleep(keep_alive.every));
        match silence.as_mut().poll(cx) {
            Poll::Ready(()) => {
                self.silence = None;
                Poll::Ready(Bytes::from_static(KEEP_ALIVE_COMMENT))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// The `text/event-stream` response that writes this stream.
    pub(crate) fn into_response(self) -> http::Response<crate::McpBody> {
        use http::{HeaderValue, header};
        let mut response = http::Response::new(crate::McpBody::stream(self));
        let h = response.headers_mut();
        h.insert(
            header::CONTENT_TYPE,
            HeaderValue::from_static("text/event-stream"),
        );
        h.insert(
            header::CACHE_CONTROL,
            HeaderValue::from_static("no-cache, no-transform"),
        );
        h.insert("x-accel-buffering", HeaderValue::from_static("no"));
        response
    }

    pub(crate) fn is_finished(&self) -> bool {
        self.done
    }

    pub(crate) fn poll_event(&mut self, cx: &mut Context<'_>) -> Poll<Option<Bytes>> {
        if self.done {
            return Poll::Ready(None);
        }
        if let Some(n) = self.first.take() {
            return Poll::Ready(Some(n));
        }
        match self.running.step(cx) {
            Step::Notification(n) => {
                self.silence = None;
                Poll::Ready(Some(n))
            }
            Step::Answer(handled) => {
                self.done = true;
                self.log.finish(
                    StatusCode::OK,
                    handled.outcome(),
                    handled
                        .result
                        .as_ref()
                        .err()
                        .map(tessera_server::ServerError::code),
                );
                if self.answered {
                    Poll::Ready(Some(event(&handled.to_bytes())))
                } else {
                    Poll::Ready(None)
                }
            }
            Step::Pending => self.poll_silence(cx).map(Some),
        }
    }
}

impl Drop for EventStream {
    fn drop(&mut self) {
        if !self.done {
            tracing::info!(
                method = %self.log.method,
                id = %self.log.id,
                latency_us = self.log.started.elapsed().as_micros() as u64,
                "client went away mid-stream; handler cancelled"
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::escaped;

    #[test]
    fn escaped_matches_escape_debug() {
        for text in [
            "tools/call",
            "increase-counter",
            "",
            "a\nb",
            "say \"hi\"",
            "it's",
            "back\\slash",
            "\u{1b}[31m",
            "naïve",
            "tab\t",
        ] {
            assert_eq!(escaped(text), text.escape_debug().to_string(), "{text:?}");
        }
    }

    use std::io::Write;
    use std::sync::{Arc, Mutex};

    use super::*;

    #[test]
    fn a_client_that_does_not_read_holds_at_most_the_byte_budget() {
        let sink = Arc::new(Mutex::new(None));
        let kept = Arc::clone(&sink);
        let running = Running::new(move |s| {
            *kept.lock().unwrap() = Some(s);
            Box::pin(std::future::pending())
        });
        let sink = sink.lock().unwrap().take().unwrap();
        // 100 notifications of 100 kB: 10 MB sent, nothing read.
        let big = "x".repeat(100_000);
        for _ in 0..100 {
            sink.send(
                serde_json::json!({"jsonrpc": "2.0", "method": "notifications/message",
                "params": {"level": "info", "data": big}}),
            );
        }
        let held = running.mailbox.lock().unwrap();
        assert!(held.bytes <= MAILBOX_BYTES, "{} bytes held", held.bytes);
        assert_eq!(held.bytes, held.queue.iter().map(Bytes::len).sum::<usize>());
        assert!(held.dropped > 0);
    }

    /// A writer the test can read back.
    #[derive(Clone, Default)]
    struct Captured(Arc<Mutex<Vec<u8>>>);

    impl Write for Captured {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            self.0.lock().unwrap().extend_from_slice(buf);
            Ok(buf.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }

    /// Issue #14, 3: every request-derived value in logs is escaped.
    #[test]
    fn request_derived_values_are_escaped_in_the_log() {
        let out = Captured::default();
        let writer = out.clone();
        let subscriber = tracing_subscriber::fmt()
            .with_writer(move || writer.clone())
            .with_ansi(false)
            .finish();
        tracing::subscriber::with_default(subscriber, || {
            let id = RequestId::String("7\nfake line".into());
            let mut log =
                RequestLog::new("tools/call", Some("x\n\u{1b}[31mINFO forged"), &id, None);
            log.finish(StatusCode::OK, "complete", None);
        });
        let text = String::from_utf8(out.0.lock().unwrap().clone()).unwrap();
        assert_eq!(text.lines().count(), 1, "{text}");
        assert!(!text.contains('\u{1b}'), "{text}");
        assert!(text.contains(r"x\n\u{1b}[31mINFO forged"), "{text}");
        assert!(text.contains(r#"id="7\nfake line""#), "{text}");
    }
}

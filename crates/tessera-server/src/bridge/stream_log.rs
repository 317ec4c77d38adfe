//! The events of an initialize-era call's stream, kept so that a client
//! whose connection broke can resume the stream (2025-11-25 transport,
//! *Resumability and Redelivery*: "the server MAY use this header to replay
//! messages that would have been sent after the last event ID, on the
//! stream that was disconnected").
//!
//! Each stream's events are numbered 1, 2, … by the instance that writes
//! them (an append of a number kept already changes nothing, so a retried
//! append is harmless); the last one is the call's response. [`MemoryStreamLog`] keeps them in the
//! process (a client resumes on the instance it was on); `tessera-redis`
//! keeps them in Redis, so it resumes on any instance. Both are bounded: a
//! stream keeps its last [`MAX_STREAM_EVENTS`] events and
//! [`MAX_STREAM_BYTES`] bytes, and is forgotten [`STREAM_LOG_TTL`] after
//! its last append or touch (the writer touches a silent stream).

use std::collections::{HashMap, VecDeque};
use std::sync::Mutex;
use std::time::Duration;

use crate::BoxFuture;

/// Events one stream keeps, at most: its last 256.
pub const MAX_STREAM_EVENTS: usize = 256;
/// Bytes one stream keeps, at most: 1 MiB (older events go first; the
/// response, last, is always kept).
pub const MAX_STREAM_BYTES: usize = 1024 * 1024;
/// How long a stream is kept after its last event: 10 minutes.
pub const STREAM_LOG_TTL: Duration = Duration::from_secs(600);
/// Streams a [`MemoryStreamLog`] keeps at once, at most: 10,000.
pub const MAX_LOGGED_STREAMS: usize = 10_000;

/// What a stream still keeps after a given event.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LoggedEvents {
    /// Its events after the one asked about, each with its number, in order.
    pub events: Vec<(u64, Vec<u8>)>,
    /// Whether its last event (the response) is among what was appended.
    pub finished: bool,
}

/// Why the log could not be read or appended to.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StreamLogError {
    /// The log keeps as many streams as it may.
    #[error("the server keeps as many resumable streams as it can")]
    Full,
    /// The shared store did not answer.
    #[error("the stream log is unavailable: {0}")]
    Unavailable(String),
}

/// A future of the log.
pub type StreamLogFuture<'a, T> = BoxFuture<'a, Result<T, StreamLogError>>;

/// Where resumable streams keep their events, by stream key (the session's
/// key and the stream's id: a client can only resume its own session's).
pub trait StreamLog: Send + Sync + 'static {
    /// Appends `event` (one JSON-RPC message) to `stream` as number
    /// `number`, `last` when it is the response that ends it. A number not
    /// above the last one kept is already there: nothing changes.
    fn append<'a>(
        &'a self,
        stream: &'a str,
        number: u64,
        event: &'a [u8],
        last: bool,
    ) -> StreamLogFuture<'a, ()>;

    /// Keeps `stream` another [`STREAM_LOG_TTL`] (its call is silent).
    fn touch<'a>(&'a self, stream: &'a str) -> StreamLogFuture<'a, ()>;

    /// The events of `stream` after number `after` that are still kept, or
    /// `None` for a stream not kept (never appended to, or forgotten).
    fn read_after<'a>(
        &'a self,
        stream: &'a str,
        after: u64,
    ) -> StreamLogFuture<'a, Option<LoggedEvents>>;
}

/// One stream's events in memory.
#[derive(Default)]
struct Kept {
    events: VecDeque<(u64, Vec<u8>)>,
    bytes: usize,
    /// The highest number appended.
    last: u64,
    finished: bool,
    touched: Option<tessera_protocol::clock::Instant>,
}

/// A [`StreamLog`] in this process, bounded by [`MAX_LOGGED_STREAMS`].
#[derive(Default)]
pub struct MemoryStreamLog {
    streams: Mutex<HashMap<String, Kept>>,
}

impl MemoryStreamLog {
    fn sweep(streams: &mut HashMap<String, Kept>) {
        streams.retain(|_, k| k.touched.is_some_and(|t| t.elapsed() < STREAM_LOG_TTL));
    }
}

impl StreamLog for MemoryStreamLog {
    fn append<'a>(
        &'a self,
        stream: &'a str,
        number: u64,
        event: &'a [u8],
        last: bool,
    ) -> StreamLogFuture<'a, ()> {
        let mut streams = self
            .streams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if !streams.contains_key(stream) && streams.len() >= MAX_LOGGED_STREAMS {
            Self::sweep(&mut streams);
            if streams.len() >= MAX_LOGGED_STREAMS {
                return Box::pin(std::future::ready(Err(StreamLogError::Full)));
            }
        }
        let kept = streams.entry(stream.to_owned()).or_default();
        kept.touched = Some(tessera_protocol::clock::Instant::now());
        if number <= kept.last {
            return Box::pin(std::future::ready(Ok(())));
        }
        kept.last = number;
        kept.bytes += event.len();
        kept.events.push_back((number, event.to_vec()));
        kept.finished |= last;
        while kept.events.len() > 1
            && (kept.events.len() > MAX_STREAM_EVENTS || kept.bytes > MAX_STREAM_BYTES)
        {
            if let Some((_, dropped)) = kept.events.pop_front() {
                kept.bytes -= dropped.len();
            }
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn touch<'a>(&'a self, stream: &'a str) -> StreamLogFuture<'a, ()> {
        if let Some(kept) = self
            .streams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .get_mut(stream)
        {
            kept.touched = Some(tessera_protocol::clock::Instant::now());
        }
        Box::pin(std::future::ready(Ok(())))
    }

    fn read_after<'a>(
        &'a self,
        stream: &'a str,
        after: u64,
    ) -> StreamLogFuture<'a, Option<LoggedEvents>> {
        let streams = self
            .streams
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let read = streams
            .get(stream)
            .filter(|k| k.touched.is_some_and(|t| t.elapsed() < STREAM_LOG_TTL))
            .map(|k| LoggedEvents {
                events: k
                    .events
                    .iter()
                    .filter(|(n, _)| *n > after)
                    .cloned()
                    .collect(),
                finished: k.finished,
            });
        Box::pin(std::future::ready(Ok(read)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn now<T>(f: StreamLogFuture<'_, T>) -> T {
        let mut f = f;
        let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
        match f.as_mut().poll(&mut cx) {
            std::task::Poll::Ready(r) => r.unwrap(),
            std::task::Poll::Pending => panic!("the memory log answers at once"),
        }
    }

    #[test]
    fn events_are_kept_by_number_read_after_a_number_and_bounded() {
        let log = MemoryStreamLog::default();
        assert_eq!(now(log.read_after("s", 0)), None);
        now(log.append("s", 1, b"a", false));
        now(log.append("s", 2, b"b", false));
        // A retried append changes nothing.
        now(log.append("s", 2, b"b", false));
        let read = now(log.read_after("s", 1)).unwrap();
        assert_eq!(read.events, vec![(2, b"b".to_vec())]);
        assert!(!read.finished);
        let end = MAX_STREAM_EVENTS as u64 + 13;
        for n in 3..end {
            now(log.append("s", n, b"x", false));
        }
        now(log.append("s", end, b"end", true));
        let read = now(log.read_after("s", 0)).unwrap();
        assert_eq!(read.events.len(), MAX_STREAM_EVENTS);
        assert!(read.finished);
        assert_eq!(read.events.last().unwrap(), &(end, b"end".to_vec()));
        // One event bigger than the byte budget is still kept (it is the last).
        let big = vec![b'x'; MAX_STREAM_BYTES + 1];
        now(log.append("t", 1, b"small", false));
        now(log.append("t", 2, &big, true));
        let read = now(log.read_after("t", 0)).unwrap();
        assert_eq!(read.events.len(), 1);
        assert_eq!(read.events[0].0, 2);
    }
}

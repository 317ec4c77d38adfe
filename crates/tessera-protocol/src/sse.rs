//! Reading a `text/event-stream` body: the `data` of each event, as bytes
//! arrive in any chunks. Sans-I/O: the transport feeds it what it read.

/// Largest event (or unterminated line) accepted from a server.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Longest event id kept to send back as `Last-Event-ID`: 1 KiB.
pub const MAX_EVENT_ID_BYTES: usize = 1024;

/// Splits an SSE byte stream into the `data` payloads of its events, and
/// keeps what a reconnection needs: the last event id and the `retry` time
/// (`event:` and comments are skipped).
///
/// ```
/// let mut parser = tessera_protocol::sse::SseParser::default();
/// assert_eq!(parser.feed(b"event: message\ndata: {\"a\"").unwrap(), Vec::<String>::new());
/// assert_eq!(parser.feed(b":1}\n\n: keep-alive\n\n").unwrap(), vec![r#"{"a":1}"#.to_owned()]);
/// assert_eq!(parser.finish(), None);
/// ```
#[derive(Default)]
pub struct SseParser {
    buffer: Vec<u8>,
    /// Bytes of `buffer` already searched for a line end.
    scanned: usize,
    data: Vec<String>,
    data_len: usize,
    /// The `id` of the event being read (WHATWG: the last event ID buffer).
    id_buffer: Option<String>,
    /// The id of the last event dispatched, even one without data.
    last_event_id: Option<String>,
    /// The last `retry` the server sent, in milliseconds.
    retry: Option<u64>,
}

impl SseParser {
    /// Feeds bytes; returns the data of every event completed by them, or an
    /// error when one event grows past [`MAX_EVENT_BYTES`].
    pub fn feed(&mut self, bytes: &[u8]) -> Result<Vec<String>, String> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        let mut start = 0;
        while let Some(offset) = self.buffer[self.scanned..].iter().position(|&b| b == b'\n') {
            let end = self.scanned + offset;
            let line = String::from_utf8_lossy(&self.buffer[start..end]);
            let line = line.trim_end_matches('\r');
            if line.is_empty() {
                // An event ends: its id counts, data or not (a priming event).
                if self.id_buffer.is_some() {
                    self.last_event_id = self.id_buffer.clone();
                }
                if !self.data.is_empty() {
                    events.push(self.data.join("\n"));
                    self.data.clear();
                    self.data_len = 0;
                }
            } else if let Some(rest) = line.strip_prefix("data:") {
                let rest = rest.strip_prefix(' ').unwrap_or(rest);
                self.data_len += rest.len();
                self.data.push(rest.to_owned());
            } else if let Some(rest) = line.strip_prefix("id:") {
                let rest = rest.strip_prefix(' ').unwrap_or(rest);
                // An id with NUL is ignored; a long one is not one of ours to echo.
                if !rest.contains('\0') && rest.len() <= MAX_EVENT_ID_BYTES {
                    self.id_buffer = Some(rest.to_owned());
                }
            } else if let Some(rest) = line.strip_prefix("retry:") {
                let rest = rest.strip_prefix(' ').unwrap_or(rest);
                if !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_digit()) {
                    self.retry = rest.parse().ok();
                }
            }
            start = end + 1;
            self.scanned = start;
        }
        self.buffer.drain(..start);
        // What is left has no line end yet; the next feed searches only new bytes.
        self.scanned = self.buffer.len();
        if self.buffer.len() + self.data_len > MAX_EVENT_BYTES {
            return Err(format!(
                "an event of the response stream exceeds {MAX_EVENT_BYTES} bytes"
            ));
        }
        Ok(events)
    }

    /// The id of the last event read (`Last-Event-ID` on a reconnection);
    /// an empty `id:` means none, as in WHATWG's rules.
    pub fn last_event_id(&self) -> Option<&str> {
        self.last_event_id.as_deref().filter(|id| !id.is_empty())
    }

    /// Forgets an event the connection broke in the middle of (WHATWG: an
    /// incomplete event is discarded), its `id:` included.
    pub fn discard_pending(&mut self) {
        self.buffer.clear();
        self.scanned = 0;
        self.data.clear();
        self.data_len = 0;
        self.id_buffer = self.last_event_id.clone();
    }

    /// The reconnection time the server asked for, in milliseconds.
    pub fn retry_ms(&self) -> Option<u64> {
        self.retry
    }

    /// A parser for the stream's next connection: it keeps the last event
    /// id and the retry time.
    pub fn reconnected(&self) -> Self {
        Self {
            last_event_id: self.last_event_id.clone(),
            id_buffer: self.last_event_id.clone(),
            retry: self.retry,
            ..Self::default()
        }
    }

    /// The data of a last event not followed by a blank line.
    pub fn finish(mut self) -> Option<String> {
        let mut tail = self.feed(b"\n").unwrap_or_default();
        if !self.data.is_empty() {
            tail.push(self.data.join("\n"));
        }
        tail.pop()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn events_split_across_chunks() {
        let mut p = SseParser::default();
        assert!(p.feed(b"event: message\ndata: {\"a\"").unwrap().is_empty());
        assert_eq!(
            p.feed(b":1}\n\n: comment\n\ndata: x\r\n\r\n").unwrap(),
            vec!["{\"a\":1}", "x"]
        );
        assert!(p.feed(b"data: tail").unwrap().is_empty());
        assert_eq!(p.finish().as_deref(), Some("tail"));
    }

    /// WHATWG SSE: the last event ID is set when an event is dispatched, also
    /// one with no data; `retry` is taken only when it is all ASCII digits.
    #[test]
    fn the_last_event_id_and_retry_are_kept_for_a_reconnection() {
        let mut p = SseParser::default();
        // An empty `data:` line is an event with empty data, as in browsers.
        assert_eq!(
            p.feed(b"id: s.0\nretry: 500\ndata: \n\n").unwrap(),
            vec![""]
        );
        assert_eq!((p.last_event_id(), p.retry_ms()), (Some("s.0"), Some(500)));
        assert_eq!(
            p.feed(b"id: s.1\nretry: 5x\ndata: a\n").unwrap(),
            Vec::<String>::new()
        );
        assert_eq!(p.last_event_id(), Some("s.0"), "not until the event ends");
        assert_eq!(p.feed(b"\n").unwrap(), vec!["a"]);
        assert_eq!((p.last_event_id(), p.retry_ms()), (Some("s.1"), Some(500)));
        let q = p.reconnected();
        assert_eq!((q.last_event_id(), q.retry_ms()), (Some("s.1"), Some(500)));
        assert!(p.feed(b"id: a\0b\n\n").unwrap().is_empty());
        assert_eq!(p.last_event_id(), Some("s.1"));
        // An event cut off by a broken connection does not count, nor its id.
        assert!(p.feed(b"id: s.2\ndata: {\"partial").unwrap().is_empty());
        p.discard_pending();
        assert!(p.feed(b"\n\n").unwrap().is_empty());
        assert_eq!(p.last_event_id(), Some("s.1"));
        // An empty id means none.
        assert!(p.feed(b"id:\n\n").unwrap().is_empty());
        assert_eq!(p.last_event_id(), None);
    }

    #[test]
    fn an_endless_line_is_refused() {
        let mut p = SseParser::default();
        let chunk = vec![b'x'; 1024 * 1024];
        let mut refused = false;
        for _ in 0..20 {
            if p.feed(&chunk).is_err() {
                refused = true;
                break;
            }
        }
        assert!(refused);
    }
}

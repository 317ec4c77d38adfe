//! Reading a `text/event-stream` body: the `data` of each event, as bytes
//! arrive in any chunks. Sans-I/O: the transport feeds it what it read.

/// Largest event (or unterminated line) accepted from a server.
pub const MAX_EVENT_BYTES: usize = 16 * 1024 * 1024;

/// Splits an SSE byte stream into the `data` payloads of its events
/// (`event:`, `id:`, `retry:` and comments are skipped).
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
                if !self.data.is_empty() {
                    events.push(self.data.join("\n"));
                    self.data.clear();
                    self.data_len = 0;
                }
            } else if let Some(rest) = line.strip_prefix("data:") {
                let rest = rest.strip_prefix(' ').unwrap_or(rest);
                self.data_len += rest.len();
                self.data.push(rest.to_owned());
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

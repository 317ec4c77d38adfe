//! Reading a `text/event-stream` response: events until the final response.

/// Splits an SSE byte stream into the `data` payloads of its events.
#[derive(Default)]
pub(crate) struct SseParser {
    buffer: Vec<u8>,
    data: Vec<String>,
}

impl SseParser {
    /// Feeds bytes; returns the data of every event completed by them.
    pub(crate) fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        self.buffer.extend_from_slice(bytes);
        let mut events = Vec::new();
        while let Some(pos) = self.buffer.iter().position(|&b| b == b'\n') {
            let line: Vec<u8> = self.buffer.drain(..=pos).collect();
            let line = String::from_utf8_lossy(&line);
            let line = line.trim_end_matches(['\n', '\r']);
            if line.is_empty() {
                if !self.data.is_empty() {
                    events.push(self.data.join("\n"));
                    self.data.clear();
                }
            } else if let Some(rest) = line.strip_prefix("data:") {
                self.data
                    .push(rest.strip_prefix(' ').unwrap_or(rest).to_owned());
            }
        }
        events
    }

    /// The data of a last event not followed by a blank line.
    pub(crate) fn finish(mut self) -> Option<String> {
        let mut tail = self.feed(b"\n");
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
        assert!(p.feed(b"event: message\ndata: {\"a\"").is_empty());
        assert_eq!(
            p.feed(b":1}\n\n: comment\n\ndata: x\r\n\r\n"),
            vec!["{\"a\":1}", "x"]
        );
        assert!(p.feed(b"data: tail").is_empty());
        assert_eq!(p.finish().as_deref(), Some("tail"));
    }
}

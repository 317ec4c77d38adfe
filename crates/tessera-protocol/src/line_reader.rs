//! Reading newline-delimited messages (the stdio framing) without ever
//! holding more than one line's limit (feature `lines`).

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// One read from the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line's bytes, without its newline (and a trailing `\r`, if any).
    Message(Vec<u8>),
    /// A line longer than the limit, discarded; how many bytes it had.
    TooLong(usize),
    /// End of input.
    End,
}

/// Reads lines of at most `max` bytes; longer ones are skipped, not buffered.
///
/// Cancel-safe: a read dropped halfway (in `select!`) loses nothing; the
/// part of a line already read is kept for the next call.
pub struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
    /// The line read so far.
    line: Vec<u8>,
    /// Bytes of an over-long line seen so far (nothing of it is kept).
    skipped: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Reads from `reader`, refusing lines over `max` bytes.
    pub fn new(reader: R, max: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(64 * 1024, reader),
            max,
            line: Vec::new(),
            skipped: 0,
        }
    }

    /// The next line, skipping blank ones.
    pub async fn next(&mut self) -> std::io::Result<Line> {
        loop {
            match self.next_raw().await? {
                Line::Message(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => continue,
                other => return Ok(other),
            }
        }
    }

    async fn next_raw(&mut self) -> std::io::Result<Line> {
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                return Ok(self.take(true));
            }
            let (chunk, consumed, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], i + 1, true),
                None => (buf, buf.len(), false),
            };
            if self.skipped == 0 && self.line.len() + chunk.len() <= self.max {
                self.line.extend_from_slice(chunk);
            } else {
                self.skipped += self.line.len() + chunk.len();
                self.line = Vec::new();
            }
            self.inner.consume(consumed);
            if done {
                return Ok(self.take(false));
            }
        }
    }

    /// The line read so far, as a result; `at_end` when the input ended.
    fn take(&mut self, at_end: bool) -> Line {
        let mut line = std::mem::take(&mut self.line);
        match std::mem::take(&mut self.skipped) {
            0 if at_end && line.is_empty() => Line::End,
            0 => {
                if line.last() == Some(&b'\r') {
                    line.pop();
                }
                Line::Message(line)
            }
            n => Line::TooLong(n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    async fn lines(input: &[u8], max: usize) -> Vec<Line> {
        let mut reader = LineReader::new(input, max);
        let mut out = Vec::new();
        loop {
            let line = reader.next().await.unwrap();
            let end = line == Line::End;
            out.push(line);
            if end {
                return out;
            }
        }
    }

    #[test]
    fn splits_on_newlines_skips_blank_lines_and_keeps_a_last_unterminated_line() {
        assert_eq!(
            block_on(lines(b"{\"a\":1}\n\n  \r\n{\"b\":2}\r\n{\"c\":3}", 100)),
            vec![
                Line::Message(b"{\"a\":1}".to_vec()),
                Line::Message(b"{\"b\":2}".to_vec()),
                Line::Message(b"{\"c\":3}".to_vec()),
                Line::End
            ]
        );
    }

    #[test]
    fn an_over_long_line_is_reported_with_its_length_and_reading_goes_on() {
        let mut input = vec![b'x'; 300];
        input.extend_from_slice(b"\nok\n");
        input.extend(vec![b'y'; 50]);
        assert_eq!(
            block_on(lines(&input, 40)),
            vec![
                Line::TooLong(300),
                Line::Message(b"ok".to_vec()),
                Line::TooLong(50),
                Line::End
            ]
        );
    }
}

#[cfg(test)]
mod cancel_safety {
    use super::*;
    use tokio::io::AsyncWriteExt;

    #[test]
    fn a_read_dropped_halfway_loses_nothing() {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(async {
                let (mut w, r) = tokio::io::duplex(1024);
                let mut reader = LineReader::new(r, 1000);
                w.write_all(b"{\"half\":").await.unwrap();
                // The read gives up before the line is complete, as in a select! whose other branch won.
                let early =
                    tokio::time::timeout(std::time::Duration::from_millis(50), reader.next()).await;
                assert!(early.is_err());
                w.write_all(b"1}\n").await.unwrap();
                assert_eq!(
                    reader.next().await.unwrap(),
                    Line::Message(b"{\"half\":1}".to_vec())
                );
            });
    }
}

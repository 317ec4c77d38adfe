//! Reading newline-delimited messages without ever holding more than one line's limit.

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

/// One read from the input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Line {
    /// A line's bytes, without its newline (and a trailing `\r`, if any).
    Message(Vec<u8>),
    /// A line longer than the limit, discarded; how many bytes it had.
    TooLong(usize),
    /// End of input.
    End,
}

/// Reads lines of at most `max` bytes; longer ones are skipped, not buffered.
pub(crate) struct LineReader<R> {
    inner: BufReader<R>,
    max: usize,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    pub(crate) fn new(reader: R, max: usize) -> Self {
        Self {
            inner: BufReader::with_capacity(64 * 1024, reader),
            max,
        }
    }

    /// The next line, skipping blank ones.
    pub(crate) async fn next(&mut self) -> std::io::Result<Line> {
        loop {
            match self.next_raw().await? {
                Line::Message(bytes) if bytes.iter().all(u8::is_ascii_whitespace) => continue,
                other => return Ok(other),
            }
        }
    }

    async fn next_raw(&mut self) -> std::io::Result<Line> {
        let mut line = Vec::new();
        // Bytes of an over-long line seen so far (nothing of it is kept).
        let mut skipped = 0usize;
        loop {
            let buf = self.inner.fill_buf().await?;
            if buf.is_empty() {
                return Ok(match (skipped, line.is_empty()) {
                    (0, true) => Line::End,
                    (0, false) => Line::Message(trim_cr(line)),
                    (n, _) => Line::TooLong(n),
                });
            }
            let (chunk, consumed, done) = match buf.iter().position(|&b| b == b'\n') {
                Some(i) => (&buf[..i], i + 1, true),
                None => (buf, buf.len(), false),
            };
            if skipped == 0 && line.len() + chunk.len() <= self.max {
                line.extend_from_slice(chunk);
            } else {
                skipped += line.len() + chunk.len();
                line = Vec::new();
            }
            self.inner.consume(consumed);
            if done {
                return Ok(match skipped {
                    0 => Line::Message(trim_cr(line)),
                    n => Line::TooLong(n),
                });
            }
        }
    }
}

fn trim_cr(mut line: Vec<u8>) -> Vec<u8> {
    if line.last() == Some(&b'\r') {
        line.pop();
    }
    line
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[tokio::test]
    async fn splits_on_newlines_skips_blank_lines_and_keeps_a_last_unterminated_line() {
        assert_eq!(
            lines(b"{\"a\":1}\n\n  \r\n{\"b\":2}\r\n{\"c\":3}", 100).await,
            vec![
                Line::Message(b"{\"a\":1}".to_vec()),
                Line::Message(b"{\"b\":2}".to_vec()),
                Line::Message(b"{\"c\":3}".to_vec()),
                Line::End
            ]
        );
    }

    #[tokio::test]
    async fn an_over_long_line_is_reported_with_its_length_and_reading_goes_on() {
        let mut input = vec![b'x'; 300];
        input.extend_from_slice(b"\nok\n");
        input.extend(vec![b'y'; 50]);
        assert_eq!(
            lines(&input, 40).await,
            vec![
                Line::TooLong(300),
                Line::Message(b"ok".to_vec()),
                Line::TooLong(50),
                Line::End
            ]
        );
    }
}

//! Newline-delimited messages, the stdio framing, for both ends: tokio-util's
//! delimiter codec with a maximum length, read without ever holding more
//! than one line's limit.

use std::io;
use std::pin::Pin;

use bytes::{Bytes, BytesMut};
use futures_core::Stream;
use tokio::io::AsyncRead;
use tokio_util::codec::{AnyDelimiterCodec, AnyDelimiterCodecError, Decoder, FramedRead};

/// One read from the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Line {
    /// A line's bytes, without its newline (and a trailing `\r`, if any).
    Message(Bytes),
    /// A line longer than the limit, discarded as it arrived.
    TooLong,
    /// End of input.
    End,
}

/// Reads lines of at most `max` bytes; longer ones are skipped, not
/// buffered, and reading goes on after them. Blank lines are skipped.
///
/// Cancel-safe: a read dropped halfway (in `select!`) loses nothing.
///
/// ```
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// use tessera_tokio::{Line, LineReader};
///
/// let mut lines = LineReader::new(&b"{\"a\":1}\r\n\n{\"b\":2}"[..], 100);
/// assert_eq!(lines.next().await.unwrap(), Line::Message("{\"a\":1}".into()));
/// assert_eq!(lines.next().await.unwrap(), Line::Message("{\"b\":2}".into()));
/// assert_eq!(lines.next().await.unwrap(), Line::End);
/// # });
/// ```
pub struct LineReader<R> {
    framed: FramedRead<R, LineCodec>,
}

impl<R: AsyncRead + Unpin> LineReader<R> {
    /// Reads from `reader`, refusing lines over `max` bytes.
    pub fn new(reader: R, max: usize) -> Self {
        let codec = LineCodec(AnyDelimiterCodec::new_with_max_length(
            b"\n".to_vec(),
            Vec::new(),
            max,
        ));
        Self {
            framed: FramedRead::with_capacity(reader, codec, max.min(64 * 1024)),
        }
    }

    /// The next line.
    pub async fn next(&mut self) -> io::Result<Line> {
        let next = std::future::poll_fn(|cx| Pin::new(&mut self.framed).poll_next(cx)).await;
        next.unwrap_or(Ok(Line::End))
    }
}

/// The delimiter codec, with an over-long line as an item instead of an
/// error (an error would end the stream) and blank lines skipped.
struct LineCodec(AnyDelimiterCodec);

impl LineCodec {
    fn sort(
        &mut self,
        decoded: Result<Option<Bytes>, AnyDelimiterCodecError>,
    ) -> Result<Option<Option<Line>>, io::Error> {
        match decoded {
            Ok(Some(mut line)) => {
                if line.last() == Some(&b'\r') {
                    line.truncate(line.len() - 1);
                }
                if line.iter().all(u8::is_ascii_whitespace) {
                    return Ok(Some(None));
                }
                Ok(Some(Some(Line::Message(line))))
            }
            Ok(None) => Ok(None),
            Err(AnyDelimiterCodecError::MaxChunkLengthExceeded) => Ok(Some(Some(Line::TooLong))),
            Err(AnyDelimiterCodecError::Io(e)) => Err(e),
        }
    }
}

impl LineCodec {
    /// The next line in `buf` (the last one too when `at_end`).
    fn next_line(&mut self, buf: &mut BytesMut, at_end: bool) -> io::Result<Option<Line>> {
        loop {
            let decoded = if at_end {
                self.0.decode_eof(buf)
            } else {
                self.0.decode(buf)
            };
            match self.sort(decoded)? {
                Some(Some(line)) => return Ok(Some(line)),
                Some(None) => continue,
                None => return Ok(None),
            }
        }
    }
}

impl Decoder for LineCodec {
    type Item = Line;
    type Error = io::Error;

    fn decode(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        self.next_line(buf, false)
    }

    fn decode_eof(&mut self, buf: &mut BytesMut) -> io::Result<Option<Line>> {
        self.next_line(buf, true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tokio::io::AsyncWriteExt;

    fn block_on<F: std::future::Future>(f: F) -> F::Output {
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
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
                Line::Message("{\"a\":1}".into()),
                Line::Message("{\"b\":2}".into()),
                Line::Message("{\"c\":3}".into()),
                Line::End
            ]
        );
    }

    #[test]
    fn an_over_long_line_is_reported_and_reading_goes_on() {
        let mut input = vec![b'x'; 300];
        input.extend_from_slice(b"\nok\n");
        input.extend(vec![b'y'; 50]);
        assert_eq!(
            block_on(lines(&input, 40)),
            vec![
                Line::TooLong,
                Line::Message("ok".into()),
                Line::TooLong,
                Line::End
            ]
        );
    }

    #[test]
    fn a_read_dropped_halfway_loses_nothing() {
        block_on(async {
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
                Line::Message("{\"half\":1}".into())
            );
        });
    }
}

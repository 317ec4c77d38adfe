//! This process's standard input, read on a thread of its own.
//!
//! `tokio::io::stdin` reads on the runtime's blocking pool, and a runtime
//! that shuts down waits for its blocking threads: a read of stdin that never
//! returns (the client keeps the pipe open) keeps `#[tokio::main]` from
//! returning after SIGTERM. Here the read runs on a detached thread that hands
//! chunks over a small channel, so the server ends when `serve_stdio` returns
//! and the thread ends with the process.

use std::io::Read;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::{AsyncRead, ReadBuf};
use tokio::sync::mpsc;

/// Bytes read at most per chunk.
const CHUNK: usize = 64 * 1024;

/// Chunks read ahead of the server, at most (the pipe applies back-pressure beyond).
const AHEAD: usize = 4;

/// Standard input as an [`AsyncRead`] that never holds up the runtime's shutdown.
pub(crate) struct DetachedStdin {
    chunks: mpsc::Receiver<std::io::Result<Vec<u8>>>,
    /// The chunk being handed out, and how much of it has been.
    current: Vec<u8>,
    offset: usize,
}

impl DetachedStdin {
    /// Starts the reading thread.
    pub(crate) fn start() -> std::io::Result<Self> {
        let (tx, chunks) = mpsc::channel(AHEAD);
        std::thread::Builder::new()
            .name("tessera-stdin".into())
            .spawn(move || {
                let mut stdin = std::io::stdin().lock();
                loop {
                    let mut buf = vec![0u8; CHUNK];
                    let read = match stdin.read(&mut buf) {
                        Ok(n) => {
                            buf.truncate(n);
                            Ok(buf)
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        Err(e) => Err(e),
                    };
                    let last = !matches!(&read, Ok(b) if !b.is_empty());
                    if tx.blocking_send(read).is_err() || last {
                        return;
                    }
                }
            })?;
        Ok(Self {
            chunks,
            current: Vec::new(),
            offset: 0,
        })
    }
}

impl AsyncRead for DetachedStdin {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<std::io::Result<()>> {
        if self.offset == self.current.len() {
            match self.chunks.poll_recv(cx) {
                Poll::Pending => return Poll::Pending,
                // The thread ended after an error or end of input: end of input.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Ready(Some(Err(e))) => return Poll::Ready(Err(e)),
                Poll::Ready(Some(Ok(chunk))) => {
                    self.current = chunk;
                    self.offset = 0;
                }
            }
        }
        let this = &mut *self;
        let n = buf.remaining().min(this.current.len() - this.offset);
        buf.put_slice(&this.current[this.offset..this.offset + n]);
        this.offset += n;
        Poll::Ready(Ok(()))
    }
}

//! The log written off the request path: each formatted line goes into a
//! bounded queue, and one thread writes the queue to stderr in batches. When
//! the queue is full the line is dropped and counted (the count is logged
//! once the queue has room again) rather than making a request wait.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;

/// Lines waiting to be written, at most.
const QUEUE_LINES: usize = 16 * 1024;

/// Where formatted log lines go (a `tracing_subscriber` writer).
#[derive(Clone)]
pub struct LogQueue {
    tx: SyncSender<Vec<u8>>,
    dropped: Arc<AtomicU64>,
}

/// Keeps the writer thread; dropping it writes what is queued, then stops it.
pub struct LogGuard {
    queue: Option<LogQueue>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        // The subscriber keeps its sender for good: an empty line tells the
        // thread to write what is queued before it, and stop.
        if let Some(queue) = self.queue.take() {
            let _ = queue.tx.send(Vec::new());
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl LogQueue {
    /// A queue and the thread writing it to stderr.
    pub fn to_stderr() -> (Self, LogGuard) {
        let (tx, rx) = sync_channel(QUEUE_LINES);
        let dropped = Arc::new(AtomicU64::new(0));
        let queue = Self {
            tx,
            dropped: Arc::clone(&dropped),
        };
        let thread = std::thread::Builder::new()
            .name("log-writer".into())
            .spawn(move || write_lines(&rx, &dropped))
            .ok();
        let guard = LogGuard {
            queue: Some(queue.clone()),
            thread,
        };
        (queue, guard)
    }
}

fn write_lines(rx: &Receiver<Vec<u8>>, dropped: &AtomicU64) {
    // Not the locked handle: `eprintln!` elsewhere must still get stderr between batches.
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stderr());
    let mut reported = 0;
    while let Ok(line) = rx.recv() {
        if line.is_empty() {
            break;
        }
        let _ = out.write_all(&line);
        // Whatever else is queued goes in the same write.
        while let Ok(more) = rx.try_recv() {
            if more.is_empty() {
                let _ = out.flush();
                return;
            }
            let _ = out.write_all(&more);
        }
        let lost = dropped.load(Ordering::Relaxed);
        if lost != reported {
            let _ = writeln!(
                out,
                "log: {} lines dropped because the log could not keep up",
                lost - reported
            );
            reported = lost;
        }
        let _ = out.flush();
    }
    let _ = out.flush();
}

/// One log line being formatted; queued when the formatter is done with it.
pub struct QueuedLine<'a> {
    queue: &'a LogQueue,
    line: Vec<u8>,
}

impl Write for QueuedLine<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.line.extend_from_slice(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Drop for QueuedLine<'_> {
    fn drop(&mut self) {
        if self.line.is_empty() {
            return;
        }
        match self.queue.tx.try_send(std::mem::take(&mut self.line)) {
            Ok(()) | Err(TrySendError::Disconnected(_)) => {}
            Err(TrySendError::Full(_)) => {
                self.queue.dropped.fetch_add(1, Ordering::Relaxed);
            }
        }
    }
}

impl<'a> tracing_subscriber::fmt::MakeWriter<'a> for LogQueue {
    type Writer = QueuedLine<'a>;

    fn make_writer(&'a self) -> Self::Writer {
        QueuedLine {
            queue: self,
            line: Vec::with_capacity(256),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_queue_drops_and_counts_instead_of_waiting() {
        let (tx, rx) = sync_channel(2);
        let queue = LogQueue {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
        };
        for i in 0..5 {
            let mut line = tracing_subscriber::fmt::MakeWriter::make_writer(&queue);
            write!(line, "line {i}").unwrap();
        }
        assert_eq!(queue.dropped.load(Ordering::Relaxed), 3);
        assert_eq!(rx.try_recv().unwrap(), b"line 0");
        assert_eq!(rx.try_recv().unwrap(), b"line 1");
        assert!(rx.try_recv().is_err());
    }
}

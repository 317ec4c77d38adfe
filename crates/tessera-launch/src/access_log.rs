//! The log written off the request path: each formatted line, and each
//! request's access record (formatted there, not on the request's thread),
//! goes into a bounded queue, and one thread writes the queue to stderr in
//! batches. When the queue is full the entry is dropped and counted (the count
//! is logged once the queue has room again) rather than making a request wait.

use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender, TrySendError, sync_channel};
use std::thread::JoinHandle;

/// Lines waiting to be written, at most.
const QUEUE_LINES: usize = 16 * 1024;

/// After writing a batch the writer rests this long before it takes the next,
/// so under load it wakes ~100 times a second, not once per request (each wake
/// costs a futex call on the request's thread and a context switch). The first
/// line after a quiet spell is written at once.
const BATCH_INTERVAL: std::time::Duration = std::time::Duration::from_millis(10);

/// What the writer thread receives.
enum Entry {
    /// A line `tracing` formatted.
    Line(Vec<u8>),
    /// A request's record, formatted by the writer.
    Access(tessera_http::AccessRecord),
    /// Write what came before, then stop.
    Stop,
}

/// Where log lines and access records go (a `tracing_subscriber` writer and an access log).
#[derive(Clone)]
pub(crate) struct LogQueue {
    tx: SyncSender<Entry>,
    dropped: Arc<AtomicU64>,
}

/// Keeps the writer thread; dropping it writes what is queued, then stops it.
pub(crate) struct LogGuard {
    queue: Option<LogQueue>,
    thread: Option<JoinHandle<()>>,
}

impl Drop for LogGuard {
    fn drop(&mut self) {
        // The subscriber keeps its sender for good: an empty line tells the
        // thread to write what is queued before it, and stop.
        if let Some(queue) = self.queue.take() {
            let _ = queue.tx.send(Entry::Stop);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl LogQueue {
    /// A queue and the thread writing it to stderr.
    pub(crate) fn to_stderr() -> (Self, LogGuard) {
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

fn write_lines(rx: &Receiver<Entry>, dropped: &AtomicU64) {
    // Not the locked handle: `eprintln!` elsewhere must still get stderr between batches.
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stderr());
    let mut reported = 0;
    let write = |out: &mut std::io::BufWriter<std::io::Stderr>, entry: Entry| -> bool {
        match entry {
            Entry::Line(line) => {
                let _ = out.write_all(&line);
            }
            Entry::Access(record) => {
                let _ = write_access(out, &record);
            }
            Entry::Stop => return false,
        }
        true
    };
    while let Ok(entry) = rx.recv() {
        if !write(&mut out, entry) {
            break;
        }
        // Whatever else is queued goes in the same write.
        let mut stop = false;
        while let Ok(more) = rx.try_recv() {
            if !write(&mut out, more) {
                stop = true;
                break;
            }
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
        if stop {
            return;
        }
        std::thread::sleep(BATCH_INTERVAL);
    }
    let _ = out.flush();
}

/// One access line, in the shape of the `tracing` line it replaces.
fn write_access(out: &mut impl Write, r: &tessera_http::AccessRecord) -> std::io::Result<()> {
    write!(out, "{}", tessera_protocol::Rfc3339::micros(r.at))?;
    write!(
        out,
        "  INFO tessera_http::stream: request finished method={} target={} id={} status={} outcome={}",
        r.method, r.target, r.id, r.status, r.outcome
    )?;
    if let Some(code) = r.code {
        write!(out, " code={code}")?;
    }
    writeln!(out, " latency_us={}", r.latency.as_micros())
}

impl tessera_http::AccessLog for LogQueue {
    fn record(&self, record: tessera_http::AccessRecord) {
        if let Err(TrySendError::Full(_)) = self.tx.try_send(Entry::Access(record)) {
            self.dropped.fetch_add(1, Ordering::Relaxed);
        }
    }
}

/// One log line being formatted; queued when the formatter is done with it.
pub(crate) struct QueuedLine<'a> {
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
        match self
            .queue
            .tx
            .try_send(Entry::Line(std::mem::take(&mut self.line)))
        {
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
        for expected in [&b"line 0"[..], b"line 1"] {
            match rx.try_recv().unwrap() {
                Entry::Line(l) => assert_eq!(l, expected),
                _ => panic!("a line"),
            }
        }
        assert!(rx.try_recv().is_err());
    }

    #[test]
    fn access_lines_look_like_the_tracing_line_they_replace() {
        let mut out = Vec::new();
        let record = tessera_http::AccessRecord {
            method: "tools/call".into(),
            target: "increase-counter".into(),
            id: "7".into(),
            status: 200,
            outcome: "input_required",
            code: None,
            latency: std::time::Duration::from_micros(123),
            at: std::time::UNIX_EPOCH + std::time::Duration::from_micros(1_796_078_096_123_456),
        };
        write_access(&mut out, &record).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "2026-11-30T22:34:56.123456Z  INFO tessera_http::stream: request finished method=tools/call target=increase-counter id=7 status=200 outcome=input_required latency_us=123\n"
        );
    }
}

//! Everything the server writes: one writer, one message per line, nothing else on the stream.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::{OwnedSemaphorePermit, Semaphore, mpsc};

/// Bytes queued and not yet written, at most; past this, senders wait and
/// notifications are dropped (and counted). A message larger than the whole
/// budget takes all of it.
const QUEUED_BYTES: usize = 16 * 1024 * 1024;

/// A message and its share of the byte budget, returned once written.
type Queued = (Vec<u8>, OwnedSemaphorePermit);

/// A handle for queueing messages to the writer.
#[derive(Clone)]
pub(crate) struct Outbox {
    tx: mpsc::UnboundedSender<Queued>,
    budget: Arc<Semaphore>,
    dropped: Arc<AtomicU64>,
}

/// The permits a message of `len` bytes takes.
fn cost(len: usize) -> u32 {
    u32::try_from(len.clamp(1, QUEUED_BYTES)).unwrap_or(u32::MAX)
}

impl Outbox {
    /// Starts the writer task on `writer`; it ends when every handle is dropped,
    /// or when writing fails (the client closed its end).
    pub(crate) fn start<W>(writer: W) -> (Self, tokio::task::JoinHandle<std::io::Result<()>>)
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::unbounded_channel();
        let task = tokio::spawn(write_all(writer, rx));
        let outbox = Self {
            tx,
            budget: Arc::new(Semaphore::new(QUEUED_BYTES)),
            dropped: Arc::new(AtomicU64::new(0)),
        };
        (outbox, task)
    }

    /// Queues a serialised message (a response or a request), waiting for room in the budget.
    pub(crate) async fn send(&self, message: Vec<u8>) {
        let Ok(permit) = Arc::clone(&self.budget)
            .acquire_many_owned(cost(message.len()))
            .await
        else {
            return;
        };
        // A closed writer means the output is gone: nothing more can reach the client.
        let _ = self.tx.send((message, permit));
    }

    /// Queues a message as JSON.
    pub(crate) async fn send_value(&self, message: &Value) {
        self.send(serde_json::to_vec(message).unwrap_or_default())
            .await;
    }

    /// Queues a notification without waiting: when the client is not reading,
    /// notifications are dropped and counted rather than holding up requests.
    pub(crate) fn notify(&self, message: &Value) {
        let bytes = serde_json::to_vec(message).unwrap_or_default();
        let queued = Arc::clone(&self.budget)
            .try_acquire_many_owned(cost(bytes.len()))
            .ok()
            .is_some_and(|permit| self.tx.send((bytes, permit)).is_ok());
        if !queued {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_power_of_two() {
                tracing::warn!(
                    dropped = n,
                    "stdout is not being read fast enough: notifications dropped"
                );
            }
        }
    }

    /// Completes when the writer has stopped (the output is closed).
    pub(crate) async fn closed(&self) {
        self.tx.closed().await;
    }
}

async fn write_all<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::UnboundedReceiver<Queued>,
) -> std::io::Result<()> {
    while let Some((mut message, permit)) = rx.recv().await {
        // Compact JSON has no raw newline: the message is one line.
        message.push(b'\n');
        writer.write_all(&message).await?;
        drop(permit);
        // Write what is queued together, then flush once.
        while let Ok((mut more, permit)) = rx.try_recv() {
            more.push(b'\n');
            writer.write_all(&more).await?;
            drop(permit);
        }
        writer.flush().await?;
    }
    writer.flush().await
}

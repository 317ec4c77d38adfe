//! Everything the server writes: one writer, one message per line, nothing else on the stream.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;
use tokio::io::{AsyncWrite, AsyncWriteExt};
use tokio::sync::mpsc;

/// Messages waiting to be written; past this, notifications are dropped (and counted).
const QUEUE: usize = 1024;

/// A handle for queueing messages to the writer.
#[derive(Clone)]
pub(crate) struct Outbox {
    tx: mpsc::Sender<Vec<u8>>,
    dropped: Arc<AtomicU64>,
}

impl Outbox {
    /// Starts the writer task on `writer`; it ends when every handle is dropped.
    pub(crate) fn start<W>(writer: W) -> (Self, tokio::task::JoinHandle<std::io::Result<()>>)
    where
        W: AsyncWrite + Unpin + Send + 'static,
    {
        let (tx, rx) = mpsc::channel(QUEUE);
        let task = tokio::spawn(write_all(writer, rx));
        let outbox = Self {
            tx,
            dropped: Arc::new(AtomicU64::new(0)),
        };
        (outbox, task)
    }

    /// Queues a serialised message (a response or a request), waiting for room.
    pub(crate) async fn send(&self, message: Vec<u8>) {
        // A closed writer means the output is gone: nothing more can reach the client.
        let _ = self.tx.send(message).await;
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
        if self.tx.try_send(bytes).is_err() {
            let n = self.dropped.fetch_add(1, Ordering::Relaxed) + 1;
            if n.is_power_of_two() {
                tracing::warn!(
                    dropped = n,
                    "stdout is not being read fast enough: notifications dropped"
                );
            }
        }
    }
}

async fn write_all<W: AsyncWrite + Unpin>(
    mut writer: W,
    mut rx: mpsc::Receiver<Vec<u8>>,
) -> std::io::Result<()> {
    while let Some(mut message) = rx.recv().await {
        // Compact JSON has no raw newline: the message is one line.
        message.push(b'\n');
        writer.write_all(&message).await?;
        // Write what is queued together, then flush once.
        while let Ok(mut more) = rx.try_recv() {
            more.push(b'\n');
            writer.write_all(&more).await?;
        }
        writer.flush().await?;
    }
    writer.flush().await
}

//! An initialize-era session's standalone stream: the server's changes it
//! wants, in the old shape.
//!
//! Changes arrive from the bus synchronously; whether the session wants one
//! may take a look in a shared store (its subscriptions), so they wait in a
//! bounded queue and are decided one by one, in order. A stream that falls
//! [`MAX_QUEUED_CHANGES`] behind is ended (the client opens it again), so a
//! slow store never holds an unbounded backlog.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use event_listener::Event;

use crate::latch::{Latch, before, first_of};
use crate::{BoxFuture, BusEvent, Change, McpServer, NotificationSink};

/// Changes one stream may have waiting for a decision: 1024.
pub const MAX_QUEUED_CHANGES: usize = 1024;

/// Whether a stream wants a change.
pub enum Wanted {
    /// Send it.
    Yes,
    /// Leave it out.
    No,
    /// Send it if this completes with `true` (e.g. the session's
    /// subscriptions, read from a shared store).
    Ask(BoxFuture<'static, bool>),
}

/// Changes waiting for their decision.
#[derive(Default)]
struct Queue {
    changes: Mutex<VecDeque<Change>>,
    arrived: Event,
}

impl Queue {
    fn lock(&self) -> std::sync::MutexGuard<'_, VecDeque<Change>> {
        self.changes.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl McpServer {
    /// Sends every change `wanted` accepts to `sink` as the initialize era's
    /// notification (`notifications/tools/list_changed`,
    /// `notifications/resources/updated`, …), in the order they happened,
    /// until the server shuts down, its change bus is lost, or the stream
    /// falls [`MAX_QUEUED_CHANGES`] behind; dropping the future ends it sooner.
    pub async fn forward_changes(
        &self,
        wanted: impl Fn(&Change) -> Wanted + Send + Sync + 'static,
        sink: NotificationSink,
    ) {
        let lost = Arc::new(Latch::default());
        let queue = Arc::new(Queue::default());
        let listener = {
            let (lost, queue) = (Arc::clone(&lost), Arc::clone(&queue));
            Arc::new(move |event: BusEvent<'_>| match event {
                // Task notifications belong to 2026-07-28 listeners that asked for them.
                BusEvent::Change(Change::TaskStatus { .. }) => {}
                BusEvent::Change(change) => {
                    let mut changes = queue.lock();
                    if changes.len() >= MAX_QUEUED_CHANGES {
                        tracing::warn!(
                            "a session's standalone stream fell {MAX_QUEUED_CHANGES} changes behind; it is ended and the client listens again"
                        );
                        lost.set();
                    } else {
                        changes.push_back(change.clone());
                        queue.arrived.notify(1);
                    }
                }
                BusEvent::Lost => lost.set(),
            })
        };
        let subscription = self.bus.subscribe(listener);
        let over = || first_of(self.ending.wait(), lost.wait());
        loop {
            let arrived = queue.arrived.listen();
            let next = queue.lock().pop_front();
            let Some(change) = next else {
                first_of(over(), arrived).await;
                if self.ending.is_set() || lost.is_set() {
                    break;
                }
                continue;
            };
            let send = match wanted(&change) {
                Wanted::Yes => true,
                Wanted::No => false,
                Wanted::Ask(answer) => match before(answer, over()).await {
                    Some(send) => send,
                    None => break,
                },
            };
            if send {
                sink.send(change.legacy_notification());
            }
        }
        drop(subscription);
    }
}

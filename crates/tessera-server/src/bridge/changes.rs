//! An initialize-era session's standalone stream: the server's changes it
//! wants, in the old shape.

use std::sync::Arc;

use crate::latch::{Latch, first_of};
use crate::{BusEvent, Change, McpServer, NotificationSink};

impl McpServer {
    /// Sends every change `wanted` accepts to `sink` as the initialize era's
    /// notification (`notifications/tools/list_changed`,
    /// `notifications/resources/updated`, …) until the server shuts down or
    /// its change bus is lost; dropping the future ends it sooner.
    pub async fn forward_changes(
        &self,
        wanted: impl Fn(&Change) -> bool + Send + Sync + 'static,
        sink: NotificationSink,
    ) {
        let lost = Arc::new(Latch::default());
        let listener = {
            let lost = Arc::clone(&lost);
            Arc::new(move |event: BusEvent<'_>| match event {
                BusEvent::Change(change) if wanted(change) => {
                    sink.send(change.legacy_notification());
                }
                BusEvent::Change(_) => {}
                BusEvent::Lost => lost.set(),
            })
        };
        let subscription = self.bus.subscribe(listener);
        first_of(self.ending.wait(), lost.wait()).await;
        drop(subscription);
    }
}

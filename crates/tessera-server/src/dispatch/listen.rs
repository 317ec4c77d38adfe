//! `subscriptions/listen`: acknowledge what will be sent, forward matching
//! changes from the bus, and end with a result when the server shuts down or
//! the bus is lost (the client's disconnect or cancellation drops it sooner).

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tessera_protocol::{
    SUBSCRIPTION_ID_KEY, SubscriptionFilter, SubscriptionsListenResult,
    SubscriptionsListenResultMeta,
};

use super::handled::{Json, serialisation_failed};

/// Task ids one `subscriptions/listen` may follow: 64 (the tasks one caller
/// may have unfinished); past it, the acknowledgement names the first 64.
pub const MAX_LISTENED_TASKS: usize = 64;
use super::{Incoming, take};
use crate::{BusEvent, McpServer, ServerError};

impl McpServer {
    pub(super) async fn listen(
        &self,
        mut params: Option<Value>,
        incoming: Incoming,
    ) -> Result<Json, ServerError> {
        let asked: SubscriptionFilter = match take(&mut params, "notifications") {
            Some(v @ Value::Object(_)) => serde_json::from_value(v).map_err(|e| {
                ServerError::invalid_params(format!(
                    "Invalid subscriptions/listen params: notifications: {e}"
                ))
            })?,
            Some(_) => {
                return Err(ServerError::invalid_params(
                    "Invalid subscriptions/listen params: notifications must be an object",
                ));
            }
            None => {
                return Err(ServerError::invalid_params(
                    "Invalid subscriptions/listen params: notifications is required (the filter of what to receive)",
                ));
            }
        };
        // The tasks extension: a listener asking for task notifications
        // must declare it (the extension page: -32021 naming it).
        if asked.task_ids.as_ref().is_some_and(|ids| !ids.is_empty())
            && !super::tasks::declared_tasks(&incoming)
        {
            return Err(super::tasks::tasks_needed(
                "subscriptions/listen for taskIds",
            ));
        }
        let Some(sink) = incoming.facts.notifications.clone() else {
            return Err(ServerError::Internal {
                message: "this transport cannot stream notifications, so it cannot serve subscriptions/listen".into(),
            });
        };
        let agreed = self.agreed(asked);
        let acknowledged = json!(agreed);
        let principal = incoming.facts.principal.clone();
        let id = incoming.id;
        // Registered before the acknowledgement goes out, so no change made in
        // between is missed; held back until it has, so none comes before it.
        let gate = Arc::new(Mutex::new(Gate::Held(Vec::new())));
        let lost = Arc::new(crate::latch::Latch::default());
        let listener = {
            let (id, lost, gate, sink) = (
                id.clone(),
                Arc::clone(&lost),
                Arc::clone(&gate),
                sink.clone(),
            );
            Arc::new(move |event: BusEvent<'_>| match event {
                BusEvent::Change(change)
                    if change.wanted_by(&agreed) && change.visible_to(principal.as_deref()) =>
                {
                    let notification = change.notification(&id);
                    match &mut *lock(&gate) {
                        Gate::Held(queue) => queue.push(notification),
                        Gate::Open => sink.send(notification),
                    }
                }
                BusEvent::Change(_) => {}
                BusEvent::Lost => lost.set(),
            })
        };
        let subscription = self.bus.subscribe(listener);
        {
            let mut gate = lock(&gate);
            sink.send(json!({
                "jsonrpc": "2.0",
                "method": "notifications/subscriptions/acknowledged",
                "params": {"_meta": {SUBSCRIPTION_ID_KEY: id}, "notifications": acknowledged},
            }));
            if let Gate::Held(queue) = std::mem::replace(&mut *gate, Gate::Open) {
                for notification in queue {
                    sink.send(notification);
                }
            }
        }
        crate::latch::first_of(self.ending.wait(), lost.wait()).await;
        drop(subscription);
        let result = SubscriptionsListenResult {
            result_type: tessera_protocol::Complete,
            meta: SubscriptionsListenResultMeta {
                subscription_id: id,
                server_info: Some(self.info.clone()),
                other: Default::default(),
            },
        };
        serde_json::value::to_raw_value(&result)
            .map(Json::Raw)
            .map_err(serialisation_failed)
    }

    /// The part of `asked` this server honours: list changes for what it
    /// has, resource updates when it has resources, and when it keeps tasks
    /// the well-formed task ids (32 hex digits), at most
    /// [`MAX_LISTENED_TASKS`]. Which of those are the caller's is not said
    /// (that would tell which ids exist): only its own tasks are ever sent.
    fn agreed(&self, asked: SubscriptionFilter) -> SubscriptionFilter {
        let yes =
            |wanted: Option<bool>, offered: bool| (wanted == Some(true) && offered).then_some(true);
        let catalog = self.catalog();
        let resources = catalog.has_resources();
        SubscriptionFilter {
            tools_list_changed: yes(asked.tools_list_changed, !catalog.tools.is_empty()),
            prompts_list_changed: yes(asked.prompts_list_changed, !catalog.prompts.is_empty()),
            resources_list_changed: yes(asked.resources_list_changed, resources),
            resource_subscriptions: asked
                .resource_subscriptions
                .filter(|uris| resources && !uris.is_empty()),
            task_ids: asked
                .task_ids
                .map(|ids| {
                    ids.into_iter()
                        .filter(|id| id.len() == 32 && id.bytes().all(|b| b.is_ascii_hexdigit()))
                        .take(MAX_LISTENED_TASKS)
                        .collect::<Vec<_>>()
                })
                .filter(|ids| self.tasks.is_some() && !ids.is_empty()),
        }
    }
}

/// Notifications of a subscription before and after its acknowledgement.
enum Gate {
    /// Not acknowledged yet: changes wait here.
    Held(Vec<Value>),
    /// Acknowledged: changes go straight out.
    Open,
}

fn lock(gate: &Mutex<Gate>) -> std::sync::MutexGuard<'_, Gate> {
    gate.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

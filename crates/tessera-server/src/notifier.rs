//! How application code tells listeners what changed.

use std::sync::Arc;

use crate::{BusError, Change, ChangeBus};

/// Publishes changes to every `subscriptions/listen` stream that asked for
/// them (on every instance sharing the server's bus). Cheap to clone; get one
/// from [`McpServer::notifier`](crate::McpServer::notifier), or in a handler
/// as `State<Notifier>` (every server has it in its application state).
#[derive(Clone)]
pub struct Notifier {
    pub(crate) bus: Arc<dyn ChangeBus>,
}

impl Notifier {
    /// A notifier publishing on `bus` (give the server the same bus:
    /// [`McpServerBuilder::change_bus`](crate::McpServerBuilder::change_bus)),
    /// for handlers that hold it in their application state.
    pub fn new(bus: Arc<dyn ChangeBus>) -> Self {
        Self { bus }
    }

    /// Publishes `change`.
    pub async fn publish(&self, change: Change) -> Result<(), BusError> {
        self.bus.publish(change).await
    }

    /// The resource at `uri` changed.
    pub async fn resource_updated(&self, uri: impl Into<String>) -> Result<(), BusError> {
        self.publish(Change::ResourceUpdated { uri: uri.into() })
            .await
    }

    /// The resource list changed.
    pub async fn resources_list_changed(&self) -> Result<(), BusError> {
        self.publish(Change::ResourcesListChanged).await
    }

    /// The tool list changed.
    pub async fn tools_list_changed(&self) -> Result<(), BusError> {
        self.publish(Change::ToolsListChanged).await
    }

    /// The prompt list changed.
    pub async fn prompts_list_changed(&self) -> Result<(), BusError> {
        self.publish(Change::PromptsListChanged).await
    }
}

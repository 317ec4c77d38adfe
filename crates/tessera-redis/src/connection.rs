//! One Redis deployment: a reconnecting connection for commands, and the client pub/sub opens from.

use std::time::Duration;

use redis::aio::{ConnectionManager, ConnectionManagerConfig};

/// Redis could not be reached or refused a command.
#[derive(Debug, thiserror::Error)]
#[error("Redis: {0}")]
pub struct RedisError(#[from] pub redis::RedisError);

/// A Redis deployment the instances share.
#[derive(Clone)]
pub struct Redis {
    pub(crate) client: redis::Client,
    pub(crate) commands: ConnectionManager,
}

impl Redis {
    /// Connects to `url` (`redis://host:port/db`). Commands time out after a
    /// second and the connection is re-established in the background, so an
    /// outage fails requests quickly instead of holding them.
    pub async fn connect(url: &str) -> Result<Self, RedisError> {
        let client = redis::Client::open(url)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(Duration::from_secs(1)))
            .set_response_timeout(Some(Duration::from_secs(1)))
            .set_number_of_retries(2)
            .set_min_delay(Duration::from_millis(100))
            .set_max_delay(Duration::from_secs(2));
        let commands = ConnectionManager::new_with_config(client.clone(), config).await?;
        Ok(Self { client, commands })
    }

    /// A connection for the application's own commands (it reconnects by itself).
    pub fn connection(&self) -> ConnectionManager {
        self.commands.clone()
    }

    /// The shared ticket ledger, its keys under `tessera:{namespace}:ticket:`.
    pub fn ledger(&self, namespace: &str) -> crate::RedisLedger {
        crate::RedisLedger::new(self.connection(), namespace)
    }

    /// Rate-limit buckets shared by every instance, under `tessera:{namespace}:rate:`
    /// (`RateLimit::in_store`).
    pub fn rate_limits(&self, namespace: &str) -> crate::RedisRateLimits {
        crate::RedisRateLimits::new(self.connection(), namespace)
    }

    /// The relay of initialize-era answers between instances, on channels
    /// `tessera:{namespace}:answers:{instance}`; starts its subscriber task.
    /// Give it to the endpoint (`EndpointOptions::answer_relay`).
    pub fn answer_relay(&self, namespace: &str) -> crate::RedisRelay {
        crate::RedisRelay::start(self, namespace)
    }

    /// The shared task store under `tessera:{namespace}:tasks:`, keeping
    /// tasks under `policy`; starts its subscriber task.
    pub fn task_store(
        &self,
        namespace: &str,
        policy: tessera_server::TaskPolicy,
    ) -> crate::RedisTaskStore {
        crate::RedisTaskStore::start(self, namespace, policy)
    }

    /// The change bus on channel `tessera:{namespace}:changes`; starts its subscriber task.
    pub fn bus(&self, namespace: &str) -> crate::RedisBus {
        crate::RedisBus::start(self, namespace)
    }
}

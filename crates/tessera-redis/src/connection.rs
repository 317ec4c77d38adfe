//! One Redis deployment, a single server or a Redis Cluster: a reconnecting
//! connection for commands, and where pub/sub channels are opened.

use std::time::Duration;

use redis::aio::{ConnectionLike, ConnectionManager, ConnectionManagerConfig};
use redis::cluster::ClusterClientBuilder;
use redis::cluster_async::ClusterConnection;
use redis::{Cmd, Pipeline, RedisFuture, Value};

/// Redis could not be reached or refused a command.
#[derive(Debug, thiserror::Error)]
#[error("Redis: {0}")]
pub struct RedisError(#[from] pub redis::RedisError);

/// How long a command may wait for a connection or an answer: a second, so
/// an outage fails requests quickly instead of holding them.
const TIMEOUT: Duration = Duration::from_secs(1);

/// A Redis deployment the instances share: one server (or a primary with
/// replicas) from [`Redis::connect`], or a Redis Cluster from
/// [`Redis::connect_cluster`]. Every part works on both; on a cluster, keys
/// spread over the slots and channels are sharded (`SPUBLISH`/`SSUBSCRIBE`).
#[derive(Clone)]
pub struct Redis {
    pub(crate) deployment: Deployment,
    commands: RedisConnection,
}

/// Where channels are opened.
#[derive(Clone)]
pub(crate) enum Deployment {
    /// One server.
    Single(redis::Client),
    /// A cluster, by its seed nodes.
    Cluster(Vec<String>),
}

impl Deployment {
    /// The command that publishes on a channel: `SPUBLISH` on a cluster
    /// (the message goes to the shard that owns the channel, not to every node).
    pub(crate) fn publish(&self) -> &'static str {
        match self {
            Self::Single(_) => "PUBLISH",
            Self::Cluster(_) => "SPUBLISH",
        }
    }

    /// A cluster client with the timeouts of commands; `push` receives what
    /// the nodes push (RESP3), for subscriptions.
    pub(crate) fn cluster_client(
        seeds: &[String],
        push: Option<tokio::sync::mpsc::UnboundedSender<redis::PushInfo>>,
    ) -> Result<redis::cluster::ClusterClient, redis::RedisError> {
        let mut builder = ClusterClientBuilder::new(seeds.to_vec())
            .connection_timeout(TIMEOUT)
            .response_timeout(TIMEOUT)
            .retries(2)
            .min_retry_wait(100)
            .max_retry_wait(2000);
        if let Some(push) = push {
            builder = builder
                .use_protocol(redis::ProtocolVersion::RESP3)
                .push_sender(push);
        }
        builder.build()
    }
}

impl Redis {
    /// Connects to `url` (`redis://host:port/db`). Commands time out after a
    /// second and the connection is re-established in the background, so an
    /// outage fails requests quickly instead of holding them.
    pub async fn connect(url: &str) -> Result<Self, RedisError> {
        let client = redis::Client::open(url)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(TIMEOUT))
            .set_response_timeout(Some(TIMEOUT))
            .set_number_of_retries(2)
            .set_min_delay(Duration::from_millis(100))
            .set_max_delay(Duration::from_secs(2));
        let commands = ConnectionManager::new_with_config(client.clone(), config).await?;
        Ok(Self {
            deployment: Deployment::Single(client),
            commands: RedisConnection(Commands::Single(commands)),
        })
    }

    /// Connects to the Redis Cluster (or Valkey in cluster mode) that `seeds`
    /// (`redis://host:port` of one or more of its nodes) belong to, through
    /// the `redis` crate's cluster client: it learns the slots from the
    /// seeds, follows `MOVED` and `ASK`, and finds the new primary after a
    /// failover. Commands time out after a second, as with [`Redis::connect`].
    pub async fn connect_cluster<S: AsRef<str>>(seeds: &[S]) -> Result<Self, RedisError> {
        let seeds: Vec<String> = seeds.iter().map(|s| s.as_ref().to_owned()).collect();
        if seeds.is_empty() {
            return Err(RedisError(redis::RedisError::from((
                redis::ErrorKind::InvalidClientConfig,
                "a Redis Cluster needs at least one seed node",
            ))));
        }
        let commands = Deployment::cluster_client(&seeds, None)?
            .get_async_connection()
            .await?;
        Ok(Self {
            deployment: Deployment::Cluster(seeds),
            commands: RedisConnection(Commands::Cluster(commands)),
        })
    }

    /// Whether this is a Redis Cluster.
    pub fn is_cluster(&self) -> bool {
        matches!(self.deployment, Deployment::Cluster(_))
    }

    /// A connection for the application's own commands (it reconnects by
    /// itself; on a cluster, each command goes to the node owning its key).
    pub fn connection(&self) -> RedisConnection {
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

    /// The shared task store under `tessera:{namespace}:tasks:` (on a
    /// cluster, `tessera:{namespace:tasks}:`, one slot: see
    /// [`RedisTaskStore`](crate::RedisTaskStore)), keeping tasks under
    /// `policy`; starts its subscriber task.
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

    /// The notes on initialize-era sessions (ended, log level,
    /// subscriptions, the standalone stream), under `tessera:{namespace}:session:`.
    /// Give them to the endpoint (`EndpointOptions::session_notes`).
    pub fn session_notes(&self, namespace: &str) -> crate::RedisSessionNotes {
        crate::RedisSessionNotes::new(self.connection(), namespace)
    }

    /// The log initialize-era call streams keep their events in, under
    /// `tessera:{namespace}:events:`, so a client resumes its stream
    /// (`Last-Event-ID`) on any instance. Give it to the endpoint
    /// (`EndpointOptions::stream_log`).
    pub fn stream_log(&self, namespace: &str) -> crate::RedisStreamLog {
        crate::RedisStreamLog::new(self.connection(), namespace)
    }
}

/// A connection to a single Redis or to a cluster, for commands; cheap to
/// clone (clones share it). Run commands on it as on any `redis` crate
/// connection (`redis::cmd(..).query_async(&mut conn)`).
#[derive(Clone)]
pub struct RedisConnection(Commands);

#[derive(Clone)]
enum Commands {
    Single(ConnectionManager),
    Cluster(ClusterConnection),
}

impl From<ConnectionManager> for RedisConnection {
    fn from(conn: ConnectionManager) -> Self {
        Self(Commands::Single(conn))
    }
}

impl From<ClusterConnection> for RedisConnection {
    fn from(conn: ClusterConnection) -> Self {
        Self(Commands::Cluster(conn))
    }
}

impl ConnectionLike for RedisConnection {
    fn req_packed_command<'a>(&'a mut self, cmd: &'a Cmd) -> RedisFuture<'a, Value> {
        match &mut self.0 {
            Commands::Single(conn) => conn.req_packed_command(cmd),
            Commands::Cluster(conn) => conn.req_packed_command(cmd),
        }
    }

    fn req_packed_commands<'a>(
        &'a mut self,
        pipeline: &'a Pipeline,
        offset: usize,
        count: usize,
    ) -> RedisFuture<'a, Vec<Value>> {
        match &mut self.0 {
            Commands::Single(conn) => conn.req_packed_commands(pipeline, offset, count),
            Commands::Cluster(conn) => conn.req_packed_commands(pipeline, offset, count),
        }
    }

    fn get_db(&self) -> i64 {
        match &self.0 {
            Commands::Single(conn) => conn.get_db(),
            Commands::Cluster(conn) => conn.get_db(),
        }
    }
}

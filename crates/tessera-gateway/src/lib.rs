//! `tessera-gateway`: the MCP servers people already run, behind one
//! stateless 2026-07-28 endpoint.
//!
//! Each upstream in the configuration — a stdio process the gateway starts,
//! or a Streamable HTTP server of either era — is offered under its own
//! names ([`naming`]). A 2026-07-28 upstream's rounds are relayed: its
//! questions go to the client, its `requestState` travels inside the
//! gateway's own sealed ticket, and the retry reaches the same upstream
//! from any instance. An upstream that pushes its questions (the initialize
//! era) has its call held open while the client answers: the pushed
//! question goes to the client as an `input_required` round, and the
//! client's retry is the answer sent up; with `--redis`, a retry that lands
//! on another instance is relayed to the one holding the call.
//!
//! The gateway is an [`McpServer`] like any other: OAuth, rate limits,
//! middleware, telemetry and both client eras come from the same startup.
//! A client's token is never passed upstream; upstreams get the credentials
//! the configuration gives them.
//!
//! ```no_run
//! # async fn run(server: std::sync::Arc<tessera_server::McpServer>) -> Result<(), tessera_gateway::ConfigError> {
//! let config = tessera_gateway::Config::load(std::path::Path::new("gateway.toml"))?;
//! let gateway = tessera_gateway::Gateway::new(config, None);
//! // `server` was built with a ticket codec (launch's `setup.server(..)`):
//! gateway.offer_through(server, std::time::Duration::from_secs(10)).await;
//! # Ok(()) }
//! ```

mod catalog_sync;
mod config;
mod forward;
mod held;
mod instances;
mod metrics;
pub mod naming;
mod upstream;

use std::sync::Arc;
use std::time::Duration;

use tessera_server::McpServer;
use tessera_server::bridge::AnswerRelay;

pub use config::{
    Config, ConfigError, Limits, MAX_UPSTREAM_NAME, Transport, Upstream as UpstreamConfig,
    UpstreamEra,
};

/// A gateway: its upstreams, the calls it holds, and its place among the
/// deployment's instances.
pub struct Gateway {
    upstreams: Vec<Arc<upstream::Upstream>>,
    held: Arc<held::HeldCalls>,
    instances: Arc<instances::Instances>,
    limits: Limits,
    owners: catalog_sync::Owners,
}

impl Gateway {
    /// A gateway for `config`; `relay` carries answers to the instance
    /// holding a call (shared by every instance, e.g. over Redis).
    pub fn new(config: Config, relay: Option<Arc<dyn AnswerRelay>>) -> Arc<Self> {
        let limits = config.limits;
        let held = Arc::new(held::HeldCalls::new(limits));
        let instances =
            instances::Instances::start(relay, Arc::clone(&held), limits.upstream_timeout());
        Arc::new(Self {
            upstreams: config
                .upstreams
                .into_iter()
                .map(|u| Arc::new(upstream::Upstream::new(u, limits)))
                .collect(),
            held,
            instances,
            limits,
            owners: catalog_sync::Owners::default(),
        })
    }

    /// Offers every upstream's tools, prompts and resources through
    /// `server`, and keeps them current; returns once each upstream was
    /// tried (or after `wait`). Tasks on the current runtime keep going.
    pub async fn offer_through(self: &Arc<Self>, server: Arc<McpServer>, wait: Duration) {
        let mut firsts = Vec::new();
        for index in 0..self.upstreams.len() {
            let (tx, rx) = tokio::sync::oneshot::channel();
            firsts.push(rx);
            tokio::spawn(catalog_sync::keep_in_sync(
                Arc::clone(self),
                index,
                Arc::clone(&server),
                tx,
            ));
        }
        let _ = tokio::time::timeout(wait, async {
            for first in firsts {
                let _ = first.await;
            }
        })
        .await;
    }

    /// `builder` with each upstream's `rate_limit`: calls of each of its
    /// tools per caller, the buckets in `store` (shared by the instances
    /// when it is Redis).
    pub fn rate_limits(
        &self,
        mut builder: tessera_server::McpServerBuilder,
        store: Arc<dyn tessera_server::middleware::RateLimitStore>,
    ) -> tessera_server::McpServerBuilder {
        use tessera_server::middleware::{RateLimit, for_requests};
        for upstream in &self.upstreams {
            let Some((requests, window)) = upstream.config.rate_limit else {
                continue;
            };
            let prefix = format!("{}{}", upstream.name(), naming::SEPARATOR);
            builder = builder.middleware(for_requests(
                move |r| r.tool().is_some_and(|t| t.starts_with(&prefix)),
                RateLimit::in_store(requests, window, Arc::clone(&store)),
            ));
        }
        builder
    }

    /// Upstream calls held open now, waiting for their callers' answers.
    pub fn held_calls(&self) -> usize {
        self.held.len()
    }

    /// The bounds it holds calls within.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }
}

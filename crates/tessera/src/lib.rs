// The guide is the crate's documentation; its examples use the macros, so a
// doctest run without them documents the crate in one line instead.
#![cfg_attr(any(not(doctest), feature = "macros"), doc = include_str!("../README.md"))]
#![cfg_attr(
    all(doctest, not(feature = "macros")),
    doc = "Stateless MCP 2026-07-28 servers whose tools ask the user through multi round-trip requests."
)]

#[cfg(feature = "server")]
pub use tessera_server::{
    Arguments, AuthInfo, BoxFuture, BuildError, BusError, BusEvent, CacheHint, CatalogError,
    Change, ChangeBus, ChangeListener, Context, Era, ExactScopes, Form, FormChoice, FormValue,
    HandlerError, Interrupt, IntoCompletion, IntoPromptResult, IntoResourceResult, IntoToolResult,
    Json, McpServer, McpServerBuilder, MemoryBus, MethodDef, NotFound, Notifier, Offered,
    PartialArgument, PrefixScopes, PromptArguments, PromptDef, RequestFacts, ResourceDef,
    ResourceTemplateDef, Result, ScopeMatch, ServerError, ShowPermitted, SkillDef, SkillLoadError,
    State, Subscription, TaskRuntime, TaskSupport, TemplateVariables, ToolDef, Viewer, Visibility,
};

/// The one intake every transport reads messages through: for a transport
/// of your own.
#[cfg(feature = "server")]
pub use tessera_server::intake;
/// Middleware on MCP requests: layers around every request, rate limits.
#[cfg(feature = "server")]
pub use tessera_server::middleware;

/// The era bridge that serves initialize-era clients from the same handlers:
/// their sessions, the questions put to them, answers relayed between instances.
#[cfg(feature = "server")]
pub use tessera_server::bridge;

/// Spans and metrics of every request (`tessera_server::telemetry`).
#[cfg(feature = "server")]
pub use tessera_server::telemetry;

/// OpenTelemetry export: OTLP from the `OTEL_*` variables, Prometheus text (`tessera-otel`).
#[cfg(feature = "otel")]
pub use tessera_otel as otel;

/// Testing tools without a transport (feature `testing`): [`testing::TestClient`] answers each round from a script.
#[cfg(feature = "testing")]
pub use tessera_server::testing;

/// A server binary's startup (feature `launch`): [`launch::main`], [`launch::Launch`], the flags [`launch::ServeArgs`].
#[cfg(feature = "launch")]
pub use tessera_launch as launch;

#[cfg(feature = "macros")]
pub use tessera_macros::{arguments, form, output, prompt, resource, tool};

/// The 2026-07-28 wire types: results, content, capabilities, schemas, error codes.
pub use tessera_protocol as protocol;

/// The `requestState` codec: keys, key rings, sealing modes, ticket ledgers.
#[cfg(feature = "server")]
pub use tessera_state as state;

/// The Streamable HTTP endpoint: [`McpEndpoint`](http::McpEndpoint), its
/// options, and [`serve`](http::serve).
#[cfg(feature = "http")]
pub use tessera_http as http;

/// The stdio transport (feature `stdio`): `serve_stdio`, and the era bridge for initialize-era clients.
#[cfg(feature = "stdio")]
pub use tessera_stdio as stdio;

/// OAuth 2.1 protected resource (feature `auth`): metadata, JWT and introspection verifiers.
#[cfg(feature = "auth")]
pub use tessera_auth as auth;

/// Redis for many instances (feature `redis`): a shared ticket ledger and change bus.
#[cfg(feature = "redis")]
pub use tessera_redis as redis;

/// AWS Lambda: `main` on `lambda_http`, keys from the environment or
/// Secrets Manager, the single-use ledger on Redis (feature `lambda`).
#[cfg(feature = "lambda")]
pub use tessera_lambda as lambda;
/// Cloudflare Workers: the fetch-handler adapter, keys from Worker secrets,
/// the Durable Object ticket ledger (feature `worker`, for wasm32).
#[cfg(feature = "worker")]
pub use tessera_worker as worker;

/// The client: [`McpClient`](client::McpClient) and the [`Elicitor`](client::Elicitor) it asks.
#[cfg(feature = "client")]
pub use tessera_client as client;

/// schemars, for `#[schemars(crate = "tessera::schemars")]` on your own types.
pub use schemars;
/// serde, for `#[serde(crate = "tessera::serde")]` on your own types.
pub use serde;
/// serde_json, for building JSON values.
pub use serde_json;

/// What a server module usually imports: `use tessera::prelude::*;`.
pub mod prelude {
    pub use crate::protocol::{CallToolResult, GetPromptResult, ReadResourceResult};
    #[cfg(feature = "server")]
    pub use crate::{
        Context, Form, HandlerError, Interrupt, Json, McpServer, NotFound, Result, State,
    };
}

/// The guide's chapters: each topic of serving MCP with Tessera, its
/// examples compiled and run as doctests.
pub mod docs {
    #[doc = include_str!("../docs/tools.md")]
    pub mod tools {}
    #[doc = include_str!("../docs/startup.md")]
    pub mod startup {}
    #[doc = include_str!("../docs/testing.md")]
    pub mod testing {}
    #[doc = include_str!("../docs/eras.md")]
    pub mod eras {}
    #[doc = include_str!("../docs/stdio.md")]
    pub mod stdio {}
    #[doc = include_str!("../docs/many-instances.md")]
    pub mod many_instances {}
    #[doc = include_str!("../docs/oauth.md")]
    pub mod oauth {}
    #[doc = include_str!("../docs/workers.md")]
    pub mod workers {}
    #[doc = include_str!("../docs/lambda.md")]
    pub mod lambda {}
    #[doc = include_str!("../docs/tasks.md")]
    pub mod tasks {}
    #[doc = include_str!("../docs/limits.md")]
    pub mod limits {}
    #[doc = include_str!("../docs/middleware.md")]
    pub mod middleware {}
    #[doc = include_str!("../docs/catalog.md")]
    pub mod catalog {}
    #[doc = include_str!("../docs/extensions.md")]
    pub mod extensions {}
    #[doc = include_str!("../docs/skills.md")]
    pub mod skills {}
    #[doc = include_str!("../docs/observability.md")]
    pub mod observability {}
    #[doc = include_str!("../docs/cli.md")]
    pub mod cli {}
    #[doc = include_str!("../docs/gateway.md")]
    pub mod gateway {}
    #[doc = include_str!("../docs/conformance.md")]
    pub mod conformance {}
    #[doc = include_str!("../docs/architecture.md")]
    pub mod architecture {}
}

/// The repository README's examples, compiled and run as doctests.
#[cfg(all(doctest, feature = "macros"))]
#[doc = include_str!("../../../README.md")]
pub struct RepositoryReadme;

/// Paths the macros expand to; not a public API.
#[doc(hidden)]
pub mod __private {
    pub use schemars;
    pub use serde;
}

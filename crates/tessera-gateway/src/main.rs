//! `tessera-gateway`: wires the configuration, the standard startup flags
//! and the gateway together (see the crate's documentation).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use tessera_http::{Legacy, McpEndpoint};
use tessera_launch::{Launch, ServeArgs};

#[global_allocator]
static ALLOC: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// How long startup waits for the upstreams' first lists before it listens.
const FIRST_LISTS: Duration = Duration::from_secs(15);

/// Any MCP server behind one stateless 2026-07-28 endpoint.
#[derive(Parser)]
#[command(name = "tessera-gateway", version)]
struct Args {
    /// The TOML file listing the upstream servers ([[upstream]] name, and command or url).
    #[arg(long, value_name = "FILE")]
    config: PathBuf,
    #[command(flatten)]
    serve: ServeArgs,
}

fn main() -> ExitCode {
    let args = Args::parse();
    if args.serve.stdio {
        eprintln!(
            "tessera-gateway: --stdio is not served: the gateway is a Streamable HTTP front door (its upstreams may be stdio programs: `command` in the configuration)"
        );
        return ExitCode::FAILURE;
    }
    let config = match tessera_gateway::Config::load(&args.config) {
        Ok(config) => config,
        Err(e) => {
            eprintln!("tessera-gateway: {e}");
            return ExitCode::FAILURE;
        }
    };
    let launch = Launch::new("tessera-gateway", args.serve).default_legacy(Legacy::Serve);
    // Made by the first closure (it needs the Redis the flags connected), used by the second.
    let gateway = std::cell::RefCell::new(None);
    launch.main_with(
        |setup| {
            // Each instance relays answers to calls it does not hold over Redis, when shared.
            let relay = setup.redis().map(|redis| {
                Arc::new(redis.answer_relay("tessera-gateway/held"))
                    as Arc<dyn tessera_server::bridge::AnswerRelay>
            });
            // A pushed question waits no longer than the ticket that names its call lives.
            let ttl = setup.request_state().ttl();
            if config.limits.answer_timeout() > ttl {
                return Err(format!(
                    "limits.answer_timeout_secs ({}) is longer than a ticket lives ({} s, --ttl): answers would come back expired",
                    config.limits.answer_timeout_secs,
                    ttl.as_secs()
                ));
            }
            let made = tessera_gateway::Gateway::new(config, relay);
            let buckets: Arc<dyn tessera_server::middleware::RateLimitStore> = match setup.redis() {
                Some(redis) => Arc::new(redis.rate_limits("tessera-gateway/upstreams")),
                None => Arc::new(tessera_server::middleware::MemoryRateLimits::default()),
            };
            let builder = setup
                .server("tessera-gateway", env!("CARGO_PKG_VERSION"))
                // A gateway ticket holds an upstream's state or names a held call: used once.
                .single_use_tickets();
            let server = made.rate_limits(builder, buckets).build().map_err(|e| e.to_string());
            *gateway.borrow_mut() = Some(made);
            server
        },
        |server, options| {
            if let Some(gateway) = gateway.borrow_mut().take() {
                let server = Arc::clone(&server);
                tokio::task::block_in_place(|| {
                    tokio::runtime::Handle::current()
                        .block_on(gateway.offer_through(server, FIRST_LISTS));
                });
            }
            McpEndpoint::new(server, options)
        },
    )
}

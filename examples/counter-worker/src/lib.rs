//! The `increase-counter` server as a Cloudflare Worker: the same tool and
//! server as the native `counter` (the `counter-tool` crate), served at
//! `/mcp` by `tessera::worker::serve`.
//!
//! Configuration comes from the Worker's environment: the secret
//! `MRTR_REQUEST_STATE_KEY` (`.dev.vars` locally), `MCP_ALLOWED_HOSTS` for
//! the deployed hostname, and `SINGLE_USE = "true"` to make every ticket
//! redeemable once through the `TICKET_LEDGER` Durable Object binding
//! (`wrangler.jsonc`); like the native counter's default, tickets may
//! otherwise be presented again until they expire. `OAUTH_ISSUER`,
//! `OAUTH_RESOURCE` and `OAUTH_SCOPE` require an access token, as the
//! native counter's `--oauth-*` flags do.

use tessera::BuildError;
use tessera::worker::McpBody;
use worker::{Context, Env, HttpRequest, event};

/// The Durable Object class recording used tickets (bound as `TICKET_LEDGER`).
pub use tessera::worker::TicketLedgerObject;

/// Every request to the Worker.
#[event(fetch)]
async fn fetch(
    request: HttpRequest,
    env: Env,
    ctx: Context,
) -> worker::Result<http::Response<McpBody>> {
    Ok(tessera::worker::serve(request, &env, ctx, |setup| {
        let single_use = match setup.env.var("SINGLE_USE").map(|v| v.to_string()) {
            Ok(v) if v == "true" => true,
            Ok(v) if v == "false" || v.is_empty() => false,
            Err(e) if e.to_string().contains("undefined") => false,
            // Anything else (another string, a JSON boolean) is a mistake to name.
            _ => {
                return Err(BuildError(
                    "SINGLE_USE must be the string \"true\" or \"false\" (wrangler.jsonc vars)"
                        .to_owned(),
                ));
            }
        };
        let builder =
            tessera::McpServer::builder(counter_tool::SERVER_NAME, env!("CARGO_PKG_VERSION"))
                .request_state(setup.codec.clone())
                .require_scopes(setup.oauth_scopes.clone());
        // Single use needs the Durable Object: never a per-isolate fallback.
        let builder = if single_use {
            builder
                .single_use_tickets()
                .ticket_ledger(setup.require_ledger()?)
        } else {
            builder
        };
        counter_tool::counter_server_from(builder)
    })
    .await)
}

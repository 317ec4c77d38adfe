//! `counter-lambda`: the increase-counter server as an AWS Lambda function,
//! the same tool and server as the native `counter` (the `counter-tool`
//! crate), served at `/mcp` of a function URL or API Gateway.
//!
//! Its configuration is the function's environment (see `tessera::lambda`):
//! `MRTR_REQUEST_STATE_KEY` or `MRTR_REQUEST_STATE_SECRET_ID` (a Secrets
//! Manager secret), `MCP_ALLOWED_HOSTS` for the function URL's hostname,
//! `REDIS_URL` and `SINGLE_USE=true` for single-use tickets, `OAUTH_*` to
//! require an access token. Locally: `./dev PORT` (under `cargo lambda watch`).

fn main() -> std::process::ExitCode {
    tessera::lambda::main("counter-lambda", |setup| {
        counter_tool::counter_server_from(
            setup.server(counter_tool::SERVER_NAME, env!("CARGO_PKG_VERSION")),
        )
    })
}

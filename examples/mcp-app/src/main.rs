//! `mcp-app`: the counter as an MCP App, on Streamable HTTP or stdio with `--stdio`.

fn main() -> std::process::ExitCode {
    tessera::launch::main("mcp-app", |setup| {
        mcp_app::app_server_from(setup.server(mcp_app::SERVER_NAME, env!("CARGO_PKG_VERSION")))
    })
}

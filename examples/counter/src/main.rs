//! `counter`: the increase-counter MCP server on Streamable HTTP, or stdio with `--stdio`.

/// mimalloc: many small, short-lived allocations per request; glibc's malloc
/// spends a fifth of the server's CPU on them under load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    tessera::launch::main("counter", |setup| {
        counter::counter_server_from(setup.server(counter::SERVER_NAME, env!("CARGO_PKG_VERSION")))
    })
}

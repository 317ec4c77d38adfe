//! `counter`: the increase-counter MCP server on Streamable HTTP, or stdio with `--stdio`.

/// mimalloc: many small, short-lived allocations per request; glibc's malloc
/// spends a fifth of the server's CPU on them under load.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// As the reference counter (`legacy: "reject"`), initialize-era clients are
/// refused unless `--legacy serve` is given: 400 with -32022 naming the
/// versions served.
fn main() -> std::process::ExitCode {
    tessera::launch::Launch::from_args("counter")
        .default_legacy(tessera::http::Legacy::Reject)
        .main(|setup| {
            counter::counter_server_from(
                setup.server(counter::SERVER_NAME, env!("CARGO_PKG_VERSION")),
            )
        })
}

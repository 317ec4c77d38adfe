//! `axum-mount`: the counter at `/api/mcp` inside an axum application.

fn main() -> std::process::ExitCode {
    tessera::launch::Launch::from_args("axum-mount")
        .path("/api/mcp")
        .main_with(
            |setup| {
                counter_tool::counter_server_from(setup.server(counter_tool::SERVER_NAME, "0.1.0"))
            },
            |server, options| axum_mount::app(server, options, axum_mount::REQUEST_TIMEOUT),
        )
}

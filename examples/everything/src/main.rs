//! `everything-server`: the conformance fixture on Streamable HTTP at `/mcp`.
//!
//! A test fixture: the requestState key is generated at start, so tickets do
//! not survive a restart. Prints `listening on http://ADDR/mcp` on stdout
//! once it accepts connections (useful with `--addr 127.0.0.1:0`).

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use tessera::http::{EndpointOptions, McpEndpoint};
use tessera::state::{KeyRing, RequestStateCodec, StateKey};

const USAGE: &str = "usage: everything-server [--addr HOST:PORT]

  --addr   where to listen (default 127.0.0.1:$PORT, or 127.0.0.1:3000)

Serves the MCP conformance fixture at http://HOST:PORT/mcp with a fresh
requestState key, and prints `listening on http://HOST:PORT/mcp` when ready.";

fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .with_writer(std::io::stderr)
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("everything-server: {message}");
            ExitCode::FAILURE
        }
    }
}

/// The listen address from the command line, else `PORT`, else 3000.
fn address(mut args: impl Iterator<Item = String>, port: Option<String>) -> Result<String, String> {
    let mut addr = format!("127.0.0.1:{}", port.as_deref().unwrap_or("3000"));
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => {
                addr = args
                    .next()
                    .ok_or(format!("--addr needs a value\n\n{USAGE}"))?
            }
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
        }
    }
    Ok(addr)
}

fn run() -> Result<(), String> {
    let addr = address(std::env::args().skip(1), std::env::var("PORT").ok())?;
    let key = StateKey::generate().map_err(|e| format!("cannot generate a key: {e}"))?;
    let ring = KeyRing::new("k1", key).map_err(|e| e.to_string())?;
    let server =
        everything::everything_server(RequestStateCodec::new(ring)).map_err(|e| e.to_string())?;
    let server = Arc::new(server);
    let endpoint = McpEndpoint::new(Arc::clone(&server), EndpointOptions::default());
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async {
        let listener = tokio::net::TcpListener::bind(&addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        let mut stdout = std::io::stdout();
        writeln!(stdout, "listening on http://{local}/mcp")
            .and_then(|()| stdout.flush())
            .map_err(|e| format!("cannot write to stdout: {e}"))?;
        tessera::http::serve(listener, endpoint, tessera::http::graceful_shutdown(server))
            .await
            .map_err(|e| e.to_string())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses() {
        let args = |a: &[&str]| {
            a.iter()
                .map(|s| (*s).to_owned())
                .collect::<Vec<_>>()
                .into_iter()
        };
        assert_eq!(address(args(&[]), None).unwrap(), "127.0.0.1:3000");
        assert_eq!(
            address(args(&[]), Some("9000".into())).unwrap(),
            "127.0.0.1:9000"
        );
        assert_eq!(
            address(args(&["--addr", "127.0.0.1:0"]), Some("9000".into())).unwrap(),
            "127.0.0.1:0"
        );
        assert!(address(args(&["--addr"]), None).is_err());
        assert!(address(args(&["--bogus"]), None).is_err());
    }
}

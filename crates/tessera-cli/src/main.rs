//! `tessera`: call MCP tools from a terminal; answer their forms by hand or from a script.

mod answers;
mod arguments;
mod exit;
mod output;
mod prompt_form;
mod terminal;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use serde_json::Value;
use tessera_client::{ClientError, McpClient};

use crate::exit::Exit;
use crate::terminal::CliElicitor;

/// Call MCP (2026-07-28) tools and answer their elicitation forms.
#[derive(Parser)]
#[command(name = "tessera", version, about, after_help = exit::HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Show a server's versions, capabilities and instructions (`server/discover`).
    Discover {
        /// The MCP endpoint, e.g. http://127.0.0.1:8787/mcp
        url: String,
        /// Print the raw JSON result.
        #[arg(long)]
        json: bool,
    },
    /// List a server's tools.
    Tools {
        /// The MCP endpoint.
        url: String,
        /// Print the raw JSON list.
        #[arg(long)]
        json: bool,
    },
    /// Print a new 32-byte random requestState key, base64-encoded.
    Keygen {
        /// Print it as a `.dev.vars` line (MRTR_REQUEST_STATE_KEY=...).
        #[arg(long)]
        dev_vars: bool,
    },
    /// Call a tool; answer its forms interactively, or from --answers/--answer.
    Call {
        /// The MCP endpoint.
        url: String,
        /// The tool's name.
        tool: String,
        /// Arguments as name=value (value parsed as JSON when it parses, else a string).
        args: Vec<String>,
        /// All arguments as one JSON object (merged under name=value pairs).
        #[arg(long)]
        args_json: Option<String>,
        /// Scripted answers: a JSON file {"key": {"field": value} | "decline" | "cancel"}.
        #[arg(long)]
        answers: Option<std::path::PathBuf>,
        /// One scripted answer field: key.field=value (repeatable), or key=decline / key=cancel.
        #[arg(long = "answer")]
        answer: Vec<String>,
        /// Print the final JSON-RPC result instead of its text.
        #[arg(long)]
        json: bool,
        /// Most rounds before giving up.
        #[arg(long, default_value_t = 10)]
        max_rounds: usize,
        /// Bearer token for the server.
        #[arg(long, env = "TESSERA_BEARER_TOKEN")]
        token: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return Exit::Failure.report(&format!("cannot start: {e}")),
    };
    match runtime.block_on(run(cli.command)) {
        Ok(code) => code.into(),
        Err((exit, message)) => exit.report(&message),
    }
}

fn client(
    url: &str,
    token: Option<&str>,
) -> Result<tessera_client::McpClientBuilder, (Exit, String)> {
    let mut b = McpClient::builder(url).client_info("tessera-cli", env!("CARGO_PKG_VERSION"));
    if let Some(t) = token {
        b = b.bearer_token(t);
    }
    Ok(b)
}

fn failed(e: ClientError) -> (Exit, String) {
    match e {
        ClientError::Unanswerable { .. } => (Exit::Unanswered, e.to_string()),
        ClientError::Rpc { ref error, .. }
            if error.code == tessera_protocol::MISSING_REQUIRED_CLIENT_CAPABILITY =>
        {
            (
                Exit::Unanswered,
                format!(
                    "{e}\n(no terminal to answer forms on; script the answers with --answer KEY.FIELD=VALUE or --answers FILE)"
                ),
            )
        }
        ClientError::Elicitation(ref m) if m.contains("no terminal") => {
            (Exit::Unanswered, e.to_string())
        }
        _ => (Exit::Failure, e.to_string()),
    }
}

async fn run(command: Command) -> Result<Exit, (Exit, String)> {
    match command {
        Command::Keygen { dev_vars } => {
            let secret = keygen().map_err(|e| (Exit::Failure, e))?;
            if dev_vars {
                println!("MRTR_REQUEST_STATE_KEY={secret}");
            } else {
                println!("{secret}");
            }
            Ok(Exit::Success)
        }
        Command::Discover { url, json } => {
            let c = client(&url, None)?
                .build()
                .map_err(|e| (Exit::Usage, e.to_string()))?;
            let d = c.discover().await.map_err(failed)?;
            if json {
                println!("{}", serde_json::to_string_pretty(&d).unwrap_or_default());
            } else {
                output::print_discover(&d);
            }
            Ok(Exit::Success)
        }
        Command::Tools { url, json } => {
            let c = client(&url, None)?
                .build()
                .map_err(|e| (Exit::Usage, e.to_string()))?;
            let tools = c.list_tools().await.map_err(failed)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&tools).unwrap_or_default()
                );
            } else {
                output::print_tools(&tools);
            }
            Ok(Exit::Success)
        }
        Command::Call {
            url,
            tool,
            args,
            args_json,
            answers,
            answer,
            json,
            max_rounds,
            token,
        } => {
            let scripted =
                answers::load(answers.as_deref(), &answer).map_err(|e| (Exit::Usage, e))?;
            let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
            let elicitor = Arc::new(CliElicitor::new(scripted, interactive));
            let c = client(&url, token.as_deref())?
                .elicitor(elicitor.clone())
                .max_rounds(max_rounds)
                .meta("progressToken", Value::String("tessera-cli".into()))
                .on_notification(Arc::new(output::print_notification))
                .build()
                .map_err(|e| (Exit::Usage, e.to_string()))?;
            let tools = c.list_tools().await.map_err(failed)?;
            let schema = tools
                .iter()
                .find(|t| t.name == tool)
                .map(|t| Value::Object(t.input_schema.clone()));
            let arguments = arguments::build(&args, args_json.as_deref(), schema.as_ref())
                .map_err(|e| (Exit::Usage, e))?;
            let result = c.call_tool_raw(&tool, arguments).await.map_err(failed)?;
            if json {
                println!(
                    "{}",
                    serde_json::to_string_pretty(&result).unwrap_or_default()
                );
            } else {
                output::print_result(&result);
            }
            Ok(
                if result.get("isError").and_then(Value::as_bool) == Some(true) {
                    Exit::ToolError
                } else if elicitor.refused() {
                    Exit::Refused
                } else {
                    Exit::Success
                },
            )
        }
    }
}

fn keygen() -> Result<String, String> {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness available: {e}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

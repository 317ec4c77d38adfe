//! `tessera`: call MCP tools from a terminal; answer their forms by hand or from a script.

mod answers;
mod arguments;
mod browser;
mod exit;
mod output;
mod prompt_form;
mod server;
mod shown;
mod sign_in;
mod style;
mod terminal;

use std::io::IsTerminal;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use serde_json::Value;
use tessera_client::{ClientError, McpClient};

use crate::exit::Exit;
use crate::server::Server;
use crate::terminal::CliElicitor;

/// Call MCP (2026-07-28) tools and answer their elicitation forms.
///
/// A server is an endpoint URL, or a local command started with --stdio
/// "COMMAND" (spoken to over stdin/stdout: 2026-07-28 when the server speaks
/// it, else the initialize era, whose pushed forms are answered the same way).
#[derive(Parser)]
#[command(name = "tessera", version, about, after_help = exit::HELP)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    sign_in: sign_in::SignInArgs,
}

#[derive(Subcommand)]
enum Command {
    /// Show a server's versions, capabilities and instructions (`server/discover`).
    Discover {
        /// The MCP endpoint, e.g. http://127.0.0.1:8787/mcp (or --stdio)
        url: Option<String>,
        /// Start this command and speak to it over stdio instead, e.g. "counter --stdio".
        #[arg(long, value_name = "COMMAND")]
        stdio: Option<String>,
        /// Print the raw JSON result.
        #[arg(long)]
        json: bool,
    },
    /// List a server's tools.
    Tools {
        /// The MCP endpoint (or --stdio).
        url: Option<String>,
        /// Start this command and speak to it over stdio instead, e.g. "counter --stdio".
        #[arg(long, value_name = "COMMAND")]
        stdio: Option<String>,
        /// Print the raw JSON list.
        #[arg(long)]
        json: bool,
    },
    /// Listen for changes (`subscriptions/listen`); prints each notification as a JSON line until interrupted.
    Listen {
        /// The MCP endpoint (or --stdio).
        url: Option<String>,
        /// Start this command and speak to it over stdio instead, e.g. "notes --stdio".
        #[arg(long, value_name = "COMMAND")]
        stdio: Option<String>,
        /// `resources/updated` for this resource (repeatable).
        #[arg(long = "resource", value_name = "URI")]
        resources: Vec<String>,
        /// Only these list changes: tools, prompts, resources (repeatable; default: all three, or none when --resource is given).
        #[arg(long = "list", value_name = "KIND", value_parser = ["tools", "prompts", "resources"])]
        lists: Vec<String>,
    },
    /// Sign in to a protected server (OAuth): shows the URL, opens a browser, keeps the tokens.
    Login {
        /// The MCP endpoint.
        url: String,
    },
    /// Forget the tokens kept for a server.
    Logout {
        /// The MCP endpoint.
        url: String,
    },
    /// Print a new 32-byte random requestState key, base64-encoded.
    Keygen {
        /// Print it as a `.dev.vars` line (MRTR_REQUEST_STATE_KEY=...).
        #[arg(long)]
        dev_vars: bool,
    },
    /// Call a tool; answer its forms interactively, or from --answers/--answer.
    #[command(
        override_usage = "tessera call [OPTIONS] <URL> <TOOL> [ARGS]...\n       tessera call [OPTIONS] --stdio <COMMAND> <TOOL> [ARGS]..."
    )]
    Call {
        /// The MCP endpoint (unless --stdio), the tool's name, then its
        /// arguments as name=value (value parsed as JSON when it parses, else a string).
        #[arg(value_name = "[URL] TOOL [ARGS]", required = true)]
        positional: Vec<String>,
        /// Start this command and speak to it over stdio instead of a URL, e.g. "counter --stdio".
        #[arg(long, value_name = "COMMAND")]
        stdio: Option<String>,
        /// All arguments as one JSON object (merged under name=value pairs).
        #[arg(long)]
        args_json: Option<String>,
        /// Longest a call that goes on as a task is followed, in seconds (then it is cancelled; exit 6).
        #[arg(long, value_name = "SECONDS", default_value_t = 600)]
        task_wait: u64,
        #[command(flatten)]
        answering: Answering,
    },
    /// List a server's prompts.
    Prompts {
        /// The MCP endpoint (or --stdio).
        url: Option<String>,
        /// Start this command and speak to it over stdio instead, e.g. "everything-server --stdio".
        #[arg(long, value_name = "COMMAND")]
        stdio: Option<String>,
        /// Print the raw JSON list.
        #[arg(long)]
        json: bool,
    },
    /// Get a prompt's messages; answer its forms as for `call`.
    #[command(
        override_usage = "tessera prompt [OPTIONS] <URL> <NAME> [ARGS]...\n       tessera prompt [OPTIONS] --stdio <COMMAND> <NAME> [ARGS]..."
    )]
    Prompt {
        /// The MCP endpoint (unless --stdio), the prompt's name, then its arguments as name=value (strings).
        #[arg(value_name = "[URL] NAME [ARGS]", required = true)]
        positional: Vec<String>,
        /// Start this command and speak to it over stdio instead of a URL.
        #[arg(long, value_name = "COMMAND")]
        stdio: Option<String>,
        #[command(flatten)]
        answering: Answering,
    },
    /// List a server's resources.
    Resources {
        /// The MCP endpoint (or --stdio).
        url: Option<String>,
        /// Start this command and speak to it over stdio instead.
        #[arg(long, value_name = "COMMAND")]
        stdio: Option<String>,
        /// Print the raw JSON list.
        #[arg(long)]
        json: bool,
    },
    /// Read a resource; answer its forms as for `call`.
    #[command(
        override_usage = "tessera read [OPTIONS] <URL> <URI>\n       tessera read [OPTIONS] --stdio <COMMAND> <URI>"
    )]
    Read {
        /// The MCP endpoint (unless --stdio), then the resource's URI.
        #[arg(value_name = "[URL] URI", required = true)]
        positional: Vec<String>,
        /// Start this command and speak to it over stdio instead of a URL.
        #[arg(long, value_name = "COMMAND")]
        stdio: Option<String>,
        #[command(flatten)]
        answering: Answering,
    },
    /// List a server's skills (the skills extension): name, description, files.
    Skills {
        /// The MCP endpoint (or --stdio).
        url: Option<String>,
        /// Start this command and speak to it over stdio instead.
        #[arg(long, value_name = "COMMAND")]
        stdio: Option<String>,
        /// Print the raw JSON entries.
        #[arg(long)]
        json: bool,
    },
    /// Fetch one skill's SKILL.md (or, with --file, one of its files), each
    /// verified against the skill's entry (size and SHA-256 digest).
    #[command(
        override_usage = "tessera skill [OPTIONS] <URL> <SKILL>\n       tessera skill [OPTIONS] --stdio <COMMAND> <SKILL>"
    )]
    Skill {
        /// The MCP endpoint (unless --stdio), then the skill: its name, its
        /// path (acme/billing/refunds) or the URI of its SKILL.md.
        #[arg(value_name = "[URL] SKILL", required = true)]
        positional: Vec<String>,
        /// Start this command and speak to it over stdio instead of a URL.
        #[arg(long, value_name = "COMMAND")]
        stdio: Option<String>,
        /// Print this file of the skill instead (a path relative to its root).
        #[arg(long, value_name = "PATH")]
        file: Option<String>,
    },
}

/// How a request that asks for input is answered, and how its result is shown.
#[derive(clap::Args)]
struct Answering {
    /// Scripted answers: a JSON file {"key": {"field": value} | "decline" | "cancel"}.
    /// A URL-mode request can be scripted "decline" or "cancel", never accepted.
    #[arg(long)]
    answers: Option<std::path::PathBuf>,
    /// One scripted answer field: key.field=value (repeatable), or key=decline / key=cancel
    /// (a URL-mode request is only ever opened after a yes on the terminal).
    #[arg(long = "answer")]
    answer: Vec<String>,
    /// Print the final JSON-RPC result instead of its text.
    #[arg(long)]
    json: bool,
    /// Most rounds before giving up (for a call that goes on as a task: rounds of
    /// input; for an initialize-era server: questions it pushes during one call).
    #[arg(long, default_value_t = 10)]
    max_rounds: usize,
    /// Seconds to wait on the server for one request (time spent answering its
    /// questions not counted).
    #[arg(long, default_value_t = 120, value_parser = clap::value_parser!(u64).range(1..))]
    timeout: u64,
    /// Bearer token for the server.
    #[arg(long, env = "TESSERA_BEARER_TOKEN")]
    token: Option<String>,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    inquire::set_global_render_config(style::render_config());
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return Exit::Failure.report(&format!("cannot start: {e}")),
    };
    match runtime.block_on(run(cli.command, &cli.sign_in)) {
        Ok(code) => code.into(),
        Err((exit, message)) => exit.report(&message),
    }
}

/// The server named by a URL or `--stdio`, and the positionals after it.
fn server(
    stdio: Option<&str>,
    positional: Vec<String>,
) -> Result<(Server, Vec<String>), (Exit, String)> {
    Server::from_args(stdio, positional).map_err(|e| (Exit::Usage, e))
}

/// A client that could not be built: a bad URL is a usage error, a server that would not start a failure.
fn not_built(e: ClientError) -> (Exit, String) {
    match e {
        ClientError::Process(_) => (Exit::Failure, e.to_string()),
        _ => (Exit::Usage, e.to_string()),
    }
}

/// A client for `discover` and `tools`: the server is all they name.
async fn listing_client(
    url: Option<String>,
    stdio: Option<&str>,
    sign_in: &sign_in::SignInArgs,
) -> Result<McpClient, (Exit, String)> {
    let (server, rest) = server(stdio, url.into_iter().collect())?;
    if let Some(extra) = rest.first() {
        return Err((
            Exit::Usage,
            format!("unexpected argument {extra:?} (a URL and --stdio name two servers)"),
        ));
    }
    signing_in(&server, server.client(), sign_in)
        .await?
        .build()
        .map_err(not_built)
}

/// An HTTP server's client signs in when challenged (kept tokens first).
async fn signing_in(
    server: &Server,
    builder: tessera_client::McpClientBuilder,
    sign_in: &sign_in::SignInArgs,
) -> Result<tessera_client::McpClientBuilder, (Exit, String)> {
    if !matches!(server, Server::Url(_)) {
        return Ok(builder);
    }
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let config = sign_in::oauth_config(interactive, sign_in)
        .await
        .map_err(|e| (Exit::Failure, e))?;
    Ok(builder.oauth(config))
}

fn failed(e: ClientError) -> (Exit, String) {
    match e {
        ClientError::Unanswerable { .. } | ClientError::AnswerRejected { .. } => {
            (Exit::Unanswered, e.to_string())
        }
        ClientError::TaskUnfinished { .. }
        | ClientError::TooManyRounds { .. }
        | ClientError::TimedOut { .. } => (Exit::Unfinished, e.to_string()),
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

async fn run(command: Command, sign_in: &sign_in::SignInArgs) -> Result<Exit, (Exit, String)> {
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
        Command::Listen {
            url,
            stdio,
            resources,
            lists,
        } => {
            let c = listing_client(url, stdio.as_deref(), sign_in).await?;
            let outcome = listen(&c, resources, &lists).await;
            c.close().await;
            outcome
        }
        Command::Login { url } => {
            let c = listing_client(Some(url.clone()), None, sign_in).await?;
            // Any request will do: a protected server challenges it, and the sign-in follows.
            c.discover().await.map_err(failed)?;
            let kept = sign_in::TokenFile::default_location().map_err(|e| (Exit::Failure, e))?;
            let key = c.server_url().unwrap_or(url);
            if tessera_client::TokenStore::load(&kept, &key).is_some() {
                eprintln!(
                    "tessera: signed in to {key} (tokens in {})",
                    kept.path().display()
                );
            } else {
                eprintln!("tessera: {key} did not ask to sign in");
            }
            Ok(Exit::Success)
        }
        Command::Logout { url } => {
            let key = McpClient::builder(&url)
                .build()
                .map_err(not_built)?
                .server_url()
                .unwrap_or(url);
            let kept = sign_in::TokenFile::default_location().map_err(|e| (Exit::Failure, e))?;
            if kept.remove(&key).map_err(|e| (Exit::Failure, e))? {
                eprintln!("tessera: signed out of {key}");
            } else {
                eprintln!("tessera: no tokens were kept for {key}");
            }
            Ok(Exit::Success)
        }
        Command::Discover { url, stdio, json } => {
            let c = listing_client(url, stdio.as_deref(), sign_in).await?;
            let d = c.discover().await.map_err(failed);
            c.close().await;
            let d = d?;
            if json {
                output::print_json(serde_json::to_string_pretty(&d));
            } else {
                output::print_discover(&d);
            }
            Ok(Exit::Success)
        }
        Command::Tools { url, stdio, json } => {
            let c = listing_client(url, stdio.as_deref(), sign_in).await?;
            let tools = c.list_tools().await.map_err(failed);
            c.close().await;
            let tools = tools?;
            if json {
                output::print_json(serde_json::to_string_pretty(&tools));
            } else {
                output::print_tools(&tools);
            }
            Ok(Exit::Success)
        }
        Command::Call {
            positional,
            stdio,
            args_json,
            task_wait,
            answering,
        } => {
            let (server, mut args) = server(stdio.as_deref(), positional)?;
            if args.is_empty() {
                return Err((Exit::Usage, "name the tool to call".into()));
            }
            let tool = args.remove(0);
            let (c, elicitor) = answering_client(&server, &answering, sign_in, |b| {
                b.task_wait(std::time::Duration::from_secs(task_wait))
            })
            .await?;
            let result = call(&c, &tool, &args, args_json.as_deref()).await;
            c.close().await;
            let result = result?;
            if answering.json {
                output::print_json(serde_json::to_string_pretty(&result));
            } else {
                output::print_result(&result);
            }
            Ok(
                if result.get("isError").and_then(Value::as_bool) == Some(true) {
                    Exit::ToolError
                } else {
                    elicitor.exit()
                },
            )
        }
        Command::Prompts { url, stdio, json } => {
            let c = listing_client(url, stdio.as_deref(), sign_in).await?;
            let prompts = c.list_prompts().await.map_err(failed);
            c.close().await;
            let prompts = prompts?;
            if json {
                output::print_json(serde_json::to_string_pretty(&prompts));
            } else {
                output::print_prompts(&prompts);
            }
            Ok(Exit::Success)
        }
        Command::Prompt {
            positional,
            stdio,
            answering,
        } => {
            let (server, mut args) = server(stdio.as_deref(), positional)?;
            if args.is_empty() {
                return Err((Exit::Usage, "name the prompt to get".into()));
            }
            let name = args.remove(0);
            let arguments = arguments::strings(&args).map_err(|e| (Exit::Usage, e))?;
            let (c, elicitor) = answering_client(&server, &answering, sign_in, |b| b).await?;
            let result = c.get_prompt(&name, arguments).await.map_err(failed);
            c.close().await;
            let result = result?;
            if answering.json {
                output::print_json(serde_json::to_string_pretty(&result));
            } else {
                output::print_prompt(&result);
            }
            Ok(elicitor.exit())
        }
        Command::Resources { url, stdio, json } => {
            let c = listing_client(url, stdio.as_deref(), sign_in).await?;
            let resources = c.list_resources().await.map_err(failed);
            c.close().await;
            let resources = resources?;
            if json {
                output::print_json(serde_json::to_string_pretty(&resources));
            } else {
                output::print_resources(&resources);
            }
            Ok(Exit::Success)
        }
        Command::Read {
            positional,
            stdio,
            answering,
        } => {
            let (server, args) = server(stdio.as_deref(), positional)?;
            let [uri] = args.as_slice() else {
                return Err((Exit::Usage, "name the one resource URI to read".into()));
            };
            let (c, elicitor) = answering_client(&server, &answering, sign_in, |b| b).await?;
            let result = c.read_resource(uri).await.map_err(failed);
            c.close().await;
            let result = result?;
            if answering.json {
                output::print_json(serde_json::to_string_pretty(&result));
            } else {
                output::print_contents(&result);
            }
            Ok(elicitor.exit())
        }
        Command::Skills { url, stdio, json } => {
            let c = listing_client(url, stdio.as_deref(), sign_in).await?;
            let skills = c.list_skills().await.map_err(failed);
            c.close().await;
            let skills = skills?;
            if json {
                output::print_json(serde_json::to_string_pretty(&skills));
            } else {
                output::print_skills(&skills);
            }
            Ok(Exit::Success)
        }
        Command::Skill {
            positional,
            stdio,
            file,
        } => {
            let (server, args) = server(stdio.as_deref(), positional)?;
            let [wanted] = args.as_slice() else {
                return Err((Exit::Usage, "name the one skill to fetch".into()));
            };
            let c = signing_in(&server, server.client(), sign_in)
                .await?
                .build()
                .map_err(not_built)?;
            let fetched = fetch_skill(&c, wanted, file.as_deref()).await;
            c.close().await;
            let bytes = fetched?;
            use std::io::Write as _;
            match String::from_utf8(bytes) {
                Ok(text) => print!("{}", shown::text(&text)),
                Err(raw) => {
                    let _ = std::io::stdout().write_all(raw.as_bytes());
                }
            }
            Ok(Exit::Success)
        }
    }
}

/// The skill `wanted` names (its SKILL.md's URI, its path, or its name when
/// only one listed skill has it), loaded and verified; then its SKILL.md, or
/// its file `file`. Nothing else of the skill is fetched.
async fn fetch_skill(
    c: &McpClient,
    wanted: &str,
    file: Option<&str>,
) -> Result<Vec<u8>, (Exit, String)> {
    let entry = if wanted.contains("://") {
        c.get_skill(wanted).await.map_err(failed)?
    } else {
        let listed = c.list_skills().await.map_err(failed)?;
        let path_uri = format!("skill://{wanted}/SKILL.md");
        let mut matching: Vec<_> = listed
            .into_iter()
            .filter(|e| {
                e.uri == path_uri
                    || e.frontmatter.get("name").and_then(Value::as_str) == Some(wanted)
            })
            .collect();
        match matching.len() {
            0 => {
                // A skill may be served without being listed: ask for it by path.
                c.get_skill(&path_uri).await.map_err(|e| {
                    (
                        Exit::Failure,
                        format!("no skill {wanted:?} is listed, and {path_uri}: {e}"),
                    )
                })?
            }
            1 => matching.remove(0),
            _ => {
                let uris: Vec<&str> = matching.iter().map(|e| e.uri.as_str()).collect();
                return Err((
                    Exit::Usage,
                    format!(
                        "{} skills are named {wanted:?}; name one by its URI: {}",
                        uris.len(),
                        uris.join(", ")
                    ),
                ));
            }
        }
    };
    let skill = c.load_skill(&entry).await.map_err(failed)?;
    match file {
        None => Ok(skill.skill_md().as_bytes().to_vec()),
        Some(path) => c.read_skill_file(&skill, path).await.map_err(failed),
    }
}

/// A client whose elicitor answers from the script (or the terminal), signed
/// in as `answering` says; `more` adds settings of the command.
async fn answering_client(
    server: &Server,
    answering: &Answering,
    sign_in: &sign_in::SignInArgs,
    more: impl FnOnce(tessera_client::McpClientBuilder) -> tessera_client::McpClientBuilder,
) -> Result<(McpClient, Arc<CliElicitor>), (Exit, String)> {
    let scripted = answers::load(answering.answers.as_deref(), &answering.answer)
        .map_err(|e| (Exit::Usage, e))?;
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let elicitor = Arc::new(CliElicitor::new(scripted, interactive));
    let mut builder = server.client();
    if let Some(t) = &answering.token {
        builder = builder.bearer_token(t);
    } else {
        builder = signing_in(server, builder, sign_in).await?;
    }
    let client = more(builder)
        .elicitor(elicitor.clone())
        .max_rounds(answering.max_rounds)
        .timeout(std::time::Duration::from_secs(answering.timeout))
        .meta("progressToken", Value::String("tessera-cli".into()))
        .on_notification(Arc::new(output::print_notification))
        .build()
        .map_err(not_built)?;
    Ok((client, elicitor))
}

/// Prints every notification of one subscription, one JSON line each, until it ends or Ctrl-C.
async fn listen(
    c: &McpClient,
    resources: Vec<String>,
    lists: &[String],
) -> Result<Exit, (Exit, String)> {
    use std::io::Write;
    use tessera_client::ListenEvent;
    // Without --list: every list change, unless only resources were named.
    let all = lists.is_empty() && resources.is_empty();
    let wants = |kind: &str| (all || lists.iter().any(|l| l == kind)).then_some(true);
    let filter = tessera_protocol::SubscriptionFilter {
        tools_list_changed: wants("tools"),
        prompts_list_changed: wants("prompts"),
        resources_list_changed: wants("resources"),
        resource_subscriptions: (!resources.is_empty()).then_some(resources),
        ..Default::default()
    };
    let mut listener = c.listen(filter).await.map_err(failed)?;
    let interrupted = tokio::signal::ctrl_c();
    tokio::pin!(interrupted);
    let mut out = std::io::stdout().lock();
    loop {
        let event = tokio::select! {
            event = listener.next() => event,
            _ = &mut interrupted => return Ok(Exit::Success),
        };
        match event {
            Some(Ok(ListenEvent::Acknowledged(agreed))) => eprintln!(
                "tessera: listening for {}",
                shown::json(&serde_json::to_string(&agreed).unwrap_or_default())
            ),
            Some(Ok(ListenEvent::Notification(n))) => {
                // A reader that went away (`| head -1`) ends the listening, quietly.
                let n = shown::json(&n.to_string()).into_owned();
                if writeln!(out, "{n}").and_then(|()| out.flush()).is_err() {
                    return Ok(Exit::Success);
                }
            }
            Some(Ok(ListenEvent::Ended)) | None => {
                eprintln!("tessera: the server ended the subscription");
                return Ok(Exit::Success);
            }
            Some(Err(e)) => return Err(failed(e)),
        }
    }
}

/// Lists the tools (for the arguments' types), then calls `tool` to the end.
async fn call(
    c: &McpClient,
    tool: &str,
    args: &[String],
    args_json: Option<&str>,
) -> Result<Value, (Exit, String)> {
    let tools = c.list_tools().await.map_err(failed)?;
    let schema = tools
        .iter()
        .find(|t| t.name == tool)
        .map(|t| Value::Object(t.input_schema.clone()));
    let arguments =
        arguments::build(args, args_json, schema.as_ref()).map_err(|e| (Exit::Usage, e))?;
    c.call_tool_raw(tool, arguments).await.map_err(failed)
}

fn keygen() -> Result<String, String> {
    use base64::Engine;
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness available: {e}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

//! `rmcp-counter`: the `increase-counter` MRTR tool on the official Rust MCP
//! SDK (`rmcp` 3.11), served over its Streamable HTTP transport in stateless
//! mode (protocol revision 2026-07-28 only, JSON responses), for benchmarks
//! against the Tessera `counter` example.
//!
//! Round 1 (no `requestState`) asks for an amount; round 2 (amount accepted)
//! asks for a confirmation and carries the amount in a sealed `requestState`;
//! round 3 (confirm true) answers `Counter increased by {amount}; next value is
//! {next}`. Anything else answers `Counter increase cancelled.`
//!
//! With `--sessionful` it serves the same tool the initialize-era way instead
//! (sessions, `LocalSessionManager`, SSE): the handler awaits two
//! `elicitation/create` requests pushed on the open `tools/call` stream, so
//! every pending question holds a stream, a session and a task. `bench/waiting`
//! uses it as the stream-holding comparison.
//!
//! `requestState` is sealed with rmcp's own `RequestStateCodec` (HMAC-SHA256,
//! format `rs1`), bound through associated data to the tool name and the
//! call's arguments, with a 600 s TTL.

use std::{process::ExitCode, sync::Arc, time::Duration};

use rmcp::{
    ErrorData, RoleServer, ServerHandler,
    handler::server::{
        router::tool::ToolRouter,
        tool::{InputResponses, RequestState},
        wrapper::Parameters,
    },
    model::{
        CallToolResponse, CallToolResult, ClientCapabilities, ContentBlock, ElicitRequest,
        ElicitRequestParams, ElicitationAction, ElicitationSchema, InputRequest, InputRequests,
        InputRequiredResult, ProtocolVersion, RequestStateCodec, SealOptions, ServerCapabilities,
        ServerConfig,
    },
    service::RequestContext,
    tool, tool_handler, tool_router,
    transport::streamable_http_server::{
        StreamableHttpServerConfig, StreamableHttpService,
        session::{local::LocalSessionManager, never::NeverSessionManager},
    },
};
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

const KEY_VAR: &str = "MRTR_REQUEST_STATE_KEY";
const DEFAULT_ADDR: &str = "127.0.0.1:8788";
const TICKET_TTL: Duration = Duration::from_secs(600);
const CANCELLED: &str = "Counter increase cancelled.";

/// The tool's arguments.
#[derive(Deserialize, schemars::JsonSchema)]
struct CounterArgs {
    /// Current counter value
    current: f64,
}

/// What the sealed `requestState` carries between rounds.
#[derive(Serialize, Deserialize)]
#[serde(tag = "step", rename_all = "lowercase")]
enum Ticket {
    /// Round 1 asked for the amount.
    Amount,
    /// Round 2 asked for the confirmation of this amount.
    Confirm { amount: f64 },
}

#[derive(Clone)]
struct CounterServer {
    codec: Arc<RequestStateCodec>,
    router: Arc<ToolRouter<CounterServer>>,
}

impl CounterServer {
    fn new(codec: RequestStateCodec) -> Self {
        Self {
            codec: Arc::new(codec),
            router: Arc::new(Self::tool_router()),
        }
    }

    /// Tickets are bound to the tool and to the call's arguments, so a ticket
    /// cannot be redeemed in a call with other arguments or on another tool.
    fn binding(current: f64) -> Vec<u8> {
        let mut ad = b"tools/call\0increase-counter\0".to_vec();
        ad.extend_from_slice(&current.to_bits().to_be_bytes());
        ad
    }

    fn seal(&self, ticket: &Ticket, current: f64) -> Result<String, ErrorData> {
        let ad = Self::binding(current);
        self.codec
            .seal_json_with(
                ticket,
                &SealOptions::new().associated_data(&ad).ttl(TICKET_TTL),
            )
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    fn open(&self, sealed: &str, current: f64) -> Result<Ticket, ErrorData> {
        self.codec
            .open_json_with(sealed, &Self::binding(current))
            .map_err(|_| {
                ErrorData::invalid_params(
                    "Invalid or expired requestState",
                    Some(json!({ "reason": "invalid_request_state" })),
                )
            })
    }
}

/// `elicitation: {}` counts as form support (the spec's backwards-compatible
/// reading); `elicitation: {url: {}}` alone does not.
fn supports_form_elicitation(ctx: &RequestContext<RoleServer>) -> bool {
    ctx.client_capabilities()
        .and_then(|caps| caps.elicitation)
        .is_some_and(|e| e.form.is_some() || e.url.is_none())
}

fn missing_form_capability() -> ErrorData {
    let required: ClientCapabilities =
        serde_json::from_value(json!({ "elicitation": { "form": {} } }))
            .expect("static capabilities");
    ErrorData::missing_required_client_capability(required)
}

fn form(key: &str, message: String, schema: ElicitationSchema) -> InputRequests {
    let mut requests = InputRequests::new();
    requests.insert(
        key.to_owned(),
        InputRequest::Elicitation(ElicitRequest::new(
            ElicitRequestParams::FormElicitationParams {
                meta: None,
                message,
                requested_schema: schema,
            },
        )),
    );
    requests
}

fn amount_form() -> InputRequests {
    let schema = ElicitationSchema::builder()
        .required_number_property("amount", |n| {
            n.title("Amount")
                .description("The amount to add to the current value")
        })
        .build()
        .expect("static schema");
    form(
        "amount",
        "By how much should the counter increase?".to_owned(),
        schema,
    )
}

fn confirmation_form(current: f64, amount: f64) -> InputRequests {
    let schema = ElicitationSchema::builder()
        .required_bool_property("confirm", |b| b.title("Confirm increase"))
        .build()
        .expect("static schema");
    form(
        "confirmation",
        format!("Increase {current} by {amount}?"),
        schema,
    )
}

/// The content of an `accept` answer under `key`, if that is what was sent.
fn accepted<'a>(
    responses: Option<&'a rmcp::model::InputResponses>,
    key: &str,
) -> Option<&'a Value> {
    let answer = responses?.get(key)?;
    if answer.get("action")?.as_str()? != "accept" {
        return None;
    }
    answer.get("content").filter(|c| c.is_object())
}

fn text(message: String) -> CallToolResponse {
    CallToolResult::success(vec![ContentBlock::text(message)]).into()
}

#[tool_router]
impl CounterServer {
    #[tool(
        name = "increase-counter",
        description = "Calculate a counter increase using two stateless elicitation rounds"
    )]
    async fn increase_counter(
        &self,
        Parameters(args): Parameters<CounterArgs>,
        RequestState(state): RequestState,
        InputResponses(responses): InputResponses,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let current = args.current;
        let Some(sealed) = state else {
            // Round 1.
            if !supports_form_elicitation(&ctx) {
                return Err(missing_form_capability());
            }
            let ticket = self.seal(&Ticket::Amount, current)?;
            return Ok(InputRequiredResult::new(Some(amount_form()), Some(ticket)).into());
        };
        match self.open(&sealed, current)? {
            // Round 2.
            Ticket::Amount => {
                let Some(amount) = accepted(responses.as_ref(), "amount")
                    .and_then(|c| c.get("amount"))
                    .and_then(Value::as_f64)
                else {
                    return Ok(text(CANCELLED.to_owned()));
                };
                if !supports_form_elicitation(&ctx) {
                    return Err(missing_form_capability());
                }
                let ticket = self.seal(&Ticket::Confirm { amount }, current)?;
                Ok(
                    InputRequiredResult::new(
                        Some(confirmation_form(current, amount)),
                        Some(ticket),
                    )
                    .into(),
                )
            }
            // Round 3.
            Ticket::Confirm { amount } => {
                let confirmed = accepted(responses.as_ref(), "confirmation")
                    .and_then(|c| c.get("confirm"))
                    .and_then(Value::as_bool)
                    == Some(true);
                Ok(text(if confirmed {
                    format!(
                        "Counter increased by {amount}; next value is {}",
                        current + amount
                    )
                } else {
                    CANCELLED.to_owned()
                }))
            }
        }
    }
}

#[tool_handler(router = self.router)]
impl ServerHandler for CounterServer {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = ProtocolVersion::V_2026_07_28;
        info.server_info.name = "rmcp-counter".into();
        info.server_info.version = env!("CARGO_PKG_VERSION").into();
        info
    }

    /// Like `legacy: "reject"`: only the stateless revision is served.
    fn supported_protocol_versions(&self) -> std::borrow::Cow<'static, [ProtocolVersion]> {
        std::borrow::Cow::Owned(vec![ProtocolVersion::V_2026_07_28])
    }
}

/// The same tool served the initialize-era way: each question is an
/// `elicitation/create` request pushed to the client while the call waits.
#[derive(Clone)]
struct SessionfulCounter {
    router: Arc<ToolRouter<SessionfulCounter>>,
}

/// Pushes one form question and waits for the person's answer: the content of
/// an `accept`, or `None`.
async fn ask(
    ctx: &RequestContext<RoleServer>,
    requests: InputRequests,
) -> Result<Option<Value>, ErrorData> {
    let Some((_, InputRequest::Elicitation(request))) = requests.into_iter().next() else {
        return Err(ErrorData::internal_error("no form", None));
    };
    let answer = ctx
        .peer
        .create_elicitation(request.params)
        .await
        .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
    Ok(match answer.action {
        ElicitationAction::Accept => answer.content,
        _ => None,
    })
}

#[tool_router]
impl SessionfulCounter {
    #[tool(
        name = "increase-counter",
        description = "Calculate a counter increase, asking the user twice over elicitation/create"
    )]
    async fn increase_counter(
        &self,
        Parameters(args): Parameters<CounterArgs>,
        ctx: RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ErrorData> {
        let current = args.current;
        let cancelled = || CallToolResult::success(vec![ContentBlock::text(CANCELLED)]);
        let amount = ask(&ctx, amount_form())
            .await?
            .and_then(|c| c.get("amount").and_then(Value::as_f64));
        let Some(amount) = amount else {
            return Ok(cancelled());
        };
        let confirmed = ask(&ctx, confirmation_form(current, amount))
            .await?
            .and_then(|c| c.get("confirm").and_then(Value::as_bool))
            == Some(true);
        if !confirmed {
            return Ok(cancelled());
        }
        Ok(CallToolResult::success(vec![ContentBlock::text(format!(
            "Counter increased by {amount}; next value is {}",
            current + amount
        ))]))
    }
}

#[tool_handler(router = self.router)]
impl ServerHandler for SessionfulCounter {
    fn get_info(&self) -> ServerConfig {
        let mut info = ServerConfig::new(ServerCapabilities::builder().enable_tools().build());
        info.protocol_version = ProtocolVersion::V_2025_11_25;
        info.server_info.name = "rmcp-counter-sessionful".into();
        info.server_info.version = env!("CARGO_PKG_VERSION").into();
        info
    }
}

const USAGE: &str = "usage: rmcp-counter [--addr HOST:PORT] [--sessionful]

  --addr         where to listen (default 127.0.0.1:8788)
  --sessionful   serve the initialize era with sessions, asking over
                 elicitation/create on the open stream (rmcp's defaults)

The requestState HMAC key (at least 32 bytes) comes from MRTR_REQUEST_STATE_KEY.";

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("rmcp-counter: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut addr = DEFAULT_ADDR.to_owned();
    let mut sessionful = false;
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        match arg.as_str() {
            "--addr" => {
                addr = args
                    .next()
                    .ok_or_else(|| format!("--addr needs a value\n\n{USAGE}"))?
            }
            "--sessionful" => sessionful = true,
            "-h" | "--help" => return Err(USAGE.to_owned()),
            other => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
        }
    }
    if sessionful {
        let server = SessionfulCounter {
            router: Arc::new(SessionfulCounter::tool_router()),
        };
        // rmcp's defaults: sessions, SSE responses, 15 s keep-alive.
        let service = StreamableHttpService::new(
            move || Ok(server.clone()),
            Arc::new(LocalSessionManager::default()),
            StreamableHttpServerConfig::default(),
        );
        return serve(
            &addr,
            axum::Router::new().route_service("/mcp", service),
            "sessionful, 2025-11-25, SSE",
        );
    }
    let key = std::env::var(KEY_VAR)
        .ok()
        .filter(|k| !k.is_empty())
        .ok_or_else(|| format!("{KEY_VAR} must be set (make one with: openssl rand -base64 32)"))?;
    let codec = RequestStateCodec::try_new(key.into_bytes())
        .map_err(|e| format!("{KEY_VAR} is unusable: {e}"))?;
    let server = CounterServer::new(codec);

    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_stateless_protocol_metadata_required(true)
        .with_sse_keep_alive(None)
        .with_sse_retry(None);
    let service = StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(NeverSessionManager::default()),
        config,
    );
    serve(
        &addr,
        axum::Router::new().route_service("/mcp", service),
        "2026-07-28, stateless, JSON",
    )
}

fn serve(addr: &str, app: axum::Router, mode: &str) -> Result<(), String> {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async move {
        use axum::serve::ListenerExt;
        let listener = tokio::net::TcpListener::bind(addr)
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let local = listener.local_addr().map_err(|e| e.to_string())?;
        eprintln!("rmcp-counter: serving MCP (rmcp 3.11, {mode}) at http://{local}/mcp");
        let listener = listener.tap_io(|tcp| {
            let _ = tcp.set_nodelay(true);
        });
        axum::serve(listener, app)
            .with_graceful_shutdown(async {
                let _ = tokio::signal::ctrl_c().await;
            })
            .await
            .map_err(|e| e.to_string())
    })
}

//! A request resolved once: the catalog snapshot it is served from, the tool
//! it calls as its caller sees it, what its ticket binds to, and its ticket,
//! opened once. The HTTP endpoint's header check, the request's span and the
//! round trip all read this one value, so per request the catalog is read
//! once, the name looked up once and the arguments digested once. The ticket
//! is opened at most once, when first needed: by the span of a later round
//! that must find round one's, else when the round is served — after the
//! middleware, so a request refused before its round costs no decryption.
//! Its single use is redeemed only when the round is served.

use std::sync::{Arc, OnceLock};

use serde_json::Value;
use tessera_state::{Binding, BindingPrefix, Opened, RequestStateCodec};

use crate::catalog::Catalog;
use crate::error::RequestStateFailure;
use crate::intake::Request;
use crate::round_state::TicketBody;
use crate::{McpServer, Offered, RequestFacts, ToolDef};

/// What a request names, resolved once ([`McpServer::resolve`]); serve it
/// with [`McpServer::serve_resolved`]. One allocation: it moves through
/// every layer of the request's future, and a pointer moves cheaply.
pub struct Resolved(pub(crate) Box<Parts>);

/// What [`Resolved`] holds.
pub(crate) struct Parts {
    /// What the server offered when the request arrived.
    pub(crate) catalog: Arc<Catalog>,
    /// The tool a `tools/call` names, when its caller is shown it.
    pub(crate) tool: Option<Arc<ToolDef>>,
    /// Whether the server has the tool or prompt the request names.
    known_target: bool,
    /// What a ticket of this request is bound to (`tools/call` of a known
    /// tool with object arguments, `prompts/get`, `resources/read`).
    pub(crate) binding: Option<Binding>,
    /// The server's codec, to open the ticket when it is first needed.
    codec: Option<RequestStateCodec>,
    /// The request's ticket once opened (by the span, before serving).
    opened: OnceLock<Ticket>,
}

/// A request's `requestState`, opened against its binding.
pub(crate) enum Ticket {
    /// None (or `null`): the call's first round.
    Absent,
    /// Opened; a single-use ticket is redeemed when the round is served.
    Opened(Box<Opened<TicketBody>>),
    /// It does not open (the reason is reported when the round is served).
    Refused(RequestStateFailure),
    /// The era edge's own round state, never sealed: the bridge holds it
    /// between the rounds of a call it drives.
    Kept(Box<TicketBody>),
}

impl Resolved {
    /// The tool a `tools/call` names, as its caller sees it: `None` for any
    /// other method, an unknown tool, or one hidden from this caller.
    pub fn tool(&self) -> Option<&Arc<ToolDef>> {
        self.0.tool.as_ref()
    }
}

impl Resolved {
    /// Serves the request with the round state the era edge kept, instead
    /// of a ticket it would open.
    pub(crate) fn keep(&mut self, body: Box<TicketBody>) {
        self.0.opened = OnceLock::from(Ticket::Kept(body));
    }
}

impl Parts {
    /// The ticket `token` (the request's `requestState`), opened once: the
    /// one the span opened, else opened now.
    pub(crate) fn take_ticket(&mut self, token: Option<&Value>) -> Ticket {
        match self.opened.take() {
            Some(ticket) => ticket,
            None => self.open(token),
        }
    }

    /// Opens `token` against the binding.
    fn open(&self, token: Option<&Value>) -> Ticket {
        let binding = match (token, &self.binding) {
            (None | Some(Value::Null), _) => return Ticket::Absent,
            // Nothing to bind to: the request is refused before its ticket matters.
            (Some(_), None) => return Ticket::Absent,
            (Some(_), Some(binding)) => binding,
        };
        let Some(Value::String(token)) = token else {
            return Ticket::Refused(RequestStateFailure::NotAString);
        };
        let Some(codec) = &self.codec else {
            return Ticket::Refused(RequestStateFailure::NoCodec);
        };
        #[cfg(test)]
        counted::OPENS.with(|opens| opens.set(opens.get() + 1));
        match codec.open::<TicketBody>(token, binding) {
            Ok(opened) => Ticket::Opened(Box::new(opened)),
            Err(e) => Ticket::Refused(RequestStateFailure::Open(e)),
        }
    }
}

impl crate::telemetry::Target for Resolved {
    fn known(&self) -> bool {
        self.0.known_target
    }

    fn round_one(&self, request: &Request) -> Option<crate::telemetry::RoundOne<'_>> {
        let parts = &self.0;
        let ticket = parts
            .opened
            .get_or_init(|| parts.open(request.param(tessera_protocol::REQUEST_STATE)));
        match ticket {
            Ticket::Opened(opened) => opened.payload.flow.as_ref()?.round_one(),
            Ticket::Kept(body) => body.flow.as_ref()?.round_one(),
            Ticket::Absent | Ticket::Refused(_) => None,
        }
    }
}

impl McpServer {
    /// Resolves what `request` names, once, from one snapshot of the catalog:
    /// the tool as this caller sees it and what its ticket binds to (the
    /// ticket itself is opened once, when first needed). Transports that
    /// look at the request before serving it (the HTTP endpoint's
    /// `Mcp-Param-*` check, the span) resolve it first and hand the result to
    /// [`serve_resolved`](Self::serve_resolved); [`serve`](Self::serve)
    /// resolves a request itself.
    pub fn resolve(&self, request: &Request, facts: &RequestFacts) -> Resolved {
        let catalog = self.catalog();
        let principal = facts.principal.as_deref();
        let empty = || Value::Object(serde_json::Map::new());
        let arguments = request.param("arguments");
        let (tool, known_target, binding) = match (request.method.as_str(), request.target()) {
            ("tools/call", Some(name)) => {
                let known = catalog.tools.get(name);
                let tool = known
                    .filter(|tool| self.shows(facts, Offered::Tool(tool)))
                    .cloned();
                // Arguments that are not an object are refused before any ticket is made.
                let binding = tool.as_ref().and_then(|tool| match arguments {
                    None | Some(Value::Null) => {
                        Some(tool.binding.bind(&empty(), principal, &self.audience))
                    }
                    Some(given @ Value::Object(_)) => {
                        Some(tool.binding.bind(given, principal, &self.audience))
                    }
                    Some(_) => None,
                });
                (tool, known.is_some(), binding)
            }
            ("prompts/get", Some(name)) => {
                let known = catalog.prompts.contains_key(name);
                let binding = known.then(|| {
                    let arguments = match arguments {
                        None | Some(Value::Null) => &empty(),
                        Some(given) => given,
                    };
                    BindingPrefix::new("prompts/get", name).bind(
                        arguments,
                        principal,
                        &self.audience,
                    )
                });
                (None, known, binding)
            }
            // A resource read binds its URI, not arguments.
            ("resources/read", Some(uri)) => {
                let binding = BindingPrefix::new("resources/read", uri).bind(
                    &empty(),
                    principal,
                    &self.audience,
                );
                (None, false, Some(binding))
            }
            _ => (None, false, None),
        };
        Resolved(Box::new(Parts {
            catalog,
            tool,
            known_target,
            binding,
            codec: self.codec.clone(),
            opened: OnceLock::new(),
        }))
    }
}

/// What the tests count: tickets opened and sealed on this thread.
#[cfg(test)]
pub(super) mod counted {
    thread_local! {
        /// Tickets opened on this thread.
        pub(in crate::dispatch) static OPENS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        /// Tickets sealed on this thread.
        pub(in crate::dispatch) static SEALS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};
    use tessera_protocol::JsonRpcRequest;
    use tessera_state::{KeyRing, RequestStateCodec, StateKey};

    use crate::{Context, Form, McpServer, RequestFacts, ToolDef};

    use super::counted::{OPENS, SEALS};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Amount {
        amount: f64,
    }
    impl Form for Amount {
        const KEY: &'static str = "amount";
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Confirmation {
        confirm: bool,
    }
    impl Form for Confirmation {
        const KEY: &'static str = "confirmation";
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Current {
        current: f64,
    }

    fn counter() -> McpServer {
        let key = StateKey::from_secret_str("resolve-once test key, long enough to use").unwrap();
        McpServer::builder("resolve", "1.0.0")
            .request_state(RequestStateCodec::new(KeyRing::new("k1", key).unwrap()))
            .tool(ToolDef::new(
                "increase-counter",
                |ctx: Context, args: Current| async move {
                    let Amount { amount } = ctx.ask("By how much?")?;
                    let Confirmation { confirm } = ctx.ask("Sure?")?;
                    crate::Result::<String>::Ok(if confirm {
                        format!("next value is {}", args.current + amount)
                    } else {
                        "cancelled".to_owned()
                    })
                },
            ))
            .build()
            .unwrap()
    }

    fn block<T>(f: impl std::future::Future<Output = T>) -> T {
        tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap()
            .block_on(f)
    }

    /// One round as every transport serves it (resolve, observe, serve);
    /// returns the result, the catalog snapshots it took, and the tickets it
    /// opened before serving (for the span) and in all.
    fn round(server: &McpServer, id: u64, extra: Value) -> (Value, usize, (usize, usize)) {
        let mut params = json!({
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
            },
            "name": "increase-counter",
            "arguments": {"current": 10}
        });
        if let (Some(p), Value::Object(e)) = (params.as_object_mut(), extra) {
            p.extend(e);
        }
        let request: JsonRpcRequest<Value> = serde_json::from_value(
            json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}),
        )
        .unwrap();
        let request = crate::intake::Request::new(request.id, request.method, request.params);
        let facts = RequestFacts::modern();
        crate::catalog::READS.with(|reads| reads.set(0));
        OPENS.with(|opens| opens.set(0));
        let (handled, before) = block(async {
            let resolved = server.resolve(&request, &facts);
            let observed = server.observe(&request, &facts, &resolved);
            let before = OPENS.with(std::cell::Cell::get);
            let handled = observed
                .run(server.serve_resolved(request, facts, resolved))
                .await;
            (handled, before)
        });
        let reads = crate::catalog::READS.with(std::cell::Cell::get);
        let opens = OPENS.with(std::cell::Cell::get);
        (handled.result_value().unwrap(), reads, (before, opens))
    }

    /// Each round of a flow takes one catalog snapshot and opens its ticket
    /// once, spans and metrics included: before serving when the span needs
    /// round one's (`by_span`), else only to serve.
    fn one_snapshot_and_one_open_per_round(by_span: bool) {
        let server = counter();
        let once = (usize::from(by_span), 1);
        let (first, reads, opens) = round(&server, 1, json!({}));
        assert_eq!((reads, opens), (1, (0, 0)), "round one: {first}");
        let (second, reads, opens) = round(
            &server,
            2,
            json!({"requestState": first["requestState"],
                   "inputResponses": {"amount": {"action": "accept", "content": {"amount": 5}}}}),
        );
        assert_eq!((reads, opens), (1, once), "round two: {second}");
        let (done, reads, opens) = round(
            &server,
            3,
            json!({"requestState": second["requestState"],
                   "inputResponses": {"confirmation": {"action": "accept", "content": {"confirm": true}}}}),
        );
        assert_eq!((reads, opens), (1, once), "round three: {done}");
        assert_eq!(done["content"][0]["text"], "next value is 15");
    }

    #[test]
    fn a_request_is_resolved_once() {
        // No span recorded (whatever another test installed globally).
        let quiet = tracing::subscriber::NoSubscriber::default();
        tracing::subscriber::with_default(quiet, || one_snapshot_and_one_open_per_round(false));
    }

    /// With spans recorded into OpenTelemetry, a later round's span takes
    /// round one's as its parent from its ticket, opened for the span before
    /// the round is served and not again to serve it.
    #[cfg(feature = "otel")]
    #[test]
    fn a_request_is_resolved_once_with_otel_spans() {
        use opentelemetry::trace::TracerProvider as _;
        use tracing_subscriber::layer::SubscriberExt as _;
        let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
        let subscriber = tracing_subscriber::registry()
            .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("resolve-test")));
        tracing::subscriber::with_default(subscriber, || {
            one_snapshot_and_one_open_per_round(true);
        });
    }

    /// Answers each pushed question as a person would, by its key.
    struct Person;

    impl crate::bridge::Asker for Person {
        fn ask<'a>(
            &'a self,
            _method: &'a str,
            params: Value,
        ) -> crate::BoxFuture<'a, Result<Value, crate::bridge::PeerFailure>> {
            let key = params["_meta"][tessera_protocol::INPUT_KEY_META_KEY].clone();
            Box::pin(async move {
                Ok(match key.as_str() {
                    Some("amount") => json!({"action": "accept", "content": {"amount": 5}}),
                    _ => json!({"action": "accept", "content": {"confirm": true}}),
                })
            })
        }
    }

    /// The era bridge drives an initialize-era call's rounds on the round
    /// driver and keeps the round state as a value: across the whole
    /// three-round call, no ticket is sealed or opened, and the catalog is
    /// read once per round.
    #[test]
    fn the_bridge_seals_and_opens_no_ticket() {
        let server = counter();
        let session = crate::bridge::LegacySession {
            version: "2025-11-25".into(),
            capabilities: json!({"elicitation": {"form": {}}}),
            client_info: None,
        };
        let request = crate::intake::Request::new(
            tessera_protocol::RequestId::from(7),
            "tools/call",
            Some(json!({"name": "increase-counter", "arguments": {"current": 10}})),
        );
        crate::catalog::READS.with(|reads| reads.set(0));
        OPENS.with(|opens| opens.set(0));
        SEALS.with(|seals| seals.set(0));
        let handled = block(
            crate::bridge::Bridge {
                server: &server,
                session: &session,
                asker: &Person,
                facts: RequestFacts::legacy("2025-11-25"),
                max_rounds: crate::bridge::DEFAULT_MAX_ROUNDS,
                log_level: tessera_protocol::LoggingLevel::Debug,
            }
            .serve(request),
        )
        .unwrap();
        let result = handled.result_value().unwrap();
        assert_eq!(result["content"][0]["text"], "next value is 15", "{result}");
        assert!(
            result.get("resultType").is_none(),
            "the old shape: {result}"
        );
        assert_eq!(OPENS.with(std::cell::Cell::get), 0);
        assert_eq!(SEALS.with(std::cell::Cell::get), 0);
        assert_eq!(crate::catalog::READS.with(std::cell::Cell::get), 3);
    }
}

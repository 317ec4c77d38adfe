//! A request resolved once: the catalog snapshot it is served from, the tool
//! it calls as its caller sees it, what its ticket binds to, and its ticket
//! opened. The HTTP endpoint's header check, the request's span and the
//! round trip all read this one value, so per request the catalog is read
//! once, the name looked up once, the arguments digested once and the ticket
//! opened once (its single use is redeemed later, when the round is served).

use std::sync::Arc;

use serde_json::Value;
use tessera_state::{Binding, BindingPrefix, Opened};

use super::ticket::TicketBody;
use crate::catalog::Catalog;
use crate::error::RequestStateFailure;
use crate::intake::Request;
use crate::{McpServer, Offered, RequestFacts, ToolDef};

/// What a request names, resolved once ([`McpServer::resolve`]); serve it
/// with [`McpServer::serve_resolved`].
pub struct Resolved {
    /// What the server offered when the request arrived.
    pub(crate) catalog: Arc<Catalog>,
    /// The tool a `tools/call` names, when its caller is shown it.
    pub(crate) tool: Option<Arc<ToolDef>>,
    /// Whether the server has the tool or prompt the request names.
    known_target: bool,
    /// What a ticket of this request is bound to (`tools/call` of a known
    /// tool with object arguments, `prompts/get`, `resources/read`).
    pub(crate) binding: Option<Binding>,
    /// The `requestState` the request carries.
    pub(crate) ticket: Ticket,
}

/// A request's `requestState`, opened against its binding.
pub(crate) enum Ticket {
    /// None (or `null`): the call's first round.
    Absent,
    /// Opened; a single-use ticket is redeemed when the round is served.
    Opened(Box<Opened<TicketBody>>),
    /// It does not open (the reason is reported when the round is served).
    Refused(RequestStateFailure),
}

impl Resolved {
    /// The tool a `tools/call` names, as its caller sees it: `None` for any
    /// other method, an unknown tool, or one hidden from this caller.
    pub fn tool(&self) -> Option<&Arc<ToolDef>> {
        self.tool.as_ref()
    }
}

impl crate::telemetry::Target for Resolved {
    fn known(&self) -> bool {
        self.known_target
    }

    fn round_one(&self) -> Option<&str> {
        match &self.ticket {
            Ticket::Opened(opened) => opened.payload.flow.as_ref()?.first.as_deref(),
            _ => None,
        }
    }
}

impl McpServer {
    /// Resolves what `request` names, once, from one snapshot of the catalog:
    /// the tool as this caller sees it, what its ticket binds to, and the
    /// ticket it carries, opened. Transports that look at the request before
    /// serving it (the HTTP endpoint's `Mcp-Param-*` check, the span) resolve
    /// it first and hand the result to [`serve_resolved`](Self::serve_resolved);
    /// [`serve`](Self::serve) resolves a request itself.
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
        let ticket = match (request.param(tessera_protocol::REQUEST_STATE), &binding) {
            (None | Some(Value::Null), _) => Ticket::Absent,
            // Nothing to bind to: the request is refused before its ticket matters.
            (Some(_), None) => Ticket::Absent,
            (Some(Value::String(token)), Some(binding)) => match &self.codec {
                None => Ticket::Refused(RequestStateFailure::NoCodec),
                Some(codec) => match codec.open::<TicketBody>(token, binding) {
                    Ok(opened) => Ticket::Opened(Box::new(opened)),
                    Err(e) => Ticket::Refused(RequestStateFailure::Open(e)),
                },
            },
            (Some(_), Some(_)) => Ticket::Refused(RequestStateFailure::NotAString),
        };
        Resolved {
            catalog,
            tool,
            known_target,
            binding,
            ticket,
        }
    }
}

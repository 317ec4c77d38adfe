//! What a sealed `requestState` ticket carries between rounds.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_protocol::JsonObject;

use tessera_state::Binding;

use crate::answer::Kept;
use crate::error::RequestStateFailure;
use crate::question::Asked;
use crate::telemetry::flow::Flow;
use crate::{McpServer, ServerError};

/// The payload sealed into each ticket: the handler's carried state, what
/// this round asked, and every answer given in earlier rounds of the same call
/// (accepted form and URL contents under `a`; sampling and roots answers under `o`).
#[derive(Debug, Default, Serialize, Deserialize)]
pub(crate) struct TicketBody {
    #[serde(rename = "s", default, skip_serializing_if = "Option::is_none")]
    pub state: Option<Value>,
    #[serde(rename = "q", default, skip_serializing_if = "IndexMap::is_empty")]
    pub asked: IndexMap<String, Asked>,
    #[serde(rename = "a", default, skip_serializing_if = "IndexMap::is_empty")]
    pub accepted: IndexMap<String, JsonObject>,
    #[serde(rename = "o", default, skip_serializing_if = "IndexMap::is_empty")]
    pub other: IndexMap<String, Kept>,
    /// The flow's id, round and round one's span, when spans are recorded.
    #[serde(rename = "f", default, skip_serializing_if = "Option::is_none")]
    pub flow: Option<Flow>,
}

impl McpServer {
    /// Opens `token` bound to `binding`; a single-use ticket is redeemed through the ledger.
    pub(super) async fn open_ticket(
        &self,
        token: &Value,
        binding: &Binding,
        single_use: bool,
    ) -> Result<TicketBody, ServerError> {
        let fail = |reason: RequestStateFailure| {
            tracing::info!(reason = reason.reason(), detail = ?reason, "requestState refused");
            crate::telemetry::metrics::ticket_refused(reason.reason());
            ServerError::InvalidRequestState { reason }
        };
        let Value::String(token) = token else {
            return Err(fail(RequestStateFailure::NotAString));
        };
        let Some(codec) = &self.codec else {
            return Err(fail(RequestStateFailure::NoCodec));
        };
        let opened = codec
            .open::<TicketBody>(token, binding)
            .map_err(|e| fail(RequestStateFailure::Open(e)))?;
        if single_use && let Some(ledger) = &self.ledger {
            // Remembered until no instance sharing the key could open it again.
            let remember_until = opened
                .expires_at
                .saturating_add(tessera_state::MAX_CLOCK_SKEW_SECS);
            let started = tessera_protocol::clock::Instant::now();
            let redeemed = ledger.consume(&opened.ticket_id, remember_until).await;
            let took = started.elapsed().as_secs_f64();
            match redeemed {
                Ok(()) => crate::telemetry::metrics::ledger(took, "redeemed", None),
                Err(tessera_state::LedgerError::AlreadyUsed) => {
                    crate::telemetry::metrics::ledger(took, "already_used", None);
                    return Err(fail(RequestStateFailure::AlreadyUsed("already_used")));
                }
                // A full or failing ledger is not a bad ticket: fail closed, retryably (never a second acceptance).
                Err(e) => {
                    tracing::warn!(error = %e, "ticket ledger refused a redemption");
                    crate::telemetry::metrics::ledger(took, "failed", Some(e.reason()));
                    let retry_after_secs = match e {
                        tessera_state::LedgerError::LedgerFull {
                            retry_after_secs, ..
                        } => retry_after_secs,
                        _ => 5,
                    };
                    return Err(ServerError::Unavailable {
                        message: format!(
                            "Service Unavailable: this server cannot record single-use requestState tickets right now; retry in {retry_after_secs} s"
                        ),
                        retry_after_secs,
                    });
                }
            }
        }
        Ok(opened.payload)
    }
}

impl McpServer {
    /// What a ticket of `method` on `target` is bound to, for `arguments`
    /// (absent or `null`: `{}`) from `principal`: the one rule for serving a
    /// round and for reading round one's span back before it is served. A
    /// resource read binds its URI, not arguments. `None` for an unknown tool
    /// or a method without tickets.
    pub(crate) fn ticket_binding(
        &self,
        method: &str,
        target: &str,
        arguments: &Value,
        principal: Option<&str>,
    ) -> Option<Binding> {
        let none = Value::Object(serde_json::Map::new());
        let arguments = match (method, arguments) {
            ("resources/read", _) | (_, Value::Null) => &none,
            (_, given) => given,
        };
        let named;
        let catalog;
        let prefix = match method {
            "tools/call" => {
                catalog = self.catalog();
                &catalog.tools.get(target)?.binding
            }
            "prompts/get" | "resources/read" => {
                named = tessera_state::BindingPrefix::new(method, target);
                &named
            }
            _ => return None,
        };
        Some(prefix.bind(arguments, principal, &self.audience))
    }

    /// Round one's span context, read from the ticket `request` carries (for
    /// a round that arrives without trace context of its own). The ticket is
    /// opened again when the request is served, and only then checked for
    /// single use; `None` when there is no ticket or it does not open.
    #[cfg(feature = "otel")]
    pub(crate) fn round_one(
        &self,
        request: &crate::intake::Request,
        facts: &crate::RequestFacts,
    ) -> Option<opentelemetry::trace::SpanContext> {
        #[derive(Deserialize)]
        struct FlowOnly {
            #[serde(rename = "f")]
            flow: Option<Flow>,
        }
        let token = request.param("requestState")?.as_str()?;
        let codec = self.codec.as_ref()?;
        let arguments = request.param("arguments").unwrap_or(&Value::Null);
        let binding = self.ticket_binding(
            &request.method,
            request.target()?,
            arguments,
            facts.principal.as_deref(),
        )?;
        let opened = codec.open::<FlowOnly>(token, &binding).ok()?;
        crate::telemetry::flow::otel::round_one(opened.payload.flow?.first.as_deref()?)
    }
}

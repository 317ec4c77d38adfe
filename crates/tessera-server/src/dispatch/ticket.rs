//! What a sealed `requestState` ticket carries between rounds.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_protocol::JsonObject;

use super::resolve::Ticket;
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
    /// The body of the ticket a request carries, opened when it was
    /// [resolved](McpServer::resolve); a single-use ticket is redeemed
    /// through the ledger now. `None` for a call's first round.
    pub(super) async fn redeem(
        &self,
        ticket: Ticket,
        single_use: bool,
    ) -> Result<Option<TicketBody>, ServerError> {
        let fail = |reason: RequestStateFailure| {
            tracing::info!(reason = reason.reason(), detail = ?reason, "requestState refused");
            crate::telemetry::metrics::ticket_refused(reason.reason());
            ServerError::InvalidRequestState { reason }
        };
        let opened = match ticket {
            Ticket::Absent => return Ok(None),
            // Held by the edge, never shown to anyone: nothing to redeem.
            Ticket::Kept(body) => return Ok(Some(*body)),
            Ticket::Refused(reason) => return Err(fail(reason)),
            Ticket::Opened(opened) => opened,
        };
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
        Ok(Some(opened.payload))
    }
}

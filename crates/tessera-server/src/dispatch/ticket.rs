//! Redeeming the ticket a request carries: its round state, a single-use
//! ticket through the ledger.

use super::resolve::Ticket;
use crate::error::RequestStateFailure;
use crate::round_state::TicketBody;
use crate::{McpServer, ServerError};

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

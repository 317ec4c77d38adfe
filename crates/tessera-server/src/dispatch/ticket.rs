//! What a sealed `requestState` ticket carries between rounds.

use indexmap::IndexMap;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tessera_protocol::JsonObject;

use tessera_state::Binding;

use crate::answer::Kept;
use crate::error::RequestStateFailure;
use crate::question::Asked;
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
            match ledger.consume(&opened.ticket_id, remember_until).await {
                Ok(()) => {}
                Err(tessera_state::LedgerError::AlreadyUsed) => {
                    return Err(fail(RequestStateFailure::AlreadyUsed("already_used")));
                }
                // A full or failing ledger is not a bad ticket: fail closed, retryably (never a second acceptance).
                Err(e) => {
                    tracing::warn!(error = %e, "ticket ledger refused a redemption");
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

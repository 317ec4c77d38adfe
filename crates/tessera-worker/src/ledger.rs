//! Single-use tickets on Workers: one Durable Object per ticket id records it
//! used until it expires. A Durable Object handles one event at a time and
//! its storage calls hold other events back (input gates), so of two
//! redemptions of the same id, in any isolate anywhere, exactly one wins.

use tessera_state::{LedgerError, LedgerFuture, TicketLedger};
use worker::ObjectNamespace;
use worker::send::{SendFuture, SendWrapper};

/// The binding name the Worker looks for (`durable_objects.bindings[].name`).
pub const LEDGER_BINDING: &str = "TICKET_LEDGER";

/// A [`TicketLedger`] backed by [`TicketLedgerObject`](crate::TicketLedgerObject)s: fails closed when
/// the object cannot be reached.
pub struct DurableObjectLedger {
    namespace: SendWrapper<ObjectNamespace>,
}

impl DurableObjectLedger {
    /// A ledger over the objects of `namespace`.
    pub fn new(namespace: ObjectNamespace) -> Self {
        Self {
            namespace: SendWrapper::new(namespace),
        }
    }

    async fn consume_now(
        &self,
        ticket_id: &str,
        expires_at: u64,
    ) -> std::result::Result<(), LedgerError> {
        let backend = |e: worker::Error| LedgerError::Backend(e.to_string().into());
        let stub = self
            .namespace
            .id_from_name(ticket_id)
            .and_then(|id| id.get_stub())
            .map_err(backend)?;
        let response = stub
            .fetch_with_str(&format!(
                "https://ticket-ledger/consume?expires_at={expires_at}"
            ))
            .await
            .map_err(backend)?;
        match response.status_code() {
            204 => Ok(()),
            409 => Err(LedgerError::AlreadyUsed),
            status => Err(LedgerError::Backend(
                format!("the ticket ledger object answered HTTP {status}").into(),
            )),
        }
    }
}

impl TicketLedger for DurableObjectLedger {
    fn consume<'a>(&'a self, ticket_id: &'a str, expires_at: u64) -> LedgerFuture<'a> {
        // The Workers runtime is single-threaded; its JS futures are not `Send`.
        Box::pin(SendFuture::new(self.consume_now(ticket_id, expires_at)))
    }
}

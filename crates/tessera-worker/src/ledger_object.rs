//! The Durable Object that records one ticket id as used.
// `#[durable_object]` generates the JavaScript-facing methods, undocumented.
#![allow(missing_docs)]

use worker::{DurableObject, Env, Request, Response, Result, State, durable_object};

/// The storage key holding the ticket's expiry (unix seconds).
const USED: &str = "used";

/// The Durable Object class behind [`DurableObjectLedger`](crate::DurableObjectLedger): export it from
/// the Worker (`pub use tessera_worker::TicketLedgerObject;`) and bind it as
/// `TICKET_LEDGER` with a `new_sqlite_classes` migration.
#[durable_object]
pub struct TicketLedgerObject {
    state: State,
}

impl DurableObject for TicketLedgerObject {
    fn new(state: State, _env: Env) -> Self {
        Self { state }
    }

    /// `GET /consume?expires_at=UNIX`: 204 the first time, 409 after.
    async fn fetch(&self, request: Request) -> Result<Response> {
        let url = request.url()?;
        let expires_at = url
            .query_pairs()
            .find(|(k, _)| k == "expires_at")
            .and_then(|(_, v)| v.parse::<u64>().ok());
        let Some(expires_at) = expires_at else {
            return Response::error("expires_at (unix seconds) is required", 400);
        };
        let storage = self.state.storage();
        if storage.get::<u64>(USED).await?.is_some() {
            return Ok(Response::empty()?.with_status(409));
        }
        // Forget the id once the ticket could no longer be opened anyway. The
        // alarm is set first: if recording then fails, nothing was recorded
        // and the client's retry can still redeem the ticket.
        let at =
            i64::try_from(expires_at.saturating_add(60).saturating_mul(1000)).unwrap_or(i64::MAX);
        let delay = at
            .saturating_sub(worker::Date::now().as_millis() as i64)
            .max(0);
        storage.set_alarm(delay).await?;
        storage.put(USED, expires_at).await?;
        Ok(Response::empty()?.with_status(204))
    }

    async fn alarm(&self) -> Result<Response> {
        self.state.storage().delete_all().await?;
        Response::ok("forgotten")
    }
}

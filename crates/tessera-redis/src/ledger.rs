//! The single-use ticket ledger every instance shares.

use redis::aio::ConnectionManager;
use tessera_state::{LedgerError, LedgerFuture, TicketLedger};

/// Records redeemed ticket ids in Redis with `SET key 1 NX EXAT expiry`:
/// atomic across instances (of two redemptions, exactly one sets the key),
/// and self-expiring with the ticket. Fails closed when Redis does not answer.
#[derive(Clone)]
pub struct RedisLedger {
    conn: ConnectionManager,
    prefix: String,
}

impl RedisLedger {
    /// A ledger on `conn`, its keys under `tessera:{namespace}:ticket:`.
    pub fn new(conn: ConnectionManager, namespace: &str) -> Self {
        Self {
            conn,
            prefix: format!("tessera:{namespace}:ticket:"),
        }
    }
}

impl TicketLedger for RedisLedger {
    fn consume<'a>(&'a self, ticket_id: &'a str, expires_at: u64) -> LedgerFuture<'a> {
        let mut conn = self.conn.clone();
        let key = format!("{}{ticket_id}", self.prefix);
        Box::pin(async move {
            let set: Option<String> = redis::cmd("SET")
                .arg(&key)
                .arg(1)
                .arg("NX")
                .arg("EXAT")
                .arg(expires_at)
                .query_async(&mut conn)
                .await
                .map_err(|e| LedgerError::Backend(Box::new(e)))?;
            match set {
                Some(_) => Ok(()),
                None => Err(LedgerError::AlreadyUsed),
            }
        })
    }
}

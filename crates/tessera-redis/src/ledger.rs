//! The single-use ticket ledger every instance shares.

use crate::RedisConnection;
use tessera_state::{LedgerError, LedgerFuture, TicketLedger};

/// Records redeemed ticket ids in Redis with `SET key ATTEMPT NX EXAT expiry`:
/// atomic across instances (of two redemptions, exactly one sets the key),
/// and self-expiring with the ticket. Fails closed when Redis does not answer.
///
/// A redemption that Redis answers too late is answered 503 (retry), yet its
/// `SET` may still land and would refuse the retry as a replay. So each
/// redemption writes its own random attempt id, and one that failed takes its
/// key back — deleting it only if it still holds that attempt, sent on the
/// same connection after the `SET` so Redis runs it after — retrying the
/// release a few times, within a few seconds. (Should the connection drop
/// between the two, a `SET` still in flight on the old one could land after
/// the release; the retry is then refused as a replay, as before.)
#[derive(Clone)]
pub struct RedisLedger {
    conn: RedisConnection,
    prefix: String,
}

impl RedisLedger {
    /// A ledger on `conn`, its keys under `tessera:{namespace}:ticket:`
    /// (one key per ticket, so on a cluster they spread over the slots).
    pub fn new(conn: impl Into<RedisConnection>, namespace: &str) -> Self {
        Self {
            conn: conn.into(),
            prefix: format!("tessera:{namespace}:ticket:"),
        }
    }
}

/// Deletes the key only while it holds the failed attempt's id.
const RELEASE: &str = "if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end";

/// How often a failed redemption tries to take its key back.
const RELEASE_TRIES: u32 = 5;

impl TicketLedger for RedisLedger {
    fn consume<'a>(&'a self, ticket_id: &'a str, expires_at: u64) -> LedgerFuture<'a> {
        let mut conn = self.conn.clone();
        let key = format!("{}{ticket_id}", self.prefix);
        Box::pin(async move {
            let attempt = tessera_state::random_id().ok_or_else(|| {
                LedgerError::Backend("no randomness for a redemption attempt id".into())
            })?;
            let set: Result<Option<String>, _> = redis::cmd("SET")
                .arg(&key)
                .arg(&attempt)
                .arg("NX")
                .arg("EXAT")
                .arg(expires_at)
                .query_async(&mut conn)
                .await;
            match set {
                Ok(Some(_)) => Ok(()),
                Ok(None) => Err(LedgerError::AlreadyUsed),
                Err(e) => {
                    tokio::spawn(release(conn, key, attempt));
                    Err(LedgerError::Backend(Box::new(e)))
                }
            }
        })
    }
}

/// Takes back the key of a redemption that failed, should its `SET` land late.
async fn release(mut conn: RedisConnection, key: String, attempt: String) {
    for tried in 1..=RELEASE_TRIES {
        let released: Result<i64, _> = redis::cmd("EVAL")
            .arg(RELEASE)
            .arg(1)
            .arg(&key)
            .arg(&attempt)
            .query_async(&mut conn)
            .await;
        match released {
            Ok(n) => {
                tracing::debug!(released = n, "a failed redemption took its ticket back");
                return;
            }
            Err(e) if tried == RELEASE_TRIES => {
                tracing::warn!(error = %e, "a failed redemption could not take its ticket back: a retry of it will be refused as a replay");
            }
            Err(_) => {
                tokio::time::sleep(std::time::Duration::from_millis(250 * u64::from(tried))).await
            }
        }
    }
}

//! Notes in Redis, shared by every instance (`--redis URL`, or
//! `--redis-cluster URL,...`).

use tessera::BoxFuture;
use tessera::redis::RedisConnection;
use tessera::redis::redis;

use crate::store::{Note, NoteStore, NoteSummary, StoreError};

/// Notes as JSON in a hash (`tessera:{notes}:notes`, by id), their order in
/// a list (`tessera:{notes}:order`). Adding and deleting change both in one
/// transaction, so the two keys share a hash tag: on a Redis Cluster they
/// live in one slot, where a transaction may touch them together.
#[derive(Clone)]
pub struct RedisStore {
    conn: RedisConnection,
}

const NOTES: &str = "tessera:{notes}:notes";
const ORDER: &str = "tessera:{notes}:order";

fn failed(e: impl std::fmt::Display) -> StoreError {
    StoreError::logged(format!("Redis: {e}"))
}

impl RedisStore {
    /// Notes on `conn`.
    pub fn new(conn: impl Into<RedisConnection>) -> Self {
        Self { conn: conn.into() }
    }
}

impl NoteStore for RedisStore {
    fn add(&self, note: Note) -> BoxFuture<'_, Result<(), StoreError>> {
        let mut conn = self.conn.clone();
        Box::pin(async move {
            let json = tessera::serde_json::to_string(&note).map_err(failed)?;
            redis::pipe()
                .atomic()
                .cmd("HSET")
                .arg(NOTES)
                .arg(&note.id)
                .arg(json)
                .cmd("RPUSH")
                .arg(ORDER)
                .arg(&note.id)
                .query_async::<()>(&mut conn)
                .await
                .map_err(failed)
        })
    }

    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let mut conn = self.conn.clone();
        Box::pin(async move {
            let (removed, _): (i64, i64) = redis::pipe()
                .atomic()
                .cmd("HDEL")
                .arg(NOTES)
                .arg(id)
                .cmd("LREM")
                .arg(ORDER)
                .arg(0)
                .arg(id)
                .query_async(&mut conn)
                .await
                .map_err(failed)?;
            Ok(removed > 0)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Note>, StoreError>> {
        let mut conn = self.conn.clone();
        Box::pin(async move {
            let json: Option<String> = redis::cmd("HGET")
                .arg(NOTES)
                .arg(id)
                .query_async(&mut conn)
                .await
                .map_err(failed)?;
            json.map(|j| tessera::serde_json::from_str(&j).map_err(failed))
                .transpose()
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<NoteSummary>, StoreError>> {
        let mut conn = self.conn.clone();
        Box::pin(async move {
            let ids: Vec<String> = redis::cmd("LRANGE")
                .arg(ORDER)
                .arg(0)
                .arg(-1)
                .query_async(&mut conn)
                .await
                .map_err(failed)?;
            if ids.is_empty() {
                return Ok(Vec::new());
            }
            let notes: Vec<Option<String>> = redis::cmd("HMGET")
                .arg(NOTES)
                .arg(&ids)
                .query_async(&mut conn)
                .await
                .map_err(failed)?;
            Ok(notes
                .into_iter()
                .flatten()
                .filter_map(|j| tessera::serde_json::from_str::<Note>(&j).ok())
                .map(|n| NoteSummary {
                    id: n.id,
                    title: n.title,
                })
                .collect())
        })
    }
}

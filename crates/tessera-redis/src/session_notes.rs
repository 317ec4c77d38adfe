//! Initialize-era session notes every instance shares.

use tessera_protocol::LoggingLevel;
use tessera_server::bridge::{
    MAX_SUBSCRIPTIONS_PER_SESSION, NotesError, NotesFuture, STREAM_LEASE, SessionNote, SessionNotes,
};

use crate::RedisConnection;

/// Session notes in Redis (or a Redis Cluster): one hash per session,
/// `tessera:{namespace}:session:{key}`, expiring with the session id, so on
/// a cluster they spread over the slots. Its fields: `ended`, `level`,
/// `sub:{uri}` for each subscription and `subs` their count (at most
/// [`MAX_SUBSCRIPTIONS_PER_SESSION`], checked in the same script that adds
/// one), and `stream`/`until`, who holds the standalone stream and until
/// when (Redis's clock, so instances whose clocks differ agree).
///
/// A DELETE on one instance ends the session on every one, and restarts
/// change nothing. When Redis does not answer, a session's requests are
/// answered 503 (whether it was ended cannot be known).
#[derive(Clone)]
pub struct RedisSessionNotes {
    conn: RedisConnection,
    prefix: String,
}

impl RedisSessionNotes {
    /// Notes on `conn`, their keys under `tessera:{namespace}:session:`.
    pub fn new(conn: impl Into<RedisConnection>, namespace: &str) -> Self {
        Self {
            conn: conn.into(),
            prefix: format!("tessera:{namespace}:session:"),
        }
    }

    fn key(&self, session: &str) -> String {
        format!("{}{session}", self.prefix)
    }

    /// Runs `script` on the session's key with `args`.
    async fn run<T: redis::FromRedisValue>(
        &self,
        script: &redis::Script,
        session: &str,
        args: &[&str],
    ) -> Result<T, NotesError> {
        let mut invocation = script.key(self.key(session));
        for arg in args {
            invocation.arg(*arg);
        }
        let mut conn = self.conn.clone();
        invocation
            .invoke_async(&mut conn)
            .await
            .map_err(unavailable)
    }
}

fn unavailable(e: redis::RedisError) -> NotesError {
    NotesError::Unavailable(format!("Redis: {e}"))
}

fn level_name(level: LoggingLevel) -> String {
    match serde_json::to_value(level) {
        Ok(serde_json::Value::String(name)) => name,
        _ => "debug".into(),
    }
}

/// KEYS[1] the session; ARGV[1] its expiry (Unix seconds), [2] a field, [3] its value.
const SET: &str = r"
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
redis.call('EXPIREAT', KEYS[1], ARGV[1])
return 1
";

/// KEYS[1] the session; ARGV[1] its expiry. Only `ended` is kept.
const END: &str = r"
redis.call('DEL', KEYS[1])
redis.call('HSET', KEYS[1], 'ended', '1')
redis.call('EXPIREAT', KEYS[1], ARGV[1])
return 1
";

/// KEYS[1] the session; ARGV[1] its expiry, [2] the URI, [3] the most
/// subscriptions. Answers 1, or 0 at the limit.
const SUBSCRIBE: &str = r"
local field = 'sub:' .. ARGV[2]
if redis.call('HEXISTS', KEYS[1], field) == 1 then return 1 end
if tonumber(redis.call('HGET', KEYS[1], 'subs') or '0') >= tonumber(ARGV[3]) then return 0 end
redis.call('HSET', KEYS[1], field, '1')
redis.call('HINCRBY', KEYS[1], 'subs', 1)
redis.call('EXPIREAT', KEYS[1], ARGV[1])
return 1
";

/// KEYS[1] the session; ARGV[1] the URI.
const UNSUBSCRIBE: &str = r"
if redis.call('HDEL', KEYS[1], 'sub:' .. ARGV[1]) == 1 then
  redis.call('HINCRBY', KEYS[1], 'subs', -1)
end
return 1
";

/// KEYS[1] the session; ARGV[1] its expiry, [2] the holder, [3] the lease
/// in ms. Answers 1 when the holder has the stream (claimed or renewed), 0
/// while another's lease lasts or once the session was ended.
const CLAIM: &str = r"
if redis.call('HEXISTS', KEYS[1], 'ended') == 1 then return 0 end
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local held = redis.call('HMGET', KEYS[1], 'stream', 'until')
if held[1] and held[1] ~= ARGV[2] and tonumber(held[2] or '0') > now then return 0 end
redis.call('HSET', KEYS[1], 'stream', ARGV[2], 'until', string.format('%d', now + tonumber(ARGV[3])))
redis.call('EXPIREAT', KEYS[1], ARGV[1])
return 1
";

/// KEYS[1] the session; ARGV[1] the holder.
const RELEASE: &str = r"
if redis.call('HGET', KEYS[1], 'stream') == ARGV[1] then
  redis.call('HDEL', KEYS[1], 'stream', 'until')
end
return 1
";

macro_rules! script {
    ($name:ident, $body:ident) => {
        static $name: std::sync::LazyLock<redis::Script> =
            std::sync::LazyLock::new(|| redis::Script::new($body));
    };
}

script!(SET_SCRIPT, SET);
script!(END_SCRIPT, END);
script!(SUBSCRIBE_SCRIPT, SUBSCRIBE);
script!(UNSUBSCRIBE_SCRIPT, UNSUBSCRIBE);
script!(CLAIM_SCRIPT, CLAIM);
script!(RELEASE_SCRIPT, RELEASE);

impl SessionNotes for RedisSessionNotes {
    fn read<'a>(&'a self, key: &'a str) -> NotesFuture<'a, SessionNote> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            let (ended, level): (Option<String>, Option<String>) = redis::cmd("HMGET")
                .arg(self.key(key))
                .arg("ended")
                .arg("level")
                .query_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(SessionNote {
                ended: ended.is_some(),
                log_level: level
                    .and_then(|name| serde_json::from_value(serde_json::Value::String(name)).ok()),
            })
        })
    }

    fn end<'a>(&'a self, key: &'a str, expires_at: u64) -> NotesFuture<'a, ()> {
        Box::pin(async move {
            let _: i64 = self
                .run(&END_SCRIPT, key, &[&expires_at.to_string()])
                .await?;
            Ok(())
        })
    }

    fn set_log_level<'a>(
        &'a self,
        key: &'a str,
        expires_at: u64,
        level: LoggingLevel,
    ) -> NotesFuture<'a, ()> {
        Box::pin(async move {
            let _: i64 = self
                .run(
                    &SET_SCRIPT,
                    key,
                    &[&expires_at.to_string(), "level", &level_name(level)],
                )
                .await?;
            Ok(())
        })
    }

    fn subscribe<'a>(&'a self, key: &'a str, expires_at: u64, uri: &'a str) -> NotesFuture<'a, ()> {
        Box::pin(async move {
            let added: i64 = self
                .run(
                    &SUBSCRIBE_SCRIPT,
                    key,
                    &[
                        &expires_at.to_string(),
                        uri,
                        &MAX_SUBSCRIPTIONS_PER_SESSION.to_string(),
                    ],
                )
                .await?;
            if added == 1 {
                Ok(())
            } else {
                Err(NotesError::Subscriptions)
            }
        })
    }

    fn unsubscribe<'a>(&'a self, key: &'a str, uri: &'a str) -> NotesFuture<'a, ()> {
        Box::pin(async move {
            let _: i64 = self.run(&UNSUBSCRIBE_SCRIPT, key, &[uri]).await?;
            Ok(())
        })
    }

    fn is_subscribed<'a>(&'a self, key: &'a str, uri: &'a str) -> NotesFuture<'a, bool> {
        Box::pin(async move {
            let mut conn = self.conn.clone();
            redis::cmd("HEXISTS")
                .arg(self.key(key))
                .arg(format!("sub:{uri}"))
                .query_async(&mut conn)
                .await
                .map_err(unavailable)
        })
    }

    fn claim_stream<'a>(
        &'a self,
        key: &'a str,
        expires_at: u64,
        holder: &'a str,
    ) -> NotesFuture<'a, bool> {
        Box::pin(async move {
            let claimed: i64 = self
                .run(
                    &CLAIM_SCRIPT,
                    key,
                    &[
                        &expires_at.to_string(),
                        holder,
                        &STREAM_LEASE.as_millis().to_string(),
                    ],
                )
                .await?;
            Ok(claimed == 1)
        })
    }

    fn release_stream<'a>(&'a self, key: &'a str, holder: &'a str) -> NotesFuture<'a, ()> {
        Box::pin(async move {
            let _: i64 = self.run(&RELEASE_SCRIPT, key, &[holder]).await?;
            Ok(())
        })
    }
}

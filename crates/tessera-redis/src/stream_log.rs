//! Initialize-era call streams' events, kept in Redis so a client resumes
//! its stream (`Last-Event-ID`) on any instance.

use tessera_server::bridge::{
    LoggedEvents, MAX_STREAM_BYTES, MAX_STREAM_EVENTS, STREAM_LOG_TTL, StreamLog, StreamLogError,
    StreamLogFuture,
};

use crate::RedisConnection;

/// A [`StreamLog`] in Redis (or a Redis Cluster): per stream, a list of its
/// events (`tessera:{namespace}:events:{{key}}:list`, each entry its number,
/// a space, the message) and a hash (`…:meta`: `seq`, `bytes`, `finished`),
/// one hash tag so one script changes both on a cluster. The list keeps the
/// last [`MAX_STREAM_EVENTS`] events within [`MAX_STREAM_BYTES`] (the
/// response, last, always), and both expire [`STREAM_LOG_TTL`] after the
/// last append.
#[derive(Clone)]
pub struct RedisStreamLog {
    conn: RedisConnection,
    prefix: String,
}

impl RedisStreamLog {
    /// A log on `conn`, its keys under `tessera:{namespace}:events:`.
    pub fn new(conn: impl Into<RedisConnection>, namespace: &str) -> Self {
        Self {
            conn: conn.into(),
            prefix: format!("tessera:{namespace}:events:"),
        }
    }

    fn keys(&self, stream: &str) -> [String; 2] {
        [
            format!("{}{{{stream}}}:list", self.prefix),
            format!("{}{{{stream}}}:meta", self.prefix),
        ]
    }
}

fn unavailable(e: redis::RedisError) -> StreamLogError {
    StreamLogError::Unavailable(format!("Redis: {e}"))
}

/// KEYS[1] the list, [2] the meta hash; ARGV[1] the message, [2] "1" when
/// last, [3] most events, [4] most bytes, [5] time to live (ms). Answers
/// the event's number.
const APPEND: &str = r"
local n = redis.call('HINCRBY', KEYS[2], 'seq', 1)
redis.call('RPUSH', KEYS[1], n .. ' ' .. ARGV[1])
local bytes = redis.call('HINCRBY', KEYS[2], 'bytes', string.len(ARGV[1]))
if ARGV[2] == '1' then redis.call('HSET', KEYS[2], 'finished', '1') end
while redis.call('LLEN', KEYS[1]) > 1 and
      (redis.call('LLEN', KEYS[1]) > tonumber(ARGV[3]) or bytes > tonumber(ARGV[4])) do
  local dropped = redis.call('LPOP', KEYS[1])
  local space = string.find(dropped, ' ', 1, true)
  bytes = redis.call('HINCRBY', KEYS[2], 'bytes', -(string.len(dropped) - space))
end
redis.call('PEXPIRE', KEYS[1], ARGV[5])
redis.call('PEXPIRE', KEYS[2], ARGV[5])
return n
";

/// KEYS[1] the list, [2] the meta hash. Answers {finished, entries...}, or
/// nothing for a stream not kept.
const READ: &str = r"
if redis.call('EXISTS', KEYS[2]) == 0 then return false end
local out = { redis.call('HGET', KEYS[2], 'finished') or '0' }
for _, e in ipairs(redis.call('LRANGE', KEYS[1], 0, -1)) do table.insert(out, e) end
return out
";

static APPEND_SCRIPT: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| redis::Script::new(APPEND));
static READ_SCRIPT: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| redis::Script::new(READ));

impl StreamLog for RedisStreamLog {
    fn append<'a>(
        &'a self,
        stream: &'a str,
        event: &'a [u8],
        last: bool,
    ) -> StreamLogFuture<'a, u64> {
        Box::pin(async move {
            let [list, meta] = self.keys(stream);
            let mut conn = self.conn.clone();
            APPEND_SCRIPT
                .key(list)
                .key(meta)
                .arg(event)
                .arg(if last { "1" } else { "0" })
                .arg(MAX_STREAM_EVENTS)
                .arg(MAX_STREAM_BYTES)
                .arg(STREAM_LOG_TTL.as_millis() as u64)
                .invoke_async(&mut conn)
                .await
                .map_err(unavailable)
        })
    }

    fn read_after<'a>(
        &'a self,
        stream: &'a str,
        after: u64,
    ) -> StreamLogFuture<'a, Option<LoggedEvents>> {
        Box::pin(async move {
            let [list, meta] = self.keys(stream);
            let mut conn = self.conn.clone();
            let read: Option<Vec<Vec<u8>>> = READ_SCRIPT
                .key(list)
                .key(meta)
                .invoke_async(&mut conn)
                .await
                .map_err(unavailable)?;
            let Some(read) = read else { return Ok(None) };
            let mut entries = read.into_iter();
            let finished = entries.next().is_some_and(|f| f == b"1");
            let events = entries
                .filter_map(|entry| {
                    let space = entry.iter().position(|&b| b == b' ')?;
                    let n: u64 = std::str::from_utf8(&entry[..space]).ok()?.parse().ok()?;
                    (n > after).then(|| (n, entry[space + 1..].to_vec()))
                })
                .collect();
            Ok(Some(LoggedEvents { events, finished }))
        })
    }
}

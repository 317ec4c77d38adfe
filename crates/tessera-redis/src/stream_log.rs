//! Initialize-era call streams' events, kept in Redis so a client resumes
//! its stream (`Last-Event-ID`) on any instance.

use tessera_server::bridge::{
    LoggedEvents, MAX_STREAM_BYTES, MAX_STREAM_EVENTS, STREAM_LOG_TTL, StreamLog, StreamLogError,
    StreamLogFuture,
};

use crate::RedisConnection;

/// A [`StreamLog`] in Redis (or a Redis Cluster): per stream, a list of its
/// events (`tessera:{namespace}:events:{{key}}:list`, each entry its number,
/// a space, the message) and a hash (`…:meta`: `last`, `bytes`, `finished`),
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

/// KEYS[1] the list, [2] the meta hash; ARGV[1] the event's number, [2]
/// the message, [3] "1" when last, [4] most events, [5] most bytes, [6] time
/// to live (ms). A number not above the last kept changes nothing.
const APPEND: &str = r"
local n = tonumber(ARGV[1])
if n <= tonumber(redis.call('HGET', KEYS[2], 'last') or '0') then return 0 end
redis.call('HSET', KEYS[2], 'last', ARGV[1])
redis.call('RPUSH', KEYS[1], ARGV[1] .. ' ' .. ARGV[2])
local bytes = redis.call('HINCRBY', KEYS[2], 'bytes', string.len(ARGV[2]))
if ARGV[3] == '1' then redis.call('HSET', KEYS[2], 'finished', '1') end
while redis.call('LLEN', KEYS[1]) > 1 and
      (redis.call('LLEN', KEYS[1]) > tonumber(ARGV[4]) or bytes > tonumber(ARGV[5])) do
  local dropped = redis.call('LPOP', KEYS[1])
  local space = string.find(dropped, ' ', 1, true)
  bytes = redis.call('HINCRBY', KEYS[2], 'bytes', -(string.len(dropped) - space))
end
redis.call('PEXPIRE', KEYS[1], ARGV[6])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
return 1
";

/// KEYS[1] the list, [2] the meta hash; ARGV[1] the number to read after.
/// Answers {finished, entries after it...}, or nothing for a stream not
/// kept. Numbers rise along the list (with gaps where an append failed), so
/// the first entry after ARGV[1] is at most ARGV[1] + 1 - first places in:
/// from there it steps back, and only what is returned is sent.
const READ: &str = r"
if redis.call('EXISTS', KEYS[2]) == 0 then return false end
local out = { redis.call('HGET', KEYS[2], 'finished') or '0' }
local head = redis.call('LINDEX', KEYS[1], 0)
if not head then return out end
local number = function(e) return tonumber(string.sub(e, 1, string.find(e, ' ', 1, true) - 1)) end
local after = tonumber(ARGV[1])
local start = math.max(0, after + 1 - number(head))
local len = redis.call('LLEN', KEYS[1])
if start > len then start = len end
while start > 0 and number(redis.call('LINDEX', KEYS[1], start - 1)) > after do start = start - 1 end
for _, e in ipairs(redis.call('LRANGE', KEYS[1], start, -1)) do table.insert(out, e) end
return out
";

/// KEYS[1] the list, [2] the meta hash; ARGV[1] time to live (ms).
const TOUCH: &str = r"
redis.call('PEXPIRE', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[2], ARGV[1])
return 1
";

static APPEND_SCRIPT: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| redis::Script::new(APPEND));
static READ_SCRIPT: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| redis::Script::new(READ));
static TOUCH_SCRIPT: std::sync::LazyLock<redis::Script> =
    std::sync::LazyLock::new(|| redis::Script::new(TOUCH));

impl StreamLog for RedisStreamLog {
    fn append<'a>(
        &'a self,
        stream: &'a str,
        number: u64,
        event: &'a [u8],
        last: bool,
    ) -> StreamLogFuture<'a, ()> {
        Box::pin(async move {
            let [list, meta] = self.keys(stream);
            let mut conn = self.conn.clone();
            let _: i64 = APPEND_SCRIPT
                .key(list)
                .key(meta)
                .arg(number)
                .arg(event)
                .arg(if last { "1" } else { "0" })
                .arg(MAX_STREAM_EVENTS)
                .arg(MAX_STREAM_BYTES)
                .arg(STREAM_LOG_TTL.as_millis() as u64)
                .invoke_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(())
        })
    }

    fn touch<'a>(&'a self, stream: &'a str) -> StreamLogFuture<'a, ()> {
        Box::pin(async move {
            let [list, meta] = self.keys(stream);
            let mut conn = self.conn.clone();
            let _: i64 = TOUCH_SCRIPT
                .key(list)
                .key(meta)
                .arg(STREAM_LOG_TTL.as_millis() as u64)
                .invoke_async(&mut conn)
                .await
                .map_err(unavailable)?;
            Ok(())
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
                .arg(after)
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

//! `notes`: the notes server on Streamable HTTP, alone (SQLite) or one of many (Redis).

use std::process::ExitCode;
use std::sync::Arc;

use clap::Parser;
use tessera::launch::{Launch, ServeArgs};

/// mimalloc, as for the counter.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Notes: add-note and delete-note ask before they change anything.
///
/// The key comes from MRTR_REQUEST_STATE_KEY (environment first, then
/// .dev.vars); every instance behind one load balancer needs the same key.
/// With --redis (or --redis-cluster), notes, single-use tickets, change
/// notifications and session notes live in Redis, for several instances.
#[derive(Parser)]
#[command(name = "notes", version)]
struct Cli {
    #[command(flatten)]
    serve: ServeArgs,
    /// The SQLite database (when not on --redis).
    #[arg(long, value_name = "PATH", default_value = "notes.db")]
    db: std::path::PathBuf,
}

fn main() -> ExitCode {
    let Cli { serve, db } = Cli::parse();
    Launch::new("notes", serve)
        .default_port(8788)
        .main(|setup| {
            let store: Arc<dyn notes::NoteStore> = match setup.redis() {
                Some(redis) => Arc::new(notes::RedisStore::new(redis.connection())),
                None => Arc::new(
                    notes::SqliteStore::open(&db).map_err(|e| format!("{}: {e}", db.display()))?,
                ),
            };
            notes::notes_server(setup.server("notes", env!("CARGO_PKG_VERSION")), store)
                .map_err(|e| e.to_string())
        })
}

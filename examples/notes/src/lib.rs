//! `notes`: a small MCP application with a real store, for one instance or many.
//!
//! Tools `add-note` (asks for the text, then a confirmation; its tickets are
//! single-use, so a replayed round cannot add twice) and `delete-note`;
//! resources `notes://list` and `notes://note/{id}`, announced to listeners on
//! every change. Notes live in SQLite by default, or in Redis with the ticket
//! ledger and the change bus when instances share the work.

mod app;
mod redis_store;
mod sqlite_store;
mod store;

pub use app::{LIST_URI, Notes, note_uri, notes_server};
pub use redis_store::RedisStore;
pub use sqlite_store::SqliteStore;
pub use store::{Note, NoteStore, NoteSummary, StoreError, new_id};

//! Notes in an embedded SQLite database (the default).

use std::path::Path;
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension, params};
use tessera::BoxFuture;

use crate::store::{Note, NoteStore, NoteSummary, StoreError};

/// Notes in one SQLite file; queries run on the blocking pool.
#[derive(Clone)]
pub struct SqliteStore {
    conn: Arc<Mutex<Connection>>,
}

fn failed(e: impl std::fmt::Display) -> StoreError {
    StoreError::logged(format!("SQLite: {e}"))
}

impl SqliteStore {
    /// Opens (or creates) the database at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let conn = Connection::open(path).map_err(failed)?;
        conn.execute_batch(
            "PRAGMA journal_mode = WAL;
             CREATE TABLE IF NOT EXISTS notes (
                 seq INTEGER PRIMARY KEY AUTOINCREMENT,
                 id TEXT NOT NULL UNIQUE,
                 title TEXT NOT NULL,
                 body TEXT NOT NULL
             );",
        )
        .map_err(failed)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Runs `f` on the connection off the async threads.
    fn with<T: Send + 'static>(
        &self,
        f: impl FnOnce(&Connection) -> rusqlite::Result<T> + Send + 'static,
    ) -> BoxFuture<'static, Result<T, StoreError>> {
        let conn = Arc::clone(&self.conn);
        Box::pin(async move {
            tokio::task::spawn_blocking(move || {
                let conn = conn
                    .lock()
                    .unwrap_or_else(std::sync::PoisonError::into_inner);
                f(&conn).map_err(failed)
            })
            .await
            .map_err(failed)?
        })
    }
}

impl NoteStore for SqliteStore {
    fn add(&self, note: Note) -> BoxFuture<'_, Result<(), StoreError>> {
        self.with(move |c| {
            c.execute(
                "INSERT INTO notes (id, title, body) VALUES (?1, ?2, ?3)",
                params![note.id, note.title, note.body],
            )
            .map(drop)
        })
    }

    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>> {
        let id = id.to_owned();
        self.with(move |c| {
            c.execute("DELETE FROM notes WHERE id = ?1", params![id])
                .map(|n| n > 0)
        })
    }

    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Note>, StoreError>> {
        let id = id.to_owned();
        self.with(move |c| {
            c.query_row(
                "SELECT id, title, body FROM notes WHERE id = ?1",
                params![id],
                |r| {
                    Ok(Note {
                        id: r.get(0)?,
                        title: r.get(1)?,
                        body: r.get(2)?,
                    })
                },
            )
            .optional()
        })
    }

    fn list(&self) -> BoxFuture<'_, Result<Vec<NoteSummary>, StoreError>> {
        self.with(|c| {
            let mut stmt = c.prepare("SELECT id, title FROM notes ORDER BY seq")?;
            let rows = stmt.query_map([], |r| {
                Ok(NoteSummary {
                    id: r.get(0)?,
                    title: r.get(1)?,
                })
            })?;
            rows.collect()
        })
    }
}

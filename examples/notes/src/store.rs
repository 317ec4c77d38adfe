//! Where the notes live: the application's state, which the protocol does not keep.

use tessera::BoxFuture;
use tessera::serde::{Deserialize, Serialize};

/// One note.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(crate = "tessera::serde")]
pub struct Note {
    /// Its id (16 hex digits).
    pub id: String,
    /// Its title.
    pub title: String,
    /// Its text.
    pub body: String,
}

/// A note as listed: id and title.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(crate = "tessera::serde")]
pub struct NoteSummary {
    /// Its id.
    pub id: String,
    /// Its title.
    pub title: String,
}

/// The store failed (disk, database or network). What failed is logged
/// where it happens; clients are told only that the store is unavailable.
#[derive(Debug)]
pub struct StoreError(pub String);

impl StoreError {
    /// A failure described by `detail`, logged now.
    pub fn logged(detail: String) -> Self {
        tracing::error!(%detail, "notes store");
        Self(detail)
    }
}

impl std::fmt::Display for StoreError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the notes store is unavailable; try again later")
    }
}

impl std::error::Error for StoreError {}

/// Keeps notes.
pub trait NoteStore: Send + Sync {
    /// Stores a new note and returns it.
    fn add(&self, note: Note) -> BoxFuture<'_, Result<(), StoreError>>;
    /// Deletes a note; whether it existed.
    fn delete<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<bool, StoreError>>;
    /// One note.
    fn get<'a>(&'a self, id: &'a str) -> BoxFuture<'a, Result<Option<Note>, StoreError>>;
    /// Every note, oldest first.
    fn list(&self) -> BoxFuture<'_, Result<Vec<NoteSummary>, StoreError>>;
}

/// A fresh note id: 16 random hex digits.
pub fn new_id() -> Result<String, StoreError> {
    let mut bytes = [0u8; 8];
    getrandom::fill(&mut bytes).map_err(|e| StoreError::logged(format!("no randomness: {e}")))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

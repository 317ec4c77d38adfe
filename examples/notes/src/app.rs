//! The tools and resources, and the server they make.

use std::sync::Arc;

use tessera::{Context, McpServer, McpServerBuilder, NotFound, Notifier, State};

use crate::store::{Note, NoteStore, new_id};

/// What the handlers share: where notes live.
#[derive(Clone)]
pub struct Notes {
    /// Where notes live.
    pub store: Arc<dyn NoteStore>,
}

/// Announces a change to the list and to one note; a bus that cannot
/// publish is logged, not a failure of the change (the store has it).
async fn changed(notifier: &Notifier, id: &str) {
    for result in [
        notifier.resource_updated(LIST_URI).await,
        notifier.resource_updated(note_uri(id)).await,
        notifier.resources_list_changed().await,
    ] {
        if let Err(e) = result {
            tracing::warn!(error = %e, "a change could not be announced");
        }
    }
}

/// The list resource.
pub const LIST_URI: &str = "notes://list";

/// A note's resource.
pub fn note_uri(id: &str) -> String {
    format!("notes://note/{id}")
}

const NOT_ADDED: &str = "Note not added.";
const NOT_DELETED: &str = "Note not deleted.";

/// Round one of `add-note`: the text.
#[tessera::form(key = "note")]
struct NoteText {
    /// The note's text
    body: String,
}

/// The last question before anything changes.
#[tessera::form]
struct Confirmation {
    confirm: bool,
}

/// Add a note: asks for its text, then for confirmation
#[tessera::tool(name = "add-note", single_use, on_refusal = NOT_ADDED)]
async fn add_note(
    ctx: Context,
    State(notes): State<Notes>,
    State(notifier): State<Notifier>,
    /// The note's title
    title: String,
) -> tessera::Result<String> {
    let NoteText { body } = ctx.ask(format!("Write the note \"{title}\""))?;
    let Confirmation { confirm } = ctx.ask(format!("Add the note \"{title}\"?"))?;
    if !confirm {
        return Ok(NOT_ADDED.into());
    }
    let id = new_id()?;
    notes
        .store
        .add(Note {
            id: id.clone(),
            title: title.clone(),
            body,
        })
        .await?;
    changed(&notifier, &id).await;
    Ok(format!("Added note {id}: {title}"))
}

/// Delete a note: asks for confirmation first
#[tessera::tool(name = "delete-note", single_use, on_refusal = NOT_DELETED)]
async fn delete_note(
    ctx: Context,
    State(notes): State<Notes>,
    State(notifier): State<Notifier>,
    /// The note's id
    id: String,
) -> tessera::Result<String> {
    let Some(note) = notes.store.get(&id).await? else {
        return Ok(format!("There is no note {id}."));
    };
    let Confirmation { confirm } = ctx.ask(format!("Delete the note \"{}\"?", note.title))?;
    if !confirm {
        return Ok(NOT_DELETED.into());
    }
    if !notes.store.delete(&id).await? {
        return Ok(format!("There is no note {id}."));
    }
    changed(&notifier, &id).await;
    Ok(format!("Deleted note {id}: {}", note.title))
}

/// Every note's id and title
#[tessera::resource(
    uri = "notes://list",
    name = "notes",
    title = "Notes",
    mime_type = "application/json"
)]
async fn list(State(notes): State<Notes>) -> tessera::Result<String> {
    Ok(tessera::serde_json::to_string(&notes.store.list().await?)?)
}

/// One note: id, title and text
#[tessera::resource(
    uri = "notes://note/{id}",
    name = "note",
    title = "A note",
    mime_type = "application/json"
)]
async fn note(State(notes): State<Notes>, id: String) -> tessera::Result<String> {
    let note = notes.store.get(&id).await?.ok_or(NotFound)?;
    Ok(tessera::serde_json::to_string(&note)?)
}

/// The notes server on `builder` (which carries the codec, the ledger and
/// the change bus): notes kept in `store`.
pub fn notes_server(
    builder: McpServerBuilder,
    store: Arc<dyn NoteStore>,
) -> Result<McpServer, tessera::BuildError> {
    builder
        .instructions("Notes: add-note and delete-note ask before they change anything; read notes://list and notes://note/{id}, and listen for changes.")
        .with_state(Notes { store })
        .tool(add_note_tool())
        .tool(delete_note_tool())
        .resource(list_resource())
        .resource_template(note_resource())
        .build()
}

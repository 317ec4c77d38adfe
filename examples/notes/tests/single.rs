//! One `notes` instance on SQLite, driven by Tessera's client: the tools ask
//! before they change anything, the resources show what is stored, and the
//! store outlives the process.

use std::collections::HashMap;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;

use serde_json::{Value, json};
use tessera::client::{McpClient, ScriptedAnswer, ScriptedElicitor};
use test_harness::{TempDir, free_port, wait_for_port};

struct Notes {
    child: Child,
    url: String,
}

impl Notes {
    fn start(dir: &TempDir) -> Self {
        let port = free_port();
        let child = Command::new(env!("CARGO_BIN_EXE_notes"))
            .args(["--db", "notes.db", "--addr", &format!("127.0.0.1:{port}")])
            .current_dir(&dir.0)
            .env(
                "MRTR_REQUEST_STATE_KEY",
                "notes-single-key-0123456789abcdef01234",
            )
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        wait_for_port(port, "notes");
        Self {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    fn client(&self, answers: &[(&str, ScriptedAnswer)]) -> McpClient {
        let answers: HashMap<String, ScriptedAnswer> = answers
            .iter()
            .map(|(k, a)| ((*k).to_owned(), a.clone()))
            .collect();
        McpClient::builder(&self.url)
            .elicitor(Arc::new(ScriptedElicitor::new(answers)))
            .build()
            .unwrap()
    }
}

impl Drop for Notes {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn accept(v: Value) -> ScriptedAnswer {
    ScriptedAnswer::Accept(v.as_object().unwrap().clone())
}

async fn call(c: &McpClient, tool: &str, args: Value) -> String {
    let r = c.call_tool(tool, args).await.unwrap();
    serde_json::to_value(&r.content[0]).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned()
}

async fn read(c: &McpClient, uri: &str) -> Value {
    let r = c.read_resource(uri).await.unwrap();
    let text = serde_json::to_value(&r.contents[0]).unwrap()["text"]
        .as_str()
        .unwrap()
        .to_owned();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn add_read_delete_and_the_store_outlives_the_process() {
    let dir = TempDir::new("notes-single");
    let notes = Notes::start(&dir);
    let yes = notes.client(&[
        ("note", accept(json!({"body": "milk, eggs"}))),
        ("confirmation", accept(json!({"confirm": true}))),
    ]);
    let added = call(&yes, "add-note", json!({"title": "Groceries"})).await;
    let id = added
        .strip_prefix("Added note ")
        .unwrap()
        .split(':')
        .next()
        .unwrap()
        .to_owned();
    assert_eq!(
        read(&yes, "notes://list").await,
        json!([{"id": id, "title": "Groceries"}])
    );
    assert_eq!(
        read(&yes, &format!("notes://note/{id}")).await,
        json!({"id": id, "title": "Groceries", "body": "milk, eggs"})
    );

    // Anything but a yes changes nothing.
    for answers in [
        vec![("note", ScriptedAnswer::Decline)],
        vec![("note", ScriptedAnswer::Cancel)],
        vec![
            ("note", accept(json!({"body": "x"}))),
            ("confirmation", accept(json!({"confirm": false}))),
        ],
    ] {
        let c = notes.client(&answers);
        assert_eq!(
            call(&c, "add-note", json!({"title": "No"})).await,
            "Note not added."
        );
    }
    let no = notes.client(&[("confirmation", ScriptedAnswer::Decline)]);
    assert_eq!(
        call(&no, "delete-note", json!({"id": id})).await,
        "Note not deleted."
    );
    assert_eq!(
        read(&yes, "notes://list").await.as_array().unwrap().len(),
        1
    );

    // The store outlives the process.
    drop(notes);
    let notes = Notes::start(&dir);
    let yes = notes.client(&[("confirmation", accept(json!({"confirm": true})))]);
    assert_eq!(
        call(&yes, "delete-note", json!({"id": id})).await,
        format!("Deleted note {id}: Groceries")
    );
    assert_eq!(read(&yes, "notes://list").await, json!([]));
    assert_eq!(
        call(&yes, "delete-note", json!({"id": id})).await,
        format!("There is no note {id}.")
    );
    let missing = yes
        .read_resource(&format!("notes://note/{id}"))
        .await
        .unwrap_err();
    assert!(
        missing.to_string().contains("-32602") || missing.to_string().contains("not found"),
        "{missing}"
    );
}

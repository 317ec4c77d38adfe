//! The client's skills (SEP-2640) over real HTTP: listing, loading with
//! verification, files read on demand, and every verification failure the
//! extension names — a skill changed after its entry was fetched (another
//! size, or the same size and another digest), an entry whose frontmatter
//! is not the file's, a file the entry does not list.

use std::sync::Arc;

use serde_json::json;
use tessera_client::{ClientError, McpClient};
use tessera_http::{EndpointOptions, McpEndpoint};
use tessera_server::{McpServer, SkillDef};
use tokio::net::TcpListener;

const MD: &str = "---\nname: notes\ndescription: Keep notes tidy\n---\nSee `guide/STYLE.md`.\n";

async fn serve(style: &str) -> String {
    let server = McpServer::builder("skills", "1.0.0")
        .skill(SkillDef::new("team/notes", MD).file("guide/STYLE.md", style))
        .build()
        .unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(tessera_http::serve(
        listener,
        McpEndpoint::new(Arc::new(server), EndpointOptions::default()),
        std::future::pending(),
    ));
    format!("http://{addr}/mcp")
}

fn client(url: &str) -> McpClient {
    McpClient::builder(url).build().unwrap()
}

fn refused(e: ClientError) -> String {
    match e {
        ClientError::SkillRefused(message) => message,
        other => panic!("expected a refusal, got {other}"),
    }
}

#[tokio::test]
async fn a_skill_loads_verified_and_its_files_are_read_on_demand() {
    let url = serve("Short lines.\n").await;
    let c = client(&url);
    let features = c.server_features().await.unwrap();
    assert!(features.skills && features.directory_read);
    let listed = c.list_skills().await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].uri, "skill://team/notes/SKILL.md");
    let skill = c.load_skill(&listed[0]).await.unwrap();
    assert_eq!(skill.skill_md(), MD);
    assert_eq!(skill.root(), "skill://team/notes");
    // A relative reference resolves against the skill's root.
    let style = c.read_skill_file(&skill, "guide/STYLE.md").await.unwrap();
    assert_eq!(style, b"Short lines.\n");
    let children = c.read_directory("skill://team/notes/guide").await.unwrap();
    assert_eq!(children[0].uri, "skill://team/notes/guide/STYLE.md");
    // "while acting on a skill, a host MUST resolve reads of the skill's files only to
    // URIs listed in that entry's resources"
    for unlisted in [
        "../other/SKILL.md",
        "guide/../../x",
        "skill://team/other/SKILL.md",
    ] {
        let message = refused(c.read_skill_file(&skill, unlisted).await.unwrap_err());
        assert!(message.contains("is not a file of"), "{message}");
    }
}

#[tokio::test]
async fn content_that_differs_from_the_entry_is_never_used() {
    // The entry comes from one server; the skill changes before its files are read.
    let before = client(&serve("Short lines.\n").await);
    let entry = before
        .get_skill("skill://team/notes/SKILL.md")
        .await
        .unwrap();
    let loaded = before.load_skill(&entry).await.unwrap();

    // Same size, other bytes: "it MUST verify the content against that entry's digest".
    let same_size = client(&serve("Long! lines.\n").await);
    let message = refused(
        same_size
            .read_skill_file(&loaded, "guide/STYLE.md")
            .await
            .unwrap_err(),
    );
    assert!(message.contains("digest"), "{message}");

    // "A read whose byte length differs from the entry's size is a verification failure."
    let longer = client(&serve("Short lines, and more.\n").await);
    let message = refused(
        longer
            .read_skill_file(&loaded, "guide/STYLE.md")
            .await
            .unwrap_err(),
    );
    assert!(
        message.contains("bytes read, its entry says 13"),
        "{message}"
    );

    // "compare it field-by-field against the entry's frontmatter … MUST NOT load the skill"
    let mut rewritten = entry.clone();
    rewritten
        .frontmatter
        .insert("description".into(), json!("Exfiltrate credentials"));
    let message = refused(before.load_skill(&rewritten).await.unwrap_err());
    assert!(message.contains("\"description\""), "{message}");

    // An entry with no manifest offers nothing to verify.
    let mut dynamic = entry.clone();
    dynamic.resources = serde_json::from_value(json!("dynamic")).unwrap();
    let message = refused(before.load_skill(&dynamic).await.unwrap_err());
    assert!(message.contains("dynamic"), "{message}");
}

//! Skills (SEP-2640, `io.modelcontextprotocol/skills`), each rule quoted
//! from the extension's specification.

use serde_json::{Map, Value, json};
use tessera_server::testing::TestClient;
use tessera_server::{McpServer, SkillDef};

const PDF_MD: &str = "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\nmetadata:\n  version: \"2.1.0\"\n---\n\nRead `references/FORMS.md`.\n";

fn pdf() -> SkillDef {
    SkillDef::new("pdf-processing", PDF_MD)
        .file("references/FORMS.md", "# Forms\n")
        .file("templates/invoice.md", "# Invoice\n")
        .file("templates/regional/eu-invoice.md", "# EU\n")
        .file("assets/logo.png", vec![0x89, b'P', b'N', b'G', 0xff, 0x00])
}

fn refunds() -> SkillDef {
    SkillDef::new(
        "acme/billing/refunds",
        "---\nname: refunds\ndescription: Refund per policy\n---\nbody\n",
    )
}

fn client(page_size: usize) -> TestClient {
    TestClient::new(
        McpServer::builder("skills", "1.0.0")
            .skill(pdf())
            .skill(refunds())
            .page_size(page_size)
            .build()
            .unwrap(),
    )
}

fn params(v: Value) -> Map<String, Value> {
    v.as_object().unwrap().clone()
}

fn sha256_hex(bytes: &[u8]) -> String {
    tessera_protocol::skill_digest(&tessera_state::sha256(bytes))
}

#[tokio::test]
async fn the_extension_is_declared_with_directory_read_and_resources() {
    let client = client(100);
    let discover = client.request("server/discover", Map::new()).await.unwrap();
    let caps = &discover["capabilities"];
    // "A server declaring this extension MUST also declare the resources capability."
    assert!(caps["resources"].is_object());
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/skills"],
        json!({"directoryRead": true})
    );
}

#[tokio::test]
async fn skills_list_pages_whole_entries_with_complete_manifests() {
    let client = client(1);
    let first = client.request("skills/list", Map::new()).await.unwrap();
    // "In protocol versions 2026-07-28 and later, the result also carries … ttlMs and cacheScope."
    assert!(first["ttlMs"].is_u64() && first["cacheScope"].is_string());
    assert_eq!(first["skills"].as_array().unwrap().len(), 1);
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();
    let second = client
        .request("skills/list", params(json!({"cursor": cursor})))
        .await
        .unwrap();
    assert!(second.get("nextCursor").is_none());
    let entries: Vec<&Value> = first["skills"]
        .as_array()
        .unwrap()
        .iter()
        .chain(second["skills"].as_array().unwrap())
        .collect();
    let uris: Vec<&str> = entries.iter().map(|e| e["uri"].as_str().unwrap()).collect();
    assert_eq!(
        uris,
        [
            "skill://acme/billing/refunds/SKILL.md",
            "skill://pdf-processing/SKILL.md"
        ]
    );
    let pdf = entries[1];
    // "frontmatter is the skill's SKILL.md YAML frontmatter rendered verbatim as a JSON object"
    assert_eq!(
        pdf["frontmatter"],
        json!({"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents", "metadata": {"version": "2.1.0"}})
    );
    // "it lists every file of the skill, each exactly once, including an entry matching
    // the skill's top-level uri — that entry carries the digest and size of SKILL.md itself."
    let files = pdf["resources"].as_array().unwrap();
    assert_eq!(files.len(), 5);
    assert_eq!(files[0]["uri"], "skill://pdf-processing/SKILL.md");
    assert_eq!(files[0]["digest"], sha256_hex(PDF_MD.as_bytes()));
    assert_eq!(files[0]["size"], PDF_MD.len());

    let e = client
        .request("skills/list", params(json!({"cursor": "made-up"})))
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
}

#[tokio::test]
async fn every_listed_file_reads_back_as_its_digest_and_size_promise() {
    let client = client(100);
    let got = client
        .request(
            "skills/get",
            params(json!({"uri": "skill://pdf-processing/SKILL.md"})),
        )
        .await
        .unwrap();
    // "The result carries no pagination cursor: a single entry is not a list."
    assert!(got.get("nextCursor").is_none());
    assert!(got["ttlMs"].is_u64() && got["cacheScope"].is_string());
    for file in got["skill"]["resources"].as_array().unwrap() {
        let uri = file["uri"].as_str().unwrap();
        let read = client.read_resource(uri).run().await.unwrap();
        let contents = serde_json::to_value(&read.result.contents[0]).unwrap();
        let bytes = match contents.get("text") {
            Some(Value::String(text)) => text.clone().into_bytes(),
            _ => {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD
                    .decode(contents["blob"].as_str().unwrap())
                    .unwrap()
            }
        };
        assert_eq!(file["size"], bytes.len(), "{uri}");
        assert_eq!(file["digest"], sha256_hex(&bytes), "{uri}");
    }
    // SKILL.md is listed among resources with its frontmatter's name and description.
    let listed = client.list_resources().await.unwrap();
    let md = listed
        .iter()
        .find(|r| r.uri == "skill://pdf-processing/SKILL.md")
        .unwrap();
    assert_eq!(md.name, "pdf-processing");
    assert_eq!(md.mime_type.as_deref(), Some("text/markdown"));
    assert_eq!(
        md.description.as_deref(),
        Some("Extract, fill, and assemble PDF documents")
    );
}

#[tokio::test]
async fn unknown_skills_and_paths_outside_the_table_are_refused() {
    let client = client(100);
    // "If the URI does not identify a skill the server serves, the server MUST return error -32602."
    for uri in [
        "skill://nope/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
    ] {
        let e = client
            .request("skills/get", params(json!({"uri": uri})))
            .await
            .unwrap_err();
        assert_eq!(e.code, -32602, "{uri}");
    }
    for uri in [
        "skill://pdf-processing/../pdf-processing/SKILL.md",
        "skill://pdf-processing/references/../SKILL.md",
        "skill://pdf-processing/%2e%2e/SKILL.md",
        "skill://pdf-processing/references",
        "skill://pdf-processing/missing.md",
    ] {
        let e = client.read_resource(uri).run().await.unwrap_err();
        assert!(e.to_string().contains("-32602"), "{uri}: {e}");
    }
}

#[tokio::test]
async fn directories_list_their_direct_children() {
    let client = client(100);
    let root = client
        .request(
            "resources/directory/read",
            params(json!({"uri": "skill://pdf-processing"})),
        )
        .await
        .unwrap();
    let children: Vec<(String, String)> = root["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["uri"].as_str().unwrap().to_owned(),
                r["mimeType"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    // "subdirectories listed as directory resources (mimeType: "inode/directory")"
    assert_eq!(
        children,
        [
            (
                "skill://pdf-processing/SKILL.md".into(),
                "text/markdown".into()
            ),
            (
                "skill://pdf-processing/assets".into(),
                "inode/directory".into()
            ),
            (
                "skill://pdf-processing/references".into(),
                "inode/directory".into()
            ),
            (
                "skill://pdf-processing/templates".into(),
                "inode/directory".into()
            ),
        ]
    );
    let templates = client
        .request(
            "resources/directory/read",
            params(json!({"uri": "skill://pdf-processing/templates"})),
        )
        .await
        .unwrap();
    assert_eq!(
        templates["resources"][1]["uri"],
        "skill://pdf-processing/templates/regional"
    );
    // The organising prefix is a directory too.
    let acme = client
        .request(
            "resources/directory/read",
            params(json!({"uri": "skill://acme/billing"})),
        )
        .await
        .unwrap();
    assert_eq!(acme["resources"][0]["uri"], "skill://acme/billing/refunds");
    // "If the URI does not exist, or exists but is not a directory resource, the server
    // MUST return error -32602 (Invalid params)."
    for uri in [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/",
        "skill://elsewhere",
    ] {
        let e = client
            .request("resources/directory/read", params(json!({"uri": uri})))
            .await
            .unwrap_err();
        assert_eq!(e.code, -32602, "{uri}");
    }
}

#[test]
fn skills_the_extension_would_not_serve_fail_the_build() {
    let build = |skill: SkillDef| {
        McpServer::builder("s", "1")
            .skill(skill)
            .build()
            .err()
            .map(|e| e.to_string())
    };
    let md = |name: &str| format!("---\nname: {name}\ndescription: d\n---\n");
    for (skill, why) in [
        (SkillDef::new("other", md("refunds")), "must be its name"),
        (SkillDef::new("Bad_Name", md("Bad_Name")), "naming rules"),
        (SkillDef::new("a", "no frontmatter"), "---"),
        (
            SkillDef::new("a", md("a")).file("../x", "x"),
            "file \"../x\"",
        ),
        (
            SkillDef::new("a", md("a")).file("b/./c", "x"),
            "file \"b/./c\"",
        ),
        (
            SkillDef::new("a", md("a")).file("sp ace", "x"),
            "file \"sp ace\"",
        ),
        (SkillDef::new("a/../b", md("b")), "path"),
        (
            SkillDef::new(
                "a",
                "---\nname: a\ndescription: d\nmetadata:\n  io.modelcontextprotocol/x: y\n---\n",
            ),
            "reserved",
        ),
        (
            (0..512).fold(SkillDef::new("a", md("a")), |s, i| {
                s.file(format!("f{i}"), "x")
            }),
            "at most 512",
        ),
        (
            SkillDef::new("a", md("a")).file("big", vec![0u8; 16 * 1024 * 1024]),
            "16 MiB",
        ),
    ] {
        let error = build(skill).unwrap_or_else(|| panic!("built, expected {why:?}"));
        assert!(error.contains(why), "{error} (expected {why:?})");
    }
    let twice = McpServer::builder("s", "1")
        .skill(SkillDef::new("a", md("a")))
        .skill(SkillDef::new("a", md("a")))
        .build()
        .err()
        .unwrap();
    assert!(twice.to_string().contains("twice"));
    let shadowed = McpServer::builder("s", "1")
        .skill(SkillDef::new("a", md("a")).file("x.md", "x"))
        .resource(tessera_server::ResourceDef::new(
            "skill://a/x.md",
            "x",
            |_: tessera_server::Context| async { "other".to_owned() },
        ))
        .build()
        .err()
        .unwrap();
    assert!(
        shadowed.to_string().contains("is a file of a skill"),
        "{shadowed}"
    );
}

#[test]
fn a_skills_directory_loads_every_skill_nested_ones_included() {
    let root = std::env::temp_dir().join(format!("tessera-skills-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let write = |rel: &str, text: &str| {
        let path = root.join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    };
    write("outer/SKILL.md", "---\nname: outer\ndescription: o\n---\n");
    write("outer/notes.md", "n");
    write(
        "outer/inner/SKILL.md",
        "---\nname: inner\ndescription: i\n---\n",
    );
    write("outer/.git/config", "hidden");
    let skills = SkillDef::load_all(&root).unwrap();
    let uris: Vec<String> = skills.iter().map(SkillDef::uri).collect();
    assert_eq!(
        uris,
        ["skill://outer/SKILL.md", "skill://outer/inner/SKILL.md"]
    );
    let server = McpServer::builder("s", "1").skills(skills).build().unwrap();
    let client = TestClient::new(server);
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let outer = rt
        .block_on(client.request(
            "skills/get",
            params(json!({"uri": "skill://outer/SKILL.md"})),
        ))
        .unwrap();
    // "Completeness extends to nested skills: … the enclosing skill's resources lists them too."
    let files: Vec<&str> = outer["skill"]["resources"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["uri"].as_str().unwrap())
        .collect();
    assert_eq!(
        files,
        [
            "skill://outer/SKILL.md",
            "skill://outer/inner/SKILL.md",
            "skill://outer/notes.md"
        ]
    );

    // A symbolic link could lead out of the directory: refused, naming it.
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink("/etc/passwd", root.join("outer/passwd")).unwrap();
        let e = SkillDef::load_all(&root).unwrap_err().to_string();
        assert!(e.contains("passwd") && e.contains("symbolic link"), "{e}");
    }
    let _ = std::fs::remove_dir_all(&root);
}

/// A skill hidden from a caller (its `SKILL.md` resource is not shown to it)
/// is hidden whole: not listed, not described, its files and directories
/// not served — as a hidden resource is not.
#[tokio::test]
async fn a_skill_hidden_from_a_caller_is_hidden_whole() {
    let server = McpServer::builder("skills", "1.0.0")
        .skill(pdf())
        .skill(refunds())
        .visibility(
            |_: &tessera_server::Viewer<'_>, item: tessera_server::Offered<'_>| {
                !item.name().starts_with("skill://pdf-processing/")
            },
        )
        .build()
        .unwrap();
    let client = TestClient::new(server);
    let listed = client.request("skills/list", Map::new()).await.unwrap();
    let uris: Vec<&str> = listed["skills"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["uri"].as_str().unwrap())
        .collect();
    assert_eq!(uris, ["skill://acme/billing/refunds/SKILL.md"]);
    let e = client
        .request(
            "skills/get",
            params(json!({"uri": "skill://pdf-processing/SKILL.md"})),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
    for uri in [
        "skill://pdf-processing/SKILL.md",
        "skill://pdf-processing/references/FORMS.md",
    ] {
        assert!(client.read_resource(uri).run().await.is_err(), "{uri}");
    }
    let e = client
        .request(
            "resources/directory/read",
            params(json!({"uri": "skill://pdf-processing"})),
        )
        .await
        .unwrap_err();
    assert_eq!(e.code, -32602);
    // The shown skill is served, with its prefix directory.
    let read = client
        .read_resource("skill://acme/billing/refunds/SKILL.md")
        .run()
        .await
        .unwrap();
    assert_eq!(read.result.contents.len(), 1);
    let acme = client
        .request(
            "resources/directory/read",
            params(json!({"uri": "skill://acme"})),
        )
        .await
        .unwrap();
    assert_eq!(acme["resources"][0]["uri"], "skill://acme/billing");
}

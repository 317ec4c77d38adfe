//! A tool author's crate written against the guide, outside the workspace
//! (`tests/author-crate`, a path dependency on this facade): copied out of
//! the repository, it builds and its tests pass — a tool, a prompt and a
//! resource tested with `TestClient` and no key setup, typed answers, and
//! form fields on the wire in declaration order.

use std::path::{Path, PathBuf};
use std::process::Command;

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

#[test]
fn a_crate_written_against_the_guide_builds_and_its_tests_pass() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let root = root.canonicalize().unwrap();
    let work = root.join("target/author-crate");
    let copy = work.join("release-gate");
    let _ = std::fs::remove_dir_all(&copy);
    copy_dir(&root.join("tests/author-crate"), &copy);
    // The path dependency, made absolute; the workspace's lock file, so the
    // crate builds offline from the same versions.
    let manifest = copy.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let facade = root.join("crates/tessera");
    std::fs::write(
        &manifest,
        text.replace("../../crates/tessera", facade.to_str().unwrap()),
    )
    .unwrap();
    std::fs::copy(root.join("Cargo.lock"), copy.join("Cargo.lock")).unwrap();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let out = Command::new(cargo)
        .args(["test", "--offline", "--manifest-path"])
        .arg(&manifest)
        .env("CARGO_TARGET_DIR", work.join("target"))
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "cargo test of the author's crate failed:\n{stdout}\n{stderr}"
    );
    for test in [
        "the_gate_opens_after_a_ticket_a_percentage_and_a_yes",
        "a_decline_keeps_the_gate_closed",
        "the_prompt_and_the_resource",
        "form_fields_go_out_in_declaration_order",
    ] {
        assert!(
            stdout.contains(&format!("test {test} ... ok")),
            "{test} did not pass:\n{stdout}"
        );
    }
}

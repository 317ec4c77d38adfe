//! `tessera prompts`, `prompt`, `resources`, `read`, `skills` and `skill` against the
//! conformance fixture (`everything-server`), over Streamable HTTP.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};

mod support;
use support::tessera;

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");

/// A fixture process for one test, killed when the test ends.
struct Fixture {
    url: String,
    _child: Killed,
}

struct Killed(Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn fixture() -> Fixture {
    {
        let server = std::path::Path::new(TESSERA).with_file_name("everything-server");
        assert!(
            server.exists(),
            "{} is missing: build it with `cargo build --bin everything-server` (cargo test --workspace does)",
            server.display()
        );
        let mut child = Command::new(&server)
            .args(["--addr", "127.0.0.1:0"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let url = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .to_owned();
        Fixture {
            url,
            _child: Killed(child),
        }
    }
}

#[test]
fn prompts_lists_each_prompt_with_its_arguments() {
    let fixture = fixture();
    let r = tessera(&["prompts", &fixture.url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("test_simple_prompt  ")),
        "{}",
        r.stdout
    );
    assert!(
        r.stdout
            .lines()
            .any(|l| l.starts_with("test_prompt_with_arguments arg1=… arg2=…  ")),
        "{}",
        r.stdout
    );
    let r = tessera(&["prompts", &fixture.url, "--json"]);
    let listed: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert!(listed.as_array().is_some_and(|a| a.len() >= 5), "{listed}");
}

#[test]
fn prompt_renders_messages_with_string_arguments() {
    let fixture = fixture();
    let r = tessera(&[
        "prompt",
        &fixture.url,
        "test_prompt_with_arguments",
        "arg1=a b",
        "arg2=42",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "user:\nPrompt with arguments: arg1='a b', arg2='42'\n"
    );
}

#[test]
fn prompt_answers_its_form_from_the_script_or_refuses() {
    let fixture = fixture();
    let r = tessera(&[
        "prompt",
        &fixture.url,
        "test_input_required_result_prompt",
        "--answer",
        "user_context.context=brief",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.contains("Answer with this context in mind: brief"),
        "{}",
        r.stdout
    );
    // No answer and no terminal: the key is named, the exit code says unanswered.
    let r = tessera(&["prompt", &fixture.url, "test_input_required_result_prompt"]);
    assert_eq!(r.code, 5, "{} {}", r.stdout, r.stderr);
    assert!(r.stderr.contains("user_context"), "{}", r.stderr);
}

#[test]
fn resources_lists_uri_name_and_type() {
    let fixture = fixture();
    let r = tessera(&["resources", &fixture.url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout
            .lines()
            .any(|l| l == "test://static-text  static-text  (text/plain)"),
        "{}",
        r.stdout
    );
}

#[test]
fn read_prints_text_summarises_blobs_and_fills_templates() {
    let fixture = fixture();
    let r = tessera(&["read", &fixture.url, "test://static-text"]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        r.stdout,
        "This is the content of the static text resource.\n"
    );
    let r = tessera(&["read", &fixture.url, "test://static-binary"]);
    assert!(
        r.stdout
            .starts_with("[blob test://static-binary image/png, "),
        "{}",
        r.stdout
    );
    let r = tessera(&["read", &fixture.url, "test://template/42/data"]);
    let data: serde_json::Value = serde_json::from_str(r.stdout.trim()).unwrap();
    assert_eq!(data["id"], "42");
    let r = tessera(&["read", &fixture.url, "test://nothing-here"]);
    assert_ne!(r.code, 0);
    assert!(r.stderr.contains("test://nothing-here"), "{}", r.stderr);
    let r = tessera(&["read", &fixture.url]);
    assert_eq!(r.code, 2, "{}", r.stderr);
}

#[test]
fn skills_are_listed_and_one_is_fetched_verified_on_demand() {
    let fixture = fixture();
    let r = tessera(&["skills", &fixture.url]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stdout.lines().any(|l| l.starts_with(
            "pdf-processing  Extract, fill, and assemble PDF documents  (skill://pdf-processing/SKILL.md, 4 files, "
        )),
        "{}",
        r.stdout
    );
    // By name, by path, by URI: the SKILL.md as served.
    for wanted in [
        "refunds",
        "acme/billing/refunds",
        "skill://acme/billing/refunds/SKILL.md",
    ] {
        let r = tessera(&["skill", &fixture.url, wanted]);
        assert_eq!(r.code, 0, "{wanted}: {}", r.stderr);
        assert!(r.stdout.starts_with("---\nname: refunds\n"), "{}", r.stdout);
    }
    let r = tessera(&[
        "skill",
        &fixture.url,
        "pdf-processing",
        "--file",
        "templates/regional/eu-invoice.md",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("# EU invoice"), "{}", r.stdout);
    // A path the skill's entry does not list is never requested.
    let r = tessera(&[
        "skill",
        &fixture.url,
        "pdf-processing",
        "--file",
        "../refunds/SKILL.md",
    ]);
    assert_eq!(r.code, 4, "{}", r.stdout);
    assert!(
        r.stderr.contains("skill refused") && r.stderr.contains("is not a file of"),
        "{}",
        r.stderr
    );
    let r = tessera(&["skill", &fixture.url, "no-such-skill"]);
    assert_eq!(r.code, 4);
    assert!(
        r.stderr.contains("no skill \"no-such-skill\" is listed"),
        "{}",
        r.stderr
    );
}

//! The skills extension (SEP-2640, `io.modelcontextprotocol/skills`): Agent
//! Skills served as resources, enumerated by `skills/list`, fetched by
//! `skills/get`, their directories read by `resources/directory/read`.

use serde::{Deserialize, Serialize};

use crate::{CacheScope, Complete, JsonObject, Resource, ResultMeta};

/// The extension's identifier under `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";
/// Enumerates the skills a server serves.
pub const SKILLS_LIST: &str = "skills/list";
/// The entry of one skill, by the URI of its `SKILL.md`.
pub const SKILLS_GET: &str = "skills/get";
/// The direct children of a directory resource.
pub const RESOURCES_DIRECTORY_READ: &str = "resources/directory/read";
/// The MIME type of a directory resource.
pub const DIRECTORY_MIME_TYPE: &str = "inode/directory";
/// Entries in one skill's `resources` that every host must accept.
pub const MAX_SKILL_FILES: usize = 512;
/// Total bytes of one skill's files that every host must accept (16 MiB).
pub const MAX_SKILL_BYTES: u64 = 16 * 1024 * 1024;

/// One skill as `skills/list` and `skills/get` describe it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SkillEntry {
    /// The resource URI of the skill's `SKILL.md`.
    pub uri: String,
    /// The `SKILL.md` YAML frontmatter, verbatim, as a JSON object.
    pub frontmatter: JsonObject,
    /// Every file of the skill with its digest and size, or `"dynamic"`.
    pub resources: SkillResources,
}

/// A skill's files: a complete manifest, or the explicit `"dynamic"` marker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SkillResources {
    /// Every file of the skill, `SKILL.md` included, each once.
    Manifest(Vec<SkillFile>),
    /// Generated content: no digests are published (the string `"dynamic"`).
    Dynamic(DynamicMarker),
}

/// The string `"dynamic"`, and nothing else.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum DynamicMarker {
    /// `"dynamic"`.
    #[serde(rename = "dynamic")]
    Dynamic,
}

/// One file of a skill's manifest.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillFile {
    /// The file's resource URI.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits of the file's raw bytes.
    pub digest: String,
    /// The length of the file's raw bytes.
    pub size: u64,
}

/// Parameters of `skills/list` (besides `_meta`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ListSkillsRequestParams {
    /// The `nextCursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// The result of `skills/list`.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListSkillsResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: Complete,
    /// The skills on this page (an entry is never split across pages).
    pub skills: Vec<SkillEntry>,
    /// Cursor of the next page, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// How long the client may cache this, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may reuse the cached response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// Parameters of `skills/get` (besides `_meta`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct GetSkillRequestParams {
    /// The URI of the skill's `SKILL.md`.
    pub uri: String,
}

/// The result of `skills/get`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GetSkillResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: Complete,
    /// The skill's entry, as `skills/list` would show it.
    pub skill: SkillEntry,
    /// How long the client may cache this, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl_ms: Option<u64>,
    /// Who may reuse the cached response.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cache_scope: Option<CacheScope>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// Parameters of `resources/directory/read` (besides `_meta`).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ReadDirectoryRequestParams {
    /// The directory's URI (no trailing slash).
    pub uri: String,
    /// The `nextCursor` of the previous page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// The result of `resources/directory/read`: the directory's direct children.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReadDirectoryResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: Complete,
    /// Files with their resource metadata; subdirectories as `inode/directory`.
    pub resources: Vec<Resource>,
    /// Cursor of the next page, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<String>,
    /// Result metadata.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<ResultMeta>,
}

/// `sha256:` and the lowercase hex of `bytes`'s SHA-256, as manifests carry it.
pub fn skill_digest(sha256: &[u8; 32]) -> String {
    use std::fmt::Write as _;
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for b in sha256 {
        let _ = write!(out, "{b:02x}");
    }
    out
}

/// The skill name an entry's URI ends in (`skill://a/b/NAME/SKILL.md` →
/// `NAME`), when the URI has the shape the extension requires.
pub fn skill_name_of(uri: &str) -> Option<&str> {
    let rest = &uri[uri.find("://")? + 3..];
    let dir = rest.strip_suffix("/SKILL.md")?;
    let name = dir.rsplit('/').next()?;
    (!name.is_empty()).then_some(name)
}

/// Whether `name` follows the Agent Skills naming rules: 1 to 64 characters,
/// lowercase ASCII letters, digits and hyphens, no hyphen at either end and
/// no two in a row.
pub fn is_skill_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-')
        && !name.contains("--")
}

/// The bytes of every file of a manifest, or `None` past `u64::MAX` (a
/// server's sizes are summed without overflowing).
pub fn manifest_bytes(files: &[SkillFile]) -> Option<u64> {
    files
        .iter()
        .try_fold(0u64, |sum, f| sum.checked_add(f.size))
}

/// Whether `segment` is one a skill path or file path may have: not empty,
/// `.` or `..`, and only characters a URI carries unescaped (RFC 3986
/// unreserved: letters, digits, `-`, `.`, `_`, `~`).
pub fn is_plain_segment(segment: &str) -> bool {
    !segment.is_empty()
        && segment != "."
        && segment != ".."
        && segment
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~'))
}

/// Checks an entry as a host must before loading its skill: a `uri` ending
/// in `/SKILL.md` whose last path segment is the frontmatter `name` (under
/// the naming rules); a manifest (not `"dynamic"`) that lists that
/// `SKILL.md`, and otherwise only files under the skill's directory, each
/// once, with no `.` or `..` segment; within [`MAX_SKILL_FILES`] and
/// [`MAX_SKILL_BYTES`]. Answers the manifest, or why the entry is refused.
pub fn checked_manifest(entry: &SkillEntry) -> Result<&[SkillFile], String> {
    let uri = &entry.uri;
    let name = entry
        .frontmatter
        .get("name")
        .and_then(serde_json::Value::as_str);
    let named = skill_name_of(uri);
    if named.is_none() || named != name || !name.is_some_and(is_skill_name) {
        return Err(format!(
            "{uri}: the last segment of its path must be its frontmatter name ({name:?}), \
             under the Agent Skills naming rules"
        ));
    }
    let SkillResources::Manifest(files) = &entry.resources else {
        return Err(format!(
            "{uri} is published as \"dynamic\": it has no manifest to verify its content against"
        ));
    };
    if files.len() > MAX_SKILL_FILES {
        return Err(format!(
            "{uri} lists {} files, more than the {MAX_SKILL_FILES} a host must accept",
            files.len()
        ));
    }
    match manifest_bytes(files) {
        Some(total) if total <= MAX_SKILL_BYTES => {}
        total => {
            return Err(format!(
                "{uri} holds {} bytes, more than the {MAX_SKILL_BYTES} a host must accept",
                total.map_or_else(|| "more than 2^64".to_owned(), |t| t.to_string())
            ));
        }
    }
    let root = uri.strip_suffix("/SKILL.md").unwrap_or(uri);
    let mut seen = std::collections::BTreeSet::new();
    for file in files {
        let inside = file.uri == *uri
            || file
                .uri
                .strip_prefix(root)
                .and_then(|rest| rest.strip_prefix('/'))
                .is_some_and(|rest| {
                    rest.split('/')
                        .all(|s| !s.is_empty() && s != "." && s != "..")
                });
        if !inside {
            return Err(format!(
                "{uri}: its manifest lists {}, outside the skill",
                file.uri
            ));
        }
        if !seen.insert(file.uri.as_str()) {
            return Err(format!("{uri}: its manifest lists {} twice", file.uri));
        }
    }
    if !seen.contains(uri.as_str()) {
        return Err(format!("{uri}: its manifest does not list its SKILL.md"));
    }
    Ok(files)
}

/// Why a `SKILL.md` has no frontmatter this extension can use.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct FrontmatterError(String);

/// The YAML frontmatter a `SKILL.md` begins with, as a JSON object: the
/// lines between a first line `---` and the next line `---` (a leading byte
/// order mark and `\r\n` line ends are accepted), parsed by a YAML library.
/// It must be a mapping with a non-empty string `name` and `description`.
///
/// ```
/// let fm = tessera_protocol::skill_frontmatter(
///     "---\nname: git-workflow\ndescription: Branch and commit\nmetadata:\n  version: \"2\"\n---\n# Body\n",
/// )
/// .unwrap();
/// assert_eq!(fm["metadata"]["version"], "2");
/// ```
pub fn skill_frontmatter(text: &str) -> Result<JsonObject, FrontmatterError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let problem = |m: &str| FrontmatterError(m.to_owned());
    let mut lines = text.split_inclusive('\n');
    let first = lines.next().unwrap_or_default();
    if first.trim_end_matches(['\r', '\n']) != "---" {
        return Err(problem(
            "SKILL.md must begin with a line `---` opening its YAML frontmatter",
        ));
    }
    let mut yaml = String::new();
    let mut closed = false;
    for line in lines {
        if line
            .trim_end_matches(['\r', '\n'])
            .trim_end_matches([' ', '\t'])
            == "---"
        {
            closed = true;
            break;
        }
        yaml.push_str(line);
    }
    if !closed {
        return Err(problem("SKILL.md's frontmatter has no closing line `---`"));
    }
    let value: serde_json::Value = serde_norway::from_str(&yaml).map_err(|e| {
        FrontmatterError(format!(
            "SKILL.md's frontmatter is not YAML this extension can use: {e}"
        ))
    })?;
    let serde_json::Value::Object(object) = value else {
        return Err(problem("SKILL.md's frontmatter must be a YAML mapping"));
    };
    for field in ["name", "description"] {
        match object.get(field) {
            Some(serde_json::Value::String(s)) if !s.is_empty() => {}
            _ => {
                return Err(FrontmatterError(format!(
                    "SKILL.md's frontmatter needs a non-empty string `{field}`"
                )));
            }
        }
    }
    Ok(object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn resources_read_as_a_manifest_or_the_dynamic_marker_only() {
        let manifest: SkillResources = serde_json::from_value(
            json!([{"uri": "skill://a/SKILL.md", "digest": "sha256:00", "size": 3}]),
        )
        .unwrap();
        assert!(matches!(manifest, SkillResources::Manifest(ref f) if f.len() == 1));
        let dynamic: SkillResources = serde_json::from_value(json!("dynamic")).unwrap();
        assert_eq!(dynamic, SkillResources::Dynamic(DynamicMarker::Dynamic));
        assert_eq!(serde_json::to_value(&dynamic).unwrap(), json!("dynamic"));
        assert!(serde_json::from_value::<SkillResources>(json!("static")).is_err());
        assert!(serde_json::from_value::<SkillResources>(json!(null)).is_err());
    }

    #[test]
    fn names_follow_the_agent_skills_rules() {
        for good in ["pdf-processing", "a", "x1", &"a".repeat(64)] {
            assert!(is_skill_name(good), "{good}");
        }
        for bad in ["", "-a", "a-", "a--b", "PDF", "a_b", "a.b", &"a".repeat(65)] {
            assert!(!is_skill_name(bad), "{bad}");
        }
        assert_eq!(
            skill_name_of("skill://acme/billing/refunds/SKILL.md"),
            Some("refunds")
        );
        assert_eq!(skill_name_of("skill://git/SKILL.md"), Some("git"));
        assert_eq!(skill_name_of("skill://git/README.md"), None);
    }

    #[test]
    fn frontmatter_is_read_between_its_fences_or_refused() {
        let fm = skill_frontmatter(
            "\u{feff}---\r\nname: a\r\ndescription: b\r\nlicense: MIT\r\n---  \r\nbody\n---\n",
        )
        .unwrap();
        assert_eq!(
            serde_json::Value::Object(fm),
            json!({"name": "a", "description": "b", "license": "MIT"})
        );
        for bad in [
            "name: a\n",
            "---\nname: a\ndescription: b\n",
            "---\n- a\n---\n",
            "---\nname: a\n---\n",
            "---\nname: ''\ndescription: b\n---\n",
            "---\nname: [a\n---\n",
        ] {
            assert!(skill_frontmatter(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn a_host_checks_the_entry_before_it_loads_anything() {
        let entry = |uri: &str, name: &str, files: &[(&str, u64)]| SkillEntry {
            uri: uri.to_owned(),
            frontmatter: json!({"name": name, "description": "d"})
                .as_object()
                .unwrap()
                .clone(),
            resources: SkillResources::Manifest(
                files
                    .iter()
                    .map(|(u, size)| SkillFile {
                        uri: (*u).to_owned(),
                        digest: String::new(),
                        size: *size,
                    })
                    .collect(),
            ),
        };
        let md = "skill://a/b/SKILL.md";
        assert!(checked_manifest(&entry(md, "b", &[(md, 1), ("skill://a/b/x/y.md", 2)])).is_ok());
        for (bad, why) in [
            (entry(md, "c", &[(md, 1)]), "frontmatter name"),
            (
                entry("skill://a/b/SKILL.md/SKILL.md", "SKILL.md", &[]),
                "frontmatter name",
            ),
            (
                entry(md, "b", &[("skill://a/b/x.md", 1)]),
                "does not list its SKILL.md",
            ),
            (
                entry(md, "b", &[(md, 1), ("skill://a/other/SKILL.md", 1)]),
                "outside",
            ),
            (
                entry(md, "b", &[(md, 1), ("skill://a/b/../c/x", 1)]),
                "outside",
            ),
            (
                entry(md, "b", &[(md, 1), ("https://evil.example/x", 1)]),
                "outside",
            ),
            (entry(md, "b", &[(md, 1), (md, 1)]), "twice"),
            (
                entry(md, "b", &[(md, u64::MAX), ("skill://a/b/x", 2)]),
                "more than 2^64",
            ),
            (entry(md, "b", &[(md, MAX_SKILL_BYTES + 1)]), "bytes"),
        ] {
            let e = checked_manifest(&bad).unwrap_err();
            assert!(e.contains(why), "{e} (expected {why:?})");
        }
    }

    #[test]
    fn digests_are_lowercase_hex_with_their_prefix() {
        let d = skill_digest(&[0xab; 32]);
        assert_eq!(d.len(), 71);
        assert!(d.starts_with("sha256:abab"));
    }
}

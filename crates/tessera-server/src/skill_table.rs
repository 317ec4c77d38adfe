//! The skills a server serves, indexed once at build: each skill's entry
//! (frontmatter, manifest with digests and sizes), every file by URI, every
//! directory with its direct children.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::sync::Arc;

use tessera_protocol::{
    DIRECTORY_MIME_TYPE, JsonObject, MAX_SKILL_BYTES, MAX_SKILL_FILES, ReadResourceResult,
    Resource, ResourceContents, SkillEntry, SkillFile, SkillResources,
};

use crate::handler::ErasedHandler;
use crate::resource::ResourceRead;
use crate::{BuildError, Context, HandlerError, ResourceDef, SkillDef};

/// The `_meta` prefix skill metadata of MCP extensions is reserved under.
const RESERVED_METADATA_PREFIX: &str = "io.modelcontextprotocol/";

/// One file a skill serves.
struct SkillFileData {
    bytes: Arc<[u8]>,
    mime_type: &'static str,
}

/// Every skill of a server, as the methods of the extension read them.
pub(crate) struct SkillTable {
    /// By URI, in URI order (the order of `skills/list`).
    entries: BTreeMap<String, SkillEntry>,
    files: Arc<HashMap<String, SkillFileData>>,
    /// Directory URI (no trailing slash) → its direct children, in URI order.
    directories: BTreeMap<String, Vec<Resource>>,
    /// Reads a file of any skill (`resources/read`).
    pub(crate) reader: ErasedHandler<ReadResourceResult, ResourceRead>,
}

impl SkillTable {
    /// Checks and indexes `skills`; also returns the resources to list (one
    /// `SKILL.md` per skill, named and described by its frontmatter).
    pub(crate) fn build(
        skills: Vec<SkillDef>,
    ) -> Result<(Arc<Self>, Vec<ResourceDef>), BuildError> {
        let mut entries = BTreeMap::new();
        let mut files: HashMap<String, SkillFileData> = HashMap::new();
        let mut directories: BTreeMap<String, BTreeSet<(String, bool)>> = BTreeMap::new();
        let mut listed = Vec::new();
        for skill in skills {
            let uri = skill.uri();
            let refuse = |problem: String| BuildError(format!("skill {uri:?}: {problem}"));
            check_path("path", &skill.path).map_err(refuse)?;
            let skill_md = &skill.files["SKILL.md"];
            let frontmatter = frontmatter_of(&skill.path, skill_md).map_err(refuse)?;
            if skill.files.len() > MAX_SKILL_FILES {
                return Err(refuse(format!(
                    "{} files; a skill serves at most {MAX_SKILL_FILES} (the extension's limit, \
                     which every host accepts)",
                    skill.files.len()
                )));
            }
            let total: u64 = skill.files.values().map(|b| b.len() as u64).sum();
            if total > MAX_SKILL_BYTES {
                return Err(refuse(format!(
                    "{total} bytes in all; a skill serves at most {MAX_SKILL_BYTES} (16 MiB)"
                )));
            }
            let mut manifest = Vec::with_capacity(skill.files.len());
            for (relative, bytes) in &skill.files {
                check_path("file", relative).map_err(refuse)?;
                let file_uri = format!("skill://{}/{relative}", skill.path);
                manifest.push(SkillFile {
                    uri: file_uri.clone(),
                    digest: tessera_protocol::skill_digest(&tessera_state::sha256(bytes)),
                    size: bytes.len() as u64,
                });
                // A nested skill's files are its enclosing skill's too: the same bytes.
                if let Some(known) = files.get(&file_uri) {
                    if known.bytes != *bytes {
                        return Err(refuse(format!(
                            "{file_uri} is served by another skill with other content"
                        )));
                    }
                    continue;
                }
                files.insert(
                    file_uri.clone(),
                    SkillFileData {
                        bytes: Arc::clone(bytes),
                        mime_type: mime_type_of(relative, bytes),
                    },
                );
                // Every directory from the namespace's first segment down.
                let mut child = file_uri;
                let mut is_dir = false;
                while let Some(cut) = child.rfind('/').filter(|&i| i > "skill://".len()) {
                    let parent = child[..cut].to_owned();
                    directories
                        .entry(parent.clone())
                        .or_default()
                        .insert((child, is_dir));
                    child = parent;
                    is_dir = true;
                }
            }
            // SKILL.md first, then the other files in path order.
            manifest.sort_by_key(|f| f.uri != uri);
            let entry = SkillEntry {
                uri: uri.clone(),
                frontmatter: frontmatter.clone(),
                resources: SkillResources::Manifest(manifest),
            };
            if entries.insert(uri.clone(), entry).is_some() {
                return Err(refuse("is registered twice".to_owned()));
            }
            let text = String::from_utf8_lossy(skill_md).into_owned();
            let mut resource = ResourceDef::new(uri.clone(), string(&frontmatter, "name"), {
                move |_ctx: Context| std::future::ready(text.clone())
            })
            .description(string(&frontmatter, "description"))
            .mime_type("text/markdown");
            resource.resource.size = Some(skill_md.len() as u64);
            listed.push(resource);
        }
        for uri in files.keys() {
            if directories.contains_key(uri) {
                return Err(BuildError(format!(
                    "skills: {uri} is both a file and a directory"
                )));
            }
        }
        let directories = directories
            .into_iter()
            .map(|(dir, children)| {
                let children = children
                    .into_iter()
                    .map(|(uri, is_dir)| child_resource(&uri, is_dir, &files))
                    .collect();
                (dir, children)
            })
            .collect();
        let files = Arc::new(files);
        let reader: ErasedHandler<ReadResourceResult, ResourceRead> = {
            let files = Arc::clone(&files);
            Arc::new(move |ctx: Context, _read: ResourceRead| {
                let uri = ctx.inner.target.clone();
                let read = files
                    .get(&uri)
                    .map(|file| read_result(&uri, file))
                    .ok_or_else(|| HandlerError::from(crate::NotFound));
                Box::pin(std::future::ready(read))
            })
        };
        let table = Self {
            entries,
            files,
            directories,
            reader,
        };
        Ok((Arc::new(table), listed))
    }

    /// Every entry, in URI order.
    pub(crate) fn entries(&self) -> impl ExactSizeIterator<Item = &SkillEntry> {
        self.entries.values()
    }

    /// The entry of the skill whose `SKILL.md` is `uri`.
    pub(crate) fn entry(&self, uri: &str) -> Option<&SkillEntry> {
        self.entries.get(uri)
    }

    /// The skills (their `SKILL.md` URIs) `uri` belongs to: those it is a
    /// file or directory of, and, for a directory above skills (a prefix),
    /// the skills under it.
    pub(crate) fn owners<'a>(&'a self, uri: &'a str) -> impl Iterator<Item = &'a str> + 'a {
        self.entries
            .keys()
            .map(String::as_str)
            .filter(move |skill| {
                let root = skill.strip_suffix("/SKILL.md").unwrap_or(skill);
                let under = |outer: &str, inner: &str| {
                    inner
                        .strip_prefix(outer)
                        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
                };
                under(root, uri) || under(uri, root)
            })
    }

    /// Whether `uri` is a file of a skill.
    pub(crate) fn serves_file(&self, uri: &str) -> bool {
        self.files.contains_key(uri)
    }

    /// The direct children of the directory `uri`, if it is one.
    pub(crate) fn directory(&self, uri: &str) -> Option<&[Resource]> {
        self.directories.get(uri).map(Vec::as_slice)
    }
}

/// The string field `key` of a checked frontmatter.
fn string(frontmatter: &JsonObject, key: &str) -> String {
    frontmatter
        .get(key)
        .and_then(serde_json::Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

/// The frontmatter of `SKILL.md`, checked against the skill's path.
fn frontmatter_of(path: &str, skill_md: &[u8]) -> Result<JsonObject, String> {
    let text =
        std::str::from_utf8(skill_md).map_err(|_| "SKILL.md is not UTF-8 text".to_owned())?;
    let frontmatter = tessera_protocol::skill_frontmatter(text).map_err(|e| e.to_string())?;
    let name = string(&frontmatter, "name");
    if !tessera_protocol::is_skill_name(&name) {
        return Err(format!(
            "name {name:?} breaks the Agent Skills naming rules (1 to 64 lowercase letters, \
             digits and single hyphens, no hyphen at either end)"
        ));
    }
    let last = path.rsplit('/').next().unwrap_or(path);
    if last != name {
        return Err(format!(
            "the last segment of its path, {last:?}, must be its name {name:?}"
        ));
    }
    if let Some(metadata) = frontmatter.get("metadata") {
        let Some(metadata) = metadata.as_object() else {
            return Err("frontmatter `metadata` must be a mapping".to_owned());
        };
        if let Some(key) = metadata
            .keys()
            .find(|k| k.starts_with(RESERVED_METADATA_PREFIX))
        {
            return Err(format!(
                "metadata key {key:?}: keys under {RESERVED_METADATA_PREFIX} are reserved for \
                 MCP extensions, and none is defined"
            ));
        }
    }
    Ok(frontmatter)
}

/// A skill's path or a file's path under it (`what` names which): each
/// segment plain ([`is_plain_segment`](tessera_protocol::is_plain_segment)).
fn check_path(what: &str, path: &str) -> Result<(), String> {
    if path.split('/').all(tessera_protocol::is_plain_segment) {
        Ok(())
    } else {
        Err(format!(
            "{what} {path:?}: each segment must be letters, digits, `-`, `.`, `_` or `~` \
             (not empty, `.` or `..`), so its URI needs no escaping"
        ))
    }
}

/// The MIME type a file is served with: by extension for the kinds skills
/// hold, else `text/plain` for UTF-8 and `application/octet-stream`. (A small
/// table rather than a crate: skills hold text, scripts and a few images.)
fn mime_type_of(relative: &str, bytes: &[u8]) -> &'static str {
    let extension = relative
        .rsplit_once('.')
        .map(|(_, e)| e.to_ascii_lowercase());
    match extension.as_deref() {
        Some("md" | "markdown") => "text/markdown",
        Some("py") => "text/x-python",
        Some("sh") => "text/x-shellscript",
        Some("js" | "mjs") => "text/javascript",
        Some("ts") => "text/x-typescript",
        Some("json") => "application/json",
        Some("yaml" | "yml") => "application/yaml",
        Some("html" | "htm") => "text/html",
        Some("csv") => "text/csv",
        Some("xml") => "application/xml",
        Some("png") => "image/png",
        Some("jpg" | "jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("svg") => "image/svg+xml",
        Some("pdf") => "application/pdf",
        _ if std::str::from_utf8(bytes).is_ok() => "text/plain",
        _ => "application/octet-stream",
    }
}

/// A directory's child as `resources/directory/read` lists it.
fn child_resource(uri: &str, is_dir: bool, files: &HashMap<String, SkillFileData>) -> Resource {
    let name = uri.rsplit('/').next().unwrap_or(uri).to_owned();
    let file = (!is_dir).then(|| files.get(uri)).flatten();
    Resource {
        uri: uri.to_owned(),
        name,
        mime_type: Some(file.map_or(DIRECTORY_MIME_TYPE, |f| f.mime_type).to_owned()),
        size: file.map(|f| f.bytes.len() as u64),
        ..Resource::default()
    }
}

/// A file's contents: text when it is UTF-8, else a blob.
fn read_result(uri: &str, file: &SkillFileData) -> ReadResourceResult {
    let contents = match std::str::from_utf8(&file.bytes) {
        Ok(text) => ResourceContents::text(uri, Some(file.mime_type), text.to_owned()),
        Err(_) => {
            use base64::Engine as _;
            ResourceContents::Blob(tessera_protocol::BlobResourceContents {
                uri: uri.to_owned(),
                mime_type: Some(file.mime_type.to_owned()),
                blob: base64::engine::general_purpose::STANDARD.encode(&file.bytes),
                meta: None,
            })
        }
    };
    ReadResourceResult {
        contents: vec![contents],
        ..ReadResourceResult::default()
    }
}

//! Skills (SEP-2640): listing and describing a server's skills, loading one
//! with its `SKILL.md` verified, and reading its files on demand.
//!
//! Nothing is fetched ahead of need: listing reads entries only, loading
//! reads the one `SKILL.md`, and a supporting file is read when asked for.
//! Every read is checked against the entry the skill was loaded from — its
//! size, then its SHA-256 digest, and for `SKILL.md` the frontmatter field
//! by field — and a file the entry does not list is refused without a read.

use serde_json::json;
use sha2::{Digest as _, Sha256};
use tessera_protocol::{JsonObject, Resource, ResourceContents, SkillEntry, SkillFile};

use super::McpClient;
use crate::ClientError;

/// A skill whose `SKILL.md` was read and verified against its entry.
#[derive(Debug, Clone)]
pub struct LoadedSkill {
    entry: SkillEntry,
    files: Vec<SkillFile>,
    root: String,
    skill_md: String,
}

impl LoadedSkill {
    /// The entry it was loaded from (`skills/list` or `skills/get`).
    pub fn entry(&self) -> &SkillEntry {
        &self.entry
    }

    /// Its `SKILL.md`, as read and verified.
    pub fn skill_md(&self) -> &str {
        &self.skill_md
    }

    /// The URI of its root directory (its `SKILL.md`'s without `/SKILL.md`).
    pub fn root(&self) -> &str {
        &self.root
    }

    /// Every file the entry lists, `SKILL.md` first.
    pub fn files(&self) -> &[SkillFile] {
        &self.files
    }
}

fn refused(message: String) -> ClientError {
    ClientError::SkillRefused(message)
}

impl McpClient {
    /// `skills/list`, every page: the skills the server publishes (possibly
    /// not all it serves). An entry that is not valid (no `resources`, a
    /// `uri` that is no `SKILL.md`) is left out, with a warning.
    pub async fn list_skills(&self) -> Result<Vec<SkillEntry>, ClientError> {
        let mut skills = Vec::new();
        for raw in self
            .list_all(tessera_protocol::SKILLS_LIST, "skills")
            .await?
        {
            match serde_json::from_value::<SkillEntry>(raw) {
                Ok(entry) if tessera_protocol::skill_name_of(&entry.uri).is_some() => {
                    skills.push(entry);
                }
                Ok(entry) => {
                    tracing::warn!(uri = %entry.uri, "skill left out: its uri does not end in /SKILL.md");
                }
                Err(problem) => tracing::warn!(%problem, "skill entry left out: not valid"),
            }
        }
        Ok(skills)
    }

    /// `skills/get`: the current entry of the skill whose `SKILL.md` is `uri`,
    /// listed or not.
    pub async fn get_skill(&self, uri: &str) -> Result<SkillEntry, ClientError> {
        let mut params = JsonObject::new();
        params.insert("uri".into(), json!(uri));
        let result = self.request(tessera_protocol::SKILLS_GET, params).await?;
        let got: tessera_protocol::GetSkillResult = Self::parse("skills/get", result)?;
        if got.skill.uri != uri {
            return Err(ClientError::Protocol(format!(
                "skills/get for {uri} answered with the entry of {}",
                got.skill.uri
            )));
        }
        Ok(got.skill)
    }

    /// Loads the skill `entry` describes: checks the entry
    /// ([`checked_manifest`](tessera_protocol::checked_manifest): its name,
    /// a manifest confined to the skill's directory, the extension's
    /// limits), reads its `SKILL.md`, and verifies it — size, digest, and its
    /// frontmatter against the entry's. A skill published as `"dynamic"`
    /// offers nothing to verify and is refused.
    pub async fn load_skill(&self, entry: &SkillEntry) -> Result<LoadedSkill, ClientError> {
        let uri = &entry.uri;
        let files = tessera_protocol::checked_manifest(entry).map_err(refused)?;
        let Some(skill_md_entry) = files.iter().find(|f| f.uri == *uri) else {
            return Err(refused(format!(
                "{uri}: its manifest does not list its SKILL.md"
            )));
        };
        let bytes = self.read_verified(skill_md_entry).await?;
        let skill_md = String::from_utf8(bytes)
            .map_err(|_| refused(format!("{uri}: SKILL.md is not UTF-8 text")))?;
        let read = tessera_protocol::skill_frontmatter(&skill_md)
            .map_err(|e| refused(format!("{uri}: {e}")))?;
        if read != entry.frontmatter {
            let differing: Vec<&String> = read
                .keys()
                .chain(entry.frontmatter.keys())
                .filter(|k| read.get(*k) != entry.frontmatter.get(*k))
                .collect();
            return Err(refused(format!(
                "{uri}: its frontmatter differs from its entry's (field {})",
                differing
                    .first()
                    .map_or_else(|| "order".to_owned(), |k| format!("{k:?}"))
            )));
        }
        let mut files = files.to_vec();
        files.sort_by_key(|f| f.uri != *uri);
        Ok(LoadedSkill {
            entry: entry.clone(),
            files,
            root: uri.strip_suffix("/SKILL.md").unwrap_or(uri).to_owned(),
            skill_md,
        })
    }

    /// Reads the file `path` of a loaded skill (relative to its root, as
    /// `SKILL.md` refers to it, or a full URI) and verifies it. A file its
    /// entry does not list is refused without a read: the skill changed
    /// since it was loaded, so load it again from a fresh entry.
    pub async fn read_skill_file(
        &self,
        skill: &LoadedSkill,
        path: &str,
    ) -> Result<Vec<u8>, ClientError> {
        let uri = if path.contains("://") {
            path.to_owned()
        } else {
            format!("{}/{}", skill.root, path.trim_start_matches("./"))
        };
        let file = skill.files.iter().find(|f| f.uri == uri).ok_or_else(|| {
            refused(format!(
                "{uri} is not a file of {} as loaded: fetch its entry again (skills/get)",
                skill.entry.uri
            ))
        })?;
        self.read_verified(file).await
    }

    /// `resources/directory/read`, every page: the direct children of the
    /// directory `uri` (subdirectories with MIME type `inode/directory`).
    pub async fn read_directory(&self, uri: &str) -> Result<Vec<Resource>, ClientError> {
        let mut params = JsonObject::new();
        params.insert("uri".into(), json!(uri));
        self.list_all_with(
            tessera_protocol::RESOURCES_DIRECTORY_READ,
            "resources",
            params,
        )
        .await?
        .into_iter()
        .map(|v| Self::parse(tessera_protocol::RESOURCES_DIRECTORY_READ, v))
        .collect()
    }

    /// Reads `file` and returns its bytes once their size and digest are the
    /// manifest's.
    async fn read_verified(&self, file: &SkillFile) -> Result<Vec<u8>, ClientError> {
        let read = self.read_resource(&file.uri).await?;
        let contents = read
            .contents
            .iter()
            .find(|c| contents_uri(c) == file.uri)
            .or(read.contents.first())
            .ok_or_else(|| refused(format!("{}: the read returned no contents", file.uri)))?;
        let bytes = match contents {
            ResourceContents::Text(text) => text.text.clone().into_bytes(),
            ResourceContents::Blob(blob) => {
                use base64::Engine as _;
                base64::engine::general_purpose::STANDARD
                    .decode(&blob.blob)
                    .map_err(|_| refused(format!("{}: its blob is not base64", file.uri)))?
            }
        };
        // "A read whose byte length differs from the entry's size is a verification failure."
        if bytes.len() as u64 != file.size {
            return Err(refused(format!(
                "{}: {} bytes read, its entry says {}",
                file.uri,
                bytes.len(),
                file.size
            )));
        }
        let digest = tessera_protocol::skill_digest(&Sha256::digest(&bytes).into());
        if digest != file.digest {
            return Err(refused(format!(
                "{}: its content does not match its entry's digest (changed since the entry was fetched?)",
                file.uri
            )));
        }
        Ok(bytes)
    }
}

fn contents_uri(contents: &ResourceContents) -> &str {
    match contents {
        ResourceContents::Text(t) => &t.uri,
        ResourceContents::Blob(b) => &b.uri,
    }
}

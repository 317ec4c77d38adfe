//! Skills (SEP-2640, the `io.modelcontextprotocol/skills` extension): a
//! directory of files, a `SKILL.md` at its root, served as `skill://`
//! resources, enumerated by `skills/list` and described by `skills/get`.
//!
//! A skill's files are read into memory when it is defined, so what a
//! listing's digests promise is what a read returns, and no read ever
//! reaches the filesystem: a URI names a file of the table or nothing
//! (`..` is no key of it). The checks that make an entry valid run when the
//! server is built ([`SkillTable`](crate::skill_table::SkillTable)).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

/// One skill: its path in the server's skill namespace and its files.
///
/// Its `SKILL.md` is served at `skill://<path>/SKILL.md`, each other file at
/// `skill://<path>/<file>`. The last segment of `path` must be the `name` of
/// the frontmatter (the Agent Skills rules: lowercase letters, digits and
/// single hyphens, at most 64), earlier segments are an organising prefix.
/// The server refuses to build with a skill it could not serve as the
/// extension requires: frontmatter without `name` or `description`, a name
/// that is not the last segment, a file path with `.`, `..` or a character
/// a URI would have to escape, more than 512 files or more than 16 MiB.
///
/// ```
/// use tessera_server::{McpServer, SkillDef};
///
/// let skill = SkillDef::new(
///     "acme/git-workflow",
///     "---\nname: git-workflow\ndescription: Branch and commit the team's way\n---\n\
///      Read `references/branches.md` first.\n",
/// )
/// .file("references/branches.md", "Branch from main; name it after the ticket.\n");
/// assert_eq!(skill.uri(), "skill://acme/git-workflow/SKILL.md");
/// let server = McpServer::builder("demo", "1.0.0").skill(skill).build().unwrap();
/// # let _ = server;
/// ```
#[derive(Clone, Debug)]
pub struct SkillDef {
    pub(crate) path: String,
    /// Relative path (with `/`) → raw bytes; `SKILL.md` among them.
    pub(crate) files: BTreeMap<String, Arc<[u8]>>,
}

/// Why skills could not be read from a directory.
#[derive(Debug, thiserror::Error)]
pub enum SkillLoadError {
    /// A file or directory could not be read.
    #[error("cannot read {path}: {source}")]
    Io {
        /// What was being read.
        path: PathBuf,
        /// Why not.
        source: std::io::Error,
    },
    /// Something a skill directory must not hold.
    #[error("{path}: {problem}")]
    Refused {
        /// What was refused.
        path: PathBuf,
        /// Why.
        problem: String,
    },
}

impl SkillDef {
    /// A skill at `path` (`/`-separated, e.g. `git-workflow` or
    /// `acme/billing/refunds`) whose `SKILL.md` is `skill_md`.
    pub fn new(path: impl Into<String>, skill_md: impl Into<String>) -> Self {
        let mut files = BTreeMap::new();
        files.insert(
            "SKILL.md".to_owned(),
            Arc::from(skill_md.into().into_bytes()),
        );
        Self {
            path: path.into(),
            files,
        }
    }

    /// Adds the file `relative` (a `/`-separated path under the skill's
    /// root) with its raw bytes.
    pub fn file(mut self, relative: impl Into<String>, bytes: impl Into<Vec<u8>>) -> Self {
        self.files.insert(relative.into(), Arc::from(bytes.into()));
        self
    }

    /// The skill in directory `dir`, at `path`: every regular file under it,
    /// subdirectories included, read now. Names beginning with `.` are left
    /// out (`.git`, editor files); a symbolic link is refused, so nothing
    /// outside `dir` is ever served.
    pub fn from_dir(
        path: impl Into<String>,
        dir: impl AsRef<Path>,
    ) -> Result<Self, SkillLoadError> {
        let dir = dir.as_ref();
        let mut files = BTreeMap::new();
        read_tree(dir, "", &mut files)?;
        if !files.contains_key("SKILL.md") {
            return Err(SkillLoadError::Refused {
                path: dir.to_owned(),
                problem: "a skill directory needs a SKILL.md at its root".to_owned(),
            });
        }
        Ok(Self {
            path: path.into(),
            files,
        })
    }

    /// Every skill under `root`: each directory (at any depth) that holds a
    /// `SKILL.md`, at its path relative to `root`. A skill nested in another
    /// is served on its own and, as the extension says, its files are files
    /// of the enclosing skill too.
    ///
    /// ```no_run
    /// use tessera_server::{McpServer, SkillDef};
    ///
    /// let server = McpServer::builder("docs", "1.0.0")
    ///     .skills(SkillDef::load_all("skills")?)
    ///     .build()?;
    /// # let _ = server;
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn load_all(root: impl AsRef<Path>) -> Result<Vec<Self>, SkillLoadError> {
        let root = root.as_ref();
        let mut found = Vec::new();
        find_skill_dirs(root, "", &mut found)?;
        found
            .into_iter()
            .map(|rel| Self::from_dir(rel.clone(), root.join(&rel)))
            .collect()
    }

    /// The URI of its `SKILL.md`.
    pub fn uri(&self) -> String {
        format!("skill://{}/SKILL.md", self.path)
    }
}

/// Whether a directory entry is left out of a skill (hidden files).
fn hidden(name: &str) -> bool {
    name.starts_with('.')
}

/// A directory's entries, sorted, each with its name as UTF-8.
fn entries(dir: &Path) -> Result<Vec<(String, PathBuf, std::fs::FileType)>, SkillLoadError> {
    let io = |path: &Path| {
        let path = path.to_owned();
        move |source| SkillLoadError::Io { path, source }
    };
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(io(dir))? {
        let entry = entry.map_err(io(dir))?;
        let path = entry.path();
        let kind = entry.file_type().map_err(io(&path))?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            return Err(SkillLoadError::Refused {
                path,
                problem: "a file name that is not UTF-8 cannot be a skill URI".to_owned(),
            });
        };
        if hidden(&name) {
            continue;
        }
        if kind.is_symlink() {
            return Err(SkillLoadError::Refused {
                path,
                problem: "a symbolic link in a skill is refused (it could lead outside the \
                          skill's directory): copy the file in instead"
                    .to_owned(),
            });
        }
        out.push((name, path, kind));
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(out)
}

fn read_tree(
    dir: &Path,
    prefix: &str,
    files: &mut BTreeMap<String, Arc<[u8]>>,
) -> Result<(), SkillLoadError> {
    for (name, path, kind) in entries(dir)? {
        let rel = format!("{prefix}{name}");
        if kind.is_dir() {
            read_tree(&path, &format!("{rel}/"), files)?;
        } else if kind.is_file() {
            // Past the limits the build refuses the skill anyway: stop before reading.
            let held: u64 = files.values().map(|b| b.len() as u64).sum();
            let size = std::fs::symlink_metadata(&path)
                .map_err(|source| SkillLoadError::Io {
                    path: path.clone(),
                    source,
                })?
                .len();
            if files.len() >= tessera_protocol::MAX_SKILL_FILES
                || held.saturating_add(size) > tessera_protocol::MAX_SKILL_BYTES
            {
                return Err(SkillLoadError::Refused {
                    path: dir.to_owned(),
                    problem: format!(
                        "a skill serves at most {} files and {} bytes (16 MiB)",
                        tessera_protocol::MAX_SKILL_FILES,
                        tessera_protocol::MAX_SKILL_BYTES
                    ),
                });
            }
            let bytes =
                std::fs::read(&path).map_err(|source| SkillLoadError::Io { path, source })?;
            files.insert(rel, Arc::from(bytes));
        }
    }
    Ok(())
}

fn find_skill_dirs(
    dir: &Path,
    prefix: &str,
    found: &mut Vec<String>,
) -> Result<(), SkillLoadError> {
    for (name, path, kind) in entries(dir)? {
        if kind.is_dir() {
            let rel = format!("{prefix}{name}");
            if path.join("SKILL.md").is_file() {
                found.push(rel.clone());
            }
            find_skill_dirs(&path, &format!("{rel}/"), found)?;
        }
    }
    Ok(())
}

//! The skills extension's methods: `skills/list`, `skills/get` and
//! `resources/directory/read`, answered from the server's skill table.

use serde_json::{Value, json};
use tessera_protocol::{
    GetSkillResult, ListSkillsResult, RESOURCES_DIRECTORY_READ, ReadDirectoryResult, SKILLS_GET,
    SKILLS_LIST,
};

use super::required_str;
use crate::{McpServer, ServerError};

impl McpServer {
    /// One of the extension's methods (the caller checked there are skills).
    pub(super) fn skill_method(
        &self,
        method: &str,
        params: Option<&Value>,
    ) -> Result<Value, ServerError> {
        let Some(skills) = self.skills.as_deref() else {
            return Err(ServerError::MethodNotFound {
                method: method.to_owned(),
            });
        };
        match method {
            SKILLS_LIST => {
                let (skills, next_cursor) = self.page_of(params, skills.entries())?;
                Ok(json!(ListSkillsResult {
                    skills,
                    next_cursor,
                    ttl_ms: Some(self.list_cache.ttl_ms),
                    cache_scope: Some(self.list_cache.scope),
                    ..ListSkillsResult::default()
                }))
            }
            SKILLS_GET => {
                let uri = required_str(params, "uri", method)?;
                let skill = skills.entry(uri).cloned().ok_or_else(|| {
                    ServerError::invalid_params(format!(
                        "Unknown skill {uri:?}: skills/get takes the URI of a SKILL.md this \
                         server serves (skills/list names them)"
                    ))
                })?;
                Ok(json!(GetSkillResult {
                    result_type: tessera_protocol::Complete,
                    skill,
                    ttl_ms: Some(self.read_cache.ttl_ms),
                    cache_scope: Some(self.read_cache.scope),
                    meta: None,
                }))
            }
            RESOURCES_DIRECTORY_READ => {
                let uri = required_str(params, "uri", method)?;
                let children = skills.directory(uri).ok_or_else(|| {
                    ServerError::invalid_params(if skills.serves_file(uri) {
                        format!("{uri} is a file, not a directory: read it with resources/read")
                    } else {
                        format!(
                            "Unknown directory {uri:?}: a directory URI has no trailing slash, \
                             e.g. skill://name or skill://name/references"
                        )
                    })
                })?;
                let (resources, next_cursor) = self.page_of(params, children.iter())?;
                Ok(json!(ReadDirectoryResult {
                    resources,
                    next_cursor,
                    ..ReadDirectoryResult::default()
                }))
            }
            other => Err(ServerError::MethodNotFound {
                method: other.to_owned(),
            }),
        }
    }
}

//! The skills extension's methods: `skills/list`, `skills/get` and
//! `resources/directory/read`, answered from the server's skill table.

use serde_json::{Value, json};
use tessera_protocol::{
    GetSkillResult, ListSkillsResult, RESOURCES_DIRECTORY_READ, ReadDirectoryResult, SKILLS_GET,
    SKILLS_LIST,
};

use super::required_str;
use crate::catalog::Catalog;
use crate::{McpServer, Offered, RequestFacts, ServerError};

impl McpServer {
    /// Whether the caller may see the skill whose `SKILL.md` is `skill`:
    /// when that resource is shown to it and its scopes are covered, as for
    /// any resource.
    pub(crate) fn shows_skill(&self, catalog: &Catalog, facts: &RequestFacts, skill: &str) -> bool {
        catalog.resources.get(skill).is_some_and(|r| {
            self.shows(facts, Offered::Resource(r))
                && self.check_scopes(facts, &r.scopes, String::new).is_ok()
        })
    }

    /// Whether `uri` (a skill's file or directory) belongs to a skill the caller may see.
    pub(crate) fn shows_skill_part(
        &self,
        catalog: &Catalog,
        facts: &RequestFacts,
        uri: &str,
    ) -> bool {
        self.skills
            .as_deref()
            .is_some_and(|t| t.owners(uri).any(|s| self.shows_skill(catalog, facts, s)))
    }

    /// One of the extension's methods (the caller checked there are skills),
    /// each answering only with skills the caller may see.
    pub(super) fn skill_method(
        &self,
        method: &str,
        params: Option<&Value>,
        catalog: &Catalog,
        facts: &RequestFacts,
    ) -> Result<Value, ServerError> {
        let Some(skills) = self.skills.as_deref() else {
            return Err(ServerError::MethodNotFound {
                method: method.to_owned(),
            });
        };
        match method {
            SKILLS_LIST => {
                let shown: Vec<_> = skills
                    .entries()
                    .filter(|e| self.shows_skill(catalog, facts, &e.uri))
                    .collect();
                let (skills, next_cursor) = self.page_of(params, shown.into_iter())?;
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
                let skill = skills
                    .entry(uri)
                    .filter(|_| self.shows_skill(catalog, facts, uri))
                    .cloned()
                    .ok_or_else(|| {
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
                let children = skills
                    .directory(uri)
                    .filter(|_| self.shows_skill_part(catalog, facts, uri))
                    .ok_or_else(|| {
                        ServerError::invalid_params(if skills.serves_file(uri) {
                            format!("{uri} is a file, not a directory: read it with resources/read")
                        } else {
                            format!(
                                "Unknown directory {uri:?}: a directory URI has no trailing slash, \
                             e.g. skill://name or skill://name/references"
                            )
                        })
                    })?;
                let shown: Vec<_> = children
                    .iter()
                    .filter(|c| self.shows_skill_part(catalog, facts, &c.uri))
                    .collect();
                let (resources, next_cursor) = self.page_of(params, shown.into_iter())?;
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

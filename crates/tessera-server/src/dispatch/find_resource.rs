//! Which resource a URI names, as one caller sees it: the one lookup behind
//! `resources/read` and the initialize era's `resources/subscribe`, so a
//! subscription is accepted exactly where a read would be.

use std::sync::Arc;

use indexmap::IndexMap;
use tessera_protocol::ReadResourceResult;

use crate::catalog::Catalog;
use crate::handler::ErasedHandler;
use crate::resource::ResourceRead;
use crate::{McpServer, Offered, RequestFacts, ServerError};

/// How to read a found resource: its handler and what it is handed.
pub(super) type Found = (
    ErasedHandler<ReadResourceResult, ResourceRead>,
    ResourceRead,
);

impl McpServer {
    /// The listed resource `uri`, else a file of a skill, else the first
    /// template shown to this caller that matches it, once the caller's scopes cover it.
    pub(super) fn find_resource(
        &self,
        catalog: &Catalog,
        uri: &str,
        facts: &RequestFacts,
    ) -> Result<Found, ServerError> {
        let shown = |item| self.shows(facts, item);
        if let Some(resource) = catalog
            .resources
            .get(uri)
            .filter(|r| shown(Offered::Resource(r)))
        {
            self.check_scopes(facts, &resource.scopes, || format!("resource {uri}"))?;
            let read = ResourceRead {
                vars: IndexMap::new(),
                mime_type: resource.resource.mime_type.clone(),
            };
            return Ok((Arc::clone(&resource.handler), read));
        }
        if let Some(skills) = self
            .skills
            .as_ref()
            .filter(|s| s.serves_file(uri) && self.shows_skill_part(catalog, facts, uri))
        {
            let read = ResourceRead {
                vars: IndexMap::new(),
                mime_type: None,
            };
            return Ok((Arc::clone(&skills.reader), read));
        }
        if let Some((template, vars)) = catalog
            .templates
            .iter()
            .filter(|t| shown(Offered::Template(t)))
            .find_map(|t| t.matches(uri).map(|v| (t, v)))
        {
            self.check_scopes(facts, &template.scopes, || format!("resource {uri}"))?;
            let read = ResourceRead {
                vars,
                mime_type: template.template.mime_type.clone(),
            };
            return Ok((Arc::clone(&template.handler), read));
        }
        Err(ServerError::ResourceNotFound {
            uri: uri.to_owned(),
        })
    }

    /// Whether the caller of a request with `facts` may subscribe to `uri`
    /// (the initialize era's `resources/subscribe`): only where it could
    /// read it — the server has resources (else -32601), `uri` is a listed
    /// resource or matches a template shown to the caller (else -32602),
    /// and the caller's scopes cover it (else `ServerError::InsufficientScope`).
    /// A transport checks this before it keeps anything of the subscription.
    pub fn may_subscribe(&self, uri: &str, facts: &RequestFacts) -> Result<(), ServerError> {
        let catalog = self.catalog();
        if !catalog.has_resources() {
            return Err(ServerError::MethodNotFound {
                method: "resources/subscribe".to_owned(),
            });
        }
        self.find_resource(&catalog, uri, facts).map(drop)
    }
}

//! Resources and resource templates: definitions and handlers.

use std::future::Future;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tessera_protocol::{ReadResourceResult, Resource, ResourceTemplate};

use crate::handler::{CallInput, ErasedHandler, erase_reply, typed_context};
use crate::{RequestContext, ResourceReply};

/// Variables matched from a URI template, by name.
pub type TemplateVariables = IndexMap<String, String>;

/// A resource with a fixed URI.
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) resource: Resource,
    pub(crate) handler: Option<ErasedHandler<ReadResourceResult, TemplateVariables>>,
}

/// A family of resources matched by a URI template such as `file:///{path}`.
#[derive(Clone)]
pub struct ResourceTemplateDef {
    pub(crate) template: ResourceTemplate,
    pub(crate) handler: Option<ErasedHandler<ReadResourceResult, TemplateVariables>>,
}

fn erased<S, F, Fut>(f: F) -> ErasedHandler<ReadResourceResult, TemplateVariables>
where
    S: Serialize + DeserializeOwned + Send + 'static,
    F: Fn(RequestContext<S>, String, TemplateVariables) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = ResourceReply<S>> + Send + 'static,
{
    let f = Arc::new(f);
    Arc::new(move |input: CallInput, vars: TemplateVariables| {
        let f = Arc::clone(&f);
        Box::pin(async move {
            let uri = input.scope.target.clone();
            let ctx = typed_context::<S>(input)?;
            erase_reply(f(ctx, uri, vars).await)
        })
    })
}

impl ResourceDef {
    /// A resource at `uri` named `name`, with no handler yet.
    pub fn new(uri: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            resource: Resource {
                uri: uri.into(),
                name: name.into(),
                ..Resource::default()
            },
            handler: None,
        }
    }

    /// What the resource is.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.resource.description = Some(description.into());
        self
    }

    /// Its MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.resource.mime_type = Some(mime_type.into());
        self
    }

    /// Human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.resource.title = Some(title.into());
        self
    }

    /// The handler: called with the context and the URI (no template variables).
    pub fn handler<S, F, Fut>(mut self, f: F) -> Self
    where
        S: Serialize + DeserializeOwned + Send + 'static,
        F: Fn(RequestContext<S>, String) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ResourceReply<S>> + Send + 'static,
    {
        self.handler = Some(erased(move |ctx, uri, _vars| f(ctx, uri)));
        self
    }

    /// The definition as `resources/list` shows it.
    pub fn definition(&self) -> &Resource {
        &self.resource
    }
}

impl ResourceTemplateDef {
    /// A template (RFC 6570 simple `{var}` expressions) named `name`.
    pub fn new(uri_template: impl Into<String>, name: impl Into<String>) -> Self {
        Self {
            template: ResourceTemplate {
                uri_template: uri_template.into(),
                name: name.into(),
                ..ResourceTemplate::default()
            },
            handler: None,
        }
    }

    /// What the resources are.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.template.description = Some(description.into());
        self
    }

    /// Their MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.template.mime_type = Some(mime_type.into());
        self
    }

    /// Human-readable name.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.template.title = Some(title.into());
        self
    }

    /// The handler: called with the context, the URI and the matched variables.
    pub fn handler<S, F, Fut>(mut self, f: F) -> Self
    where
        S: Serialize + DeserializeOwned + Send + 'static,
        F: Fn(RequestContext<S>, String, TemplateVariables) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = ResourceReply<S>> + Send + 'static,
    {
        self.handler = Some(erased(f));
        self
    }

    /// The definition as `resources/templates/list` shows it.
    pub fn definition(&self) -> &ResourceTemplate {
        &self.template
    }

    /// Matches `uri` against the template, returning the variables.
    pub fn matches(&self, uri: &str) -> Option<TemplateVariables> {
        match_template(&self.template.uri_template, uri)
    }
}

/// Matches simple `{name}` expressions; a variable matches one or more
/// characters up to the next literal (the last one takes the rest).
pub(crate) fn match_template(template: &str, uri: &str) -> Option<TemplateVariables> {
    let mut vars = TemplateVariables::new();
    let mut rest_t = template;
    let mut rest_u = uri;
    while !rest_t.is_empty() {
        match rest_t.find('{') {
            None => return (rest_t == rest_u).then_some(vars),
            Some(start) => {
                let literal = &rest_t[..start];
                rest_u = rest_u.strip_prefix(literal)?;
                let close = rest_t[start..].find('}')? + start;
                let name = &rest_t[start + 1..close];
                rest_t = &rest_t[close + 1..];
                let next_literal_end = rest_t.find('{').unwrap_or(rest_t.len());
                let next_literal = &rest_t[..next_literal_end];
                let value_end = if next_literal.is_empty() {
                    if rest_t.is_empty() {
                        rest_u.len()
                    } else {
                        return None;
                    }
                } else {
                    rest_u.find(next_literal)?
                };
                let value = &rest_u[..value_end];
                if value.is_empty() {
                    return None;
                }
                vars.insert(name.to_owned(), value.to_owned());
                rest_u = &rest_u[value_end..];
            }
        }
    }
    rest_u.is_empty().then_some(vars)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn templates_match_and_extract() {
        let v = match_template("test://template/{id}/data", "test://template/42/data").unwrap();
        assert_eq!(v["id"], "42");
        let v = match_template("file:///{path}", "file:///a/b.txt").unwrap();
        assert_eq!(v["path"], "a/b.txt");
        let v = match_template("x://{a}-{b}", "x://1-2").unwrap();
        assert_eq!((v["a"].as_str(), v["b"].as_str()), ("1", "2"));
        assert!(match_template("test://template/{id}/data", "test://template/42/other").is_none());
        assert!(match_template("test://template/{id}/data", "test://template//data").is_none());
        assert!(
            match_template("test://static", "test://static")
                .unwrap()
                .is_empty()
        );
        assert!(match_template("test://static", "test://static2").is_none());
    }
}

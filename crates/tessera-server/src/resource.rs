//! Resources and resource templates: definitions and handlers.

use std::future::Future;
use std::sync::Arc;

use indexmap::IndexMap;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tessera_protocol::{ReadResourceResult, Resource, ResourceTemplate};

use crate::app_state::NeededState;
use crate::completion::{Completer, Completers};
use crate::handler::{ErasedHandler, parse_input};
use crate::{Context, HandlerError, IntoCompletion, IntoResourceResult, PartialArgument};

/// Variables matched from a URI template, by name.
pub type TemplateVariables = IndexMap<String, String>;

/// A resource with a fixed URI.
///
/// ```
/// use tessera_server::{Context, ResourceDef};
///
/// let readme = ResourceDef::new("docs://readme", "readme", |_ctx: Context| async {
///     "Read me first.".to_owned()
/// })
/// .mime_type("text/plain");
/// assert_eq!(readme.definition().uri, "docs://readme");
/// ```
#[derive(Clone)]
pub struct ResourceDef {
    pub(crate) resource: Resource,
    pub(crate) handler: ErasedHandler<ReadResourceResult, ResourceRead>,
    pub(crate) needs: Vec<NeededState>,
    /// Whether the handler may ask for input ([`asks`](Self::asks)).
    pub(crate) asks: bool,
    pub(crate) scopes: Vec<String>,
}

/// A family of resources matched by a URI template such as `notes://note/{id}`.
///
/// The handler takes the matched variables as a type (a struct with one
/// `String` field per variable, or [`TemplateVariables`]); `?` on
/// [`NotFound`](crate::NotFound) answers "resource not found".
///
/// ```
/// use tessera_server::{Context, NotFound, ResourceTemplateDef, Result};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Note { id: String }
///
/// async fn read(_ctx: Context, note: Note) -> Result<String> {
///     let text = (note.id == "1").then(|| "The first note.".to_owned()).ok_or(NotFound)?;
///     Ok(text)
/// }
/// let notes = ResourceTemplateDef::new("notes://note/{id}", "note", read);
/// assert!(notes.matches("notes://note/7").is_some());
/// ```
#[derive(Clone)]
pub struct ResourceTemplateDef {
    pub(crate) template: ResourceTemplate,
    pub(crate) handler: ErasedHandler<ReadResourceResult, ResourceRead>,
    pub(crate) needs: Vec<NeededState>,
    /// Whether the handler may ask for input ([`asks`](Self::asks)).
    pub(crate) asks: bool,
    pub(crate) scopes: Vec<String>,
    pub(crate) completers: Completers,
}

/// What a read hands the handler besides its context.
pub(crate) struct ResourceRead {
    /// The variables the template matched (none for a fixed resource).
    pub(crate) vars: TemplateVariables,
    /// The declared MIME type, for results built from text or bytes.
    pub(crate) mime_type: Option<String>,
}

/// Erases a resource handler taking the variables as `A`.
fn erased<A, F, Fut, R>(handler: F) -> ErasedHandler<ReadResourceResult, ResourceRead>
where
    A: DeserializeOwned + Send + 'static,
    F: Fn(Context, A) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = R> + Send + 'static,
    R: IntoResourceResult + 'static,
{
    let handler = Arc::new(handler);
    Arc::new(move |ctx: Context, read: ResourceRead| {
        let ResourceRead { vars, mime_type } = read;
        let object = vars
            .into_iter()
            .map(|(k, v)| (k, Value::String(v)))
            .collect();
        let parsed = parse_input::<A>(Value::Object(object));
        let handler = Arc::clone(&handler);
        Box::pin(async move {
            let args = parsed.map_err(|problem| {
                HandlerError::invalid_params(format!("Invalid resource URI variables: {problem}"))
            })?;
            let uri = ctx.inner.target.clone();
            handler(ctx, args)
                .await
                .into_resource_result(&uri, mime_type.as_deref())
        })
    })
}
impl ResourceDef {
    crate::definition::shared_setters!(resource, "resource");

    /// A resource at `uri` named `name`, read by `handler`.
    pub fn new<F, Fut, R>(uri: impl Into<String>, name: impl Into<String>, handler: F) -> Self
    where
        F: Fn(Context) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoResourceResult + 'static,
    {
        Self {
            resource: Resource {
                uri: uri.into(),
                name: name.into(),
                ..Resource::default()
            },
            handler: erased(move |ctx, ()| handler(ctx)),
            needs: Vec::new(),
            asks: false,
            scopes: Vec::new(),
        }
    }

    /// Its MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.resource.mime_type = Some(mime_type.into());
        self
    }

    /// The definition as `resources/list` shows it.
    pub fn definition(&self) -> &Resource {
        &self.resource
    }
}

impl ResourceTemplateDef {
    crate::definition::shared_setters!(template, "resource template");

    /// A template (RFC 6570 simple `{var}` expressions) named `name`, read by
    /// `handler` with the matched variables as `A`.
    pub fn new<A, F, Fut, R>(
        uri_template: impl Into<String>,
        name: impl Into<String>,
        handler: F,
    ) -> Self
    where
        A: DeserializeOwned + Send + 'static,
        F: Fn(Context, A) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoResourceResult + 'static,
    {
        Self {
            template: ResourceTemplate {
                uri_template: uri_template.into(),
                name: name.into(),
                ..ResourceTemplate::default()
            },
            handler: erased(handler),
            needs: Vec::new(),
            asks: false,
            scopes: Vec::new(),
            completers: Completers::new(),
        }
    }

    /// Their MIME type.
    pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
        self.template.mime_type = Some(mime_type.into());
        self
    }

    /// Suggests values for the template variable `variable` (`completion/complete`);
    /// the server fails to build when the template has no such variable.
    ///
    /// ```
    /// use tessera_server::{Context, PartialArgument, ResourceTemplateDef, TemplateVariables};
    ///
    /// let files = ResourceTemplateDef::new(
    ///     "repo://{owner}/{name}",
    ///     "repository",
    ///     |_ctx: Context, vars: TemplateVariables| async move { format!("{vars:?}") },
    /// )
    /// .complete("name", |_ctx: Context, typed: PartialArgument| async move {
    ///     // The owner chosen before decides which names are offered.
    ///     match typed.filled.get("owner").map(String::as_str) {
    ///         Some("tessera") => typed.matching(["tessera", "tessera-bench"]),
    ///         _ => Vec::new(),
    ///     }
    /// });
    /// # let _ = files;
    /// ```
    pub fn complete<F, Fut, R>(mut self, variable: impl Into<String>, handler: F) -> Self
    where
        F: Fn(Context, PartialArgument) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoCompletion + 'static,
    {
        self.completers
            .insert(variable.into(), Completer::new(handler));
        self
    }

    /// Whether the template has the variable `name`.
    pub(crate) fn declares(&self, name: &str) -> bool {
        self.template
            .uri_template
            .split('{')
            .skip(1)
            .filter_map(|part| part.split_once('}'))
            .any(|(variable, _)| variable == name)
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

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
use crate::uri_template::{TemplateError, UriTemplate};
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
    /// The template read for matching (its error is the build's).
    pub(crate) parsed: Result<UriTemplate, TemplateError>,
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

    /// A template (RFC 6570, levels 1 to 4) named `name`, read by `handler`
    /// with the matched variables as `A`. `{var}` matches one segment (never
    /// `/`, `.` or `..`); `{+var}` may span reserved characters, `/` among
    /// them; `{/segments*}` matches a path of segments, `{?x,y}` query pairs
    /// (the guide's table, under *Prompts and resources*). A string that is
    /// no template fails the server's build.
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
        let uri_template: String = uri_template.into();
        Self {
            parsed: UriTemplate::parse(&uri_template),
            template: ResourceTemplate {
                uri_template,
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
        (self.parsed.as_ref()).is_ok_and(|t| t.variables().contains(&name))
    }

    /// The definition as `resources/templates/list` shows it.
    pub fn definition(&self) -> &ResourceTemplate {
        &self.template
    }

    /// Matches `uri` against the template, returning the variables
    /// (percent-decoded).
    pub fn matches(&self, uri: &str) -> Option<TemplateVariables> {
        self.parsed.as_ref().ok()?.matches(uri)
    }
}

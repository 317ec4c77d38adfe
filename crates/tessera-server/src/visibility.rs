//! What each caller is shown: a filter over tools, prompts, resources and
//! resource templates, applied to the lists and to the calls alike.
//!
//! A hidden item is absent for that caller: it is left out of `tools/list`
//! (and the other lists), and calling, getting, reading or completing it is
//! refused exactly as if it did not exist ("Tool … not found"), so a caller
//! cannot learn what it may not see. Without a filter every caller sees
//! everything, and scopes are enforced as challenges
//! ([`ToolDef::scopes`](crate::ToolDef::scopes): 403 `insufficient_scope`,
//! which lets a client step up); [`ShowPermitted`] instead hides what a
//! token's scopes do not cover.

use crate::{
    AuthInfo, McpServer, PromptDef, RequestFacts, ResourceDef, ResourceTemplateDef, ScopeMatch,
    ToolDef,
};

/// Who is asking: the request's principal and verified token.
pub struct Viewer<'a> {
    /// The caller's principal, when the transport established one.
    pub principal: Option<&'a str>,
    /// The verified token, on a server that checks tokens.
    pub auth: Option<&'a AuthInfo>,
    pub(crate) scope_match: &'a dyn ScopeMatch,
}

impl Viewer<'_> {
    /// Whether the caller's token grants every scope in `needed`, by the
    /// server's [`ScopeMatch`]; `true` where no token is checked.
    pub fn grants(&self, needed: &[String]) -> bool {
        self.auth
            .is_none_or(|auth| crate::scopes::covers(self.scope_match, &auth.scopes, needed))
    }
}

/// One thing the server offers, as a [`Visibility`] filter sees it.
#[derive(Clone, Copy)]
pub enum Offered<'a> {
    /// A tool.
    Tool(&'a ToolDef),
    /// A prompt.
    Prompt(&'a PromptDef),
    /// A resource.
    Resource(&'a ResourceDef),
    /// A resource template.
    Template(&'a ResourceTemplateDef),
}

impl Offered<'_> {
    /// The scopes it requires.
    pub fn required_scopes(&self) -> &[String] {
        match self {
            Self::Tool(t) => t.required_scopes(),
            Self::Prompt(p) => p.required_scopes(),
            Self::Resource(r) => r.required_scopes(),
            Self::Template(t) => t.required_scopes(),
        }
    }

    /// Its name (tools, prompts) or URI (resources), or URI template.
    pub fn name(&self) -> &str {
        match self {
            Self::Tool(t) => &t.definition().name,
            Self::Prompt(p) => &p.definition().name,
            Self::Resource(r) => &r.definition().uri,
            Self::Template(t) => &t.definition().uri_template,
        }
    }
}

/// Decides, per caller, what the server shows.
///
/// A closure `Fn(&Viewer, Offered) -> bool` is one:
///
/// ```
/// use tessera_server::{Context, McpServer, Offered, ToolDef, Viewer};
///
/// let server = McpServer::builder("demo", "1.0.0")
///     .tool(ToolDef::new("admin.reset", |_: Context, _: ()| async { "reset" }))
///     .visibility(|viewer: &Viewer<'_>, item: Offered<'_>| {
///         !item.name().starts_with("admin.") || viewer.principal == Some("https://idp.example root")
///     })
///     .build()
///     .unwrap();
/// # let _ = server;
/// ```
pub trait Visibility: Send + Sync + 'static {
    /// Whether `viewer` is shown `item` (and may use it).
    fn shows(&self, viewer: &Viewer<'_>, item: Offered<'_>) -> bool;
}

impl<F> Visibility for F
where
    F: Fn(&Viewer<'_>, Offered<'_>) -> bool + Send + Sync + 'static,
{
    fn shows(&self, viewer: &Viewer<'_>, item: Offered<'_>) -> bool {
        self(viewer, item)
    }
}

/// Shows a caller only what its token's scopes cover: a tool that needs
/// `notes:write` is absent for a token granted `notes:read` alone. Where no
/// token is checked, everything is shown.
#[derive(Debug, Clone, Copy, Default)]
pub struct ShowPermitted;

impl Visibility for ShowPermitted {
    fn shows(&self, viewer: &Viewer<'_>, item: Offered<'_>) -> bool {
        viewer.grants(item.required_scopes())
    }
}

impl McpServer {
    /// The tool `name` as the caller of a request with `facts` sees it:
    /// `None` when there is none or it is hidden from that caller.
    pub fn tool_for(&self, name: &str, facts: &RequestFacts) -> Option<std::sync::Arc<ToolDef>> {
        self.tool(name)
            .filter(|tool| self.shows(facts, Offered::Tool(tool)))
    }

    /// Whether the caller of a request with `facts` is shown `item`.
    pub(crate) fn shows(&self, facts: &RequestFacts, item: Offered<'_>) -> bool {
        self.visibility.as_ref().is_none_or(|filter| {
            let viewer = Viewer {
                principal: facts.principal.as_deref(),
                auth: facts.auth.as_deref(),
                scope_match: self.scope_match.as_ref(),
            };
            filter.shows(&viewer, item)
        })
    }
}

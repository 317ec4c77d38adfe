//! OAuth scopes: what a tool, prompt or resource needs, whether a token's
//! granted scopes cover it, and the refusal when they do not.
//!
//! The authorization page leaves scope design to the server, and where a
//! server uses a hierarchy it must account for it when checking. The
//! default is an exact match ([`ExactScopes`]); [`PrefixScopes`] lets a
//! granted `files` cover `files:read` and `files:read:all`; a server with
//! other rules implements [`ScopeMatch`].

use crate::{AuthInfo, ServerError};

/// Whether a granted scope covers a needed one.
pub trait ScopeMatch: Send + Sync + 'static {
    /// `true` when a token granted `granted` may do what needs `needed`.
    fn covers(&self, granted: &str, needed: &str) -> bool;
}

/// A scope covers only itself (the default).
#[derive(Debug, Clone, Copy, Default)]
pub struct ExactScopes;

impl ScopeMatch for ExactScopes {
    fn covers(&self, granted: &str, needed: &str) -> bool {
        granted == needed
    }
}

/// A scope covers itself and every scope below it: with `:` as the
/// separator, `files` covers `files:read` and `files:read:all`, not
/// `filesystem`.
///
/// ```
/// use tessera_server::{PrefixScopes, ScopeMatch};
///
/// let scopes = PrefixScopes::new(':');
/// assert!(scopes.covers("files", "files:read"));
/// assert!(scopes.covers("files:read", "files:read"));
/// assert!(!scopes.covers("files", "filesystem"));
/// assert!(!scopes.covers("files:read", "files"));
/// ```
#[derive(Debug, Clone, Copy)]
pub struct PrefixScopes {
    separator: char,
}

impl PrefixScopes {
    /// Scopes whose levels are separated by `separator`.
    pub fn new(separator: char) -> Self {
        Self { separator }
    }
}

impl ScopeMatch for PrefixScopes {
    fn covers(&self, granted: &str, needed: &str) -> bool {
        needed == granted
            || needed
                .strip_prefix(granted)
                .is_some_and(|rest| rest.starts_with(self.separator))
    }
}

/// Refuses (403 `insufficient_scope` over HTTP) when the caller's token
/// does not cover every scope in `needed`; callers without a verified token
/// (an unprotected server, stdio) are not checked here.
/// Whether `granted` covers every scope in `needed`, by `matcher`.
pub(crate) fn covers(matcher: &dyn ScopeMatch, granted: &[String], needed: &[String]) -> bool {
    needed
        .iter()
        .all(|n| granted.iter().any(|g| matcher.covers(g, n)))
}

pub(crate) fn check_scopes(
    matcher: &dyn ScopeMatch,
    auth: Option<&AuthInfo>,
    needed: &[String],
    target: impl FnOnce() -> String,
) -> Result<(), ServerError> {
    let Some(auth) = auth else {
        return Ok(());
    };
    if covers(matcher, &auth.scopes, needed) {
        return Ok(());
    }
    Err(ServerError::InsufficientScope {
        target: target(),
        scope: needed.join(" "),
    })
}

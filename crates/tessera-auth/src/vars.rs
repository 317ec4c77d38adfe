//! A protected resource configured by a deployment's variables (a Worker's
//! vars, a Lambda's environment), as the native binaries' `--oauth-*` flags.

use std::sync::Arc;

use tessera_http::{EndpointOptions, Vars};

use crate::{HttpFetch, JwtVerifier, OAuthResource};

/// What `OAUTH_ISSUER`, `OAUTH_RESOURCE` and `OAUTH_SCOPE` say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthVars {
    /// `OAUTH_ISSUER` and `OAUTH_RESOURCE`: the authorization server whose
    /// JWT access tokens are accepted, and this server's URL as clients use
    /// it, which the tokens must name. `None`: the endpoint is open.
    pub issuer_and_resource: Option<(String, String)>,
    /// `OAUTH_SCOPE`, split at spaces: what every tool needs (give them to
    /// `McpServerBuilder::require_scopes`; 403 `insufficient_scope` without).
    pub scopes: Vec<String>,
}

impl OAuthVars {
    /// Reads the three variables; an error is a sentence for the operator.
    ///
    /// ```
    /// use tessera_auth::OAuthVars;
    ///
    /// let vars = |name: &str| (name == "OAUTH_ISSUER").then(|| "https://id.example".to_owned());
    /// assert!(OAuthVars::from_vars(&vars).unwrap_err().starts_with("OAUTH_ISSUER needs OAUTH_RESOURCE"));
    /// ```
    pub fn from_vars(vars: &dyn Vars) -> Result<Self, String> {
        let scopes: Vec<String> = vars
            .text("OAUTH_SCOPE")
            .map(|s| s.split_whitespace().map(str::to_owned).collect())
            .unwrap_or_default();
        let resource = vars.text("OAUTH_RESOURCE");
        let Some(issuer) = vars.text("OAUTH_ISSUER") else {
            let without = match (&resource, scopes.is_empty()) {
                (Some(_), _) => "OAUTH_RESOURCE",
                (None, false) => "OAUTH_SCOPE",
                (None, true) => return Ok(Self::default()),
            };
            return Err(format!(
                "{without} is set without OAUTH_ISSUER: name the authorization server whose tokens are accepted"
            ));
        };
        let resource = resource.ok_or(
            "OAUTH_ISSUER needs OAUTH_RESOURCE: this server's URL as clients use it (e.g. https://mcp.example.com/mcp), which tokens must name",
        )?;
        Ok(Self {
            issuer_and_resource: Some((issuer, resource)),
            scopes,
        })
    }

    /// `options` protected as the variables say, verifying tokens against
    /// the issuer's keys fetched with `fetch`; unchanged when no issuer is set.
    pub fn protect(&self, options: EndpointOptions, fetch: Arc<dyn HttpFetch>) -> EndpointOptions {
        let Some((issuer, resource)) = &self.issuer_and_resource else {
            return options;
        };
        let verifier = Arc::new(JwtVerifier::with_fetch(
            issuer.clone(),
            resource.clone(),
            fetch,
        ));
        tracing::info!(%issuer, %resource, "OAuth: accepting access tokens of this issuer for this resource");
        OAuthResource::new(resource.clone(), issuer.clone(), verifier)
            .scopes_supported(self.scopes.iter().cloned())
            .protect(options)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(pairs: &[(&str, &str)]) -> Result<OAuthVars, String> {
        let pairs: Vec<(String, String)> = pairs
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        OAuthVars::from_vars(&move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn the_three_variables() {
        assert_eq!(read(&[]).unwrap(), OAuthVars::default());
        assert!(
            read(&[("OAUTH_SCOPE", "a")])
                .unwrap_err()
                .starts_with("OAUTH_SCOPE is set without")
        );
        assert!(
            read(&[("OAUTH_RESOURCE", "r")])
                .unwrap_err()
                .starts_with("OAUTH_RESOURCE is set without")
        );
        let v = read(&[
            ("OAUTH_ISSUER", "https://id.example"),
            ("OAUTH_RESOURCE", "https://mcp.example/mcp"),
            ("OAUTH_SCOPE", " a  b "),
        ])
        .unwrap();
        assert_eq!(v.scopes, ["a", "b"]);
        assert_eq!(
            v.issuer_and_resource,
            Some((
                "https://id.example".into(),
                "https://mcp.example/mcp".into()
            ))
        );
    }
}

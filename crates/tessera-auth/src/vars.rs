//! A protected resource configured by a deployment's variables (a Worker's
//! vars, a Lambda's environment), as the native binaries' `--oauth-*` flags.

use std::sync::Arc;

use tessera_http::{EndpointOptions, Vars};

use tessera_state::TicketLedger;

use crate::{DpopMode, HttpFetch, JwtVerifier, OAuthResource};

/// What `OAUTH_ISSUER`, `OAUTH_RESOURCE`, `OAUTH_SCOPE` and `OAUTH_DPOP` say.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OAuthVars {
    /// `OAUTH_ISSUER` and `OAUTH_RESOURCE`: the authorization server whose
    /// JWT access tokens are accepted, and this server's URL as clients use
    /// it, which the tokens must name. `None`: the endpoint is open.
    pub issuer_and_resource: Option<(String, String)>,
    /// `OAUTH_SCOPE`, split at spaces: what every tool needs (give them to
    /// `McpServerBuilder::require_scopes`; 403 `insufficient_scope` without).
    pub scopes: Vec<String>,
    /// `OAUTH_DPOP`: `allowed` or `required` takes DPoP-bound tokens (see
    /// [`DpopMode`]).
    pub dpop: Option<DpopMode>,
}

impl OAuthVars {
    /// Reads the four variables; an error is a sentence for the operator.
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
        let dpop = vars.text("OAUTH_DPOP");
        let Some(issuer) = vars.text("OAUTH_ISSUER") else {
            let without = match (&resource, scopes.is_empty(), &dpop) {
                (Some(_), _, _) => "OAUTH_RESOURCE",
                (None, false, _) => "OAUTH_SCOPE",
                (None, true, Some(_)) => "OAUTH_DPOP",
                (None, true, None) => return Ok(Self::default()),
            };
            return Err(format!(
                "{without} is set without OAUTH_ISSUER: name the authorization server whose tokens are accepted"
            ));
        };
        let resource = resource.ok_or(
            "OAUTH_ISSUER needs OAUTH_RESOURCE: this server's URL as clients use it (e.g. https://mcp.example.com/mcp), which tokens must name",
        )?;
        let dpop = dpop
            .map(|d| d.parse().map_err(|e| format!("OAUTH_DPOP: {e}")))
            .transpose()?;
        Ok(Self {
            issuer_and_resource: Some((issuer, resource)),
            scopes,
            dpop,
        })
    }

    /// `options` protected as the variables say, verifying tokens against
    /// the issuer's keys fetched with `fetch`, DPoP proof ids recorded in
    /// `ledger` (the tickets' one: a Durable Object, Redis) or in memory;
    /// unchanged when no issuer is set.
    pub fn protect(
        &self,
        options: EndpointOptions,
        fetch: Arc<dyn HttpFetch>,
        ledger: Option<Arc<dyn TicketLedger>>,
    ) -> EndpointOptions {
        let Some((issuer, resource)) = &self.issuer_and_resource else {
            return options;
        };
        let verifier = Arc::new(JwtVerifier::with_fetch(
            issuer.clone(),
            resource.clone(),
            fetch,
        ));
        tracing::info!(%issuer, %resource, "OAuth: accepting access tokens of this issuer for this resource");
        let protected = OAuthResource::new(resource.clone(), issuer.clone(), verifier)
            .scopes_supported(self.scopes.iter().cloned());
        match self.dpop {
            Some(mode) => {
                tracing::info!(?mode, "OAuth: taking DPoP-bound access tokens");
                protected.dpop(mode.dpop(ledger))
            }
            None => protected,
        }
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
        assert_eq!(v.dpop, None);
        assert!(
            read(&[("OAUTH_DPOP", "required")])
                .unwrap_err()
                .starts_with("OAUTH_DPOP is set without")
        );
        let issued = [
            ("OAUTH_ISSUER", "https://id.example"),
            ("OAUTH_RESOURCE", "https://mcp.example/mcp"),
        ];
        let with = |mode: &'static str| {
            let mut pairs = issued.to_vec();
            pairs.push(("OAUTH_DPOP", mode));
            read(&pairs)
        };
        assert_eq!(with("required").unwrap().dpop, Some(DpopMode::Required));
        assert_eq!(with("allowed").unwrap().dpop, Some(DpopMode::Allowed));
        assert!(
            with("yes")
                .unwrap_err()
                .starts_with("OAUTH_DPOP: \"yes\" is no DPoP mode")
        );
        assert_eq!(
            v.issuer_and_resource,
            Some((
                "https://id.example".into(),
                "https://mcp.example/mcp".into()
            ))
        );
    }
}

//! The endpoint settings of a deployment configured by named variables
//! (a Worker's vars, a Lambda's environment) rather than a command line.

use crate::{EndpointOptions, Legacy};

/// A deployment's variables: the value of a name, `None` when unset. Empty
/// and surrounding spaces count as unset.
pub trait Vars {
    /// The variable's raw value.
    fn raw(&self, name: &str) -> Option<String>;

    /// The value trimmed; unset when empty.
    fn text(&self, name: &str) -> Option<String> {
        self.raw(name)
            .map(|v| v.trim().to_owned())
            .filter(|v| !v.is_empty())
    }

    /// A comma-separated value as its non-empty entries.
    fn list(&self, name: &str) -> Vec<String> {
        self.text(name)
            .map(|v| {
                v.split(',')
                    .map(str::trim)
                    .filter(|e| !e.is_empty())
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default()
    }
}

/// The process environment.
pub struct ProcessEnv;

impl Vars for ProcessEnv {
    fn raw(&self, name: &str) -> Option<String> {
        std::env::var(name).ok()
    }
}

impl<F: Fn(&str) -> Option<String>> Vars for F {
    fn raw(&self, name: &str) -> Option<String> {
        self(name)
    }
}

impl EndpointOptions {
    /// The defaults with what a serverless deployment's variables say:
    ///
    /// - `MCP_ALLOWED_HOSTS`, `MCP_ALLOWED_ORIGINS`: comma-separated names
    ///   added to the Host and Origin allow-lists (loopback names are always
    ///   allowed), so a deployment accepts its own hostname;
    /// - `MCP_LEGACY`: `reject` (the default) or `stateless`. Sessions
    ///   ([`Legacy::Serve`]) are not offered: a pushed question waits in the
    ///   instance that asked, and a serverless platform sends the answer to
    ///   whichever instance it likes.
    ///
    /// An error is a sentence for the operator.
    ///
    /// ```
    /// use tessera_http::EndpointOptions;
    ///
    /// let vars = |name: &str| (name == "MCP_LEGACY").then(|| "sessions".to_owned());
    /// let error = EndpointOptions::from_vars(&vars).err().unwrap();
    /// assert_eq!(error, r#"MCP_LEGACY is "sessions"; it must be "reject" or "stateless""#);
    /// ```
    pub fn from_vars(vars: &dyn Vars) -> Result<Self, String> {
        let mut options = EndpointOptions::default();
        for host in vars.list("MCP_ALLOWED_HOSTS") {
            options = options.allow_host(host);
        }
        for origin in vars.list("MCP_ALLOWED_ORIGINS") {
            options = options.allow_origin(origin);
        }
        Ok(options.legacy(match vars.text("MCP_LEGACY").as_deref() {
            None | Some("reject") => Legacy::Reject,
            Some("stateless") => Legacy::Stateless,
            Some(other) => {
                return Err(format!(
                    "MCP_LEGACY is {other:?}; it must be \"reject\" or \"stateless\""
                ));
            }
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_and_defaults() {
        let vars = |name: &str| match name {
            "MCP_ALLOWED_HOSTS" => Some(" a.example , ,B.example".to_owned()),
            "MCP_LEGACY" => Some("  ".to_owned()),
            _ => None,
        };
        assert_eq!(vars.list("MCP_ALLOWED_HOSTS"), ["a.example", "B.example"]);
        assert_eq!(vars.text("MCP_LEGACY"), None);
        let options = EndpointOptions::from_vars(&vars).unwrap();
        assert_eq!(options.allowed_hosts, ["a.example", "b.example"]);
        assert_eq!(options.legacy, Legacy::Reject);
        let stateless = |name: &str| (name == "MCP_LEGACY").then(|| "stateless".to_owned());
        assert_eq!(
            EndpointOptions::from_vars(&stateless).unwrap().legacy,
            Legacy::Stateless
        );
    }
}

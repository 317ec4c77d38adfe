//! The gateway's configuration file: the upstream servers, and the bounds on
//! calls held open for them.
//!
//! ```
//! let config = tessera_gateway::Config::from_toml(r#"
//!     [[upstream]]
//!     name = "booking"
//!     command = ["python3", "server.py"]
//!     env = { API_KEY = "secret" }
//!
//!     [[upstream]]
//!     name = "ts"
//!     url = "http://127.0.0.1:9000/mcp"
//!     headers = { Authorization = "Bearer upstream-token" }
//!     scopes = ["ts:use"]          # what a caller's token must grant (with --oauth-issuer)
//!     rate_limit = "60/min"        # calls of each of its tools per caller
//! "#).unwrap();
//! assert_eq!(config.upstreams.len(), 2);
//! assert!(tessera_gateway::Config::from_toml("[[upstream]]\nname = \"a b\"\nurl = \"http://x\"").is_err());
//! ```

use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

use serde::Deserialize;

/// The longest upstream name: 24 characters (it prefixes every name the upstream offers).
pub const MAX_UPSTREAM_NAME: usize = 24;

/// Everything the configuration file says.
#[derive(Debug, Clone)]
pub struct Config {
    /// The upstream servers, in the file's order (on a clash of resource
    /// URIs the first listed serves it).
    pub upstreams: Vec<Upstream>,
    /// The bounds on calls held open.
    pub limits: Limits,
}

/// One upstream server.
#[derive(Debug, Clone, PartialEq)]
pub struct Upstream {
    /// Its name: letters, digits and `-`; every tool and prompt it offers is
    /// offered as `NAME__tool` ([`crate::naming`]).
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// Which protocol era to speak to it.
    pub era: UpstreamEra,
    /// OAuth scopes a caller's token must grant to use anything it offers
    /// (with `--oauth-issuer`), besides `--oauth-scope`.
    pub scopes: Vec<String>,
    /// Calls of each of its tools a caller may make per window, e.g. 60/min.
    pub rate_limit: Option<(u32, Duration)>,
}

/// How an upstream is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A process the gateway starts (and restarts when it dies), speaking on stdin/stdout.
    Stdio {
        /// The program and its arguments.
        command: Vec<String>,
        /// Variables added to its environment.
        env: BTreeMap<String, String>,
    },
    /// Streamable HTTP, of either era.
    Http {
        /// The endpoint.
        url: String,
        /// Headers sent with every request (its credentials).
        headers: BTreeMap<String, String>,
    },
}

/// Which protocol era the gateway speaks to an upstream.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
pub enum UpstreamEra {
    /// Ask (`server/discover`), fall back to `initialize`.
    #[default]
    #[serde(rename = "auto")]
    Auto,
    /// 2026-07-28 without asking.
    #[serde(rename = "2026-07-28")]
    Modern,
    /// The `initialize` handshake without asking: for a server that speaks
    /// both eras but asks its questions only in the old one.
    #[serde(rename = "initialize")]
    Initialize,
}

/// Bounds on the calls the gateway holds open for upstreams that push
/// their questions (every other call holds nothing between rounds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Limits {
    /// Held calls on this instance, all callers together. Each one to an
    /// HTTP upstream keeps a socket open: raise the process's descriptor
    /// limit with it.
    pub held_calls: usize,
    /// Held calls of one caller (its principal, else its address).
    pub held_calls_per_caller: usize,
    /// How long a pushed question waits for its answer, in seconds.
    pub answer_timeout_secs: u64,
    /// The most questions one call may push.
    pub max_rounds: usize,
    /// How long one upstream exchange may take when nobody is answering a
    /// question, in seconds.
    pub upstream_timeout_secs: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            held_calls: 4_096,
            held_calls_per_caller: 256,
            answer_timeout_secs: 600,
            max_rounds: 16,
            upstream_timeout_secs: 120,
        }
    }
}

impl Limits {
    /// [`answer_timeout_secs`](Self::answer_timeout_secs) as a duration.
    pub fn answer_timeout(&self) -> Duration {
        Duration::from_secs(self.answer_timeout_secs)
    }

    /// [`upstream_timeout_secs`](Self::upstream_timeout_secs) as a duration.
    pub fn upstream_timeout(&self) -> Duration {
        Duration::from_secs(self.upstream_timeout_secs)
    }
}

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The file could not be read.
    #[error("cannot read {path}: {error}")]
    Read {
        /// The file.
        path: String,
        /// Why.
        error: std::io::Error,
    },
    /// It is not TOML of the expected shape.
    #[error("{0}")]
    Parse(String),
    /// It says something that cannot work.
    #[error("{0}")]
    Invalid(String),
}

/// The file as written.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    #[serde(default)]
    upstream: Vec<UpstreamEntry>,
    #[serde(default)]
    limits: Limits,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct UpstreamEntry {
    name: String,
    command: Option<Vec<String>>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    url: Option<String>,
    #[serde(default)]
    headers: BTreeMap<String, String>,
    #[serde(default)]
    era: UpstreamEra,
    #[serde(default)]
    scopes: Vec<String>,
    rate_limit: Option<String>,
}

impl Config {
    /// Reads and checks the file at `path`.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let text = std::fs::read_to_string(path).map_err(|error| ConfigError::Read {
            path: path.display().to_string(),
            error,
        })?;
        Self::from_toml(&text).map_err(|e| match e {
            ConfigError::Parse(m) => ConfigError::Parse(format!("{}: {m}", path.display())),
            ConfigError::Invalid(m) => ConfigError::Invalid(format!("{}: {m}", path.display())),
            other => other,
        })
    }

    /// Reads and checks a configuration written as TOML.
    pub fn from_toml(text: &str) -> Result<Self, ConfigError> {
        let file: File = toml::from_str(text).map_err(|e| ConfigError::Parse(e.to_string()))?;
        let mut upstreams: Vec<Upstream> = Vec::new();
        for entry in file.upstream {
            let name = entry.name;
            if !valid_name(&name) {
                return Err(ConfigError::Invalid(format!(
                    "upstream name {name:?}: use 1 to {MAX_UPSTREAM_NAME} letters, digits and '-' (it prefixes the names the upstream offers)"
                )));
            }
            if upstreams.iter().any(|u| u.name == name) {
                return Err(ConfigError::Invalid(format!(
                    "two upstreams are named {name:?}"
                )));
            }
            let transport = match (entry.command, entry.url) {
                (Some(command), None) => {
                    if command.first().is_none_or(String::is_empty) {
                        return Err(ConfigError::Invalid(format!(
                            "upstream {name:?}: command needs at least a program"
                        )));
                    }
                    if !entry.headers.is_empty() {
                        return Err(ConfigError::Invalid(format!(
                            "upstream {name:?}: headers are for a url upstream; a command gets env"
                        )));
                    }
                    Transport::Stdio {
                        command,
                        env: entry.env,
                    }
                }
                (None, Some(url)) => {
                    if !(url.starts_with("http://") || url.starts_with("https://")) {
                        return Err(ConfigError::Invalid(format!(
                            "upstream {name:?}: url must be http:// or https://, not {url:?}"
                        )));
                    }
                    if !entry.env.is_empty() {
                        return Err(ConfigError::Invalid(format!(
                            "upstream {name:?}: env is for a command upstream; a url gets headers"
                        )));
                    }
                    Transport::Http {
                        url,
                        headers: entry.headers,
                    }
                }
                _ => {
                    return Err(ConfigError::Invalid(format!(
                        "upstream {name:?}: give exactly one of command (a process) and url (Streamable HTTP)"
                    )));
                }
            };
            let rate_limit = match entry.rate_limit.as_deref() {
                None => None,
                Some(text) => Some(tessera_server::middleware::RateLimit::parse(text).map_err(
                    |e| ConfigError::Invalid(format!("upstream {name:?}: rate_limit: {e}")),
                )?),
            };
            upstreams.push(Upstream {
                name,
                transport,
                era: entry.era,
                scopes: entry.scopes,
                rate_limit,
            });
        }
        if upstreams.is_empty() {
            return Err(ConfigError::Invalid(
                "no [[upstream]]: the gateway needs at least one server to put behind it".into(),
            ));
        }
        let limits = file.limits;
        let sizes = [
            limits.held_calls,
            limits.held_calls_per_caller,
            limits.max_rounds,
        ];
        if sizes.contains(&0)
            || limits.answer_timeout_secs == 0
            || limits.upstream_timeout_secs == 0
        {
            return Err(ConfigError::Invalid(
                "limits: held_calls, held_calls_per_caller, max_rounds and the timeouts must be at least 1"
                    .into(),
            ));
        }
        Ok(Self { upstreams, limits })
    }
}

fn valid_name(name: &str) -> bool {
    (1..=MAX_UPSTREAM_NAME).contains(&name.len())
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_mistake_is_named() {
        let refused = |text: &str, says: &str| {
            let e = Config::from_toml(text).unwrap_err().to_string();
            assert!(e.contains(says), "{e}");
        };
        refused("", "no [[upstream]]");
        refused("[[upstream]]\nname = \"a\"", "exactly one of command");
        refused(
            "[[upstream]]\nname = \"a\"\nurl = \"http://x\"\ncommand = [\"y\"]",
            "exactly one of command",
        );
        refused(
            "[[upstream]]\nname = \"a_b\"\nurl = \"http://x\"",
            "letters, digits",
        );
        refused(
            "[[upstream]]\nname = \"a\"\nurl = \"http://x\"\n[[upstream]]\nname = \"a\"\nurl = \"http://y\"",
            "two upstreams",
        );
        refused("[[upstream]]\nname = \"a\"\nurl = \"ftp://x\"", "http://");
        refused(
            "[[upstream]]\nname = \"a\"\ncommand = []",
            "at least a program",
        );
        refused(
            "[[upstream]]\nname = \"a\"\nurl = \"http://x\"\nera = \"1999\"",
            "era",
        );
        refused(
            "[[upstream]]\nname = \"a\"\nurl = \"http://x\"\ncolour = 1",
            "colour",
        );
        refused(
            "[limits]\nheld_calls = 0\n[[upstream]]\nname = \"a\"\nurl = \"http://x\"",
            "at least 1",
        );
        refused(
            "[[upstream]]\nname = \"a\"\nurl = \"http://x\"\nrate_limit = \"fast\"",
            "N/min",
        );
    }

    #[test]
    fn the_documented_shape_reads() {
        let c = Config::from_toml(
            "[limits]\nanswer_timeout_secs = 30\n[[upstream]]\nname = \"py\"\ncommand = [\"python3\", \"s.py\"]\nera = \"initialize\"\nenv = { K = \"v\" }",
        )
        .unwrap();
        assert_eq!(c.limits.answer_timeout(), Duration::from_secs(30));
        assert_eq!(c.limits.max_rounds, Limits::default().max_rounds);
        assert_eq!(c.upstreams[0].era, UpstreamEra::Initialize);
        assert!(
            matches!(&c.upstreams[0].transport, Transport::Stdio { command, env }
            if command.len() == 2 && env["K"] == "v")
        );
    }
}

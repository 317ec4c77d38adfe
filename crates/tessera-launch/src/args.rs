//! The standard flags of a server binary, for `#[command(flatten)]`.

use std::time::Duration;

use tessera_http::Legacy;

/// The flags every Tessera server binary takes: where and how to serve, the
/// ticket settings, and (with the crate's features) Redis, OAuth and metrics.
///
/// Flatten it into a binary's own flags:
///
/// ```
/// use clap::Parser;
///
/// #[derive(Parser)]
/// struct Cli {
///     #[command(flatten)]
///     serve: tessera_launch::ServeArgs,
///     /// Where the notes live.
///     #[arg(long, default_value = "notes.db")]
///     db: std::path::PathBuf,
/// }
///
/// let cli = Cli::try_parse_from(["notes", "--dev", "--ttl", "60"]).unwrap();
/// assert!(cli.serve.dev);
/// assert_eq!(cli.serve.ttl(), std::time::Duration::from_secs(60));
/// ```
#[derive(Debug, Clone, Default, clap::Args)]
pub struct ServeArgs {
    /// Where to listen (default 127.0.0.1:8787, or 127.0.0.1:$PORT).
    #[arg(long, value_name = "HOST:PORT")]
    pub addr: Option<String>,
    /// Serve one client on stdin/stdout (as Claude Code and Claude Desktop
    /// launch local servers); initialize-era clients get the forms as
    /// elicitation/create requests.
    #[arg(long, conflicts_with_all = ["addr", "legacy"])]
    pub stdio: bool,
    /// Initialize-era clients over HTTP: serve (the default: sessions, with
    /// forms pushed as elicitation/create), stateless, or reject.
    #[arg(long, value_name = "POLICY", value_parser = parse_legacy)]
    pub legacy: Option<Legacy>,
    /// requestState lifetime in seconds [default: 600].
    #[arg(long = "ttl", value_name = "SECONDS")]
    pub ttl_seconds: Option<u64>,
    /// No key configured? Generate one into .dev.vars (mode 0600) and start.
    #[arg(long)]
    pub dev: bool,
    /// Each requestState ticket is redeemable once (in memory, or with
    /// --redis or --redis-cluster in Redis, shared by every instance).
    #[arg(long)]
    pub single_use: bool,
    /// Limit tool calls per caller and per tool: N/s, N/min or N/h (each
    /// round of a tool that asks counts; past it, HTTP 429 with Retry-After;
    /// with --redis or --redis-cluster the limit holds across instances).
    #[arg(long, value_name = "N/WINDOW", value_parser = parse_rate_limit)]
    pub rate_limit: Option<String>,
    /// The load balancers in front of the server (CIDR blocks or addresses,
    /// comma-separated): from them the client address per-caller limits
    /// count against is read from X-Forwarded-For (rightmost untrusted hop);
    /// from anyone else it is the peer, whatever it sends.
    #[arg(long, value_name = "CIDR,...", value_parser = parse_trusted_proxies)]
    pub trust_proxy: Option<tessera_http::TrustedProxies>,
    /// Connections from a --trust-proxy peer begin with a PROXY protocol
    /// header (v1 or v2, as layer-4 load balancers send it), which names the client.
    #[arg(long, requires = "trust_proxy")]
    pub proxy_protocol: bool,
    /// Redeem single-use tickets in this Redis, shared by every instance
    /// (implies --single-use).
    #[cfg(feature = "redis")]
    #[arg(long, value_name = "URL", value_parser = parse_redis_url)]
    pub ledger: Option<String>,
    /// Share this Redis between instances: initialize-era answers reach the
    /// instance whose call asked, session notes (ended, log level,
    /// subscriptions) hold on every instance, change notifications reach
    /// every listener, and with --single-use tickets are redeemed there.
    #[cfg(feature = "redis")]
    #[arg(long, value_name = "URL", value_parser = parse_redis_url)]
    pub redis: Option<String>,
    /// As --redis, on a Redis Cluster (or Valkey in cluster mode): the
    /// redis:// URLs of one or more of its nodes, comma-separated.
    #[cfg(feature = "redis")]
    #[arg(long, value_name = "URL,...", value_parser = parse_redis_url, value_delimiter = ',', conflicts_with_all = ["redis", "ledger"])]
    pub redis_cluster: Option<Vec<String>>,
    /// Protect the endpoint: accept only JWT access tokens of this
    /// authorization server (keys from its metadata's jwks_uri).
    #[cfg(feature = "auth")]
    #[arg(long, value_name = "URL", conflicts_with = "stdio")]
    pub oauth_issuer: Option<String>,
    /// This server's canonical URI, the tokens' audience (default
    /// http://ADDR/mcp, or the application's path; required when not
    /// listening on loopback).
    #[cfg(feature = "auth")]
    #[arg(long, value_name = "URL", requires = "oauth_issuer")]
    pub oauth_resource: Option<String>,
    /// The scopes (space-separated) every tool needs: 403 insufficient_scope without them.
    #[cfg(feature = "auth")]
    #[arg(long, value_name = "SCOPE", requires = "oauth_issuer")]
    pub oauth_scope: Option<String>,
    /// Take DPoP-bound access tokens (RFC 9449) with proofs of their key:
    /// `allowed` beside bearer tokens, `required` instead of them. Proof ids
    /// are recorded against replay in the ticket ledger (--redis, --ledger)
    /// or in memory.
    #[cfg(feature = "auth")]
    #[arg(long, value_name = "allowed|required", requires = "oauth_issuer")]
    pub oauth_dpop: Option<tessera_auth::DpopMode>,
    /// Serve the metrics in the Prometheus text format at http://HOST:PORT/metrics.
    #[cfg(feature = "otel")]
    #[arg(long, value_name = "HOST:PORT")]
    pub metrics: Option<String>,
    /// Put tool arguments and the user's answers on exported spans (off by
    /// default: they may hold personal data).
    #[cfg(feature = "otel")]
    #[arg(long)]
    pub trace_arguments: bool,
}

/// The default ticket lifetime.
pub const DEFAULT_TTL: Duration = Duration::from_secs(600);

impl ServeArgs {
    /// The ticket lifetime (`--ttl`, default ten minutes).
    pub fn ttl(&self) -> Duration {
        self.ttl_seconds.map_or(DEFAULT_TTL, Duration::from_secs)
    }

    /// Whether tickets are single-use: `--single-use`, or `--ledger`.
    pub fn single_use(&self) -> bool {
        #[cfg(feature = "redis")]
        if self.ledger.is_some() {
            return true;
        }
        self.single_use
    }

    /// The scopes every tool needs (`--oauth-scope`, split at spaces).
    pub fn oauth_scopes(&self) -> Vec<String> {
        #[cfg(feature = "auth")]
        if let Some(scope) = &self.oauth_scope {
            return scope.split_whitespace().map(str::to_owned).collect();
        }
        Vec::new()
    }

    /// Checks what clap cannot: an OAuth resource is named when the address
    /// is not loopback (tokens name this server by the URL clients use).
    pub fn check(&self, addr: &str) -> Result<(), String> {
        #[cfg(feature = "auth")]
        {
            let loopback = ["127.0.0.1:", "localhost:", "[::1]:"]
                .iter()
                .any(|p| addr.starts_with(p));
            if self.oauth_issuer.is_some() && self.oauth_resource.is_none() && !loopback {
                return Err(format!(
                    "--oauth-resource is required when listening on {addr}: tokens name this server by the URL clients use"
                ));
            }
        }
        let _ = addr;
        Ok(())
    }
}

fn parse_trusted_proxies(value: &str) -> Result<tessera_http::TrustedProxies, String> {
    tessera_http::TrustedProxies::parse(value)
}

fn parse_rate_limit(value: &str) -> Result<String, String> {
    tessera_server::middleware::RateLimit::parse(value).map(|_| value.to_owned())
}

fn parse_legacy(value: &str) -> Result<Legacy, String> {
    value.parse()
}

#[cfg(feature = "redis")]
fn parse_redis_url(value: &str) -> Result<String, String> {
    if value.starts_with("redis://") || value.starts_with("rediss://") {
        Ok(value.to_owned())
    } else {
        Err(format!("a redis:// URL, not {value:?}"))
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    #[derive(Parser)]
    struct Cli {
        #[command(flatten)]
        serve: ServeArgs,
    }

    fn parse(args: &[&str]) -> Result<ServeArgs, String> {
        Cli::try_parse_from(std::iter::once("server").chain(args.iter().copied()))
            .map(|c| c.serve)
            .map_err(|e| e.to_string())
    }

    #[test]
    fn flags() {
        let a = parse(&["--legacy", "stateless", "--ttl", "2"]).unwrap();
        assert_eq!(a.legacy, Some(Legacy::Stateless));
        assert_eq!(a.ttl(), Duration::from_secs(2));
        assert_eq!(parse(&[]).unwrap().ttl(), DEFAULT_TTL);
        assert!(parse(&["--bogus"]).is_err());
        assert!(parse(&["--legacy", "maybe"]).unwrap_err().contains("maybe"));
        assert!(parse(&["--stdio", "--addr", "127.0.0.1:1"]).is_err());
        assert!(
            parse(&["--rate-limit", "often"])
                .unwrap_err()
                .contains("N/min")
        );
        assert_eq!(
            parse(&["--rate-limit", "5/min"])
                .unwrap()
                .rate_limit
                .as_deref(),
            Some("5/min")
        );
    }

    #[cfg(feature = "redis")]
    #[test]
    fn redis_urls() {
        assert!(
            parse(&["--ledger", "http://x"])
                .unwrap_err()
                .contains("redis://")
        );
        let a = parse(&["--ledger", "redis://127.0.0.1:6379/"]).unwrap();
        assert!(a.single_use());
        let a = parse(&[
            "--redis-cluster",
            "redis://127.0.0.1:7000,redis://127.0.0.1:7001",
        ])
        .unwrap();
        assert_eq!(
            a.redis_cluster.as_deref(),
            Some(
                &[
                    "redis://127.0.0.1:7000".to_owned(),
                    "redis://127.0.0.1:7001".to_owned()
                ][..]
            )
        );
        assert!(parse(&["--redis-cluster", "redis://a:1,http://b"]).is_err());
        assert!(
            parse(&["--redis-cluster", "redis://a:1", "--redis", "redis://b:1"]).is_err(),
            "one shared Redis or one cluster, not both"
        );
    }

    #[cfg(feature = "auth")]
    #[test]
    fn oauth_flags() {
        assert!(parse(&["--oauth-scope", "x"]).is_err());
        assert!(parse(&["--stdio", "--oauth-issuer", "http://i"]).is_err());
        let a = parse(&["--oauth-issuer", "http://i", "--oauth-scope", "a b"]).unwrap();
        assert_eq!(a.oauth_scopes(), ["a", "b"]);
        assert!(a.check("127.0.0.1:8787").is_ok());
        assert!(
            a.check("0.0.0.0:8787")
                .unwrap_err()
                .contains("--oauth-resource")
        );
    }
}

//! Configuration: flags, the environment and `.dev.vars`, checked at boot.

use std::path::Path;
use std::time::Duration;

use base64::Engine;
use tessera::http::Legacy;
pub use tessera::state::{KEY_VAR, KEYS_VAR};
use tessera::state::{KeyRing, RequestStateCodec};

/// What the server runs with.
#[derive(Debug)]
pub struct Config {
    /// Where to listen.
    pub addr: String,
    /// What to do with initialize-era clients.
    pub legacy: Legacy,
    /// Generate a key into `.dev.vars` when none is configured.
    pub dev: bool,
    /// Ticket lifetime.
    pub ttl: Duration,
    /// Serve on stdin/stdout instead of HTTP (both protocol eras).
    pub stdio: bool,
    /// Each ticket redeemable once.
    pub single_use: bool,
    /// Where single-use tickets are redeemed: a Redis URL shared by the instances.
    pub ledger: Option<String>,
    /// `--redis`: the Redis every instance shares (answers relayed; the ledger with `--single-use`).
    pub redis: Option<String>,
    /// The OAuth authorization server whose tokens are accepted (protects the endpoint).
    pub oauth_issuer: Option<String>,
    /// This server's canonical resource URI (default `http://ADDR/mcp`).
    pub oauth_resource: Option<String>,
    /// The scope `increase-counter` needs.
    pub oauth_scope: Option<String>,
    /// `--metrics HOST:PORT`: serve the Prometheus text format there.
    pub metrics: Option<String>,
    /// `--trace-arguments`: arguments and answers on spans.
    pub trace_arguments: bool,
}

/// Usage text.
pub const USAGE: &str =
    "usage: counter [--addr HOST:PORT] [--legacy reject|stateless|serve] [--ttl SECONDS] [--dev]
               [--single-use] [--ledger redis://HOST:PORT/] [--redis redis://HOST:PORT/]
               [--oauth-issuer URL [--oauth-resource URL] [--oauth-scope SCOPE]]
               [--metrics HOST:PORT] [--trace-arguments]
       counter --stdio [--ttl SECONDS] [--dev] [--single-use] [--metrics HOST:PORT]
               [--trace-arguments]

  --addr     where to listen (default 127.0.0.1:8787, or 127.0.0.1:$PORT)
  --legacy   initialize-era clients over HTTP: reject (default), stateless, or
             serve (sessions, with forms pushed as elicitation/create)
  --stdio    serve one client on stdin/stdout (as Claude Code and Claude Desktop
             launch local servers); initialize-era clients get the forms as
             elicitation/create requests
  --ttl      requestState lifetime in seconds (default 600)
  --dev      no key configured? generate one into .dev.vars and start
  --single-use  each requestState ticket is redeemable once (in-memory ledger)
  --ledger   redeem single-use tickets in this Redis, shared by every instance
  --redis    share this Redis between instances: initialize-era answers reach
             the instance whose call asked (--legacy serve), and with
             --single-use tickets are redeemed there
             behind a load balancer (implies --single-use)
  --oauth-issuer    protect the endpoint: accept only JWT access tokens of this
                    authorization server (keys from its metadata's jwks_uri)
  --oauth-resource  this server's canonical URI, the tokens' audience
                    (default http://ADDR/mcp)
  --oauth-scope     the scope increase-counter needs (403 insufficient_scope without it)
  --metrics  serve the metrics in the Prometheus text format at http://HOST:PORT/metrics
  --trace-arguments  put tool arguments and the user's answers on exported spans
             (off by default: they may hold personal data)

The key comes from MRTR_REQUEST_STATE_KEY (environment first, then .dev.vars).
For rotation, MRTR_REQUEST_STATE_KEYS=\"k2:new-secret,k1:old-secret\" (first seals).
Traces and metrics go over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set
(and the other standard OTEL_* variables).";

impl Config {
    /// Parses the command line (without the program name) and `PORT`.
    pub fn from_args(
        args: impl IntoIterator<Item = String>,
        port: Option<String>,
    ) -> Result<Self, String> {
        let mut config = Config {
            addr: format!("127.0.0.1:{}", port.as_deref().unwrap_or("8787")),
            legacy: Legacy::Reject,
            dev: false,
            ttl: Duration::from_secs(600),
            stdio: false,
            single_use: false,
            ledger: None,
            redis: None,
            oauth_issuer: None,
            oauth_resource: None,
            oauth_scope: None,
            metrics: None,
            trace_arguments: false,
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .ok_or_else(|| format!("{name} needs a value\n\n{USAGE}"))
            };
            match arg.as_str() {
                "--addr" => config.addr = value("--addr")?,
                "--legacy" => config.legacy = value("--legacy")?.parse()?,
                "--ttl" => {
                    let secs: u64 = value("--ttl")?
                        .parse()
                        .map_err(|_| "--ttl takes a whole number of seconds".to_owned())?;
                    config.ttl = Duration::from_secs(secs);
                }
                "--dev" => config.dev = true,
                "--stdio" => config.stdio = true,
                "--single-use" => config.single_use = true,
                "--oauth-issuer" => config.oauth_issuer = Some(value("--oauth-issuer")?),
                "--oauth-resource" => config.oauth_resource = Some(value("--oauth-resource")?),
                "--oauth-scope" => config.oauth_scope = Some(value("--oauth-scope")?),
                "--metrics" => config.metrics = Some(value("--metrics")?),
                "--trace-arguments" => config.trace_arguments = true,
                "--ledger" => {
                    let url = value("--ledger")?;
                    if !url.starts_with("redis://") && !url.starts_with("rediss://") {
                        return Err(format!("--ledger takes a redis:// URL, not {url:?}"));
                    }
                    config.ledger = Some(url);
                    config.single_use = true;
                }
                "--redis" => {
                    let url = value("--redis")?;
                    if !url.starts_with("redis://") && !url.starts_with("rediss://") {
                        return Err(format!("--redis takes a redis:// URL, not {url:?}"));
                    }
                    config.redis = Some(url);
                }
                "-h" | "--help" => return Err(USAGE.to_owned()),
                other => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
            }
        }
        if config.oauth_issuer.is_none()
            && (config.oauth_resource.is_some() || config.oauth_scope.is_some())
        {
            return Err("--oauth-resource and --oauth-scope need --oauth-issuer".into());
        }
        if config.oauth_issuer.is_some() && config.stdio {
            return Err(
                "--oauth-issuer protects the HTTP endpoint; a stdio server has no bearer tokens"
                    .into(),
            );
        }
        let loopback = ["127.0.0.1:", "localhost:", "[::1]:"]
            .iter()
            .any(|p| config.addr.starts_with(p));
        if config.oauth_issuer.is_some() && config.oauth_resource.is_none() && !loopback {
            return Err(format!(
                "--oauth-resource is required when listening on {}: tokens name this server by the URL clients use",
                config.addr
            ));
        }
        Ok(config)
    }
}

/// Reads `NAME=value` lines (wrangler's `.dev.vars` format): `#` comments, optional quotes.
pub fn read_dev_vars(text: &str, name: &str) -> Option<String> {
    text.lines().find_map(|line| {
        let line = line.trim();
        if line.starts_with('#') {
            return None;
        }
        let (key, value) = line.split_once('=')?;
        if key.trim() != name {
            return None;
        }
        let value = value.trim();
        let unquoted = value
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .or_else(|| value.strip_prefix('\'').and_then(|v| v.strip_suffix('\'')))
            .unwrap_or(value);
        Some(unquoted.to_owned())
    })
}

/// A fresh secret: 32 random bytes, base64-encoded.
pub fn generate_secret() -> Result<String, String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| format!("no randomness available: {e}"))?;
    Ok(base64::engine::general_purpose::STANDARD.encode(bytes))
}

/// Adds the key to `.dev.vars` in `dir` without exposing it or anything else:
/// a new file is created with mode 0600 from the start (`O_CREAT|O_EXCL`, which
/// never follows a symlink); an existing regular file keeps its other lines and
/// gets the key line appended; a symlink is refused, its target untouched.
fn write_dev_vars(dir: &Path, secret: &str) -> Result<(), String> {
    use std::io::Write;
    let path = dir.join(".dev.vars");
    let line = format!("{KEY_VAR}={secret}\n");
    let cannot = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
    match std::fs::symlink_metadata(&path) {
        Ok(meta) if meta.file_type().is_symlink() => Err(format!(
            "{} is a symbolic link; refusing to write a key through it",
            path.display()
        )),
        Ok(meta) if !meta.is_file() => Err(format!("{} is not a regular file", path.display())),
        Ok(_) => {
            let existing = std::fs::read(&path).map_err(cannot)?;
            let mut file = no_follow(std::fs::OpenOptions::new().append(true))
                .open(&path)
                .map_err(cannot)?;
            // The file now holds the key: only its owner may read it (set on the
            // open file, before the key is written).
            #[cfg(unix)]
            {
                use std::os::unix::fs::PermissionsExt;
                file.set_permissions(std::fs::Permissions::from_mode(0o600))
                    .map_err(cannot)?;
            }
            let separator = if existing.is_empty() || existing.ends_with(b"\n") {
                ""
            } else {
                "\n"
            };
            file.write_all(format!("{separator}{line}").as_bytes())
                .map_err(cannot)
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            let mut options = std::fs::OpenOptions::new();
            options.write(true).create_new(true);
            #[cfg(unix)]
            std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
            let mut file = no_follow(&mut options).open(&path).map_err(cannot)?;
            let text = format!(
                "# Generated by `counter --dev`. Keep it secret; do not commit it.\n{line}"
            );
            file.write_all(text.as_bytes()).map_err(cannot)
        }
        Err(e) => Err(cannot(e)),
    }
}

/// `options` refusing to open through a symbolic link (`O_NOFOLLOW`, on Unix).
fn no_follow(options: &mut std::fs::OpenOptions) -> &mut std::fs::OpenOptions {
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::custom_flags(options, libc::O_NOFOLLOW);
    options
}

/// A warning when the key file at `path` can be read by other users.
pub fn readable_by_others(path: &Path) -> Option<String> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(path).ok()?.permissions().mode();
        (mode & 0o077 != 0).then(|| {
            format!(
                "{} holds the requestState key and is readable by other users (mode {:o}); run: chmod 600 {}",
                path.display(),
                mode & 0o777,
                path.display()
            )
        })
    }
    #[cfg(not(unix))]
    {
        let _ = path;
        None
    }
}

/// The key ring from the environment, `.dev.vars` in `dir`, or (with `dev`) a new key.
/// Every failure is a message for the operator; the server must not start.
pub fn key_ring(
    env_key: Option<String>,
    env_keys: Option<String>,
    dir: &Path,
    dev: bool,
) -> Result<KeyRing, String> {
    if let Some(ring) = KeyRing::from_configured(None, env_keys.as_deref())? {
        return Ok(ring);
    }
    let dev_vars_path = dir.join(".dev.vars");
    let dev_vars = match std::fs::read_to_string(&dev_vars_path) {
        Ok(text) => Some(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => None,
        // Unreadable is not absent: --dev must not add a second key to it.
        Err(e) => return Err(format!("cannot read {}: {e}", dev_vars_path.display())),
    };
    let from_file = dev_vars.as_deref().and_then(|t| read_dev_vars(t, KEY_VAR));
    if from_file.is_some()
        && let Some(warning) = readable_by_others(&dev_vars_path)
    {
        tracing::warn!("{warning}");
    }
    let secret = env_key.filter(|k| !k.trim().is_empty()).or(from_file);
    let secret = match secret {
        Some(s) => s,
        None if dev => {
            let s = generate_secret()?;
            write_dev_vars(dir, &s)?;
            eprintln!(
                "{}: no {KEY_VAR} configured; generated a new key into {} (mode 0600)",
                program_name(),
                dir.join(".dev.vars").display()
            );
            s
        }
        None => {
            return Err(format!(
                "{KEY_VAR} must be configured\n  make one with: echo \"{KEY_VAR}=$(openssl rand -base64 32)\" > .dev.vars\n  (or start with --dev to generate it)"
            ));
        }
    };
    KeyRing::from_configured(Some(&secret), None)?.ok_or_else(|| format!("{KEY_VAR} is empty"))
}

/// This program's name, for messages (`counter`, `notes`).
fn program_name() -> String {
    std::env::args()
        .next()
        .as_deref()
        .and_then(|p| {
            std::path::Path::new(p)
                .file_name()?
                .to_str()
                .map(str::to_owned)
        })
        .unwrap_or_else(|| "server".into())
}

/// The codec for `ring` with `ttl`.
pub fn codec(ring: KeyRing, ttl: Duration) -> Result<RequestStateCodec, String> {
    RequestStateCodec::builder(ring)
        .ttl(ttl)
        .build()
        .map_err(|e| format!("invalid requestState settings: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_vars_format() {
        let text = "# comment\nOTHER=1\nMRTR_REQUEST_STATE_KEY = \"quoted value\"\n";
        assert_eq!(
            read_dev_vars(text, KEY_VAR).as_deref(),
            Some("quoted value")
        );
        assert_eq!(
            read_dev_vars("MRTR_REQUEST_STATE_KEY='x'", KEY_VAR).as_deref(),
            Some("x")
        );
        assert_eq!(read_dev_vars("#MRTR_REQUEST_STATE_KEY=x", KEY_VAR), None);
        assert_eq!(
            read_dev_vars("MRTR_REQUEST_STATE_KEY=a=b", KEY_VAR).as_deref(),
            Some("a=b")
        );
    }

    #[test]
    fn flags() {
        let c = Config::from_args(
            [
                "--legacy".into(),
                "stateless".into(),
                "--ttl".into(),
                "2".into(),
            ],
            Some("9000".into()),
        )
        .unwrap();
        assert_eq!(c.addr, "127.0.0.1:9000");
        assert_eq!(c.legacy, Legacy::Stateless);
        assert_eq!(c.ttl, Duration::from_secs(2));
        assert!(Config::from_args(["--bogus".into()], None).is_err());
        assert!(Config::from_args(["--legacy".into(), "maybe".into()], None).is_err());
    }

    fn temp_dir(tag: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("counter-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    /// Issue #14, 4: create-new with mode 0600, no symlink following, other lines kept.
    #[cfg(unix)]
    #[test]
    fn dev_vars_are_written_safely() {
        use std::os::unix::fs::PermissionsExt;
        let dir = temp_dir("devvars");
        // New: 0600 from the start, and the key reads back.
        key_ring(None, None, &dir, true).unwrap();
        let path = dir.join(".dev.vars");
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        assert!(readable_by_others(&path).is_none());
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(read_dev_vars(&text, KEY_VAR).is_some_and(|k| k.len() >= 32));
        // Existing, without the key: its lines stay, the key line is appended.
        std::fs::write(&path, "OTHER=1\nTOKEN=abc").unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        key_ring(None, None, &dir, true).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
        let text = std::fs::read_to_string(&path).unwrap();
        assert!(
            text.starts_with("OTHER=1\nTOKEN=abc\nMRTR_REQUEST_STATE_KEY="),
            "{text}"
        );
        // A symlink is refused and its target left alone.
        std::fs::remove_file(&path).unwrap();
        let target = dir.join("elsewhere");
        std::fs::write(&target, "precious").unwrap();
        std::os::unix::fs::symlink(&target, &path).unwrap();
        let err = key_ring(None, None, &dir, true).unwrap_err();
        assert!(err.contains("symbolic link"), "{err}");
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "precious");
        // A key file others can read is named in a warning.
        std::fs::remove_file(&path).unwrap();
        std::fs::write(&path, format!("{KEY_VAR}={}\n", "k".repeat(40))).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(readable_by_others(&path).unwrap().contains("chmod 600"));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn the_environment_wins_over_dev_vars() {
        let dir = std::env::temp_dir().join(format!("counter-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(".dev.vars"), "MRTR_REQUEST_STATE_KEY=short\n").unwrap();
        assert!(
            key_ring(None, None, &dir, false)
                .unwrap_err()
                .contains("at least 32")
        );
        assert!(key_ring(Some("x".repeat(32)), None, &dir, false).is_ok());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}

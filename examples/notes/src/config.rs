//! Flags: where to listen, where notes live, and the key (handled as the counter handles it).

use std::path::PathBuf;
use std::time::Duration;

/// What `notes` runs with.
#[derive(Debug)]
pub struct Config {
    /// Where to listen.
    pub addr: String,
    /// The SQLite file (when not on Redis).
    pub db: PathBuf,
    /// Redis for store, ledger and bus (many instances).
    pub redis: Option<String>,
    /// Generate a key into `.dev.vars` when none is configured.
    pub dev: bool,
    /// Ticket lifetime.
    pub ttl: Duration,
    /// What initialize-era clients get (default: sessions, with the forms).
    pub legacy: tessera::http::Legacy,
    /// `--metrics HOST:PORT`: serve the Prometheus text format there.
    pub metrics: Option<String>,
}

/// Usage text.
pub const USAGE: &str =
    "usage: notes [--addr HOST:PORT] [--db PATH | --redis URL] [--ttl SECONDS] [--dev]
             [--legacy reject|stateless|serve] [--metrics HOST:PORT]

  --addr    where to listen (default 127.0.0.1:8788, or 127.0.0.1:$PORT)
  --db      the SQLite database (default notes.db)
  --redis   keep notes, single-use tickets and change notifications in Redis,
            e.g. redis://127.0.0.1:6379/ (for several instances behind a load balancer)
  --ttl     requestState lifetime in seconds (default 600)
  --dev     no key configured? generate one into .dev.vars and start
  --legacy  initialize-era clients over HTTP: serve (default: sessions, with
            questions pushed as requests; with --redis, answers reach any
            instance), stateless, or reject
  --metrics serve the metrics in the Prometheus text format at http://HOST:PORT/metrics

The key comes from MRTR_REQUEST_STATE_KEY (environment first, then .dev.vars),
as for the counter; every instance behind one load balancer needs the same key.
Traces and metrics go over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set.";

impl Config {
    /// Parses the command line (without the program name) and `PORT`.
    pub fn from_args(
        args: impl IntoIterator<Item = String>,
        port: Option<String>,
    ) -> Result<Self, String> {
        let mut config = Config {
            addr: format!("127.0.0.1:{}", port.as_deref().unwrap_or("8788")),
            db: PathBuf::from("notes.db"),
            redis: None,
            dev: false,
            ttl: Duration::from_secs(600),
            legacy: tessera::http::Legacy::Serve,
            metrics: None,
        };
        let mut args = args.into_iter();
        while let Some(arg) = args.next() {
            let mut value = |name: &str| {
                args.next()
                    .ok_or_else(|| format!("{name} needs a value\n\n{USAGE}"))
            };
            match arg.as_str() {
                "--addr" => config.addr = value("--addr")?,
                "--db" => config.db = PathBuf::from(value("--db")?),
                "--redis" => config.redis = Some(value("--redis")?),
                "--metrics" => config.metrics = Some(value("--metrics")?),
                "--ttl" => {
                    let secs: u64 = value("--ttl")?
                        .parse()
                        .map_err(|_| "--ttl takes a whole number of seconds".to_owned())?;
                    config.ttl = Duration::from_secs(secs);
                }
                "--dev" => config.dev = true,
                "--legacy" => config.legacy = value("--legacy")?.parse()?,
                "-h" | "--help" => return Err(USAGE.to_owned()),
                other => return Err(format!("unknown argument {other:?}\n\n{USAGE}")),
            }
        }
        Ok(config)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Result<Config, String> {
        Config::from_args(args.iter().map(|s| (*s).to_owned()), None)
    }

    #[test]
    fn defaults_and_flags() {
        let c = parse(&[]).unwrap();
        assert_eq!(
            (c.addr.as_str(), c.db.to_str().unwrap()),
            ("127.0.0.1:8788", "notes.db")
        );
        assert!(c.redis.is_none());
        let c = parse(&[
            "--redis",
            "redis://127.0.0.1:1/",
            "--addr",
            "0.0.0.0:1",
            "--dev",
        ])
        .unwrap();
        assert_eq!(c.redis.as_deref(), Some("redis://127.0.0.1:1/"));
        assert!(c.dev);
        assert!(parse(&["--db"]).unwrap_err().contains("--db needs a value"));
        assert!(parse(&["--nope"]).unwrap_err().contains("unknown argument"));
    }
}

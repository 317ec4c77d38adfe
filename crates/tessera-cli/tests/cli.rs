//! The `tessera` binary against the counter server: headless answers, exit
//! codes, the unanswered non-terminal case, and one interactive run in a
//! pseudo-terminal.

use std::process::{Command, Stdio};
use std::sync::{Arc, OnceLock};

const TESSERA: &str = env!("CARGO_BIN_EXE_tessera");

mod support;

/// One counter server for the whole test binary, on its own runtime thread.
fn counter_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        support::serve_on_thread(|| {
            let key =
                tessera_state::StateKey::from_secret_str("cli-tests-key-0123456789abcdef0123")
                    .unwrap();
            let codec = tessera_state::RequestStateCodec::new(
                tessera_state::KeyRing::new("k1", key).unwrap(),
            );
            counter::counter_server(codec).unwrap()
        })
    })
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

fn tessera(args: &[&str]) -> Run {
    run(Command::new(TESSERA).args(args))
}

/// Runs `tessera` headless (stdin is not a terminal) and collects what it printed.
fn run(cmd: &mut Command) -> Run {
    let out = cmd.stdin(Stdio::null()).output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn call(extra: &[&str]) -> Run {
    let mut args = vec!["call", counter_url(), "increase-counter", "current=10"];
    args.extend_from_slice(extra);
    tessera(&args)
}

#[test]
fn headless_accept() {
    let r = call(&[
        "--answer",
        "amount.amount=5",
        "--answer",
        "confirmation.confirm=true",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), "Counter increased by 5; next value is 15");
}

#[test]
fn headless_decline_and_cancel_from_a_file() {
    let dir = std::env::temp_dir().join(format!("tessera-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let decline = dir.join("decline.json");
    std::fs::write(&decline, r#"{"amount": "decline"}"#).unwrap();
    let r = call(&["--answers", decline.to_str().unwrap()]);
    assert_eq!(
        (r.code, r.stdout.trim()),
        (3, "Counter increase cancelled."),
        "{}",
        r.stderr
    );
    let cancel = dir.join("cancel.json");
    std::fs::write(
        &cancel,
        r#"{"amount": {"amount": 5}, "confirmation": "cancel"}"#,
    )
    .unwrap();
    let r = call(&["--answers", cancel.to_str().unwrap()]);
    assert_eq!(
        (r.code, r.stdout.trim()),
        (3, "Counter increase cancelled."),
        "{}",
        r.stderr
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn unanswered_without_a_terminal_exits_non_zero_naming_the_request() {
    let r = call(&[]);
    assert_eq!(r.code, 5, "{} {}", r.stdout, r.stderr);
    assert!(r.stderr.contains("'amount'"), "{}", r.stderr);
    let r = call(&["--answer", "amount.amount=5"]);
    assert_eq!(r.code, 5, "{}", r.stderr);
    assert!(r.stderr.contains("'confirmation'"), "{}", r.stderr);
    assert!(
        r.stdout.is_empty(),
        "nothing is answered on the user's behalf: {}",
        r.stdout
    );
}

#[test]
fn json_output_tools_discover_and_keygen() {
    let r = call(&[
        "--answer",
        "amount.amount=2.5",
        "--answer",
        "confirmation.confirm=true",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    assert_eq!(
        v["content"][0]["text"],
        "Counter increased by 2.5; next value is 12.5"
    );
    let r = tessera(&["tools", counter_url()]);
    assert!(r.stdout.starts_with("increase-counter"), "{}", r.stdout);
    let r = tessera(&["discover", counter_url()]);
    // The endpoint's default serves initialize-era clients too: it lists their revisions.
    let versions = r.stdout.lines().find(|l| l.starts_with("versions: "));
    assert!(
        versions.is_some_and(|l| l.ends_with("2025-11-25, 2026-07-28")),
        "{}",
        r.stdout
    );
    let r = tessera(&["keygen"]);
    assert_eq!(r.stdout.trim().len(), 44);
    let r = tessera(&["call", counter_url(), "increase-counter", "novalue"]);
    assert_eq!(r.code, 2);
    let r = tessera(&["call", "http://127.0.0.1:9/mcp", "x"]);
    assert_eq!(r.code, 4, "{}", r.stderr);
}

#[test]
fn interactive_in_a_pseudo_terminal() {
    let mut cmd = Command::new(TESSERA);
    cmd.args(["call", counter_url(), "increase-counter", "current=10"]);
    test_harness::counter_forms_in_a_terminal(cmd);
}

/// The `counter` binary beside `tessera` (`cargo test --workspace` builds both).
fn counter_command() -> String {
    let counter = std::path::Path::new(TESSERA).with_file_name("counter");
    assert!(
        counter.exists(),
        "{} is missing: build it with `cargo build --bin counter` (cargo test --workspace does)",
        counter.display()
    );
    format!("'{}' --stdio", counter.display())
}

fn call_stdio(extra: &[&str]) -> Run {
    let command = counter_command();
    let mut args = vec![
        "call",
        "--stdio",
        &command,
        "increase-counter",
        "current=10",
    ];
    args.extend_from_slice(extra);
    run(stdio_env(Command::new(TESSERA).args(&args)))
}

/// The key and quiet logging for the counter that `tessera --stdio` starts.
fn stdio_env(cmd: &mut Command) -> &mut Command {
    cmd.env(
        "MRTR_REQUEST_STATE_KEY",
        "cli-stdio-tests-key-0123456789abcdef012",
    )
    .env("RUST_LOG", "warn")
}

#[test]
fn stdio_headless_accept_decline_and_unanswered() {
    let r = call_stdio(&[
        "--answer",
        "amount.amount=5",
        "--answer",
        "confirmation.confirm=true",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), "Counter increased by 5; next value is 15");
    let r = call_stdio(&[
        "--answer",
        "amount.amount=5",
        "--answer",
        "confirmation=cancel",
    ]);
    assert_eq!(
        (r.code, r.stdout.trim()),
        (3, "Counter increase cancelled."),
        "{}",
        r.stderr
    );
    let r = call_stdio(&[]);
    assert_eq!(r.code, 5, "{} {}", r.stdout, r.stderr);
    assert!(r.stderr.contains("'amount'"), "{}", r.stderr);
}

#[test]
fn stdio_tools_discover_and_a_command_that_is_not_there() {
    let command = counter_command();
    let r = run(stdio_env(
        Command::new(TESSERA).args(["tools", "--stdio", &command]),
    ));
    assert!(r.stdout.starts_with("increase-counter"), "{}", r.stderr);
    let r = tessera(&["tools", "--stdio", "/nonexistent/server --stdio"]);
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(
        r.stderr.contains("cannot start \"/nonexistent/server\""),
        "{}",
        r.stderr
    );
    let r = tessera(&["tools"]);
    assert_eq!(r.code, 2, "{}", r.stderr);
    assert!(r.stderr.contains("--stdio"), "{}", r.stderr);
}

#[test]
fn stdio_interactive_in_a_pseudo_terminal() {
    let mut cmd = Command::new(TESSERA);
    let command = counter_command();
    stdio_env(cmd.args([
        "call",
        "--stdio",
        &command,
        "increase-counter",
        "current=10",
    ]));
    test_harness::counter_forms_in_a_terminal(cmd);
}

#[test]
fn listen_prints_each_notification_as_a_json_line_until_the_server_ends_it() {
    use std::io::BufRead;
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let (server, url) = runtime.block_on(async {
        let server = Arc::new(
            tessera_server::McpServer::builder("notes", "1.0.0")
                .resource(tessera_server::ResourceDef::new(
                    "notes://list",
                    "list",
                    |_: tessera_server::Context| async { "[]".to_owned() },
                ))
                .build()
                .unwrap(),
        );
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/mcp", listener.local_addr().unwrap());
        let endpoint = tessera_http::McpEndpoint::new(Arc::clone(&server), Default::default());
        tokio::spawn(tessera_http::serve(
            listener,
            endpoint,
            std::future::pending(),
        ));
        (server, url)
    });
    let mut child = Command::new(TESSERA)
        .args(["listen", &url, "--resource", "notes://list"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    assert!(line.contains("listening for"), "{line}");
    assert!(line.contains("notes://list"), "{line}");
    runtime
        .block_on(server.notifier().resource_updated("notes://list"))
        .unwrap();
    let mut stdout = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    stdout.read_line(&mut line).unwrap();
    let n: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(n["method"], "notifications/resources/updated");
    assert_eq!(n["params"]["uri"], "notes://list");
    server.end_subscriptions();
    assert!(child.wait().unwrap().success());
}

/// A process that is killed when dropped.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Machine sign-in, by flags and by environment variables alike: the
/// counter takes DPoP-bound tokens only (`--oauth-dpop required`), so the
/// call goes through only if the CLI signed in as the client with the
/// `client_credentials` grant and bound its token with DPoP; with DPoP
/// turned off it is refused, and says so.
#[test]
fn machine_sign_in_by_flags_or_environment_with_dpop() {
    use test_harness::{free_port, wait_for_port};
    let oidc = test_harness::OidcProvider::start();
    let port = free_port();
    let counter = std::path::Path::new(TESSERA).with_file_name("counter");
    let _counter = Killed(
        stdio_env(Command::new(counter).args([
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--oauth-issuer",
            &oidc.issuer,
            "--oauth-scope",
            "counter:write",
            "--oauth-dpop",
            "required",
        ]))
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap(),
    );
    wait_for_port(port, "counter");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let flow = [
        "call",
        url.as_str(),
        "increase-counter",
        "current=10",
        "--answer",
        "amount.amount=5",
        "--answer",
        "confirmation.confirm=true",
    ];
    let by_flags = run(Command::new(TESSERA)
        .args(flow)
        .args([
            "--client-id",
            "tessera-test",
            "--client-secret",
            "tessera-secret",
        ])
        .env_remove("BROWSER"));
    assert_eq!(by_flags.code, 0, "{}", by_flags.stderr);
    assert_eq!(
        by_flags.stdout.trim(),
        "Counter increased by 5; next value is 15"
    );
    let by_environment = run(Command::new(TESSERA)
        .args(flow)
        .env("TESSERA_CLIENT_ID", "tessera-test")
        .env("TESSERA_CLIENT_SECRET", "tessera-secret")
        .env_remove("BROWSER"));
    assert_eq!(by_environment.code, 0, "{}", by_environment.stderr);
    assert_eq!(
        by_environment.stdout.trim(),
        "Counter increased by 5; next value is 15"
    );
    let without_dpop = run(Command::new(TESSERA)
        .args(flow)
        .args([
            "--client-id",
            "tessera-test",
            "--client-secret",
            "tessera-secret",
            "--no-dpop",
        ])
        .env_remove("BROWSER"));
    assert_ne!(without_dpop.code, 0, "{}", without_dpop.stdout);
    assert!(
        without_dpop.stderr.contains("DPoP"),
        "the refusal names DPoP: {}",
        without_dpop.stderr
    );
}

#[test]
fn login_call_logout_against_a_real_authorization_server() {
    use test_harness::{TempDir, free_port, wait_for_port};
    let oidc = test_harness::OidcProvider::start();
    // The counter, protected by it.
    let dir = TempDir::new("cli-login");
    let port = free_port();
    let counter = std::path::Path::new(TESSERA).with_file_name("counter");
    let _counter = Killed(
        stdio_env(Command::new(counter).args([
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--oauth-issuer",
            &oidc.issuer,
            "--oauth-scope",
            "counter:write",
            // DPoP beside bearer tokens: the CLI binds its tokens, and keeps the key with them.
            "--oauth-dpop",
            "allowed",
        ]))
        .current_dir(&dir.0)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap(),
    );
    wait_for_port(port, "counter");
    let url = format!("http://127.0.0.1:{port}/mcp");
    let config = dir.0.join("config");
    let jar = dir.0.join("cookies");
    // The "browser": curl following the redirects, with cookies, to the loopback listener.
    let browser = format!("curl -sL -c {0} -b {0} -o /dev/null", jar.display());
    let tessera_in = |args: &[&str], browser: Option<&str>| {
        let mut cmd = Command::new(TESSERA);
        cmd.args(args)
            .env("TESSERA_CONFIG_DIR", &config)
            .env("TESSERA_SIGN_IN_TIMEOUT_SECS", "20")
            .env_remove("BROWSER");
        if let Some(b) = browser {
            cmd.env("BROWSER", b);
        }
        run(&mut cmd)
    };

    let flow = [
        "call",
        url.as_str(),
        "increase-counter",
        "current=10",
        "--answer",
        "amount.amount=5",
        "--answer",
        "confirmation.confirm=true",
    ];
    // `tessera call` signs in by itself (the URL shown, the browser driven), then completes the flow.
    let r = tessera_in(&flow, Some(&browser));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        r.stderr.contains("sign in at"),
        "the URL is shown: {}",
        r.stderr
    );
    assert_eq!(r.stdout.trim(), "Counter increased by 5; next value is 15");
    let tokens = config.join("tokens.json");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&tokens).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600, "tokens are readable by the user alone");
    }
    let kept = std::fs::read_to_string(&tokens).unwrap();
    assert!(
        kept.contains("\"dpop_key\""),
        "the token is bound with DPoP and its key kept beside it: {kept}"
    );
    // Signed in: the next call needs no browser.
    let r = tessera_in(&flow, None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(!r.stderr.contains("sign in at"), "{}", r.stderr);
    // Signed out: no terminal and no browser, so it says how to sign in instead of waiting.
    let r = tessera_in(&["logout", &url], None);
    assert!(r.stderr.contains("signed out"), "{}", r.stderr);
    let r = tessera_in(&["tools", &url], None);
    assert_eq!(r.code, 4, "{}", r.stderr);
    assert!(r.stderr.contains("tessera login"), "{}", r.stderr);
    // `tessera login` (a fresh browser), then `tools` with the kept tokens.
    let fresh = format!(
        "curl -sL -c {0} -b {0} -o /dev/null",
        dir.0.join("cookies2").display()
    );
    let r = tessera_in(&["login", &url], Some(&fresh));
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stderr.contains("signed in to"), "{}", r.stderr);
    let r = tessera_in(&["tools", &url], None);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(r.stdout.starts_with("increase-counter"), "{}", r.stdout);
}

#[test]
fn call_completes_the_flow_against_the_counter_worker_under_workerd() {
    let worker = test_harness::CounterWorker::start(Some("cli-worker-tests-key-0123456789abcdef"));
    let r = tessera(&[
        "call",
        &worker.url,
        "increase-counter",
        "current=10",
        "--answer",
        "amount.amount=5",
        "--answer",
        "confirmation.confirm=true",
    ]);
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.stdout.trim(), "Counter increased by 5; next value is 15");
}

/// A server that asks again, saying why, when an answer does not fit (the
/// library's default; the counter itself cancels instead).
fn asking_again_url() -> &'static str {
    static URL: OnceLock<String> = OnceLock::new();
    URL.get_or_init(|| {
        support::serve_on_thread(|| {
            let key =
                tessera_state::StateKey::from_secret_str("cli-tests-key-0123456789abcdef0123")
                    .unwrap();
            let codec = tessera_state::RequestStateCodec::new(
                tessera_state::KeyRing::new("k1", key).unwrap(),
            );
            let tool = tessera_server::ToolDef::new(
                "increase-counter",
                |ctx, args: counter::CounterArgs| {
                    counter::increase_counter(ctx, tessera_server::Arguments(args))
                },
            )
            .asks();
            let builder = tessera_server::McpServer::builder("asks-again", "1.0.0");
            builder.request_state(codec).tool(tool).build().unwrap()
        })
    })
}

/// A scripted answer the server does not accept is not sent again until
/// `--max-rounds` runs out: the first rejection ends the call with exit 5
/// and the server's reason.
#[test]
fn a_rejected_scripted_answer_exits_5_with_the_reason() {
    let r = tessera(&[
        "call",
        asking_again_url(),
        "increase-counter",
        "current=10",
        "--answer",
        "amount.amount=five",
    ]);
    assert_eq!(r.code, 5, "{}", r.stderr);
    assert!(
        r.stderr
            .contains("did not accept the scripted answer to input request 'amount'")
            && r.stderr.contains("expected a number"),
        "{}",
        r.stderr
    );
}

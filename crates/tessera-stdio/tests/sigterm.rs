//! A server on stdio under a runtime that waits for its threads on drop (as
//! `#[tokio::main]` does) exits on SIGTERM, even while the client keeps
//! stdin open.
//!
//! The test re-runs its own binary as the server: `stdio_server_child` is
//! that server's `main` and does nothing unless `TESSERA_STDIO_CHILD` is set.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tessera_state::{KeyRing, RequestStateCodec, StateKey};

const CHILD: &str = "TESSERA_STDIO_CHILD";

/// The server process's `main` (runs only in the child).
#[test]
fn stdio_server_child() {
    if std::env::var_os(CHILD).is_none() {
        return;
    }
    let key = StateKey::from_secret_str("sigterm-test-key-0123456789abcdefgh").unwrap();
    let server =
        counter::counter_server(RequestStateCodec::new(KeyRing::new("k1", key).unwrap())).unwrap();
    // Dropping this runtime waits for its blocking threads, as `#[tokio::main]` does.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    runtime
        .block_on(tessera_stdio::serve_stdio(
            Arc::new(server),
            Default::default(),
        ))
        .unwrap();
}

#[cfg(unix)]
#[test]
fn sigterm_ends_the_server_while_stdin_stays_open() {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "stdio_server_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD, "1")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":1,"method":"server/discover","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}}}}}}"#
    )
    .unwrap();
    // The test harness writes around the server's lines: find the response in them.
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let answer = loop {
        let line = rx
            .recv_timeout(Duration::from_secs(10))
            .expect("no response to server/discover within 10 s");
        if line.contains(r#""jsonrpc""#) {
            break line;
        }
    };
    assert!(
        answer.contains(r#""id":1"#) && answer.contains("supportedVersions"),
        "{answer}"
    );
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-TERM", &pid])
            .status()
            .unwrap()
            .success()
    );
    // stdin is still open (held here): the process must exit anyway.
    let started = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(10) {
            let _ = child.kill();
            panic!("the server did not exit within 10 s of SIGTERM while its stdin stayed open");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    drop(stdin);
    assert!(status.success(), "{status}");
}

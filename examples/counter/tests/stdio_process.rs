//! `counter --stdio` as a process: only protocol on stdout, and a clean exit
//! on end of input, SIGTERM and Ctrl-C (SIGINT).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

struct Counter {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: BufReader<ChildStdout>,
}

impl Counter {
    fn start() -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_counter"))
            .arg("--stdio")
            .env(
                "MRTR_REQUEST_STATE_KEY",
                "stdio-process-test-key-0123456789abcdef",
            )
            // Every log line there is goes to stderr, never stdout.
            .env("RUST_LOG", "trace")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdin = child.stdin.take();
        let stdout = BufReader::new(child.stdout.take().unwrap());
        Self {
            child,
            stdin,
            stdout,
        }
    }

    fn send(&mut self, message: Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn recv(&mut self) -> Value {
        let mut line = String::new();
        self.stdout.read_line(&mut line).unwrap();
        serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-protocol line {line:?}: {e}"))
    }

    /// Serves one request, proving the server is up.
    fn served(&mut self) {
        self.send(
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}
            }}}),
        );
        assert_eq!(
            self.recv()["result"]["tools"][0]["name"],
            "increase-counter"
        );
    }

    /// The exit status, waiting at most five seconds.
    fn exit_status(&mut self) -> std::process::ExitStatus {
        let started = Instant::now();
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "the server did not exit within 5 s"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Sends `signal` (`TERM`, `INT`) with kill(1): no unsafe code in tests either.
    fn signal(&mut self, signal: &str) {
        let sent = Command::new("kill")
            .args([format!("-{signal}"), self.child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn end_of_input_exits_cleanly() {
    let mut c = Counter::start();
    c.served();
    c.stdin.take();
    assert!(c.exit_status().success());
    let mut rest = String::new();
    std::io::Read::read_to_string(&mut c.stdout, &mut rest).unwrap();
    assert_eq!(rest, "", "nothing after the last response");
}

#[test]
fn sigterm_exits_cleanly() {
    let mut c = Counter::start();
    c.served();
    c.signal("TERM");
    assert!(c.exit_status().success());
}

#[test]
fn ctrl_c_exits_cleanly() {
    let mut c = Counter::start();
    c.served();
    c.signal("INT");
    assert!(c.exit_status().success());
}

//! The counter Lambda under `cargo lambda watch` (cargo-lambda's emulator of
//! the Lambda runtime API and function URLs), driven over HTTP like any MCP
//! client would, and by the official Python SDK client.

use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use serde_json::json;
use test_harness::counter_flows::{CounterCalls, confirmed, text};
use test_harness::{CounterLambda, RedisServer, mcp_post, peers_dir, run_peer};

const KEY: &str = "lambda-tests-key-0123456789abcdef01234";

/// Variables for the function, beside its key.
type Env = Vec<(&'static str, String)>;

async fn start(key: Option<&'static str>, env: Env) -> CounterLambda {
    tokio::task::spawn_blocking(move || {
        let env: Vec<(&str, &str)> = env.iter().map(|(k, v)| (*k, v.as_str())).collect();
        CounterLambda::start(key, &env)
    })
    .await
    .unwrap()
}

#[tokio::test(flavor = "multi_thread")]
async fn the_counter_checks_and_the_python_sdk_under_cargo_lambda_watch() {
    let redis = tokio::task::spawn_blocking(RedisServer::start)
        .await
        .unwrap();
    let lambda = start(
        Some(KEY),
        vec![("REDIS_URL", redis.url()), ("SINGLE_USE", "true".into())],
    )
    .await;
    let http = reqwest::Client::new();
    let url = lambda.url.as_str();
    let mut calls = CounterCalls::new(&http, url, None);
    calls.check_flows().await;

    // SINGLE_USE=true with REDIS_URL: the final round replayed is refused,
    // whichever instance it reaches (the ledger is in Redis).
    calls.check_replay_refused().await;

    calls.check_serverless_refusals().await;
    // A listen stream cannot stay open on a buffered response: refused at once.
    let r = mcp_post(&http, url, None, 99, "subscriptions/listen", json!({})).await;
    assert_eq!(r.body["error"]["code"], -32601, "{}", r.body);

    // The official Python SDK client (2.x), in the 2026-07-28 era.
    let python = peers_dir().join(".venv/bin/python");
    let url = lambda.url.clone();
    let runs = tokio::task::spawn_blocking(move || {
        ["accept", "decline", "cancel", "confirm-false"].map(|scenario| {
            run_peer(
                &python,
                "python_client.py",
                &["2026-07-28", scenario, &url],
                &[],
            )
        })
    })
    .await
    .unwrap();
    let [done, declined, cancelled, refused] = runs;
    assert_eq!(done["protocolVersion"], "2026-07-28", "{done}");
    assert_eq!(done["tools"], json!(["increase-counter"]));
    assert_eq!(done["text"], "Counter increased by 5; next value is 15");
    let amount =
        json!({"message": "By how much should the counter increase?", "fields": ["amount"]});
    let confirm = json!({"message": "Increase 10 by 5?", "fields": ["confirm"]});
    assert_eq!(done["asked"], json!([amount, confirm]));
    for (run, asked) in [
        (declined, json!([amount])),
        (cancelled, json!([amount, confirm])),
        (refused, json!([amount, confirm])),
    ] {
        assert_eq!(run["text"], "Counter increase cancelled.", "{run}");
        assert_eq!(run["asked"], asked, "{run}");
    }
}

/// Each misconfiguration stops the function's start with a message naming
/// the fix (in the function's log, CloudWatch on AWS), reported to the
/// runtime API as the init error: the invocation fails at once.
#[tokio::test(flavor = "multi_thread")]
async fn a_misconfigured_function_refuses_to_start_naming_the_fix() {
    let http = reqwest::Client::new();
    let cases: [(Option<&'static str>, Env, &str); 3] = [
        (None, vec![], "MRTR_REQUEST_STATE_KEY must be configured"),
        (Some("too-short"), vec![], "at least 32"),
        (
            Some(KEY),
            vec![("SINGLE_USE", "true".into())],
            "SINGLE_USE=true needs REDIS_URL",
        ),
    ];
    for (key, env, expected) in cases {
        let lambda = start(key, env).await;
        let r = mcp_post(&http, &lambda.url, None, 1, "tools/list", json!({})).await;
        assert!(r.status >= 500, "{expected}: {} {}", r.status, r.body);
        let log = lambda.log_tail();
        assert!(
            log.lines()
                .any(|l| l.starts_with("counter-lambda: ") && l.contains(expected)),
            "{expected}:\n{log}"
        );
    }
}

/// A stand-in for the AWS Parameters and Secrets Lambda Extension (AWS's
/// layer cannot run outside AWS): its documented local interface, the
/// secret's value for the right session token, 400 otherwise. Records the
/// request lines it was sent.
fn secrets_extension(secret_string: &'static str) -> (u16, Arc<Mutex<Vec<String>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let record = Arc::clone(&seen);
    std::thread::spawn(move || {
        for stream in listener.incoming().flatten() {
            let mut reader = BufReader::new(&stream);
            let mut head = Vec::new();
            loop {
                let mut line = String::new();
                if reader.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push(line.trim_end().to_owned());
            }
            let token = head
                .iter()
                .any(|l| l.eq_ignore_ascii_case("x-aws-parameters-secrets-token: session-token"));
            record.lock().unwrap().extend(head.first().cloned());
            let (status, body) = if token {
                (
                    "200 OK",
                    json!({"Name": "tessera/counter", "SecretString": secret_string}),
                )
            } else {
                (
                    "400 Bad Request",
                    json!({"message": "missing or wrong token"}),
                )
            };
            let body = body.to_string();
            let _ = write!(
                &stream,
                "HTTP/1.1 {status}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    (port, seen)
}

#[tokio::test(flavor = "multi_thread")]
async fn the_key_from_secrets_manager_through_the_extension() {
    let secret = r#"{"MRTR_REQUEST_STATE_KEY": "lambda-tests-key-0123456789abcdef01234"}"#;
    let (port, seen) = secrets_extension(secret);
    let arn = "arn:aws:secretsmanager:eu-west-1:123456789012:secret:tessera/counter-AbCdEf";
    let env = |token: &str| {
        vec![
            ("MRTR_REQUEST_STATE_SECRET_ID", arn.to_owned()),
            ("PARAMETERS_SECRETS_EXTENSION_HTTP_PORT", port.to_string()),
            ("AWS_SESSION_TOKEN", token.to_owned()),
        ]
    };
    let lambda = start(None, env("session-token")).await;
    let http = reqwest::Client::new();
    let mut calls = CounterCalls::new(&http, &lambda.url, None);
    let s2 = calls.round_two().await;
    let done = calls.call(10.0, Some(&s2), Some(confirmed())).await;
    assert_eq!(text(&done), "Counter increased by 5; next value is 15");
    assert_eq!(
        seen.lock().unwrap().first().map(String::as_str),
        Some(
            "GET /secretsmanager/get?secretId=arn%3Aaws%3Asecretsmanager%3Aeu%2Dwest%2D1%3A123456789012%3Asecret%3Atessera%2Fcounter%2DAbCdEf HTTP/1.1"
        )
    );
    drop(lambda);

    // The extension refusing (a wrong token here; on AWS a missing
    // permission) stops the start, saying what it answered.
    let lambda = start(None, env("another-token")).await;
    let r = mcp_post(&http, &lambda.url, None, 1, "tools/list", json!({})).await;
    assert!(r.status >= 500, "{} {}", r.status, r.body);
    let log = lambda.log_tail();
    assert!(
        log.contains("could not be read (400 Bad Request")
            && log.contains("secretsmanager:GetSecretValue"),
        "{log}"
    );
}

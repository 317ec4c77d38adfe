//! `counter --oauth-issuer` against a real authorization server (oidc-provider,
//! installed by scripts/install-test-peers): Protected Resource Metadata, the
//! 401 challenge, JWTs signed RS256 / ES256 / EdDSA verified against the
//! issuer's JWKS, tokens for another resource refused, 403 insufficient_scope
//! naming the scope, and tickets bound to the token's subject.

use std::process::{Child, Command, Stdio};

use serde_json::{Value, json};
use test_harness::{TempDir, client_credentials_token, free_port, wait_for_port};

struct Process(Child);

impl Drop for Process {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn counter(issuer: &str, dir: &TempDir) -> (Process, String) {
    counter_with(issuer, dir, &[])
}

fn counter_with(issuer: &str, dir: &TempDir, extra: &[&str]) -> (Process, String) {
    let port = free_port();
    let resource = format!("http://127.0.0.1:{port}/mcp");
    let child = Command::new(env!("CARGO_BIN_EXE_counter"))
        .args([
            "--addr",
            &format!("127.0.0.1:{port}"),
            "--oauth-issuer",
            issuer,
        ])
        .args([
            "--oauth-resource",
            &resource,
            "--oauth-scope",
            "counter:write",
        ])
        .args(extra)
        .current_dir(&dir.0)
        .env(
            "MRTR_REQUEST_STATE_KEY",
            "oauth-test-key-0123456789abcdef012345678",
        )
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for_port(port, "counter");
    (Process(child), resource)
}

/// One MCP POST with `token`: status, `WWW-Authenticate`, and the body.
async fn post(
    url: &str,
    token: Option<&str>,
    id: i64,
    method: &str,
    params: Value,
) -> (u16, String, Value) {
    let r = test_harness::mcp_post(&reqwest::Client::new(), url, token, id, method, params).await;
    let challenge = r.header("www-authenticate").to_owned();
    (r.status, challenge, r.body)
}

fn call(state: Option<&Value>, answers: Value) -> Value {
    let mut p = json!({"name": "increase-counter", "arguments": {"current": 10}});
    if let Some(s) = state {
        p["requestState"] = s.clone();
        p["inputResponses"] = answers;
    }
    p
}

#[tokio::test]
async fn a_protected_counter_with_a_real_authorization_server() {
    let oidc = test_harness::OidcProvider::start();
    let issuer = oidc.issuer.clone();
    let dir = TempDir::new("counter-oauth");
    let (_counter, url) = counter(&issuer, &dir);
    let metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");

    // RFC 9728 metadata, at the path-suffixed and the root well-known URIs.
    for at in [
        metadata_url.clone(),
        url.replace("/mcp", "/.well-known/oauth-protected-resource"),
    ] {
        let prm: Value = reqwest::get(&at).await.unwrap().json().await.unwrap();
        assert_eq!(
            prm,
            json!({"resource": url, "authorization_servers": [issuer],
                "bearer_methods_supported": ["header"], "scopes_supported": ["counter:write"]})
        );
    }

    // No token: 401 naming the metadata and the scope.
    let (status, challenge, _) = post(&url, None, 1, "tools/list", json!({})).await;
    assert_eq!(status, 401);
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"counter:write\""), "{challenge}");
    assert!(
        !challenge.contains("error="),
        "no token, no error code: {challenge}"
    );

    // A token for this resource, from each kind of key: served.
    for alg in ["", " alg:ES256", " alg:EdDSA"] {
        let t = client_credentials_token(
            &issuer,
            "tessera-test",
            &url,
            &format!("counter:write{alg}"),
        )
        .await;
        let (status, _, body) = post(&url, Some(&t), 2, "tools/list", json!({})).await;
        assert_eq!(status, 200, "{alg}: {body}");
        assert_eq!(body["result"]["tools"][0]["name"], "increase-counter");
    }

    // The three rounds with a token that grants counter:write.
    let t = client_credentials_token(&issuer, "tessera-test", &url, "counter:write").await;
    let (_, _, r1) = post(&url, Some(&t), 3, "tools/call", call(None, json!({}))).await;
    let s1 = r1["result"]["requestState"].clone();
    let amount = json!({"amount": {"action": "accept", "content": {"amount": 5}}});
    let (_, _, r2) = post(
        &url,
        Some(&t),
        4,
        "tools/call",
        call(Some(&s1), amount.clone()),
    )
    .await;
    let s2 = r2["result"]["requestState"].clone();
    let confirm = json!({"confirmation": {"action": "accept", "content": {"confirm": true}}});
    let (_, _, r3) = post(&url, Some(&t), 5, "tools/call", call(Some(&s2), confirm)).await;
    assert_eq!(
        r3["result"]["content"][0]["text"],
        "Counter increased by 5; next value is 15"
    );

    // The ticket is bound to the token's subject: another client cannot carry it on.
    let other = client_credentials_token(&issuer, "tessera-other", &url, "counter:write").await;
    let (_, _, stolen) = post(&url, Some(&other), 6, "tools/call", call(Some(&s1), amount)).await;
    assert_eq!(stolen["error"]["code"], -32602, "{stolen}");

    // A token for another resource is refused, never passed on.
    let elsewhere = client_credentials_token(
        &issuer,
        "tessera-test",
        "http://127.0.0.1:9/mcp",
        "counter:write",
    )
    .await;
    let (status, challenge, _) = post(&url, Some(&elsewhere), 7, "tools/list", json!({})).await;
    assert_eq!(status, 401);
    assert!(challenge.contains("error=\"invalid_token\""), "{challenge}");
    let (status, _, _) = post(&url, Some("not-a-token"), 8, "tools/list", json!({})).await;
    assert_eq!(status, 401);

    // A token without the tool's scope: listing works, the call is 403 naming the scope.
    let reader = client_credentials_token(&issuer, "tessera-test", &url, "mcp:read").await;
    let (status, _, _) = post(&url, Some(&reader), 9, "tools/list", json!({})).await;
    assert_eq!(status, 200);
    let (status, challenge, body) =
        post(&url, Some(&reader), 10, "tools/call", call(None, json!({}))).await;
    assert_eq!(status, 403, "{body}");
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"counter:write\""), "{challenge}");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
}

/// An initialize-era client of a protected counter (`--legacy serve`): the
/// session is opened with its token, and each answer to a pushed question is
/// POSTed with it too (the endpoint authenticates every request before it
/// reads a byte of the body, answers included).
#[tokio::test]
async fn an_initialize_era_client_of_a_protected_counter_signs_its_answers() {
    use std::collections::HashMap;
    use std::sync::Arc;
    use tessera::client::{ConnectMode, McpClient, ScriptedAnswer, ScriptedElicitor};

    let oidc = test_harness::OidcProvider::start();
    let issuer = oidc.issuer.clone();
    let dir = TempDir::new("counter-oauth-legacy");
    let (_counter, url) = counter_with(&issuer, &dir, &["--legacy", "serve"]);
    let t = client_credentials_token(&issuer, "tessera-test", &url, "counter:write").await;
    let content = |v: Value| ScriptedAnswer::Accept(v.as_object().unwrap().clone());
    let elicitor = Arc::new(ScriptedElicitor::new(HashMap::from([
        ("amount".to_owned(), content(json!({"amount": 5}))),
        ("confirmation".to_owned(), content(json!({"confirm": true}))),
    ])));
    let client = McpClient::builder(&url)
        .bearer_token(t)
        .connect_mode(ConnectMode::Legacy)
        .elicitor(elicitor)
        .build()
        .unwrap();
    let result = client
        .call_tool("increase-counter", json!({"current": 10}))
        .await
        .unwrap();
    assert_eq!(
        result.content[0].as_text(),
        Some("Counter increased by 5; next value is 15")
    );
    assert_eq!(client.protocol_version(), "2025-11-25");
    // Without a token nothing of the session is served, not even an answer.
    let (status, _, _) = post(&url, None, 9, "ping", json!({})).await;
    assert_eq!(status, 401);
    client.close().await;
}

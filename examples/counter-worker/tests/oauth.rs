//! The counter Worker with `OAUTH_ISSUER`, `OAUTH_RESOURCE` and `OAUTH_SCOPE`
//! under `wrangler dev` (workerd), against a real authorization server
//! (oidc-provider): the verifier core of `tessera-auth` on the Workers fetch
//! API, with the same challenges and principal binding as the native counter
//! (`examples/counter/tests/oauth.rs`).

use serde_json::{Value, json};
use test_harness::{CounterWorker, McpReply, OidcProvider, client_credentials_token, mcp_post};

const KEY: &str = "workerd-oauth-key-0123456789abcdef0123";

fn call(state: Option<&Value>, answers: Value) -> Value {
    let mut p = json!({"name": "increase-counter", "arguments": {"current": 10}});
    if let Some(s) = state {
        p["requestState"] = s.clone();
        p["inputResponses"] = answers;
    }
    p
}

async fn post(url: &str, token: Option<&str>, id: i64, method: &str, params: Value) -> McpReply {
    mcp_post(&reqwest::Client::new(), url, token, id, method, params).await
}

#[tokio::test(flavor = "multi_thread")]
async fn a_protected_counter_worker_with_a_real_authorization_server() {
    let oidc = OidcProvider::start();
    let issuer = oidc.issuer.clone();
    let worker = CounterWorker::start_protected(KEY, &issuer, "counter:write");
    let url = worker.url.clone();
    let metadata_url = url.replace("/mcp", "/.well-known/oauth-protected-resource/mcp");

    // RFC 9728 metadata.
    let prm: Value = reqwest::get(&metadata_url)
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        prm,
        json!({"resource": url, "authorization_servers": [issuer],
            "bearer_methods_supported": ["header"], "scopes_supported": ["counter:write"]})
    );

    // No token: 401 naming the metadata and the scope.
    let refused = post(&url, None, 1, "tools/list", json!({})).await;
    assert_eq!(refused.status, 401, "{}", refused.body);
    let challenge = refused.header("www-authenticate");
    assert!(challenge.starts_with("Bearer "), "{challenge}");
    assert!(
        challenge.contains(&format!("resource_metadata=\"{metadata_url}\"")),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"counter:write\""), "{challenge}");

    // A token from the authorization server: the three rounds complete (the
    // Worker fetched the issuer's metadata and keys itself).
    let t = client_credentials_token(&issuer, "tessera-test", &url, "counter:write").await;
    let r1 = post(&url, Some(&t), 2, "tools/call", call(None, json!({}))).await;
    assert_eq!(r1.status, 200, "{}", r1.body);
    let s1 = r1.body["result"]["requestState"].clone();
    assert!(s1.is_string(), "{}", r1.body);
    let amount = json!({"amount": {"action": "accept", "content": {"amount": 5}}});
    let r2 = post(
        &url,
        Some(&t),
        3,
        "tools/call",
        call(Some(&s1), amount.clone()),
    )
    .await;
    let s2 = r2.body["result"]["requestState"].clone();
    let confirm = json!({"confirmation": {"action": "accept", "content": {"confirm": true}}});
    let r3 = post(&url, Some(&t), 4, "tools/call", call(Some(&s2), confirm)).await;
    assert_eq!(
        r3.body["result"]["content"][0]["text"], "Counter increased by 5; next value is 15",
        "{}",
        r3.body
    );

    // A ticket minted for one subject is refused for another.
    let other = client_credentials_token(&issuer, "tessera-other", &url, "counter:write").await;
    let stolen = post(&url, Some(&other), 5, "tools/call", call(Some(&s1), amount)).await;
    assert_eq!(stolen.body["error"]["code"], -32602, "{}", stolen.body);

    // A token for another resource, or none at all that parses: 401 invalid_token.
    let elsewhere = client_credentials_token(
        &issuer,
        "tessera-test",
        "http://127.0.0.1:9/mcp",
        "counter:write",
    )
    .await;
    let refused = post(&url, Some(&elsewhere), 6, "tools/list", json!({})).await;
    assert_eq!(refused.status, 401);
    assert!(
        refused
            .header("www-authenticate")
            .contains("error=\"invalid_token\""),
        "{}",
        refused.header("www-authenticate")
    );

    // Without the scope every tool needs: 403 insufficient_scope naming it.
    let reader = client_credentials_token(&issuer, "tessera-test", &url, "mcp:read").await;
    let listed = post(&url, Some(&reader), 7, "tools/list", json!({})).await;
    assert_eq!(listed.status, 200, "{}", listed.body);
    let forbidden = post(&url, Some(&reader), 8, "tools/call", call(None, json!({}))).await;
    assert_eq!(forbidden.status, 403, "{}", forbidden.body);
    let challenge = forbidden.header("www-authenticate");
    assert!(
        challenge.contains("error=\"insufficient_scope\""),
        "{challenge}"
    );
    assert!(challenge.contains("scope=\"counter:write\""), "{challenge}");
}

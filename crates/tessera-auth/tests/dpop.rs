//! DPoP at the resource (RFC 9449, the MCP DPoP extension) over real sockets,
//! with DPoP-bound JWTs from a real authorization server (oidc-provider, its
//! DPoP feature on): each way of presenting a bound token wrongly is refused
//! with the status and challenge RFC 9449 §7.1 names, a valid proof is
//! served, and `tessera-client` signs in with DPoP and calls through.
//!
//! The MCP DPoP extension: "If any validation step fails, the MCP server
//! MUST reject the request with an HTTP 401 response and include appropriate
//! error information in the `WWW-Authenticate` header as specified in RFC
//! 9449 Section 7.1."

use std::sync::Arc;
use std::time::Duration;

use base64::Engine as _;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use sha2::Digest as _;
use tessera_auth::{Dpop, JwtVerifier, OAuthResource};
use tessera_http::{EndpointOptions, McpEndpoint};
use tessera_server::{Context, McpServer, ToolDef};
use test_harness::OidcProvider;

/// Two P-256 keys (PKCS#8 DER, base64) made for these tests alone with
/// `openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256`.
const KEY: &str = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgzSpA41tsw3d+bmip3ddWriunVZmVuOP8nuthWcJb41mhRANCAATje1jiIX6adobUL8NMmWnN9oRJmXSf22FxCVWtY4pSwlvEi1Cig9frfoWOKQf5YEEQ8ugquJniBrmOKjli7v/u";
const OTHER_KEY: &str = "MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgG40kZzCop007C6P8qk/BiRVpieEIQN3eFRlV0fX6rtyhRANCAATszdC828+jHqT0uBeo7Mfs+jL6etuPobverSBoDwJuHLK0cvLK5G0OLJ/45Vr/UG+iP6KsklZpJZ3Xs7Fk09Rl";

/// A DPoP key as a client holds it.
struct Key {
    key: EncodingKey,
    jwk: Jwk,
}

impl Key {
    fn new(der_base64: &str) -> Self {
        let der = base64::engine::general_purpose::STANDARD
            .decode(der_base64)
            .unwrap();
        let key = EncodingKey::from_ec_der(&der);
        let jwk = Jwk::from_encoding_key(&key, Algorithm::ES256).unwrap();
        Self { key, jwk }
    }

    /// A proof: `htm`, `htu`, a fresh `jti`, `iat` now, `ath` of `token`, `nonce`.
    fn proof(&self, htm: &str, htu: &str, token: Option<&str>, nonce: Option<&str>) -> String {
        static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let jti = format!(
            "jti-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, std::sync::atomic::Ordering::SeqCst)
        );
        let mut claims = json!({"jti": jti, "htm": htm, "htu": htu, "iat": now()});
        if let Some(token) = token {
            claims["ath"] = base64::engine::general_purpose::URL_SAFE_NO_PAD
                .encode(sha2::Sha256::digest(token.as_bytes()))
                .into();
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = nonce.into();
        }
        let mut header = Header::new(Algorithm::ES256);
        header.typ = Some("dpop+jwt".into());
        header.jwk = Some(self.jwk.clone());
        jsonwebtoken::encode(&header, &claims, &self.key).unwrap()
    }
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// A client-credentials token from oidc-provider bound to `key` (the token
/// request carries a proof of it): the token and its `token_type`.
async fn bound_token(oidc: &OidcProvider, key: &Key, resource: &str) -> (String, String) {
    let endpoint = format!("{}/token", oidc.issuer);
    let answer: Value = reqwest::Client::new()
        .post(&endpoint)
        .basic_auth("tessera-test", Some("tessera-secret"))
        .header("DPoP", key.proof("POST", &endpoint, None, None))
        .form(&[
            ("grant_type", "client_credentials"),
            ("resource", resource),
            ("scope", "mcp:read"),
        ])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let token = answer["access_token"]
        .as_str()
        .unwrap_or_else(|| panic!("no token: {answer}"))
        .to_owned();
    (
        token,
        answer["token_type"].as_str().unwrap_or("").to_owned(),
    )
}

/// Serves a `whoami` tool behind DPoP-bound JWTs from `oidc`; its URL.
async fn serve(oidc: &OidcProvider, dpop: Dpop) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = McpServer::builder("dpop", "1.0.0")
        .tool(ToolDef::new("whoami", |cx: Context, _: ()| async move {
            match cx.auth() {
                Some(a) if a.bound_key.is_some() => format!("{} (DPoP)", a.subject),
                Some(a) => a.subject.clone(),
                None => String::new(),
            }
        }))
        .build()
        .unwrap();
    let protected = OAuthResource::new(
        url.clone(),
        oidc.issuer.clone(),
        Arc::new(JwtVerifier::new(oidc.issuer.clone(), url.clone())),
    )
    .dpop(dpop);
    let options = protected.protect(EndpointOptions::default());
    tokio::spawn(tessera_http::serve(
        listener,
        McpEndpoint::new(Arc::new(server), options),
        std::future::pending(),
    ));
    url
}

/// What the server answered: status, every `WWW-Authenticate`, `DPoP-Nonce`, body.
struct Reply {
    status: u16,
    challenges: Vec<String>,
    nonce: Option<String>,
    body: Value,
}

impl Reply {
    /// The challenge in `scheme`.
    fn challenge(&self, scheme: &str) -> &str {
        self.challenges
            .iter()
            .find(|c| c.starts_with(scheme))
            .map(String::as_str)
            .unwrap_or_else(|| panic!("no {scheme} challenge in {:?}", self.challenges))
    }
}

/// Calls `whoami` with `authorization` and these `DPoP` headers.
async fn call(url: &str, authorization: &str, proofs: &[String]) -> Reply {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/call")
        .header("mcp-name", "whoami")
        .header("authorization", authorization);
    for proof in proofs {
        request = request.header("dpop", proof);
    }
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "name": "whoami", "arguments": {},
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}}}});
    let response = request.body(body.to_string()).send().await.unwrap();
    Reply {
        status: response.status().as_u16(),
        challenges: response
            .headers()
            .get_all("www-authenticate")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect(),
        nonce: response
            .headers()
            .get("dpop-nonce")
            .map(|v| v.to_str().unwrap().to_owned()),
        body: response.json().await.unwrap_or(Value::Null),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bound_token_is_served_only_with_a_valid_fresh_proof_of_its_key() {
    let oidc = tokio::task::spawn_blocking(OidcProvider::start)
        .await
        .unwrap();
    let url = serve(&oidc, Dpop::new()).await;
    let (key, other) = (Key::new(KEY), Key::new(OTHER_KEY));
    let (token, token_type) = bound_token(&oidc, &key, &url).await;
    assert_eq!(
        token_type, "DPoP",
        "oidc-provider binds the token to the proof's key"
    );
    let dpop = format!("DPoP {token}");

    // The metadata says the resource takes DPoP, and in which algorithms.
    let metadata: Value = reqwest::get(tessera_http::resource_metadata_url(&url).unwrap())
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(
        metadata["dpop_signing_alg_values_supported"],
        json!(["ES256", "ES384", "RS256", "PS256", "EdDSA"])
    );

    // A valid proof is served, as the token's subject.
    let served = call(&url, &dpop, &[key.proof("POST", &url, Some(&token), None)]).await;
    assert_eq!(served.status, 200, "{}", served.body);
    assert_eq!(
        served.body["result"]["content"][0]["text"], "tessera-test (DPoP)",
        "{}",
        served.body
    );

    // RFC 9449 §7.2 (and the extension: "MCP servers MUST NOT accept a
    // DPoP-bound access token presented using the Bearer authentication
    // scheme"): the bound token as a bearer token is refused.
    let r = call(&url, &format!("Bearer {token}"), &[]).await;
    assert_eq!(r.status, 401);
    assert!(
        r.challenge("DPoP").contains("error=\"invalid_token\""),
        "{:?}",
        r.challenges
    );

    // The DPoP scheme without a proof.
    let r = call(&url, &dpop, &[]).await;
    assert_eq!(r.status, 401);
    let challenge = r.challenge("DPoP");
    assert!(
        challenge.contains("error=\"invalid_dpop_proof\""),
        "{challenge}"
    );
    assert!(challenge.contains("algs=\"ES256 "), "{challenge}");
    assert!(challenge.contains("resource_metadata=\""), "{challenge}");

    // Two proofs at once.
    let two = [
        key.proof("POST", &url, Some(&token), None),
        key.proof("POST", &url, Some(&token), None),
    ];
    let r = call(&url, &dpop, &two).await;
    assert_eq!(r.status, 401);
    assert!(r.challenge("DPoP").contains("invalid_dpop_proof"));

    // A valid proof of another key: the token is not bound to it.
    let r = call(
        &url,
        &dpop,
        &[other.proof("POST", &url, Some(&token), None)],
    )
    .await;
    assert_eq!(r.status, 401);
    assert!(
        r.challenge("DPoP").contains("error=\"invalid_token\""),
        "{:?}",
        r.challenges
    );

    // The wrong URL, method, token hash, or a query in htu.
    let elsewhere = url.replace("/mcp", "/other");
    for (why, proof) in [
        ("htu", key.proof("POST", &elsewhere, Some(&token), None)),
        (
            "htu query",
            key.proof("POST", &format!("{url}?a=1"), Some(&token), None),
        ),
        ("htm", key.proof("GET", &url, Some(&token), None)),
        ("ath", key.proof("POST", &url, Some("another token"), None)),
        ("no ath", key.proof("POST", &url, None, None)),
    ] {
        let r = call(&url, &dpop, &[proof]).await;
        assert_eq!(r.status, 401, "{why}");
        assert!(
            r.challenge("DPoP").contains("error=\"invalid_dpop_proof\""),
            "{why}: {:?}",
            r.challenges
        );
    }

    // A proof used twice: its jti is refused the second time.
    let once = key.proof("POST", &url, Some(&token), None);
    assert_eq!(
        call(&url, &dpop, std::slice::from_ref(&once)).await.status,
        200
    );
    let replayed = call(&url, &dpop, &[once]).await;
    assert_eq!(replayed.status, 401);
    assert!(replayed.challenge("DPoP").contains("invalid_dpop_proof"));

    // The server still serves.
    let again = call(&url, &dpop, &[key.proof("POST", &url, Some(&token), None)]).await;
    assert_eq!(again.status, 200, "{}", again.body);
}

/// RFC 9449 §9: a resource asking for nonces answers a proof without one (or
/// with a stale one) `401` with `DPoP error="use_dpop_nonce"` and the nonce
/// to use in `DPoP-Nonce`; a proof with it is served.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_resource_asking_for_nonces_refuses_stale_ones_and_hands_out_the_current_one() {
    let oidc = tokio::task::spawn_blocking(OidcProvider::start)
        .await
        .unwrap();
    let url = serve(&oidc, Dpop::new().nonces([9; 32], Duration::from_secs(1))).await;
    let key = Key::new(KEY);
    let (token, _) = bound_token(&oidc, &key, &url).await;
    let dpop = format!("DPoP {token}");

    let asked = call(&url, &dpop, &[key.proof("POST", &url, Some(&token), None)]).await;
    assert_eq!(asked.status, 401);
    assert!(
        asked.challenge("DPoP").contains("error=\"use_dpop_nonce\""),
        "{:?}",
        asked.challenges
    );
    let nonce = asked.nonce.expect("the nonce to use comes in DPoP-Nonce");
    let served = call(
        &url,
        &dpop,
        &[key.proof("POST", &url, Some(&token), Some(&nonce))],
    )
    .await;
    assert_eq!(served.status, 200, "{}", served.body);

    let forged = call(
        &url,
        &dpop,
        &[key.proof("POST", &url, Some(&token), Some("1.not-a-tag"))],
    )
    .await;
    assert_eq!(forged.status, 401);
    assert!(forged.challenge("DPoP").contains("use_dpop_nonce"));

    // Two windows of a second later the nonce is stale, and a new one is handed out.
    tokio::time::sleep(Duration::from_millis(2100)).await;
    let stale = call(
        &url,
        &dpop,
        &[key.proof("POST", &url, Some(&token), Some(&nonce))],
    )
    .await;
    assert_eq!(stale.status, 401);
    assert!(stale.challenge("DPoP").contains("use_dpop_nonce"));
    let fresh = stale.nonce.expect("a new nonce");
    assert_ne!(fresh, nonce);
    let served = call(
        &url,
        &dpop,
        &[key.proof("POST", &url, Some(&token), Some(&fresh))],
    )
    .await;
    assert_eq!(served.status, 200, "{}", served.body);
}

/// `tessera-client` against the same pair: it learns from the challenge that
/// the server takes DPoP, binds its client-credentials token to a key of its
/// own at oidc-provider, answers the server's nonce challenge, and calls
/// through (a server taking bound tokens only, so nothing else would do).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_client_signs_in_with_dpop_and_answers_the_nonce_challenge() {
    let oidc = tokio::task::spawn_blocking(OidcProvider::start)
        .await
        .unwrap();
    // DPoP-bound tokens only: a client that fell back to bearer fails.
    let url = serve(
        &oidc,
        Dpop::new()
            .required()
            .nonces([3; 32], Duration::from_secs(300)),
    )
    .await;
    let client = tessera_client::McpClient::builder(&url)
        .oauth(tessera_client::OAuthConfig {
            redirect_uri: "http://127.0.0.1/unused".into(),
            client_name: "dpop-test".into(),
            client_metadata_url: None,
            pre_registered: Some(tessera_client::PreRegistered {
                client_id: "tessera-test".into(),
                client_secret: Some("tessera-secret".into()),
                issuer: None,
                private_key: None,
            }),
            authorizer: Arc::new(tessera_client::HeadlessAuthorizer::new().unwrap()),
            store: None,
            client_credentials: true,
            workload_jwt: None,
            enterprise: None,
            dpop: true,
        })
        .build()
        .unwrap();
    let result = client
        .call_tool_raw("whoami", json!({}))
        .await
        .expect("the call goes through with DPoP");
    assert_eq!(
        result["content"][0]["text"], "tessera-test (DPoP)",
        "{result}"
    );
    let again = client.call_tool_raw("whoami", json!({})).await.unwrap();
    assert_eq!(again["content"][0]["text"], "tessera-test (DPoP)");
}

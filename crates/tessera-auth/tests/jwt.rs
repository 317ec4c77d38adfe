//! `JwtVerifier` against an issuer served on loopback (its metadata and its
//! key set over real sockets), with tokens signed by a test Ed25519 key.
//!
//! RFC 9068 §4: "Resource servers MUST verify that the typ header value is
//! at+jwt or application/at+jwt and reject tokens carrying any other value."

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};
use tessera_auth::{JwtVerifier, TokenVerifier};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A test key (PKCS#8 DER, base64), made with `openssl genpkey -algorithm ed25519`.
const PRIVATE_KEY: &str = "MC4CAQAwBQYDK2VwBCIEIMs9mflMH2R/5dB5c6Ed/POf59x3IYzT4Qm8dupSMPys";
/// Its public half, base64url, as a JWK's `x`.
const PUBLIC_X: &str = "8Int1oKKiuF1BQNapN4J2P1viyyMk0eHyejQA28sIbw";
const RESOURCE: &str = "https://mcp.example/mcp";

/// The issuer: its metadata, and its key set after `delay_ms`.
struct Issuer {
    url: String,
    delay_ms: Arc<AtomicU64>,
    key_fetches: Arc<AtomicUsize>,
}

async fn issuer() -> Issuer {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let delay_ms = Arc::new(AtomicU64::new(0));
    let key_fetches = Arc::new(AtomicUsize::new(0));
    let (base, delay, fetches) = (url.clone(), Arc::clone(&delay_ms), Arc::clone(&key_fetches));
    tokio::spawn(async move {
        loop {
            let Ok((mut socket, _)) = listener.accept().await else {
                return;
            };
            let (base, delay, fetches) = (base.clone(), Arc::clone(&delay), Arc::clone(&fetches));
            tokio::spawn(async move {
                let mut request = vec![0u8; 4096];
                let n = socket.read(&mut request).await.unwrap_or(0);
                let head = String::from_utf8_lossy(&request[..n]);
                let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
                let body = if path == "/.well-known/oauth-authorization-server" {
                    json!({"issuer": base, "jwks_uri": format!("{base}/jwks")})
                } else if path == "/jwks" {
                    fetches.fetch_add(1, Ordering::SeqCst);
                    tokio::time::sleep(Duration::from_millis(delay.load(Ordering::SeqCst))).await;
                    json!({"keys": [{"kty": "OKP", "crv": "Ed25519", "x": PUBLIC_X,
                                     "kid": "k1", "alg": "EdDSA", "use": "sig"}]})
                } else {
                    let _ = socket
                        .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n")
                        .await;
                    return;
                };
                let body = body.to_string();
                let answer = format!(
                    "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = socket.write_all(answer.as_bytes()).await;
            });
        }
    });
    Issuer {
        url,
        delay_ms,
        key_fetches,
    }
}

fn token(issuer: &str, typ: Option<&str>, kid: &str, claims: Value) -> String {
    let mut header = Header::new(Algorithm::EdDSA);
    header.typ = typ.map(str::to_owned);
    header.kid = Some(kid.to_owned());
    let mut all = json!({"iss": issuer, "aud": RESOURCE, "exp": now() + 600, "sub": "alice"});
    for (k, v) in claims.as_object().unwrap() {
        all[k] = v.clone();
    }
    let der =
        base64::Engine::decode(&base64::engine::general_purpose::STANDARD, PRIVATE_KEY).unwrap();
    jsonwebtoken::encode(&header, &all, &EncodingKey::from_ed_der(&der)).unwrap()
}

fn now() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

#[tokio::test]
async fn only_access_tokens_naming_a_subject_are_accepted() {
    let issuer = issuer().await;
    let verifier = JwtVerifier::new(&issuer.url, RESOURCE);
    let good = token(&issuer.url, Some("at+jwt"), "k1", json!({}));
    let info = verifier.verify(&good).await.expect("an access token");
    assert_eq!(info.subject, "alice");
    let media_type = token(&issuer.url, Some("application/AT+JWT"), "k1", json!({}));
    assert!(verifier.verify(&media_type).await.is_ok());
    for (what, refused) in [
        ("typ JWT", token(&issuer.url, Some("JWT"), "k1", json!({}))),
        ("no typ", token(&issuer.url, None, "k1", json!({}))),
        (
            "an empty sub",
            token(&issuer.url, Some("at+jwt"), "k1", json!({"sub": ""})),
        ),
        (
            "a sub that is not a string",
            token(&issuer.url, Some("at+jwt"), "k1", json!({"sub": 7})),
        ),
    ] {
        let error = verifier.verify(&refused).await.expect_err(what);
        assert!(
            matches!(error, tessera_auth::TokenError::Invalid(_)),
            "{what}: {error}"
        );
    }
}

/// A token naming an unknown key makes the verifier fetch the key set again;
/// while that fetch is slow, tokens signed with a key it already has are
/// verified at once, not queued behind it.
#[tokio::test]
async fn a_slow_key_fetch_for_an_unknown_key_stalls_no_one_else() {
    let issuer = issuer().await;
    let verifier = Arc::new(
        JwtVerifier::new(&issuer.url, RESOURCE).refetch_interval(Duration::from_millis(100)),
    );
    let good = token(&issuer.url, Some("at+jwt"), "k1", json!({}));
    verifier.verify(&good).await.expect("keys fetched");
    assert_eq!(issuer.key_fetches.load(Ordering::SeqCst), 1);
    // Past the refetch interval, an unknown key makes the verifier fetch again.
    tokio::time::sleep(Duration::from_millis(150)).await;

    issuer.delay_ms.store(3_000, Ordering::SeqCst);
    let unknown = token(&issuer.url, Some("at+jwt"), "k2", json!({}));
    let slow = {
        let verifier = Arc::clone(&verifier);
        tokio::spawn(async move { verifier.verify(&unknown).await })
    };
    // Let the slow fetch start (at most 5 s).
    for _ in 0..500 {
        if issuer.key_fetches.load(Ordering::SeqCst) >= 2 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(
        issuer.key_fetches.load(Ordering::SeqCst),
        2,
        "the refetch started"
    );
    let started = Instant::now();
    verifier.verify(&good).await.expect("a known key");
    assert!(
        started.elapsed() < Duration::from_millis(1_000),
        "a known key waited {:?} behind a fetch",
        started.elapsed()
    );
    assert!(!slow.is_finished(), "the fetch is still running");
    let error = slow.await.unwrap().expect_err("k2 is not published");
    assert!(error.to_string().contains("k2"), "{error}");
}

//! Sends arbitrary `Authorization: DPoP` tokens and `DPoP` proof headers to
//! a resource taking DPoP (with nonces): it never panics, and never lets a
//! request through, since no input can carry a valid signature of the key
//! its token is bound to.
//!
//! Input: the token, a NUL byte, then proofs separated by NUL bytes.
//!
//! Run with `cargo +nightly fuzz run dpop_proof` from the repository root.

#![no_main]

use std::sync::{Arc, OnceLock};

use libfuzzer_sys::fuzz_target;
use tessera_auth::{Dpop, OAuthResource, TokenError, TokenVerifier};
use tessera_http::{AuthDecision, Authenticate};
use tessera_server::{AuthInfo, BoxFuture};

/// Takes every token, bound to a key no proof here can be signed with.
struct EveryToken;

impl TokenVerifier for EveryToken {
    fn verify<'a>(&'a self, _token: &'a str) -> BoxFuture<'a, Result<AuthInfo, TokenError>> {
        Box::pin(async {
            Ok(AuthInfo {
                issuer: "https://as.example".into(),
                subject: "someone".into(),
                bound_key: Some("0ZcOCORZNYy-DWpqq30jZyJGHTN0d2HglBV3uiguA4I".into()),
                ..AuthInfo::default()
            })
        })
    }
}

fn resource() -> &'static OAuthResource {
    static RESOURCE: OnceLock<OAuthResource> = OnceLock::new();
    RESOURCE.get_or_init(|| {
        OAuthResource::new(
            "https://mcp.example/mcp",
            "https://as.example",
            Arc::new(EveryToken),
        )
        .dpop(Dpop::new().nonces([5; 32], std::time::Duration::from_secs(60)))
    })
}

fuzz_target!(|data: &[u8]| {
    let mut parts = data.split(|b| *b == 0);
    let token = parts.next().unwrap_or_default();
    let mut request = http::Request::post("https://mcp.example/mcp");
    let mut authorization = b"DPoP ".to_vec();
    authorization.extend_from_slice(token);
    let Ok(value) = http::HeaderValue::from_bytes(&authorization) else {
        return;
    };
    request = request.header(http::header::AUTHORIZATION, value);
    for proof in parts {
        let Ok(value) = http::HeaderValue::from_bytes(proof) else {
            return;
        };
        request = request.header("dpop", value);
    }
    let Ok(request) = request.body(()) else {
        return;
    };
    let (head, ()) = request.into_parts();
    let decision = tokio::runtime::Builder::new_current_thread()
        .build()
        .expect("a runtime")
        .block_on(resource().authenticate(&head));
    assert!(
        matches!(decision, AuthDecision::Challenge { .. }),
        "a request without a valid proof got through"
    );
});

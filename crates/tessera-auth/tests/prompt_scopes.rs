//! Scopes on prompts and resources over HTTP, with JWTs from a real
//! authorization server (oidc-provider): a token without the scope gets 403
//! with `WWW-Authenticate: Bearer error="insufficient_scope"` naming it (RFC
//! 6750 §3.1, so the client can step up); a token with it is served.

use std::sync::Arc;

use serde_json::json;
use tessera_auth::{JwtVerifier, OAuthResource};
use tessera_http::{EndpointOptions, McpEndpoint};
use tessera_server::{Context, McpServer, PromptDef, ResourceDef};
use test_harness::{OidcProvider, client_credentials_token, mcp_post};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Topic {
    topic: String,
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_prompt_refuses_a_token_without_its_scope() {
    let oidc = tokio::task::spawn_blocking(OidcProvider::start)
        .await
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = McpServer::builder("scoped-prompts", "1.0.0")
        .prompt(
            PromptDef::new("draft", |_: Context, t: Topic| async move {
                format!("Write about {}", t.topic)
            })
            .scopes(["counter:write"]),
        )
        .resource(
            ResourceDef::new("notes://all", "all", |_: Context| async {
                "all notes".to_owned()
            })
            .scopes(["counter:write"]),
        )
        .build()
        .unwrap();
    let protected = OAuthResource::new(
        url.clone(),
        oidc.issuer.clone(),
        Arc::new(JwtVerifier::new(oidc.issuer.clone(), url.clone())),
    )
    .scopes_supported(["mcp:read", "counter:write"]);
    let options = protected.protect(EndpointOptions::default());
    tokio::spawn(tessera_http::serve(
        listener,
        McpEndpoint::new(Arc::new(server), options),
        std::future::pending(),
    ));

    let http = reqwest::Client::new();
    let reader = client_credentials_token(&oidc.issuer, "tessera-test", &url, "mcp:read").await;
    let writer =
        client_credentials_token(&oidc.issuer, "tessera-test", &url, "counter:write").await;
    let draft = json!({"name": "draft", "arguments": {"topic": "tickets"}});
    let all = json!({"uri": "notes://all"});
    for (method, params) in [("prompts/get", &draft), ("resources/read", &all)] {
        let r = mcp_post(&http, &url, Some(&reader), 1, method, params.clone()).await;
        assert_eq!(r.status, 403, "{method}: {}", r.body);
        let challenge = r.header("www-authenticate");
        assert!(
            challenge.starts_with("Bearer error=\"insufficient_scope\", scope=\"counter:write\""),
            "{method}: {challenge}"
        );
        assert!(challenge.contains("resource_metadata="), "{challenge}");
        let r = mcp_post(&http, &url, Some(&writer), 2, method, params.clone()).await;
        assert_eq!(r.status, 200, "{method}: {}", r.body);
    }
    let r = mcp_post(&http, &url, Some(&writer), 3, "prompts/get", draft).await;
    assert_eq!(
        r.body["result"]["messages"][0]["content"]["text"],
        "Write about tickets"
    );
}

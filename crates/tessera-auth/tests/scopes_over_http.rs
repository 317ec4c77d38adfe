//! Scopes on prompts and resources over HTTP, with JWTs from a real
//! authorization server (oidc-provider): a token without the scope gets 403
//! with `WWW-Authenticate: Bearer error="insufficient_scope"` naming it (RFC
//! 6750 §3.1, so the client can step up); a token with it is served. With
//! the `ShowPermitted` filter instead, a token is shown only what it may use.

use std::sync::Arc;

use serde_json::json;
use tessera_auth::{JwtVerifier, OAuthResource};
use tessera_http::{EndpointOptions, McpEndpoint};
use tessera_server::{Context, McpServer, PromptDef, ResourceDef, ShowPermitted, ToolDef};
use test_harness::{OidcProvider, client_credentials_token, mcp_post};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Topic {
    topic: String,
}

/// Serves `server` behind JWTs from `oidc`; its URL.
async fn serve(oidc: &OidcProvider, server: McpServer) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
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
    url
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_scoped_prompt_refuses_a_token_without_its_scope() {
    let oidc = tokio::task::spawn_blocking(OidcProvider::start)
        .await
        .unwrap();
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
    let url = serve(&oidc, server).await;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_permitted_hides_a_tool_from_one_token_and_shows_it_to_another() {
    let oidc = tokio::task::spawn_blocking(OidcProvider::start)
        .await
        .unwrap();
    let server = McpServer::builder("filtered", "1.0.0")
        .tool(ToolDef::new("peek", |_: Context, _: ()| async { "peeked" }))
        .tool(
            ToolDef::new("bump", |_: Context, _: ()| async { "bumped" }).scopes(["counter:write"]),
        )
        .visibility(ShowPermitted)
        .build()
        .unwrap();
    let url = serve(&oidc, server).await;
    let http = reqwest::Client::new();
    let reader = client_credentials_token(&oidc.issuer, "tessera-test", &url, "mcp:read").await;
    let writer =
        client_credentials_token(&oidc.issuer, "tessera-test", &url, "counter:write").await;
    let names = |body: &serde_json::Value| -> Vec<String> {
        body["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let r = mcp_post(&http, &url, Some(&reader), 1, "tools/list", json!({})).await;
    assert_eq!(names(&r.body), ["peek"]);
    let r = mcp_post(&http, &url, Some(&writer), 2, "tools/list", json!({})).await;
    assert_eq!(names(&r.body), ["peek", "bump"]);

    // Hidden is absent: "Tool … not found", not a 403 challenge that would reveal it.
    let bump = json!({"name": "bump", "arguments": {}});
    let r = mcp_post(&http, &url, Some(&reader), 3, "tools/call", bump.clone()).await;
    assert!(
        r.header("www-authenticate").is_empty(),
        "{}",
        r.header("www-authenticate")
    );
    assert_eq!(r.body["error"]["code"], -32602, "{}", r.body);
    assert_eq!(r.body["error"]["message"], "Tool bump not found");
    let r = mcp_post(&http, &url, Some(&writer), 4, "tools/call", bump).await;
    assert_eq!(
        r.body["result"]["content"][0]["text"], "bumped",
        "{}",
        r.body
    );
}

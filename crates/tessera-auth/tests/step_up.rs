//! A protected server and Tessera's client against a real authorization
//! server (oidc-provider): the client signs in through the authorization code
//! flow (PKCE, dynamic registration, resource indicators), is refused a tool
//! whose scope its token lacks (403 insufficient_scope), steps up, and
//! completes the call.

use std::process::Command;
use std::sync::Arc;

use serde_json::json;
use tessera_auth::{JwtVerifier, OAuthResource};
use tessera_client::{Authorizer, BoxFuture, ClientError, McpClient, OAuthConfig};
use tessera_http::{EndpointOptions, McpEndpoint};
use tessera_server::{Context, McpServer, ToolDef};
use test_harness::{OidcProvider, TempDir};

/// A "browser": curl following the authorization server's redirects (with
/// cookies) up to the redirect URI, which it reports without loading.
struct Curl {
    jar: std::path::PathBuf,
}

impl Authorizer for Curl {
    fn authorize<'a>(
        &'a self,
        url: &'a str,
        redirect_uri: &'a str,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        Box::pin(async move {
            let mut next = url.to_owned();
            for _ in 0..10 {
                let out = Command::new("curl")
                    .args(["-s", "-o", "/dev/null", "-w", "%{redirect_url}", "-c"])
                    .arg(&self.jar)
                    .arg("-b")
                    .arg(&self.jar)
                    .arg(&next)
                    .output()
                    .map_err(|e| ClientError::Auth(format!("curl: {e}")))?;
                let location = String::from_utf8_lossy(&out.stdout).trim().to_owned();
                if location.starts_with(redirect_uri) {
                    return Ok(location);
                }
                if location.is_empty() {
                    break;
                }
                next = location;
            }
            Err(ClientError::Auth(format!(
                "the authorization server never redirected to {redirect_uri}"
            )))
        })
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sign_in_refused_for_a_scope_then_step_up() {
    let oidc = OidcProvider::start();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let server = McpServer::builder("scoped", "1.0.0")
        .tool(ToolDef::new("read", |_: Context, _: ()| async { "read" }))
        .tool(
            ToolDef::new("write", |ctx: Context, _: ()| async move {
                let auth = ctx.auth().cloned().unwrap_or_default();
                format!("written by {} with {}", auth.subject, auth.scopes.join(" "))
            })
            .scopes(["counter:write"]),
        )
        .build()
        .unwrap();
    // Only reading is advertised: the first sign-in asks for that, so the write tool must step up.
    let protected = OAuthResource::new(
        url.clone(),
        oidc.issuer.clone(),
        Arc::new(JwtVerifier::new(oidc.issuer.clone(), url.clone())),
    )
    .scopes_supported(["mcp:read"]);
    let options = EndpointOptions::default()
        .protected_resource(protected.metadata())
        .authenticate(protected);
    tokio::spawn(tessera_http::serve(
        listener,
        McpEndpoint::new(Arc::new(server), options),
        std::future::pending(),
    ));

    let dir = TempDir::new("step-up");
    let client = McpClient::builder(&url)
        .oauth(OAuthConfig {
            redirect_uri: "http://127.0.0.1:9/callback".into(),
            client_name: "step-up-test".into(),
            client_metadata_url: None,
            pre_registered: None,
            authorizer: Arc::new(Curl {
                jar: dir.0.join("cookies"),
            }),
            store: None,
            client_credentials: false,
            workload_jwt: None,
            enterprise: None,
            dpop: true,
        })
        .build()
        .unwrap();
    let read = client.call_tool("read", json!({})).await.unwrap();
    assert_eq!(
        serde_json::to_value(&read.content[0]).unwrap()["text"],
        "read"
    );
    let written = client.call_tool("write", json!({})).await.unwrap();
    assert_eq!(
        serde_json::to_value(&written.content[0]).unwrap()["text"],
        "written by alice with mcp:read counter:write"
    );
}

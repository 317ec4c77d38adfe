//! Issue #27, finding 6: a challenge's `resource_metadata` on another origin
//! is never fetched (a server could otherwise send the client anywhere, an
//! internal address, before anyone was asked); the client looks on the
//! server's own origin instead, and says what it did not fetch. Over real
//! sockets: the other origin is a listener that counts connections.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tessera_client::{Authorizer, BoxFuture, ClientError, McpClient, OAuthConfig};
use tessera_http::{AuthDecision, Authenticate, EndpointOptions, McpEndpoint};
use tessera_server::{Context, McpServer, ToolDef};

/// Challenges every request, pointing at metadata on `elsewhere`.
struct PointsElsewhere(String);

impl Authenticate for PointsElsewhere {
    fn authenticate<'a>(&'a self, _: &'a http::request::Parts) -> BoxFuture<'a, AuthDecision> {
        Box::pin(async move {
            AuthDecision::Challenge {
                reason: "sign in".into(),
                www_authenticate: format!("Bearer resource_metadata=\"{}\"", self.0),
                headers: Vec::new(),
            }
        })
    }
}

/// Never reached: nothing gets as far as authorization.
struct NoOne;

impl Authorizer for NoOne {
    fn authorize<'a>(
        &'a self,
        _: &'a str,
        _: &'a str,
    ) -> BoxFuture<'a, Result<String, ClientError>> {
        Box::pin(async { Err(ClientError::Auth("nobody to ask".into())) })
    }
}

#[tokio::test]
async fn resource_metadata_on_another_origin_is_not_fetched() {
    // The other origin: counts every connection made to it.
    let other = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let elsewhere = format!(
        "http://{}/.well-known/oauth-protected-resource",
        other.local_addr().unwrap()
    );
    let reached = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&reached);
    tokio::spawn(async move {
        while let Ok((_stream, _)) = other.accept().await {
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    let server = McpServer::builder("protected", "1.0.0")
        .tool(ToolDef::new("read", |_: Context, _: ()| async { "read" }))
        .build()
        .unwrap();
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}/mcp", listener.local_addr().unwrap());
    let options = EndpointOptions::default().authenticate(PointsElsewhere(elsewhere.clone()));
    tokio::spawn(tessera_http::serve(
        listener,
        McpEndpoint::new(Arc::new(server), options),
        std::future::pending(),
    ));
    let client = McpClient::builder(&url)
        .oauth(OAuthConfig {
            redirect_uri: "http://127.0.0.1:9/callback".into(),
            client_name: "origin-test".into(),
            client_metadata_url: None,
            pre_registered: None,
            authorizer: Arc::new(NoOne),
            store: None,
            client_credentials: false,
            workload_jwt: None,
            enterprise: None,
            dpop: true,
        })
        .timeout(Duration::from_secs(5))
        .build()
        .unwrap();
    let refused = client.list_tools().await.unwrap_err().to_string();
    assert!(
        refused.contains("is not on the server's origin and was not fetched"),
        "{refused}"
    );
    assert!(refused.contains(&elsewhere), "{refused}");
    assert!(
        refused.contains("/.well-known/oauth-protected-resource/mcp"),
        "looked on the server's origin: {refused}"
    );
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert_eq!(
        reached.load(Ordering::SeqCst),
        0,
        "the other origin was never contacted"
    );
}

//! What a verified access token gives handlers, and per-tool scopes.

use serde_json::{Value, json};
use tessera_protocol::JsonRpcRequest;
use tessera_server::{Context, McpServer, RequestFacts, ToolDef};

#[tokio::test]
async fn handlers_see_the_verified_token_and_tool_scopes_are_enforced() {
    use tessera_server::AuthInfo;
    let server = McpServer::builder("auth-test", "1.0.0")
        .tool(ToolDef::new("whoami", |ctx: Context, _: ()| async move {
            let auth = ctx.auth().cloned().unwrap_or_default();
            format!(
                "{} {} {:?}",
                auth.subject,
                auth.scopes.join(","),
                auth.client_id
            )
        }))
        .tool(
            ToolDef::new("write", |_: Context, _: ()| async { "written" }).scopes(["notes:write"]),
        )
        .build()
        .unwrap();
    let call = |name: &str| -> JsonRpcRequest<Value> {
        serde_json::from_value(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": {}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {}}}}))
        .unwrap()
    };
    let auth = AuthInfo {
        issuer: "https://as.example".into(),
        subject: "alice".into(),
        scopes: vec!["notes:read".into()],
        client_id: Some("cli".into()),
    };
    let facts = RequestFacts::modern().with_auth(auth.clone());
    assert_eq!(facts.principal.as_deref(), Some("https://as.example alice"));
    let r = server.handle(call("whoami"), facts.clone()).await.to_json();
    assert_eq!(
        r["result"]["content"][0]["text"],
        "alice notes:read Some(\"cli\")"
    );
    let r = server.handle(call("write"), facts).await.to_json();
    assert_eq!(r["error"]["code"], -32000, "{r}");
    assert!(
        r["error"]["message"]
            .as_str()
            .unwrap()
            .contains("notes:write")
    );
    let granted = AuthInfo {
        scopes: vec!["notes:write".into()],
        ..auth
    };
    let r = server
        .handle(call("write"), RequestFacts::modern().with_auth(granted))
        .await
        .to_json();
    assert_eq!(r["result"]["content"][0]["text"], "written");
}

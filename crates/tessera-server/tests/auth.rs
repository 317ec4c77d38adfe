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
        bound_key: None,
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

/// Prompts, resources, templates and completions are gated like tools; a
/// scope hierarchy covers what is below a granted scope.
#[tokio::test]
async fn prompts_resources_and_completions_need_their_scopes() {
    use tessera_server::{AuthInfo, PrefixScopes, PromptDef, ResourceDef, ResourceTemplateDef};

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Topic {
        topic: String,
    }
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Id {
        id: String,
    }
    let build = |hierarchy: bool| {
        let builder = McpServer::builder("scoped", "1.0.0");
        let builder = if hierarchy {
            builder.scope_match(PrefixScopes::new(':'))
        } else {
            builder
        };
        builder
            .prompt(
                PromptDef::new("draft", |_: Context, t: Topic| async move {
                    format!("Write about {}", t.topic)
                })
                .complete(
                    "topic",
                    |_: Context, _: tessera_server::PartialArgument| async {
                        vec!["rust".to_owned()]
                    },
                )
                .scopes(["notes:write"]),
            )
            .resource(
                ResourceDef::new("notes://all", "all", |_: Context| async {
                    "all notes".to_owned()
                })
                .scopes(["notes:read"]),
            )
            .resource_template(
                ResourceTemplateDef::new(
                    "notes://note/{id}",
                    "note",
                    |_: Context, n: Id| async move { format!("note {}", n.id) },
                )
                .scopes(["notes:read"]),
            )
            .build()
            .unwrap()
    };
    let request = |method: &str, params: Value| -> JsonRpcRequest<Value> {
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}});
        serde_json::from_value(
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params}),
        )
        .unwrap()
    };
    let calls = [
        (
            "prompts/get",
            json!({"name": "draft", "arguments": {"topic": "x"}}),
            "prompt draft",
            "notes:write",
        ),
        (
            "resources/read",
            json!({"uri": "notes://all"}),
            "resource notes://all",
            "notes:read",
        ),
        (
            "resources/read",
            json!({"uri": "notes://note/7"}),
            "resource notes://note/7",
            "notes:read",
        ),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "draft"}, "argument": {"name": "topic", "value": "r"}}),
            "prompt draft",
            "notes:write",
        ),
    ];
    let facts = |scopes: &[&str]| {
        RequestFacts::modern().with_auth(AuthInfo {
            issuer: "https://as.example".into(),
            subject: "alice".into(),
            scopes: scopes.iter().map(|s| (*s).to_owned()).collect(),
            client_id: None,
            bound_key: None,
        })
    };
    let exact = build(false);
    for (method, params, target, scope) in &calls {
        let r = exact
            .handle(request(method, params.clone()), facts(&["mcp:read"]))
            .await
            .to_json();
        assert_eq!(r["error"]["code"], -32000, "{method}: {r}");
        assert_eq!(
            r["error"]["message"],
            format!(
                "Forbidden: {target} needs scope \"{scope}\", which the access token does not grant"
            ),
        );
        let r = exact
            .handle(request(method, params.clone()), facts(&[scope]))
            .await
            .to_json();
        assert!(r["result"].is_object(), "{method} with {scope}: {r}");
        // Exact match by default: a broader scope does not cover it.
        let r = exact
            .handle(request(method, params.clone()), facts(&["notes"]))
            .await
            .to_json();
        assert_eq!(r["error"]["code"], -32000, "{method}: {r}");
        // No verified token (stdio, an unprotected server): nothing to check.
        let r = exact
            .handle(request(method, params.clone()), RequestFacts::modern())
            .await
            .to_json();
        assert!(r["result"].is_object(), "{method} without auth: {r}");
    }
    let hierarchy = build(true);
    for (method, params, _, _) in &calls {
        let r = hierarchy
            .handle(request(method, params.clone()), facts(&["notes"]))
            .await
            .to_json();
        assert!(r["result"].is_object(), "{method} under notes: {r}");
        let r = hierarchy
            .handle(request(method, params.clone()), facts(&["notesy"]))
            .await
            .to_json();
        assert_eq!(r["error"]["code"], -32000, "{method} under notesy: {r}");
    }
}

//! `completion/complete`: one handler per prompt argument and per resource-template
//! variable, seeing the request's context and the arguments already filled.

use serde_json::{Value, json};
use tessera_protocol::{JsonRpcRequest, RequestId};
use tessera_server::{
    Context, McpServer, PartialArgument, PromptDef, RequestFacts, ResourceTemplateDef,
    TemplateVariables,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Review {
    language: String,
    framework: Option<String>,
    style: Option<String>,
}

fn server() -> McpServer {
    McpServer::builder("complete", "1")
        .prompt(
            PromptDef::new("review", |_ctx: Context, args: Review| async move {
                format!("{} {:?} {:?}", args.language, args.framework, args.style)
            })
            .complete(
                "language",
                |ctx: Context, typed: PartialArgument| async move {
                    // The handler sees who asks.
                    let mut offered = typed.matching(["python", "rust", "ruby"]);
                    if ctx.principal() == Some("alice") {
                        offered.push("alice's own".into());
                    }
                    offered
                },
            )
            .complete(
                "framework",
                |_ctx: Context, typed: PartialArgument| async move {
                    // ... and the arguments already filled.
                    match typed.filled.get("language").map(String::as_str) {
                        Some("python") => typed.matching(["django", "flask"]),
                        Some("rust") => typed.matching(["axum", "actix"]),
                        _ => Vec::new(),
                    }
                },
            ),
        )
        .resource_template(
            ResourceTemplateDef::new(
                "repo://{owner}/{name}",
                "repository",
                |_ctx: Context, vars: TemplateVariables| async move { format!("{vars:?}") },
            )
            .complete("name", |_ctx: Context, typed: PartialArgument| async move {
                let owner = typed.filled.get("owner").cloned().unwrap_or_default();
                (0..150)
                    .map(|i| format!("{owner}-{}{i}", typed.value))
                    .collect::<Vec<_>>()
            }),
        )
        .build()
        .unwrap()
}

async fn complete(server: &McpServer, params: Value, facts: RequestFacts) -> Value {
    let request = JsonRpcRequest::new(
        RequestId::from(7),
        "completion/complete",
        Some(with_meta(params)),
    );
    server.handle(request, facts).await.to_json()
}

fn prompt_ref(argument: &str, value: &str) -> Value {
    json!({"ref": {"type": "ref/prompt", "name": "review"},
           "argument": {"name": argument, "value": value}})
}

#[tokio::test]
async fn each_argument_has_its_own_handler_with_the_request_context() {
    let server = server();
    let r = complete(&server, prompt_ref("language", "r"), RequestFacts::modern()).await;
    assert_eq!(
        r["result"]["completion"],
        json!({"values": ["rust", "ruby"], "total": 2, "hasMore": false})
    );
    let alice = RequestFacts::modern().with_principal("alice");
    let r = complete(&server, prompt_ref("language", "zz"), alice).await;
    assert_eq!(r["result"]["completion"]["values"], json!(["alice's own"]));
}

#[tokio::test]
async fn filled_arguments_reach_the_handler() {
    let server = server();
    let mut params = prompt_ref("framework", "");
    params["context"] = json!({"arguments": {"language": "rust"}});
    let r = complete(&server, params, RequestFacts::modern()).await;
    assert_eq!(
        r["result"]["completion"]["values"],
        json!(["axum", "actix"])
    );
    let r = complete(&server, prompt_ref("framework", ""), RequestFacts::modern()).await;
    assert_eq!(r["result"]["completion"]["values"], json!([]));
}

#[tokio::test]
async fn template_variables_complete_and_at_most_100_values_are_sent() {
    let server = server();
    let params = json!({"ref": {"type": "ref/resource", "uri": "repo://{owner}/{name}"},
        "argument": {"name": "name", "value": "t"},
        "context": {"arguments": {"owner": "tessera"}}});
    let r = complete(&server, params, RequestFacts::modern()).await;
    let completion = &r["result"]["completion"];
    assert_eq!(completion["values"].as_array().unwrap().len(), 100);
    assert_eq!(completion["values"][0], "tessera-t0");
    assert_eq!(completion["hasMore"], true);
    assert_eq!(completion["total"], 150);
}

#[tokio::test]
async fn unknown_targets_are_invalid_params_and_a_declared_argument_without_handler_gets_nothing() {
    let server = server();
    let r = complete(&server, prompt_ref("style", "x"), RequestFacts::modern()).await;
    assert_eq!(r["result"]["completion"]["values"], json!([]));
    for (params, says) in [
        (
            json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}),
            "Prompt nope not found",
        ),
        (
            prompt_ref("colour", ""),
            "review has no argument named \"colour\"",
        ),
        (
            json!({"ref": {"type": "ref/resource", "uri": "repo://{x}"}, "argument": {"name": "x", "value": ""}}),
            "Resource template repo://{x} not found",
        ),
        (
            json!({"ref": {"type": "ref/prompt"}}),
            "Invalid completion/complete params",
        ),
    ] {
        let r = complete(&server, params, RequestFacts::modern()).await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        let message = r["error"]["message"].as_str().unwrap();
        assert!(message.contains(says), "{message}");
    }
}

async fn discover(server: &McpServer) -> Value {
    let request = JsonRpcRequest::new(
        RequestId::from(1),
        "server/discover",
        Some(with_meta(json!({}))),
    );
    server
        .handle(request, RequestFacts::modern())
        .await
        .to_json()
}

#[tokio::test]
async fn the_capability_follows_the_handlers() {
    let with = server();
    assert_eq!(
        discover(&with).await["result"]["capabilities"]["completions"],
        json!({})
    );
    let without = McpServer::builder("plain", "1")
        .prompt(PromptDef::new("p", |_ctx: Context, _a: ()| async {
            "x".to_owned()
        }))
        .build()
        .unwrap();
    assert!(
        discover(&without).await["result"]["capabilities"]
            .get("completions")
            .is_none()
    );
    let r = complete(&without, prompt_ref("a", ""), RequestFacts::modern()).await;
    assert_eq!(r["error"]["code"], -32601);
}

#[test]
fn completing_what_is_not_declared_fails_the_build() {
    let prompt = McpServer::builder("b", "1")
        .prompt(
            PromptDef::new("p", |_ctx: Context, _a: ()| async { "x".to_owned() })
                .complete("ghost", |_ctx: Context, _t: PartialArgument| async {
                    Vec::<String>::new()
                }),
        )
        .build()
        .err()
        .unwrap();
    assert!(
        prompt
            .to_string()
            .contains("prompt \"p\" completes the argument \"ghost\", which it does not declare")
    );
    let template = McpServer::builder("b", "1")
        .resource_template(
            ResourceTemplateDef::new(
                "repo://{owner}",
                "r",
                |_ctx: Context, _v: TemplateVariables| async { "x".to_owned() },
            )
            .complete("name", |_ctx: Context, _t: PartialArgument| async {
                Vec::<String>::new()
            }),
        )
        .build()
        .err()
        .unwrap();
    assert!(
        template
            .to_string()
            .contains("completes the variable \"name\"")
    );
}

/// The envelope every 2026-07-28 request carries.
fn with_meta(mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}});
    params
}

//! structuredContent is checked against the tool's outputSchema before it
//! leaves the server. Spec (server/tools.mdx, Output Schema): "Servers MUST
//! provide structured results that conform to this schema."

use serde_json::{Value, json};
use tessera_protocol::{CallToolResult, JsonRpcRequest, RequestId};
use tessera_server::{Context, Json, McpServer, RequestFacts, ToolDef};

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    total: f64,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Go {
    go: bool,
}
impl tessera_server::Form for Go {
    const KEY: &'static str = "go";
}

fn server() -> McpServer {
    let schema = json!({
        "type": "object",
        "properties": {
            "items": { "type": "array", "items": { "type": "object",
                "properties": { "price": { "type": "number" } }, "required": ["price"] } }
        },
        "required": ["items"]
    });
    McpServer::builder("output", "1")
        .tool(
            ToolDef::new("declared", |_ctx: Context, args: Value| async move {
                let mut result = CallToolResult::structured(args["give"].clone());
                if args["error"] == true {
                    result.is_error = Some(true);
                }
                if args["text_only"] == true {
                    result = CallToolResult::text("no structure");
                }
                result
            })
            .output_schema(schema.as_object().unwrap().clone()),
        )
        .tool(ToolDef::new("typed", |_ctx: Context, _a: ()| async {
            Json(Sum { total: 3.0 })
        }))
        .tool(ToolDef::new("asks", |ctx: Context, _a: ()| async move {
            let Go { go } = ctx.ask("Go?")?;
            Ok::<_, tessera_server::HandlerError>(Json(Sum {
                total: if go { 1.0 } else { 0.0 },
            }))
        }))
        .request_state(tessera_state::RequestStateCodec::new(
            tessera_state::KeyRing::new("k1", tessera_state::StateKey::generate().unwrap())
                .unwrap(),
        ))
        .build()
        .unwrap()
}

async fn call(server: &McpServer, name: &str, arguments: Value) -> Value {
    let request = JsonRpcRequest::new(
        RequestId::from(1),
        "tools/call",
        Some(with_meta(json!({ "name": name, "arguments": arguments }))),
    );
    server
        .handle(request, RequestFacts::modern())
        .await
        .to_json()
}

#[tokio::test]
async fn conforming_structured_content_is_sent() {
    let server = server();
    let response = call(
        &server,
        "declared",
        json!({"give": {"items": [{"price": 1}, {"price": 2.5}]}}),
    )
    .await;
    assert_eq!(
        response["result"]["structuredContent"]["items"][1]["price"],
        2.5
    );
    let typed = call(&server, "typed", json!({})).await;
    assert_eq!(typed["result"]["structuredContent"]["total"], 3.0);
}

#[tokio::test]
async fn a_mismatch_is_an_internal_error_naming_the_field() {
    let server = server();
    let response = call(
        &server,
        "declared",
        json!({"give": {"items": [{"price": 1}, {"price": "2"}]}}),
    )
    .await;
    assert!(response.get("result").is_none(), "{response}");
    assert_eq!(response["error"]["code"], -32603);
    let message = response["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("tool declared")
            && message.contains("/items/1/price")
            && message.contains("\"2\" is not of type \"number\""),
        "{message}"
    );
    let missing = call(&server, "declared", json!({"give": {}})).await;
    assert!(
        missing["error"]["message"]
            .as_str()
            .unwrap()
            .contains("\"items\" is a required property"),
        "{missing}"
    );
}

#[tokio::test]
async fn a_result_without_structured_content_is_refused_but_an_error_result_passes() {
    let server = server();
    let bare = call(&server, "declared", json!({"text_only": true})).await;
    assert_eq!(bare["error"]["code"], -32603);
    assert!(
        bare["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no structuredContent")
    );
    // "isError: true" results report a failure; they need not conform.
    let failed = call(
        &server,
        "declared",
        json!({"error": true, "give": {"x": 1}}),
    )
    .await;
    assert_eq!(failed["result"]["isError"], true, "{failed}");
}

#[tokio::test]
async fn a_refusal_of_a_tool_with_an_output_schema_is_an_error_result() {
    // A declined question leaves no structured result to give: the text says
    // what happened and isError keeps the result from posing as a conforming one.
    let server = server();
    let first = call(&server, "asks", json!({})).await;
    assert_eq!(first["result"]["resultType"], "input_required", "{first}");
    let ticket = first["result"]["requestState"].clone();
    let request = JsonRpcRequest::new(
        RequestId::from(2),
        "tools/call",
        Some(with_meta(
            json!({"name": "asks", "arguments": {}, "requestState": ticket,
            "inputResponses": {"go": {"action": "decline"}}}),
        )),
    );
    let declined = server
        .handle(request, RequestFacts::modern())
        .await
        .to_json();
    assert_eq!(declined["result"]["isError"], true, "{declined}");
    assert!(declined["result"].get("structuredContent").is_none());
}

#[test]
fn schemas_that_cannot_be_checked_are_refused_at_build() {
    for (schema, says) in [
        (json!({"type": "array"}), "type \"object\""),
        (
            json!({"type": "object", "properties": {"a": {"minimum": "one"}}}),
            "cannot be checked",
        ),
        (
            json!({"type": "object", "properties": {"a": {"$ref": "#/$defs/None"}}}),
            "'/$defs/None' does not exist",
        ),
    ] {
        let error = McpServer::builder("output", "1")
            .tool(
                ToolDef::new("t", |_ctx: Context, _a: ()| async { "x" })
                    .output_schema(schema.as_object().unwrap().clone()),
            )
            .build()
            .err()
            .unwrap()
            .to_string();
        assert!(
            error.contains("tool \"t\"") && error.contains(says),
            "{error}"
        );
    }
}

/// The envelope every 2026-07-28 request carries.
fn with_meta(mut params: Value) -> Value {
    params["_meta"] = json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}});
    params
}

//! Behaviours the official MCP conformance suite checks beyond the flows of
//! `mrtr.rs`: answers given up front to a declared form, and the
//! resource-not-found error naming its URI. Every response is checked
//! against the 2026-07-28 schema.

use serde::Deserialize;
use serde_json::{Value, json};
use tessera_protocol::JsonRpcRequest;
use tessera_server::{
    Context, Form, Interrupt, McpServer, RequestFacts, ResourceDef, ResourceTemplateDef, Result,
    TemplateVariables, ToolDef,
};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};

#[derive(Deserialize, schemars::JsonSchema)]
struct Empty {}

#[derive(Deserialize, schemars::JsonSchema)]
struct UserName {
    name: String,
}
impl Form for UserName {
    const KEY: &'static str = "user_name";
}

async fn greet(ctx: Context, _args: Empty) -> Result<String> {
    match ctx.ask::<UserName>("What is your name?") {
        Ok(UserName { name }) => Ok(format!("Hello, {name}!")),
        Err(Interrupt::Declined { .. } | Interrupt::Cancelled { .. }) => Ok("No name.".into()),
        Err(other) => Err(other.into()),
    }
}

fn server() -> McpServer {
    let key = StateKey::generate().unwrap();
    let codec = RequestStateCodec::new(KeyRing::new("k1", key).unwrap());
    McpServer::builder("conformance", "1")
        .request_state(codec)
        .tool(ToolDef::new("greet_up_front", greet).accepts_upfront::<UserName>())
        .tool(ToolDef::new("greet_asked_only", greet))
        .resource(
            ResourceDef::new("test://static", "static", |_ctx: Context| async {
                "x".to_owned()
            })
            .mime_type("text/plain"),
        )
        .resource_template(
            ResourceTemplateDef::new(
                "test://t/{id}",
                "t",
                |_ctx: Context, _vars: TemplateVariables| async { "x".to_owned() },
            )
            .mime_type("text/plain"),
        )
        .build()
        .unwrap()
}

struct Harness {
    server: McpServer,
    next_id: i64,
    validator: jsonschema::Validator,
}

impl Harness {
    fn new() -> Self {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../spec/2026-07-28/schema.json"),
        )
        .unwrap();
        let mut schema: Value = serde_json::from_str(&text).unwrap();
        schema["$ref"] = json!("#/$defs/JSONRPCResponse");
        Self {
            server: server(),
            next_id: 1,
            validator: jsonschema::validator_for(&schema).unwrap(),
        }
    }

    async fn send(&mut self, method: &str, mut params: Value) -> Value {
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
        });
        let request = JsonRpcRequest {
            jsonrpc: Default::default(),
            id: self.next_id.into(),
            method: method.into(),
            params: Some(params),
        };
        self.next_id += 1;
        let response = self
            .server
            .handle(request, RequestFacts::modern())
            .await
            .to_json();
        let errors: Vec<String> = self
            .validator
            .iter_errors(&response)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{response}\n{errors:?}");
        response
    }
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[tokio::test]
async fn an_expected_form_may_be_answered_without_a_ticket() {
    let mut h = Harness::new();
    let call = |tool: &str, responses: Value| json!({"name": tool, "arguments": {}, "inputResponses": responses});
    // Answered up front, with unknown keys beside it: read, checked, complete.
    let r = h
        .send(
            "tools/call",
            call(
                "greet_up_front",
                json!({"user_name": accept(json!({"name": "Alice"})), "unknown_extra_key": accept(json!({"foo": "bar"}))}),
            ),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "Hello, Alice!");
    // A tool that did not declare the form ignores the same answer and asks.
    let r = h
        .send(
            "tools/call",
            call(
                "greet_asked_only",
                json!({"user_name": accept(json!({"name": "Alice"}))}),
            ),
        )
        .await;
    assert_eq!(r["result"]["resultType"], "input_required", "{r}");
    // Up-front answers are still checked against the declared form.
    for bad in [
        json!({"user_name": 12345}),
        json!({"user_name": accept(json!({"name": 7}))}),
        json!({"wrong_key": accept(json!({"name": "Alice"}))}),
        Value::Null,
    ] {
        let r = h
            .send("tools/call", call("greet_up_front", bad.clone()))
            .await;
        assert_eq!(r["result"]["resultType"], "input_required", "{bad}: {r}");
        assert!(r["result"]["inputRequests"]["user_name"].is_object());
    }
    // The ordinary two rounds still work, with the ticket.
    let r1 = h
        .send(
            "tools/call",
            json!({"name": "greet_up_front", "arguments": {}}),
        )
        .await;
    let mut retry = call(
        "greet_up_front",
        json!({"user_name": accept(json!({"name": "Bob"}))}),
    );
    retry["requestState"] = r1["result"]["requestState"].clone();
    let r2 = h.send("tools/call", retry).await;
    assert_eq!(r2["result"]["content"][0]["text"], "Hello, Bob!", "{r2}");
}

#[tokio::test]
async fn an_unknown_resource_is_an_error_naming_the_uri() {
    let mut h = Harness::new();
    let uri = "test://nonexistent-resource";
    let r = h.send("resources/read", json!({"uri": uri})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"]["uri"], uri);
    assert_eq!(
        r["error"]["message"],
        "Resource test://nonexistent-resource not found"
    );
    let r = h.send("resources/read", json!({"uri": "test://t/7"})).await;
    assert_eq!(r["result"]["contents"][0]["uri"], "test://t/7", "{r}");
}

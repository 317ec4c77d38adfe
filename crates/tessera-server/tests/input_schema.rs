//! Tool arguments are checked against the tool's `inputSchema` before the
//! handler runs. Spec (server/tools.mdx, Security Considerations): "Servers
//! MUST: Validate all tool inputs"; and (Error Handling) "Tool Execution
//! Errors contain actionable feedback that language models can use to
//! self-correct and retry with adjusted parameters: ... Input validation
//! errors (e.g., date in wrong format, value out of range)", reported "in
//! tool results with `isError: true`" (SEP-1303).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use tessera_protocol::{CallToolResult, JsonRpcRequest, RequestId};
use tessera_server::{Context, McpServer, RequestFacts, ToolDef};

/// A tool whose schema uses `minimum`, `pattern`, `enum` and `maxLength`,
/// and how many times its handler ran.
fn server() -> (McpServer, Arc<AtomicUsize>) {
    let ran = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&ran);
    let schema = json!({
        "type": "object",
        "properties": {
            "seats": { "type": "integer", "minimum": 1 },
            "flight": { "type": "string", "pattern": "^[A-Z]{2}[0-9]{1,4}$" },
            "class": { "enum": ["economy", "business"] },
            "note": { "type": "string", "maxLength": 8 }
        },
        "required": ["seats", "flight"]
    });
    let server = McpServer::builder("input", "1")
        .tool(
            ToolDef::new("book", move |_ctx: Context, _args: Value| {
                counted.fetch_add(1, Ordering::SeqCst);
                async { CallToolResult::text("booked") }
            })
            .input_schema(schema.as_object().unwrap().clone()),
        )
        .build()
        .unwrap();
    (server, ran)
}

async fn call(server: &McpServer, arguments: Value) -> Value {
    let params = json!({
        "name": "book",
        "arguments": arguments,
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }
    });
    let request = JsonRpcRequest::new(RequestId::from(1), "tools/call", Some(params));
    server
        .handle(request, RequestFacts::modern())
        .await
        .to_json()
}

#[tokio::test]
async fn violating_arguments_are_a_tool_error_naming_the_field_and_the_rule() {
    let (server, ran) = server();
    for (arguments, field, rule) in [
        (json!({"seats": 0, "flight": "LH400"}), "/seats", "minimum"),
        (json!({"seats": 1, "flight": "lh400"}), "/flight", "pattern"),
        (
            json!({"seats": 1, "flight": "LH400", "class": "first"}),
            "/class",
            "enum",
        ),
        (
            json!({"seats": 1, "flight": "LH400", "note": "window seat"}),
            "/note",
            "maxLength",
        ),
        (json!({"flight": "LH400"}), "/seats", "required"),
        (json!({"seats": "two", "flight": "LH400"}), "/seats", "type"),
    ] {
        let reply = call(&server, arguments.clone()).await;
        let result = &reply["result"];
        assert_eq!(result["isError"], true, "{arguments}: {reply}");
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(
            text.starts_with("Input validation error: Invalid arguments for tool book: ")
                && text.contains(&format!("{field}: "))
                && text.ends_with(&format!("(rule: {rule})")),
            "{arguments}: {text}"
        );
    }
    assert_eq!(ran.load(Ordering::SeqCst), 0, "the handler never ran");
}

#[tokio::test]
async fn conforming_arguments_reach_the_handler() {
    let (server, ran) = server();
    let reply = call(
        &server,
        json!({"seats": 2, "flight": "LH400", "class": "business", "note": "aisle"}),
    )
    .await;
    assert_eq!(reply["result"]["content"][0]["text"], "booked", "{reply}");
    assert_eq!(ran.load(Ordering::SeqCst), 1);
}

#[test]
fn a_tool_whose_input_schema_cannot_be_compiled_is_refused_at_build() {
    let schema = json!({"type": "object", "properties": {"n": {"minimum": "one"}}});
    let built = McpServer::builder("input", "1")
        .tool(
            ToolDef::new("broken", |_ctx: Context, _args: Value| async { "x" })
                .input_schema(schema.as_object().unwrap().clone()),
        )
        .build();
    let error = built.err().map(|e| e.to_string()).unwrap_or_default();
    assert!(error.contains("inputSchema cannot be checked"), "{error}");
}

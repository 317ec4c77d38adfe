//! One table of hostile and malformed messages, sent over Streamable HTTP
//! (the endpoint's whole check ladder) and over stdio (a connection on an
//! in-memory pipe): each gets the same JSON-RPC refusal on both, because
//! both read messages through the one intake.
//!
//! JSON-RPC 2.0 §5.1: -32700 "Invalid JSON was received", -32600 "The JSON
//! sent is not a valid Request object", -32602 "Invalid method
//! parameter(s)". Spec (server/tools.mdx): "Servers MUST: Validate all tool
//! inputs", reported as tool execution errors (`isError: true`).

use std::sync::Arc;

use bytes::Bytes;
use serde_json::{Value, json};
use tessera::http::{EndpointOptions, McpEndpoint};
use tessera::protocol::CallToolResult;
use tessera::stdio::{StdioOptions, serve_connection};
use tessera::{Context, McpServer, ToolDef};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

fn server() -> Arc<McpServer> {
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
    let book = ToolDef::new("book", |_ctx: Context, _args: Value| async {
        CallToolResult::text("booked")
    })
    .input_schema(schema.as_object().unwrap().clone());
    Arc::new(
        McpServer::builder("intake", "1")
            .tool(book)
            .build()
            .unwrap(),
    )
}

/// What a row must get back: a JSON-RPC error (code, HTTP status, whether
/// the id is echoed, a word of the message) or a tool execution error.
enum Expect {
    Error {
        code: i64,
        status: u16,
        echoes_id: bool,
        says: &'static str,
    },
    ToolError(&'static str),
}

fn error(code: i64, status: u16, echoes_id: bool, says: &'static str) -> Expect {
    Expect::Error {
        code,
        status,
        echoes_id,
        says,
    }
}

fn call(arguments: &str) -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"book","arguments":{arguments},{META}}}}}"#
    )
}

fn table() -> Vec<(&'static str, String, Expect)> {
    let deep = format!("{}1{}", "[".repeat(200), "]".repeat(200));
    let many = format!("[{}0]", "0,".repeat(25_000));
    let padding = "x".repeat(1024 * 1024);
    vec![
        ("not JSON", "{\"jsonrpc\":".into(), error(-32700, 400, false, "not valid JSON")),
        (
            "nested past the parser's limit",
            call(&format!(r#"{{"seats":{deep}}}"#)),
            error(-32700, 400, false, "recursion limit"),
        ),
        (
            "too many values",
            call(&format!(r#"{{"seats":1,"flight":"LH1","items":{many}}}"#)),
            error(-32600, 413, false, "JSON values"),
        ),
        (
            "over the byte limit",
            call(&format!(r#"{{"seats":1,"flight":"LH1","note":"{padding}"}}"#)),
            error(-32600, 413, false, "bytes"),
        ),
        (
            "an id too long to echo",
            format!(
                r#"{{"jsonrpc":"2.0","id":"{}","method":"tools/list","params":{{{META}}}}}"#,
                "i".repeat(1_000_000 - 100)
            ),
            error(-32600, 400, false, "id is longer than 256 bytes"),
        ),
        (
            "a batch",
            format!("[{}]", call(r#"{"seats":1,"flight":"LH1"}"#)),
            error(-32600, 400, false, "batches"),
        ),
        (
            "not JSON-RPC 2.0",
            format!(r#"{{"jsonrpc":"1.0","id":1,"method":"tools/list","params":{{{META}}}}}"#),
            error(-32600, 400, true, "jsonrpc"),
        ),
        (
            "a member of the message twice",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","method":"tools/list","params":{{{META}}}}}"#
            ),
            error(-32600, 400, true, "\"method\" more than once"),
        ),
        (
            "a member of params twice",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"x","name":"book",{META}}}}}"#
            ),
            error(-32602, 400, true, "\"name\" more than once"),
        ),
        (
            "an envelope without capabilities",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#.into(),
            error(-32602, 400, true, "clientCapabilities"),
        ),
        (
            "an envelope of the wrong shape",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":"all"}}}"#.into(),
            error(-32602, 400, true, "must be an object"),
        ),
        (
            "a version from the future",
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2099-01-01","io.modelcontextprotocol/clientCapabilities":{}}}}"#.into(),
            error(-32022, 400, true, "2099-01-01"),
        ),
        (
            "arguments below a minimum",
            call(r#"{"seats":0,"flight":"LH1"}"#),
            Expect::ToolError("/seats: 0 is less than the minimum of 1 (rule: minimum)"),
        ),
        (
            "arguments against a pattern",
            call(r#"{"seats":1,"flight":"lh1"}"#),
            Expect::ToolError("/flight: \"lh1\" does not match \"^[A-Z]{2}[0-9]{1,4}$\" (rule: pattern)"),
        ),
        (
            "arguments outside an enum",
            call(r#"{"seats":1,"flight":"LH1","class":"first"}"#),
            Expect::ToolError("(rule: enum)"),
        ),
        (
            "arguments over a maxLength",
            call(r#"{"seats":1,"flight":"LH1","note":"a window seat"}"#),
            Expect::ToolError("/note: \"a window seat\" is longer than 8 characters (rule: maxLength)"),
        ),
    ]
}

/// The body's version, method and name, for the headers a client would send.
fn headers_for(body: &str) -> (String, Option<String>, Option<String>) {
    let value: Value = serde_json::from_str(body).unwrap_or(Value::Null);
    let version = value["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"]
        .as_str()
        .unwrap_or("2026-07-28")
        .to_owned();
    let method = value["method"].as_str().map(str::to_owned);
    let name = value["params"]["name"].as_str().map(str::to_owned);
    (version, method, name)
}

async fn over_http(endpoint: &McpEndpoint, body: &str) -> (u16, Value) {
    let (version, method, name) = headers_for(body);
    let mut request = http::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", version);
    if let Some(method) = method {
        request = request.header("mcp-method", method);
    }
    if let Some(name) = name {
        request = request.header("mcp-name", name);
    }
    let (head, ()) = request.body(()).unwrap().into_parts();
    let response = endpoint.handle(head, Bytes::from(body.to_owned())).await;
    let status = response.status().as_u16();
    let bytes = http_body_util::BodyExt::collect(response.into_body())
        .await
        .unwrap()
        .to_bytes();
    (
        status,
        serde_json::from_slice(&bytes).unwrap_or(Value::Null),
    )
}

fn check(transport: &str, row: &str, reply: &Value, expect: &Expect) {
    match expect {
        Expect::Error {
            code,
            echoes_id,
            says,
            ..
        } => {
            assert_eq!(reply["error"]["code"], *code, "{transport}, {row}: {reply}");
            let expected_id = if *echoes_id { json!(1) } else { Value::Null };
            assert_eq!(reply["id"], expected_id, "{transport}, {row}: {reply}");
            let message = reply["error"]["message"].as_str().unwrap_or("");
            assert!(message.contains(says), "{transport}, {row}: {message}");
        }
        Expect::ToolError(says) => {
            assert_eq!(
                reply["result"]["isError"], true,
                "{transport}, {row}: {reply}"
            );
            let text = reply["result"]["content"][0]["text"].as_str().unwrap_or("");
            assert!(
                text.starts_with("Input validation error: Invalid arguments for tool book: ")
                    && text.contains(says),
                "{transport}, {row}: {text}"
            );
        }
    }
}

#[tokio::test]
async fn the_same_messages_get_the_same_refusals_over_http_and_stdio() {
    let server = server();
    let endpoint = McpEndpoint::new(Arc::clone(&server), EndpointOptions::default());
    let (to_server, server_in) = tokio::io::duplex(4 << 20);
    let (server_out, from_server) = tokio::io::duplex(4 << 20);
    let served = tokio::spawn(serve_connection(
        Arc::clone(&server),
        server_in,
        server_out,
        StdioOptions::default(),
        std::future::pending(),
    ));
    let mut to_server = to_server;
    let mut replies = BufReader::new(from_server).lines();
    for (row, body, expect) in table() {
        let (status, reply) = over_http(&endpoint, &body).await;
        check("HTTP", row, &reply, &expect);
        let expected_status = match expect {
            Expect::Error { status, .. } => status,
            Expect::ToolError(_) => 200,
        };
        assert_eq!(status, expected_status, "HTTP, {row}: {reply}");

        to_server.write_all(body.as_bytes()).await.unwrap();
        to_server.write_all(b"\n").await.unwrap();
        let line = tokio::time::timeout(std::time::Duration::from_secs(10), replies.next_line())
            .await
            .expect("stdio answers each line")
            .unwrap()
            .expect("the connection stays open");
        let reply: Value = serde_json::from_str(&line).unwrap();
        check("stdio", row, &reply, &expect);
        // The same words, too (stdio has no status to compare).
        assert_eq!(
            reply["error"]["message"],
            over_http(&endpoint, &body).await.1["error"]["message"],
            "{row}"
        );
    }
    drop(to_server);
    served.await.unwrap().unwrap();
}

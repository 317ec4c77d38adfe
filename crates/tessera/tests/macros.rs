//! The facade as an application sees it: `#[tessera::tool]`, `#[tessera::prompt]`,
//! `#[tessera::resource]` and `#[tessera::form]` declarations, served by an
//! `McpServer` and driven request by request through its dispatch.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use serde_json::{Value, json};
use tessera::protocol::JsonRpcRequest;
use tessera::state::{KeyRing, RequestStateCodec, StateKey};
use tessera::{Context, Json, McpServer, NotFound, RequestFacts, State};

/// A colour to pick from.
#[tessera::form]
#[serde(rename_all = "lowercase")]
enum Shade {
    Red,
    Blue,
}

/// The order's details.
#[tessera::form]
struct Order {
    /// How many
    #[schemars(title = "Quantity", range(min = 1, max = 9))]
    quantity: u32,
    /// The colour
    shade: Shade,
    /// Extras to add
    extras: Vec<Shade>,
    /// Anything else
    note: Option<String>,
}

/// Yes or no.
#[tessera::form(key = "go")]
struct GoAhead {
    confirm: bool,
}

/// A shop that counts its orders.
#[derive(Clone)]
struct Shop {
    orders: Arc<AtomicU32>,
}

/// Orders shirts after asking for the details and a confirmation
#[tessera::tool(name = "order-shirts", title = "Order shirts")]
async fn order(
    ctx: Context,
    State(shop): State<Shop>,
    /// Who the shirts are for
    customer: String,
) -> tessera::Result<String> {
    let Order {
        quantity,
        shade,
        extras,
        note,
    } = ctx.ask(format!("Shirts for {customer}?"))?;
    let GoAhead { confirm } = ctx.ask(format!("Order {quantity} {shade:?}?"))?;
    if !confirm {
        return Ok("Not ordered.".into());
    }
    let n = shop.orders.fetch_add(1, Ordering::SeqCst) + 1;
    Ok(format!(
        "Order {n}: {quantity} {shade:?} (+{} extras) for {customer}{}",
        extras.len(),
        note.map(|n| format!(", note: {n}")).unwrap_or_default()
    ))
}

/// The sum, as structured content.
#[tessera::output]
struct Sum {
    total: f64,
}

/// Adds two numbers
#[tessera::tool]
async fn add(a: f64, b: f64) -> Json<Sum> {
    Json(Sum { total: a + b })
}

/// Fails when asked to
#[tessera::tool]
async fn fragile(fail: bool) -> tessera::Result<&'static str> {
    if fail {
        "x".parse::<u32>()?;
    }
    Ok("fine")
}

/// Reviews code
#[tessera::prompt(name = "review")]
async fn review_prompt(
    /// The code to review
    code: String,
    /// The language
    language: Option<String>,
) -> String {
    format!(
        "Review this {}:\n{code}",
        language.as_deref().unwrap_or("code")
    )
}

/// A note by id
#[tessera::resource(uri = "notes://note/{id}", mime_type = "text/plain")]
async fn note(id: String) -> tessera::Result<String> {
    let text = (id == "1")
        .then(|| "The first note.".to_owned())
        .ok_or(NotFound)?;
    Ok(text)
}

/// How many orders the shop took
#[tessera::resource(uri = "shop://orders", name = "orders")]
async fn orders(State(shop): State<Shop>) -> String {
    shop.orders.load(Ordering::SeqCst).to_string()
}

fn codec() -> RequestStateCodec {
    let key = StateKey::from_secret_str("macros-test-key-0123456789abcdef!").unwrap();
    RequestStateCodec::new(KeyRing::new("k1", key).unwrap())
}

fn server() -> McpServer {
    McpServer::builder("shop", "1.0.0")
        .request_state(codec())
        .with_state(Shop {
            orders: Arc::new(AtomicU32::new(0)),
        })
        .tool(order_tool())
        .tool(add_tool())
        .tool(fragile_tool())
        .prompt(review_prompt_prompt())
        .resource_template(note_resource())
        .resource(orders_resource())
        .build()
        .unwrap()
}

async fn send(server: &McpServer, method: &str, mut params: Value) -> Value {
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}}
    });
    let request = JsonRpcRequest {
        jsonrpc: Default::default(),
        id: 1.into(),
        method: method.into(),
        params: Some(params),
    };
    server
        .handle(request, RequestFacts::modern())
        .await
        .to_json()
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

#[tokio::test]
async fn definitions_come_from_the_functions() {
    let server = server();
    let list = send(&server, "tools/list", json!({})).await;
    let tools = &list["result"]["tools"];
    let order = &tools[0];
    assert_eq!(order["name"], "order-shirts");
    assert_eq!(order["title"], "Order shirts");
    assert_eq!(
        order["description"],
        "Orders shirts after asking for the details and a confirmation"
    );
    assert_eq!(
        order["inputSchema"]["properties"]["customer"],
        json!({"type": "string", "description": "Who the shirts are for"})
    );
    assert_eq!(order["inputSchema"]["required"], json!(["customer"]));
    assert_eq!(tools[1]["name"], "add");
    assert_eq!(
        tools[1]["outputSchema"]["properties"]["total"]["type"],
        "number"
    );
    let prompts = send(&server, "prompts/list", json!({})).await;
    assert_eq!(
        prompts["result"]["prompts"][0]["arguments"],
        json!([
            {"name": "code", "description": "The code to review", "required": true},
            {"name": "language", "description": "The language", "required": false}
        ])
    );
}

#[tokio::test]
async fn a_handler_reads_top_to_bottom_across_rounds() {
    let server = server();
    let call = json!({"name": "order-shirts", "arguments": {"customer": "Ada"}});
    let r1 = send(&server, "tools/call", call.clone()).await;
    let form = &r1["result"]["inputRequests"]["order"]["params"];
    assert_eq!(form["message"], "Shirts for Ada?");
    assert_eq!(
        form["requestedSchema"]["properties"]["quantity"],
        json!({"type": "integer", "title": "Quantity", "description": "How many", "minimum": 1, "maximum": 9})
    );
    assert_eq!(
        form["requestedSchema"]["properties"]["shade"]["enum"],
        json!(["red", "blue"])
    );
    assert_eq!(
        form["requestedSchema"]["required"],
        json!(["quantity", "shade", "extras"])
    );
    let mut r2_call = call.clone();
    r2_call["requestState"] = r1["result"]["requestState"].clone();
    r2_call["inputResponses"] =
        json!({"order": accept(json!({"quantity": 2, "shade": "blue", "extras": ["red"]}))});
    let r2 = send(&server, "tools/call", r2_call).await;
    assert_eq!(
        r2["result"]["inputRequests"]["go"]["params"]["message"],
        "Order 2 Blue?"
    );
    let mut r3_call = call;
    r3_call["requestState"] = r2["result"]["requestState"].clone();
    r3_call["inputResponses"] = json!({"go": accept(json!({"confirm": true}))});
    let r3 = send(&server, "tools/call", r3_call).await;
    assert_eq!(
        r3["result"]["content"][0]["text"],
        "Order 1: 2 Blue (+1 extras) for Ada"
    );
    let orders = send(&server, "resources/read", json!({"uri": "shop://orders"})).await;
    assert_eq!(orders["result"]["contents"][0]["text"], "1");
}

#[tokio::test]
async fn return_types_decide_the_result() {
    let server = server();
    let sum = send(
        &server,
        "tools/call",
        json!({"name": "add", "arguments": {"a": 1, "b": 2.5}}),
    )
    .await;
    assert_eq!(sum["result"]["structuredContent"], json!({"total": 3.5}));
    assert_eq!(sum["result"]["content"][0]["text"], r#"{"total":3.5}"#);
    let failed = send(
        &server,
        "tools/call",
        json!({"name": "fragile", "arguments": {"fail": true}}),
    )
    .await;
    assert_eq!(failed["result"]["isError"], true);
    assert_eq!(
        failed["result"]["content"][0]["text"],
        "invalid digit found in string"
    );
    let fine = send(
        &server,
        "tools/call",
        json!({"name": "fragile", "arguments": {"fail": false}}),
    )
    .await;
    assert_eq!(fine["result"]["content"][0]["text"], "fine");
}

#[tokio::test]
async fn prompts_and_resources_take_their_arguments_typed() {
    let server = server();
    let prompt = send(
        &server,
        "prompts/get",
        json!({"name": "review", "arguments": {"code": "fn main() {}"}}),
    )
    .await;
    assert_eq!(
        prompt["result"]["messages"][0]["content"]["text"],
        "Review this code:\nfn main() {}"
    );
    let found = send(&server, "resources/read", json!({"uri": "notes://note/1"})).await;
    assert_eq!(
        found["result"]["contents"][0],
        json!({"uri": "notes://note/1", "mimeType": "text/plain", "text": "The first note."})
    );
    let missing = send(&server, "resources/read", json!({"uri": "notes://note/2"})).await;
    assert_eq!(
        missing["error"]["data"]["uri"], "notes://note/2",
        "{missing}"
    );
}

#[test]
fn a_server_without_the_state_its_handlers_need_does_not_build() {
    let err = McpServer::builder("shop", "1.0.0")
        .request_state(codec())
        .tool(order_tool())
        .build()
        .unwrap_err();
    assert!(
        err.to_string()
            .contains("tool \"order-shirts\" needs application state of type macros::Shop"),
        "{err}"
    );
}

/// The function under `#[tessera::tool]` stays the function it was: a unit
/// test calls it directly; `NAME_tool()` is the definition a server registers.
#[tokio::test]
async fn a_tool_function_is_still_callable() {
    let Json(Sum { total }) = add(2.0, 3.0).await;
    assert_eq!(total, 5.0);
    assert_eq!(fragile(false).await.unwrap(), "fine");
    assert!(fragile(true).await.is_err());
    assert_eq!(add_tool().definition().name, "add");
}

/// "A tool that asks, on a server with no ticket codec" is refused when the
/// server is built, naming the fix; a tool without a `Context` cannot ask
/// and needs none; `without_request_state()` is the explicit opt-out.
#[test]
fn a_handler_taking_a_context_needs_a_ticket_codec_to_build() {
    let err = McpServer::builder("shop", "1.0.0")
        .with_state(Shop {
            orders: Arc::default(),
        })
        .tool(order_tool())
        .build()
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("tool \"order-shirts\" takes a Context"),
        "{err}"
    );
    assert!(
        err.contains(".request_state(codec)") && err.contains(".without_request_state()"),
        "{err}"
    );
    assert!(
        McpServer::builder("calc", "1.0.0")
            .tool(add_tool())
            .build()
            .is_ok()
    );
    assert!(
        McpServer::builder("shop", "1.0.0")
            .with_state(Shop {
                orders: Arc::default(),
            })
            .tool(order_tool())
            .without_request_state()
            .build()
            .is_ok()
    );
}

/// Derives a form's author lists below `#[tessera::form]` are not derived twice.
#[tessera::form]
#[derive(Debug, Clone, serde::Deserialize)]
struct Gate {
    ticket: String,
    rollout: u8,
    go: YesNo,
}

/// A choice too (listed above the macro, a derive runs before it and cannot be seen).
#[tessera::form]
#[derive(Debug, Clone, PartialEq, Hash)]
enum YesNo {
    Yes,
    No,
}

#[test]
fn derives_the_author_lists_are_kept() {
    let gate = Gate {
        ticket: "CHG-1".into(),
        rollout: 10,
        go: YesNo::Yes,
    };
    assert_eq!(format!("{:?}", gate.clone().go), "Yes");
    assert_eq!(YesNo::No, YesNo::No.clone());
    assert_eq!(<Gate as tessera::Form>::KEY, "gate");
    let _: Gate =
        serde_json::from_value(json!({"ticket": "T", "rollout": 5, "go": "Yes"})).unwrap();
}

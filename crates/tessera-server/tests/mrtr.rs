//! Dispatch-level multi round-trip flows (no HTTP): the counter's rounds,
//! refusals, tickets that must not open, capability gating, legacy clients,
//! single use, and every emitted message checked against the schema.

use std::sync::Arc;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::{Value, json};
use tessera_protocol::{CreateMessageRequestParams, JsonRpcRequest};
use tessera_server::{
    Context, Form, FormValue, HandlerError, McpServer, PromptDef, RequestFacts, ResourceDef,
    Result, ToolDef,
};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};

const KEY: &str = "0123456789abcdef0123456789abcdef-test-key";

#[derive(Deserialize, schemars::JsonSchema)]
struct CounterArgs {
    /// Current counter value
    current: f64,
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Amount {
    /// The amount to add to the current value
    #[schemars(title = "Amount")]
    amount: f64,
}
impl Form for Amount {
    const KEY: &'static str = "amount";
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Confirmation {
    #[schemars(title = "Confirm increase")]
    confirm: bool,
}
impl Form for Confirmation {
    const KEY: &'static str = "confirmation";
}

const CANCELLED: &str = "Counter increase cancelled.";

async fn increase_counter(ctx: Context, args: CounterArgs) -> Result<String> {
    let current = args.current;
    let Amount { amount } = ctx.ask("By how much should the counter increase?")?;
    let Confirmation { confirm } = ctx.ask(format!("Increase {current} by {amount}?"))?;
    Ok(if confirm {
        format!(
            "Counter increased by {amount}; next value is {}",
            current + amount
        )
    } else {
        CANCELLED.into()
    })
}

fn counter_tool(name: &str) -> ToolDef {
    ToolDef::new(name, increase_counter)
        .description("Calculate a counter increase using two stateless elicitation rounds")
        .on_refusal(CANCELLED)
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Name {
    name: String,
}
impl Form for Name {
    const KEY: &'static str = "name";
}

/// A single-select choice: inlined, so the form shows it as an enum field.
#[derive(Debug, Deserialize, schemars::JsonSchema)]
#[schemars(inline)]
#[serde(rename_all = "lowercase")]
enum Shade {
    Red,
    Blue,
}
impl FormValue for Shade {}

#[derive(Deserialize, schemars::JsonSchema)]
struct Color {
    color: Shade,
}
impl Form for Color {
    const KEY: &'static str = "color";
}

/// A three-round tool that reads round one's answer in round three, and counts rounds in carried state.
async fn survey(ctx: Context, _args: Empty) -> Result<String> {
    let round = ctx.carried::<u32>().unwrap_or(0) + 1;
    ctx.carry(&round)?;
    let Name { name } = ctx.ask("Name?")?;
    let Color { color } = ctx.ask("Color?")?;
    Ok(format!("{name} likes {color:?} (round {round})"))
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Empty {}

/// A confirmation that refuses fields it does not know: extra answer fields must not reach it.
#[derive(Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
struct Confirm {
    ok: bool,
}
impl Form for Confirm {
    const KEY: &'static str = "confirm";
}

async fn strict_confirm(ctx: Context, _args: Empty) -> Result<String> {
    let Confirm { ok } = ctx.ask("Sure?")?;
    Ok(format!("ok={ok}"))
}

/// Catches a decline and goes on asking: the decline must stay a decline in later rounds.
async fn optional_confirm(ctx: Context, _args: Empty) -> Result<String> {
    let confirmed = match ctx.ask::<Confirm>("Sure?") {
        Ok(Confirm { ok }) => ok,
        Err(tessera_server::Interrupt::Declined { .. }) => false,
        Err(other) => return Err(other.into()),
    };
    let Name { name } = ctx.ask("Name?")?;
    Ok(format!("{name}: confirmed={confirmed}"))
}

#[derive(Deserialize, schemars::JsonSchema)]
struct Optional {
    #[allow(dead_code)]
    x: Option<String>,
}
impl Form for Optional {
    const KEY: &'static str = "k";
}

/// Asks for one input of the kind named in its argument.
async fn ask_kind(ctx: Context, args: KindArgs) -> Result<&'static str> {
    match args.kind.as_str() {
        "form" => drop(ctx.ask::<Optional>("?")?),
        "url" => ctx.ask_url("k", "Sign in", "https://example.com/login")?,
        "sample" => drop(ctx.sample(
            "k",
            CreateMessageRequestParams {
                messages: vec![],
                max_tokens: 10,
                ..Default::default()
            },
        )?),
        "sample-tools" => drop(ctx.sample(
            "k",
            CreateMessageRequestParams {
                messages: vec![],
                max_tokens: 10,
                tools: Some(vec![
                    serde_json::from_value(
                        json!({"name": "lookup", "inputSchema": {"type": "object"}}),
                    )
                    .expect("a tool"),
                ]),
                ..Default::default()
            },
        )?),
        "sample-context" => drop(ctx.sample(
            "k",
            CreateMessageRequestParams {
                messages: vec![],
                max_tokens: 10,
                include_context: Some("thisServer".into()),
                ..Default::default()
            },
        )?),
        _ => drop(ctx.list_roots("k")?),
    }
    Ok("answered")
}

#[derive(Deserialize, schemars::JsonSchema)]
struct KindArgs {
    kind: String,
}

#[derive(Serialize, Deserialize)]
struct Voucher {
    code: String,
}

/// A state-only first round (no question), then the redemption.
async fn redeem(ctx: Context, _args: Empty) -> Result<String> {
    match ctx.carried::<Voucher>() {
        None => {
            ctx.carry(&Voucher {
                code: "FREE-COFFEE".into(),
            })?;
            Err(ctx.come_back().into())
        }
        Some(v) => Ok(format!("redeemed {}", v.code)),
    }
}

#[derive(Deserialize, schemars::JsonSchema)]
struct X {
    #[allow(dead_code)]
    x: Option<String>,
}
impl Form for X {
    const KEY: &'static str = "x";
}

fn codec(ttl: Duration) -> RequestStateCodec {
    let ring = KeyRing::new("k1", StateKey::from_secret_str(KEY).unwrap()).unwrap();
    RequestStateCodec::builder(ring).ttl(ttl).build().unwrap()
}

fn server_with_ttl(ttl: Duration) -> McpServer {
    McpServer::builder("stateless-mrtr-elicitation-demo", "1.0.0")
        .request_state(codec(ttl))
        .tool(counter_tool("increase-counter"))
        .tool(counter_tool("other-tool"))
        .tool(ToolDef::new("survey", survey))
        .tool(ToolDef::new("ask", ask_kind))
        .tool(ToolDef::new("redeem", redeem).single_use())
        .tool(ToolDef::new("strict-confirm", strict_confirm))
        .tool(ToolDef::new("optional-confirm", optional_confirm))
        .prompt(PromptDef::new("p", |ctx: Context, _args: ()| async move {
            ctx.ask::<X>("?")?;
            Ok::<_, HandlerError>("rendered".to_owned())
        }))
        .resource(
            ResourceDef::new("counter://value", "value", |_ctx: Context| async {
                "10".to_owned()
            })
            .mime_type("text/plain"),
        )
        .build()
        .unwrap()
}

fn server() -> McpServer {
    server_with_ttl(Duration::from_secs(600))
}

fn all_caps() -> Value {
    json!({"elicitation": {"form": {}, "url": {}}, "sampling": {}, "roots": {}})
}

fn call_params(tool: &str, args: Value, caps: Value) -> Value {
    json!({
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "test", "version": "1"},
            "io.modelcontextprotocol/clientCapabilities": caps
        },
        "name": tool,
        "arguments": args
    })
}

struct Harness {
    server: McpServer,
    next_id: i64,
    validator: jsonschema::Validator,
}

impl Harness {
    fn new(server: McpServer) -> Self {
        let text = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../spec/2026-07-28/schema.json"),
        )
        .unwrap();
        let mut schema: Value = serde_json::from_str(&text).unwrap();
        schema["$ref"] = json!("#/$defs/JSONRPCResponse");
        Self {
            server,
            next_id: 1,
            validator: jsonschema::validator_for(&schema).unwrap(),
        }
    }

    async fn send_as(&mut self, method: &str, params: Value, facts: RequestFacts) -> Value {
        let request = JsonRpcRequest {
            jsonrpc: Default::default(),
            id: self.next_id.into(),
            method: method.into(),
            params: Some(params),
        };
        self.next_id += 1;
        let handled = self.server.handle(request, facts.clone()).await;
        let response = handled.to_json();
        if facts.legacy_version().is_none() {
            let errors: Vec<String> = self
                .validator
                .iter_errors(&response)
                .map(|e| e.to_string())
                .collect();
            assert!(
                errors.is_empty(),
                "response fails the schema: {response}\n{errors:?}"
            );
        }
        response
    }

    async fn send(&mut self, method: &str, params: Value) -> Value {
        self.send_as(method, params, RequestFacts::modern()).await
    }

    async fn call(&mut self, params: Value) -> Value {
        self.send("tools/call", params).await
    }
}

fn text(response: &Value) -> &str {
    response["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("no text in {response}"))
}

fn state(response: &Value) -> String {
    response["result"]["requestState"]
        .as_str()
        .unwrap_or_else(|| panic!("no requestState in {response}"))
        .to_owned()
}

fn with(mut params: Value, state: Option<&str>, responses: Value) -> Value {
    if let Some(s) = state {
        params["requestState"] = json!(s);
    }
    params["inputResponses"] = responses;
    params
}

fn counter() -> Value {
    call_params(
        "increase-counter",
        json!({"current": 10}),
        json!({"elicitation": {}}),
    )
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

async fn round_two_state(h: &mut Harness) -> String {
    let r1 = h.call(counter()).await;
    let r2 = h
        .call(with(
            counter(),
            Some(&state(&r1)),
            json!({"amount": accept(json!({"amount": 5}))}),
        ))
        .await;
    assert_eq!(
        r2["result"]["inputRequests"]["confirmation"]["params"]["message"],
        "Increase 10 by 5?"
    );
    state(&r2)
}

#[tokio::test]
async fn the_counter_in_three_rounds() {
    let mut h = Harness::new(server());
    let r1 = h.call(counter()).await;
    assert_eq!(r1["result"]["resultType"], "input_required");
    let amount = &r1["result"]["inputRequests"]["amount"];
    assert_eq!(amount["method"], "elicitation/create");
    assert_eq!(
        amount["params"]["message"],
        "By how much should the counter increase?"
    );
    assert_eq!(
        amount["params"]["requestedSchema"],
        json!({"type": "object", "properties": {"amount": {"type": "number", "title": "Amount", "description": "The amount to add to the current value"}}, "required": ["amount"]})
    );
    let s2 = round_two_state(&mut h).await;
    let r3 = h
        .call(with(
            counter(),
            Some(&s2),
            json!({"confirmation": accept(json!({"confirm": true}))}),
        ))
        .await;
    assert_eq!(r3["result"]["resultType"], "complete");
    assert_eq!(text(&r3), "Counter increased by 5; next value is 15");
    assert_eq!(
        r3["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "stateless-mrtr-elicitation-demo"
    );
}

#[tokio::test]
async fn declines_and_cancels_end_the_call_invalid_answers_are_asked_again() {
    let mut h = Harness::new(server());
    let s1 = state(&h.call(counter()).await);
    let refused = |answer: &Value, r: &Value| {
        assert_eq!(text(r), CANCELLED, "answer {answer}");
    };
    // The question comes back, its message saying why the answer was not taken.
    let asked_again = |key: &str, answer: &Value, r: &Value| {
        assert_eq!(
            r["result"]["resultType"], "input_required",
            "answer {answer}: {r}"
        );
        let message = r["result"]["inputRequests"][key]["params"]["message"]
            .as_str()
            .unwrap_or_default();
        assert!(
            message.contains("The previous answer was not accepted"),
            "answer {answer}: {message}"
        );
    };
    for answer in [json!({"action": "decline"}), json!({"action": "cancel"})] {
        let r = h
            .call(with(
                counter(),
                Some(&s1),
                json!({"amount": answer.clone()}),
            ))
            .await;
        refused(&answer, &r);
    }
    for answer in [
        accept(json!({"amount": "five"})),
        json!({"action": "accept"}),
        json!({"action": "maybe"}),
        json!(42),
    ] {
        let r = h
            .call(with(
                counter(),
                Some(&s1),
                json!({"amount": answer.clone()}),
            ))
            .await;
        asked_again("amount", &answer, &r);
    }
    let s2 = round_two_state(&mut h).await;
    for answer in [
        json!({"action": "decline"}),
        json!({"action": "cancel"}),
        accept(json!({"confirm": false})),
    ] {
        let r = h
            .call(with(
                counter(),
                Some(&s2),
                json!({"confirmation": answer.clone()}),
            ))
            .await;
        refused(&answer, &r);
    }
    let answer = accept(json!({"confirm": "yes"}));
    let r = h
        .call(with(
            counter(),
            Some(&s2),
            json!({"confirmation": answer.clone()}),
        ))
        .await;
    asked_again("confirmation", &answer, &r);
}

#[tokio::test]
async fn a_missing_answer_is_asked_again() {
    let mut h = Harness::new(server());
    let s1 = state(&h.call(counter()).await);
    // Spec (mrtr): "the server SHOULD respond with a new InputRequiredResult" when needed responses are missing.
    let r = h
        .call(with(
            counter(),
            Some(&s1),
            json!({"confirmation": accept(json!({"confirm": true}))}),
        ))
        .await;
    assert!(r["result"]["inputRequests"]["amount"].is_object(), "{r}");
    let s2 = round_two_state(&mut h).await;
    let r = h.call(with(counter(), Some(&s2), json!({}))).await;
    assert!(
        r["result"]["inputRequests"]["confirmation"].is_object(),
        "{r}"
    );
    // Answers without a ticket answer nothing that was asked: start over.
    let r = h
        .call(with(
            counter(),
            None,
            json!({"amount": {"action": "decline"}}),
        ))
        .await;
    assert!(r["result"]["inputRequests"]["amount"].is_object(), "{r}");
}

#[tokio::test]
async fn unknown_extra_input_responses_are_ignored() {
    let mut h = Harness::new(server());
    let s1 = state(&h.call(counter()).await);
    let r = h
        .call(with(
            counter(),
            Some(&s1),
            json!({"amount": accept(json!({"amount": 5, "note": "extra field"})), "surprise": {"action": "accept"}}),
        ))
        .await;
    assert!(
        r["result"]["inputRequests"]["confirmation"].is_object(),
        "{r}"
    );
}

fn assert_invalid_state(r: &Value) {
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["message"], "Invalid or expired requestState");
    assert_eq!(
        r["error"]["data"],
        json!({"reason": "invalid_request_state"})
    );
}

#[tokio::test]
async fn tickets_that_must_not_open() {
    let mut h = Harness::new(server());
    let s2 = round_two_state(&mut h).await;
    let confirm = json!({"confirmation": accept(json!({"confirm": true}))});
    // Tampered: flip one character in the middle.
    let mut bytes = s2.clone().into_bytes();
    let mid = bytes.len() / 2;
    bytes[mid] = if bytes[mid] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(bytes).unwrap();
    assert_invalid_state(
        &h.call(with(counter(), Some(&tampered), confirm.clone()))
            .await,
    );
    // Replayed with other arguments.
    let other_args = call_params(
        "increase-counter",
        json!({"current": 999}),
        json!({"elicitation": {}}),
    );
    assert_invalid_state(&h.call(with(other_args, Some(&s2), confirm.clone())).await);
    // Replayed on another tool.
    let other_tool = call_params(
        "other-tool",
        json!({"current": 10}),
        json!({"elicitation": {}}),
    );
    assert_invalid_state(&h.call(with(other_tool, Some(&s2), confirm.clone())).await);
    // Replayed on another method.
    let p = json!({"_meta": counter()["_meta"], "name": "p", "requestState": s2});
    assert_invalid_state(&h.send("prompts/get", p).await);
    // Not a string, empty, garbage.
    for bad in [json!(12345), json!(""), json!("hello")] {
        let mut p = counter();
        p["requestState"] = bad;
        assert_invalid_state(&h.call(p).await);
    }
    // A ticket minted for principal A, presented by principal B.
    let r1 = h
        .send_as(
            "tools/call",
            counter(),
            RequestFacts::modern().with_principal("alice"),
        )
        .await;
    let r = h
        .send_as(
            "tools/call",
            with(
                counter(),
                Some(&state(&r1)),
                json!({"amount": accept(json!({"amount": 5}))}),
            ),
            RequestFacts::modern().with_principal("bob"),
        )
        .await;
    assert_invalid_state(&r);
}

#[tokio::test]
async fn an_expired_ticket_is_refused() {
    let mut h = Harness::new(server_with_ttl(Duration::from_secs(1)));
    let s1 = state(&h.call(counter()).await);
    tokio::time::sleep(Duration::from_millis(2100)).await;
    assert_invalid_state(
        &h.call(with(
            counter(),
            Some(&s1),
            json!({"amount": accept(json!({"amount": 5}))}),
        ))
        .await,
    );
}

#[tokio::test]
async fn round_three_reads_rounds_one_and_two_without_reminting() {
    let mut h = Harness::new(server());
    let p = call_params("survey", json!({}), json!({"elicitation": {}}));
    let r1 = h.call(p.clone()).await;
    let r2 = h
        .call(with(
            p.clone(),
            Some(&state(&r1)),
            json!({"name": accept(json!({"name": "Ada"}))}),
        ))
        .await;
    assert!(r2["result"]["inputRequests"]["color"].is_object(), "{r2}");
    let r3 = h
        .call(with(
            p.clone(),
            Some(&state(&r2)),
            json!({"color": accept(json!({"color": "blue"}))}),
        ))
        .await;
    assert_eq!(text(&r3), "Ada likes Blue (round 3)");
    // A choice outside the enum is not accepted: the color is asked again.
    let r = h
        .call(with(
            p,
            Some(&state(&r2)),
            json!({"color": accept(json!({"color": "green"}))}),
        ))
        .await;
    assert!(r["result"]["inputRequests"]["color"].is_object(), "{r}");
}

#[tokio::test]
async fn capability_gating_for_each_input_kind() {
    let mut h = Harness::new(server());
    let cases = [
        ("form", json!({}), json!({"elicitation": {"form": {}}})),
        (
            "form",
            json!({"elicitation": {"url": {}}}),
            json!({"elicitation": {"form": {}}}),
        ),
        (
            "url",
            json!({"elicitation": {}}),
            json!({"elicitation": {"url": {}}}),
        ),
        (
            "sample",
            json!({"elicitation": {}}),
            json!({"sampling": {}}),
        ),
        ("roots", json!({"sampling": {}}), json!({"roots": {}})),
    ];
    for (kind, caps, required) in cases {
        let r = h
            .call(call_params("ask", json!({"kind": kind}), caps.clone()))
            .await;
        assert_eq!(r["error"]["code"], -32021, "{kind} with {caps}: {r}");
        assert_eq!(
            r["error"]["data"]["requiredCapabilities"], required,
            "{kind}"
        );
        let ok = h
            .call(call_params("ask", json!({"kind": kind}), all_caps()))
            .await;
        assert_eq!(ok["result"]["resultType"], "input_required", "{kind}: {ok}");
    }
}

/// The sampling page: "Servers MUST NOT send tool-enabled sampling requests
/// to Clients that have not declared support for tool use via the
/// `sampling.tools` capability"; `includeContext` values other than `none`
/// "SHOULD NOT" be used "unless the client declares `sampling.context`".
#[tokio::test]
async fn sampling_with_tools_or_context_needs_the_capability_for_it() {
    let mut h = Harness::new(server());
    let cases = [
        (
            "sample-tools",
            json!({"sampling": {}}),
            json!({"sampling": {"tools": {}}}),
            "sampling.tools",
        ),
        (
            "sample-tools",
            json!({"sampling": {"context": {}}}),
            json!({"sampling": {"tools": {}}}),
            "sampling.tools",
        ),
        (
            "sample-tools",
            json!({"elicitation": {}}),
            json!({"sampling": {"tools": {}}}),
            "sampling.tools",
        ),
        (
            "sample-context",
            json!({"sampling": {"tools": {}}}),
            json!({"sampling": {"context": {}}}),
            "sampling.context",
        ),
    ];
    for (kind, caps, required, named) in cases {
        let r = h
            .call(call_params("ask", json!({"kind": kind}), caps.clone()))
            .await;
        assert_eq!(r["error"]["code"], -32021, "{kind} with {caps}: {r}");
        assert_eq!(
            r["error"]["data"]["requiredCapabilities"], required,
            "{kind} with {caps}"
        );
        let message = r["error"]["message"].as_str().unwrap_or_default();
        assert!(
            message.ends_with(&format!("do not declare {named}")),
            "{message}"
        );
    }
    let declared = json!({"sampling": {"tools": {}, "context": {}}});
    for kind in ["sample-tools", "sample-context", "sample"] {
        let ok = h
            .call(call_params("ask", json!({"kind": kind}), declared.clone()))
            .await;
        assert_eq!(ok["result"]["resultType"], "input_required", "{kind}: {ok}");
    }
}

#[tokio::test]
async fn accepted_content_keeps_only_the_fields_the_form_asked_for() {
    let mut h = Harness::new(server());
    let p = call_params("strict-confirm", json!({}), json!({"elicitation": {}}));
    let r1 = h.call(p.clone()).await;
    // The form refuses unknown fields: it completes only because "extra" never reaches it.
    let r2 = h
        .call(with(
            p.clone(),
            Some(&state(&r1)),
            json!({"confirm": accept(json!({"ok": false, "extra": "x"}))}),
        ))
        .await;
    assert_eq!(text(&r2), "ok=false");
}

#[tokio::test]
async fn an_invalid_answer_is_asked_again_unless_the_tool_ends_on_refusal() {
    let mut h = Harness::new(server());
    let p = call_params("strict-confirm", json!({}), json!({"elicitation": {}}));
    let s1 = state(&h.call(p.clone()).await);
    let r = h
        .call(with(
            p.clone(),
            Some(&s1),
            json!({"confirm": accept(json!({"ok": "yes"}))}),
        ))
        .await;
    assert!(r["result"]["inputRequests"]["confirm"].is_object(), "{r}");
    // The re-asked question's ticket takes a valid answer.
    let r = h
        .call(with(
            p.clone(),
            Some(&state(&r)),
            json!({"confirm": accept(json!({"ok": true}))}),
        ))
        .await;
    assert_eq!(text(&r), "ok=true");
    // A decline without a refusal result of the tool's own names the question.
    let r = h
        .call(with(
            p,
            Some(&s1),
            json!({"confirm": {"action": "decline"}}),
        ))
        .await;
    assert_eq!(text(&r), "The user declined to answer confirm.");
    assert!(r["result"].get("isError").is_none(), "{r}");
}

#[tokio::test]
async fn a_single_use_ticket_redeems_once() {
    let mut h = Harness::new(server());
    let p = call_params("redeem", json!({}), json!({}));
    let r1 = h.call(p.clone()).await;
    assert!(
        r1["result"].get("inputRequests").is_none(),
        "state-only round: {r1}"
    );
    let s = state(&r1);
    let mut retry = p.clone();
    retry["requestState"] = json!(s);
    assert_eq!(text(&h.call(retry.clone()).await), "redeemed FREE-COFFEE");
    assert_invalid_state(&h.call(retry).await);
}

#[tokio::test]
async fn legacy_clients_get_an_explanation_instead_of_a_form() {
    let mut h = Harness::new(server());
    let legacy = RequestFacts::legacy("2025-11-25");
    let r = h
        .send_as(
            "tools/call",
            json!({"name": "increase-counter", "arguments": {"current": 10}}),
            legacy.clone(),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r["result"].get("resultType").is_none());
    let msg = text(&r);
    for needle in ["increase-counter", "'amount'", "2026-07-28", "2025-11-25"] {
        assert!(msg.contains(needle), "{needle} missing from {msg}");
    }
    let r = h
        .send_as("prompts/get", json!({"name": "p"}), legacy.clone())
        .await;
    assert_eq!(r["error"]["code"], -32600, "{r}");
    let r = h.send_as("initialize", json!({"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "c", "version": "1"}}), legacy.clone()).await;
    assert_eq!(r["result"]["protocolVersion"], "2025-06-18");
    let r = h.send_as("tools/list", json!({}), legacy).await;
    assert!(
        r["result"].get("resultType").is_none() && r["result"]["tools"].is_array(),
        "{r}"
    );
}

#[tokio::test]
async fn invalid_arguments_are_a_tool_error_naming_the_field() {
    let mut h = Harness::new(server());
    let r = h
        .call(call_params(
            "increase-counter",
            json!({"current": "ten"}),
            json!({"elicitation": {}}),
        ))
        .await;
    assert_eq!(r["result"]["isError"], true);
    assert!(
        text(&r).contains("/current: \"ten\" is not of type \"number\" (rule: type)"),
        "{r}"
    );
    let r = h.call(call_params("nope", json!({}), json!({}))).await;
    assert_eq!(r["error"]["code"], -32602);
    assert_eq!(r["error"]["message"], "Tool nope not found");
}

#[tokio::test]
async fn envelope_errors_and_lists() {
    let mut h = Harness::new(server());
    let r = h.send("tools/list", json!({})).await;
    assert_eq!(r["error"]["code"], -32602);
    assert!(r["error"]["message"].as_str().unwrap().contains("_meta"));
    let meta = json!({"_meta": counter()["_meta"]});
    let r = h.send("tools/list", meta.clone()).await;
    let names: Vec<&str> = r["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        names,
        [
            "increase-counter",
            "other-tool",
            "survey",
            "ask",
            "redeem",
            "strict-confirm",
            "optional-confirm"
        ]
    );
    assert_eq!(
        r["result"]["tools"][0]["inputSchema"]["properties"]["current"]["description"],
        "Current counter value"
    );
    let r = h.send("server/discover", meta.clone()).await;
    assert_eq!(r["result"]["supportedVersions"], json!(["2026-07-28"]));
    assert!(r["result"]["capabilities"]["tools"].is_object());
    let r = h.send("nothing/here", meta.clone()).await;
    assert_eq!(r["error"]["code"], -32601);
    let mut bad_cursor = meta.clone();
    bad_cursor["cursor"] = json!("zzz");
    assert_eq!(
        h.send("tools/list", bad_cursor).await["error"]["code"],
        -32602
    );
    let mut read = meta.clone();
    read["uri"] = json!("counter://value");
    let r = h.send("resources/read", read).await;
    assert_eq!(r["result"]["contents"][0]["text"], "10");
    assert_eq!(r["result"]["ttlMs"], 0);
}

#[tokio::test]
async fn pagination_walks_every_tool_once() {
    let mut b = McpServer::builder("many", "1").page_size(2);
    for i in 0..5 {
        b = b.tool(ToolDef::new(
            format!("t{i}"),
            |_c: Context, _a: Empty| async { "x" },
        ));
    }
    let mut h = Harness::new(b.build().unwrap());
    let mut seen = Vec::new();
    let mut params = json!({"_meta": counter()["_meta"]});
    loop {
        let r = h.send("tools/list", params.clone()).await;
        for t in r["result"]["tools"].as_array().unwrap() {
            seen.push(t["name"].as_str().unwrap().to_owned());
        }
        match r["result"]["nextCursor"].as_str() {
            Some(c) => params["cursor"] = json!(c),
            None => break,
        }
    }
    assert_eq!(seen, ["t0", "t1", "t2", "t3", "t4"]);
}

#[test]
fn the_server_is_send_and_sync() {
    fn is<T: Send + Sync + 'static>() {}
    is::<McpServer>();
    is::<Arc<McpServer>>();
}

#[derive(Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Address {
    street: String,
}
#[derive(Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Profile {
    name: String,
    address: Address,
}
impl Form for Profile {
    const KEY: &'static str = "profile";
}

#[test]
fn a_tool_accepting_a_nested_form_fails_to_build() {
    let err = McpServer::builder("s", "1")
        .tool(
            ToolDef::new("t", |_c: Context, _a: Empty| async { "x" }).accepts_upfront::<Profile>(),
        )
        .build()
        .unwrap_err();
    assert!(err.to_string().contains("form field `address`"), "{err}");
}

#[tokio::test]
async fn asking_a_nested_form_is_a_server_error_naming_the_field() {
    let server = McpServer::builder("s", "1")
        .request_state(codec(Duration::from_secs(600)))
        .tool(ToolDef::new("t", |ctx: Context, _a: Empty| async move {
            ctx.ask::<Profile>("Who are you?")?;
            Ok::<_, HandlerError>("x")
        }))
        .build()
        .unwrap();
    let r = Harness::new(server)
        .call(call_params("t", json!({}), json!({"elicitation": {}})))
        .await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let message = r["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("address") && message.contains("Profile"),
        "{message}"
    );
}

#[tokio::test]
async fn tickets_are_bound_to_the_audience() {
    let build = |audience: &str| {
        McpServer::builder("stateless-mrtr-elicitation-demo", "1.0.0")
            .audience(audience)
            .request_state(codec(Duration::from_secs(600)))
            .tool(counter_tool("increase-counter"))
            .build()
            .unwrap()
    };
    let mut staging = Harness::new(build("https://staging.example/mcp"));
    let mut production = Harness::new(build("https://example.com/mcp"));
    let s1 = state(&staging.call(counter()).await);
    let answer = json!({"amount": accept(json!({"amount": 5}))});
    assert_invalid_state(
        &production
            .call(with(counter(), Some(&s1), answer.clone()))
            .await,
    );
    let r = staging.call(with(counter(), Some(&s1), answer)).await;
    assert!(
        r["result"]["inputRequests"]["confirmation"].is_object(),
        "{r}"
    );
}

#[tokio::test]
async fn a_caught_decline_stays_declined_in_later_rounds() {
    let mut h = Harness::new(server());
    let p = call_params("optional-confirm", json!({}), json!({"elicitation": {}}));
    let r1 = h.call(p.clone()).await;
    let r2 = h
        .call(with(
            p.clone(),
            Some(&state(&r1)),
            json!({"confirm": {"action": "decline"}}),
        ))
        .await;
    assert!(r2["result"]["inputRequests"]["name"].is_object(), "{r2}");
    assert!(
        r2["result"]["inputRequests"].get("confirm").is_none(),
        "{r2}"
    );
    let r3 = h
        .call(with(
            p,
            Some(&state(&r2)),
            json!({"name": accept(json!({"name": "Ada"}))}),
        ))
        .await;
    assert_eq!(text(&r3), "Ada: confirmed=false", "{r3}");
}

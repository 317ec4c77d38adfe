//! The stdio binding and the era bridge, driven through an in-memory pipe.
//!
//! Rules quoted from `basic/transports/stdio.mdx` (2026-07-28) and
//! `basic/versioning.mdx` are checked where they apply.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use tessera_state::{KeyRing, RequestStateCodec, StateKey};
use tessera_stdio::{StdioOptions, serve_connection};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, DuplexStream};

/// The client's end of a server connection.
struct Pipe {
    to_server: Option<DuplexStream>,
    from_server: tokio::io::Lines<BufReader<DuplexStream>>,
    served: tokio::task::JoinHandle<std::io::Result<()>>,
}

/// The counter's handler, with the library's default for an answer that
/// does not fit (asked again, saying why) where the reference counter
/// refuses it: what the era bridge does with a question asked again is tested too.
fn server() -> Arc<tessera_server::McpServer> {
    let key = StateKey::from_secret_str("a test secret that is at least 32 bytes long").unwrap();
    let codec = RequestStateCodec::new(KeyRing::new("k1", key).unwrap());
    let tool =
        tessera_server::ToolDef::new("increase-counter", |ctx, args: counter::CounterArgs| {
            counter::increase_counter(ctx, tessera_server::Arguments(args))
        })
        .on_refusal(counter::CANCELLED)
        .asks();
    let builder = tessera_server::McpServer::builder(counter::SERVER_NAME, "1.0.0");
    Arc::new(builder.request_state(codec).tool(tool).build().unwrap())
}

impl Pipe {
    fn start() -> Self {
        Self::start_with(StdioOptions::default())
    }

    fn start_with(options: StdioOptions) -> Self {
        Self::serving(server(), options)
    }

    fn serving(server: Arc<tessera_server::McpServer>, options: StdioOptions) -> Self {
        let (client_out, server_in) = tokio::io::duplex(1 << 20);
        let (server_out, client_in) = tokio::io::duplex(1 << 20);
        let served = tokio::spawn(serve_connection(
            server,
            server_in,
            server_out,
            options,
            std::future::pending(),
        ));
        Self {
            to_server: Some(client_out),
            from_server: BufReader::new(client_in).lines(),
            served,
        }
    }

    async fn send_raw(&mut self, line: &str) {
        let w = self.to_server.as_mut().expect("input still open");
        w.write_all(line.as_bytes()).await.unwrap();
        w.write_all(b"\n").await.unwrap();
    }

    async fn send(&mut self, message: Value) {
        self.send_raw(&message.to_string()).await;
    }

    /// The next message the server writes; every line must be one JSON-RPC message.
    async fn recv(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.from_server.next_line())
            .await
            .expect("the server answered within 10 s")
            .unwrap()
            .expect("the server's output is still open");
        let v: Value = serde_json::from_str(&line)
            .unwrap_or_else(|e| panic!("stdout carried a non-JSON line {line:?}: {e}"));
        assert_eq!(v["jsonrpc"], "2.0", "{v}");
        v
    }

    /// Nothing arrives within `wait`.
    async fn silent_for(&mut self, wait: Duration) {
        if let Ok(line) = tokio::time::timeout(wait, self.from_server.next_line()).await {
            panic!("expected silence, got {line:?}");
        }
    }

    async fn close_input(&mut self) {
        self.to_server.take();
    }
}

fn modern_meta(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities,
    })
}

fn call(id: Value, extra: Value) -> Value {
    let mut params = json!({
        "name": "increase-counter",
        "arguments": {"current": 10},
        "_meta": modern_meta(json!({"elicitation": {"form": {}}})),
    });
    params
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params})
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn a_modern_client_completes_the_three_rounds_with_per_request_meta() {
    let mut pipe = Pipe::start();
    pipe.send(call(json!(1), json!({}))).await;
    let r1 = pipe.recv().await;
    assert_eq!(r1["id"], 1);
    assert_eq!(r1["result"]["resultType"], "input_required");
    let amount = &r1["result"]["inputRequests"]["amount"];
    assert_eq!(amount["method"], "elicitation/create");
    let state = r1["result"]["requestState"].clone();

    pipe.send(call(
        json!("two"),
        json!({"inputResponses": {"amount": {"action": "accept", "content": {"amount": 5}}}, "requestState": state}),
    ))
    .await;
    let r2 = pipe.recv().await;
    assert_eq!(r2["id"], "two");
    assert!(r2["result"]["inputRequests"]["confirmation"].is_object());
    let state = r2["result"]["requestState"].clone();

    pipe.send(call(
        json!(3),
        json!({"inputResponses": {"confirmation": {"action": "accept", "content": {"confirm": true}}}, "requestState": state}),
    ))
    .await;
    let r3 = pipe.recv().await;
    assert_eq!(r3["id"], 3);
    assert_eq!(r3["result"]["resultType"], "complete");
    assert_eq!(
        text(&r3["result"]),
        "Counter increased by 5; next value is 15"
    );
}

#[tokio::test]
async fn requests_are_served_concurrently_and_answered_by_id() {
    let mut pipe = Pipe::start();
    for id in 1..=20 {
        pipe.send(json!({"jsonrpc": "2.0", "id": id, "method": "tools/list",
            "params": {"_meta": modern_meta(json!({}))}}))
            .await;
    }
    let mut ids: Vec<i64> = Vec::new();
    for _ in 1..=20 {
        let r = pipe.recv().await;
        assert_eq!(r["result"]["tools"][0]["name"], "increase-counter");
        ids.push(r["id"].as_i64().unwrap());
    }
    ids.sort_unstable();
    assert_eq!(ids, (1..=20).collect::<Vec<_>>());
}

#[tokio::test]
async fn a_malformed_line_gets_a_json_rpc_error_and_the_server_keeps_reading() {
    let mut pipe = Pipe::start();
    pipe.send_raw("{this is not json").await;
    let e = pipe.recv().await;
    assert_eq!(e["id"], Value::Null);
    assert_eq!(e["error"]["code"], -32700);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("not valid JSON")
    );

    pipe.send_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#)
        .await;
    let e = pipe.recv().await;
    assert_eq!(e["error"]["code"], -32600);
    assert!(e["error"]["message"].as_str().unwrap().contains("batches"));

    pipe.send_raw(r#"{"jsonrpc":"1.0","id":7,"method":"tools/list"}"#)
        .await;
    let e = pipe.recv().await;
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!(7), json!(-32600))
    );

    pipe.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
        "params": {"_meta": modern_meta(json!({}))}}))
        .await;
    assert_eq!(pipe.recv().await["id"], 2);
}

#[tokio::test]
async fn an_unknown_method_is_method_not_found_and_a_missing_envelope_is_named() {
    let mut pipe = Pipe::start();
    pipe.send(json!({"jsonrpc": "2.0", "id": 1, "method": "no/such",
        "params": {"_meta": modern_meta(json!({}))}}))
        .await;
    let e = pipe.recv().await;
    assert_eq!(e["error"]["code"], -32601);
    assert!(e["error"]["message"].as_str().unwrap().contains("no/such"));

    // "All request metadata for the stdio transport is carried inline in the JSON-RPC message body."
    pipe.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}))
        .await;
    let e = pipe.recv().await;
    assert_eq!(e["error"]["code"], -32602);
    assert!(
        e["error"]["message"].as_str().unwrap().contains("_meta"),
        "{e}"
    );
}

#[tokio::test]
async fn an_over_long_line_is_refused_without_being_buffered() {
    let mut pipe = Pipe::start_with(StdioOptions {
        max_line_bytes: 1000,
        ..StdioOptions::default()
    });
    pipe.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"p":"{}"}}}}"#,
        "a".repeat(5000)
    ))
    .await;
    let e = pipe.recv().await;
    assert_eq!(e["error"]["code"], -32600);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("at most 1000 bytes")
    );
    pipe.send(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list",
        "params": {"_meta": modern_meta(json!({}))}}))
        .await;
    assert_eq!(pipe.recv().await["id"], 2);
}

#[tokio::test]
async fn end_of_input_ends_the_server_after_answering_what_it_read() {
    // "Servers SHOULD exit promptly when their standard input is closed or reads return end-of-file."
    let mut pipe = Pipe::start();
    pipe.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": modern_meta(json!({}))}}))
        .await;
    pipe.close_input().await;
    assert_eq!(pipe.recv().await["id"], 1);
    let ended = tokio::time::timeout(Duration::from_secs(5), &mut pipe.served)
        .await
        .expect("the server ended within 5 s of end of input");
    ended.unwrap().unwrap();
    assert!(pipe.from_server.next_line().await.unwrap().is_none());
}

#[tokio::test]
async fn a_reused_id_in_flight_is_refused() {
    let mut pipe = legacy_client("2025-11-25", json!({"elicitation": {}})).await;
    pipe.send(legacy_call(5)).await;
    let asked = pipe.recv().await;
    assert_eq!(asked["method"], "elicitation/create");
    pipe.send(legacy_call(5)).await;
    let e = pipe.recv().await;
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!(5), json!(-32600))
    );
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already in flight")
    );
}

// --- The era bridge ---

async fn legacy_client(version: &str, capabilities: Value) -> Pipe {
    let mut pipe = Pipe::start();
    pipe.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": version,
            "capabilities": capabilities,
            "clientInfo": {"name": "legacy-test", "version": "1.0"}
        }}),
    )
    .await;
    let init = pipe.recv().await;
    assert_eq!(init["result"]["protocolVersion"], version, "{init}");
    assert_eq!(init["result"]["serverInfo"]["name"], counter::SERVER_NAME);
    pipe.send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    pipe
}

fn legacy_call(id: i64) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": "increase-counter", "arguments": {"current": 10}}})
}

/// Answers a pushed request with `result`, after checking it names `key`.
async fn answer(pipe: &mut Pipe, key: &str, result: Value) -> Value {
    let asked = pipe.recv().await;
    assert_eq!(asked["method"], "elicitation/create", "{asked}");
    assert_eq!(asked["params"]["_meta"]["dev.tessera/inputKey"], key);
    assert!(asked["id"].is_number() || asked["id"].is_string());
    pipe.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": result}))
        .await;
    asked
}

#[tokio::test]
async fn an_initialize_era_client_gets_the_questions_pushed_and_one_final_result() {
    let mut pipe = legacy_client("2025-11-25", json!({"elicitation": {"form": {}}})).await;
    pipe.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list"}))
        .await;
    let list = pipe.recv().await;
    assert_eq!(list["result"]["tools"][0]["name"], "increase-counter");
    assert!(list["result"].get("resultType").is_none(), "{list}");

    pipe.send(legacy_call(2)).await;
    let asked = answer(
        &mut pipe,
        "amount",
        json!({"action": "accept", "content": {"amount": 5}}),
    )
    .await;
    assert_eq!(asked["params"]["mode"], "form");
    assert_eq!(
        asked["params"]["message"],
        "By how much should the counter increase?"
    );
    assert_eq!(
        asked["params"]["requestedSchema"]["required"],
        json!(["amount"])
    );
    let asked = answer(
        &mut pipe,
        "confirmation",
        json!({"action": "accept", "content": {"confirm": true}}),
    )
    .await;
    assert_eq!(asked["params"]["message"], "Increase 10 by 5?");
    let done = pipe.recv().await;
    assert_eq!(done["id"], 2);
    assert_eq!(
        text(&done["result"]),
        "Counter increased by 5; next value is 15"
    );
    assert!(
        done["result"].get("resultType").is_none(),
        "old shape: {done}"
    );
    assert!(done["result"].get("requestState").is_none());
}

#[tokio::test]
async fn decline_and_cancel_reach_the_handler_unchanged() {
    for (action, round) in [("decline", 1), ("cancel", 1), ("decline", 2), ("cancel", 2)] {
        let mut pipe = legacy_client("2025-11-25", json!({"elicitation": {}})).await;
        pipe.send(legacy_call(1)).await;
        if round == 2 {
            answer(
                &mut pipe,
                "amount",
                json!({"action": "accept", "content": {"amount": 5}}),
            )
            .await;
            answer(&mut pipe, "confirmation", json!({"action": action})).await;
        } else {
            answer(&mut pipe, "amount", json!({"action": action})).await;
        }
        let done = pipe.recv().await;
        assert_eq!(
            text(&done["result"]),
            "Counter increase cancelled.",
            "{action} in round {round}"
        );
    }
    let mut pipe = legacy_client("2025-11-25", json!({"elicitation": {}})).await;
    pipe.send(legacy_call(1)).await;
    answer(
        &mut pipe,
        "amount",
        json!({"action": "accept", "content": {"amount": 5}}),
    )
    .await;
    answer(
        &mut pipe,
        "confirmation",
        json!({"action": "accept", "content": {"confirm": false}}),
    )
    .await;
    assert_eq!(
        text(&pipe.recv().await["result"]),
        "Counter increase cancelled."
    );
}

#[tokio::test]
async fn a_2025_06_18_client_gets_forms_without_the_later_mode_member() {
    let mut pipe = legacy_client("2025-06-18", json!({"elicitation": {}})).await;
    pipe.send(legacy_call(1)).await;
    let asked = answer(
        &mut pipe,
        "amount",
        json!({"action": "accept", "content": {"amount": 1}}),
    )
    .await;
    assert!(asked["params"].get("mode").is_none(), "{asked}");
    answer(
        &mut pipe,
        "confirmation",
        json!({"action": "accept", "content": {"confirm": true}}),
    )
    .await;
    assert_eq!(
        text(&pipe.recv().await["result"]),
        "Counter increased by 1; next value is 11"
    );
}

#[tokio::test]
async fn a_client_that_declared_no_elicitation_gets_the_same_refusal_as_on_2026_07_28() {
    let mut legacy = legacy_client("2025-11-25", json!({})).await;
    legacy.send(legacy_call(1)).await;
    let refused_legacy = legacy.recv().await;

    let mut modern = Pipe::start();
    let mut request = call(json!(1), json!({}));
    request["params"]["_meta"] = modern_meta(json!({}));
    modern.send(request).await;
    let refused_modern = modern.recv().await;

    assert_eq!(refused_legacy["error"]["code"], -32021, "{refused_legacy}");
    assert_eq!(refused_legacy["error"], refused_modern["error"]);
}

#[tokio::test]
async fn an_invalid_answer_is_asked_again_as_on_2026_07_28() {
    // Content that does not fit the form is not a refusal: the same question
    // is pushed again, saying why, and a valid answer then completes the call.
    let mut pipe = legacy_client("2025-11-25", json!({"elicitation": {}})).await;
    pipe.send(legacy_call(1)).await;
    answer(
        &mut pipe,
        "amount",
        json!({"action": "accept", "content": {"amount": "five"}}),
    )
    .await;
    let again = answer(
        &mut pipe,
        "amount",
        json!({"action": "accept", "content": {"amount": 5}}),
    )
    .await;
    let message = again["params"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("not accepted"), "{again}");
    answer(
        &mut pipe,
        "confirmation",
        json!({"action": "accept", "content": {"confirm": true}}),
    )
    .await;
    assert_eq!(
        text(&pipe.recv().await["result"]),
        "Counter increased by 5; next value is 15"
    );
}

#[tokio::test]
async fn a_client_error_for_a_pushed_request_ends_the_call_with_an_error_naming_it() {
    let mut pipe = legacy_client("2025-11-25", json!({"elicitation": {}})).await;
    pipe.send(legacy_call(1)).await;
    let asked = pipe.recv().await;
    pipe.send(
        json!({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": -1, "message": "no UI"}}),
    )
    .await;
    let e = pipe.recv().await;
    assert_eq!(
        (e["id"].clone(), e["error"]["code"].clone()),
        (json!(1), json!(-32603))
    );
    assert!(e["error"]["message"].as_str().unwrap().contains("'amount'"));
    assert!(e["error"]["message"].as_str().unwrap().contains("no UI"));
}

#[tokio::test]
async fn a_cancelled_call_sends_nothing_more_and_the_connection_goes_on() {
    // "Servers ... MUST NOT send any further messages for it."
    let mut pipe = legacy_client("2025-11-25", json!({"elicitation": {}})).await;
    pipe.send(legacy_call(9)).await;
    let asked = pipe.recv().await;
    pipe.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 9, "reason": "user gave up"}}),
    )
    .await;
    pipe.send(json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"action": "accept", "content": {"amount": 5}}}))
        .await;
    pipe.silent_for(Duration::from_millis(300)).await;
    pipe.send(json!({"jsonrpc": "2.0", "id": 10, "method": "ping"}))
        .await;
    assert_eq!(
        pipe.recv().await,
        json!({"jsonrpc": "2.0", "id": 10, "result": {}})
    );
    // The cancelled id is free again, and the new request under it is tracked as its own.
    pipe.send(legacy_call(9)).await;
    assert_eq!(pipe.recv().await["method"], "elicitation/create");
    pipe.send(legacy_call(9)).await;
    let e = pipe.recv().await;
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("already in flight"),
        "{e}"
    );
}

#[tokio::test]
async fn end_of_input_while_a_question_waits_ends_the_server_promptly() {
    let mut pipe = legacy_client("2025-11-25", json!({"elicitation": {}})).await;
    pipe.send(legacy_call(1)).await;
    pipe.recv().await;
    pipe.close_input().await;
    tokio::time::timeout(Duration::from_secs(2), &mut pipe.served)
        .await
        .expect("no waiting on an answer that cannot come")
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn both_eras_share_one_connection() {
    // "A dual-era server MAY serve both eras concurrently on the same endpoint or process."
    let mut pipe = legacy_client("2025-11-25", json!({"elicitation": {}})).await;
    pipe.send(call(json!("m"), json!({}))).await;
    let modern = pipe.recv().await;
    assert_eq!(modern["result"]["resultType"], "input_required");
}

/// A server whose tool asks the client's roots, then its model.
fn roots_and_sampling_server() -> Arc<tessera_server::McpServer> {
    use tessera_server::{Context, ToolDef};
    async fn survey(ctx: Context, _: ()) -> tessera_server::Result<String> {
        let roots = ctx.list_roots("roots")?;
        let params = serde_json::from_value(json!({
            "messages": [{"role": "user", "content": {"type": "text", "text": "Name a root"}}],
            "maxTokens": 10
        }))?;
        let sampled = ctx.sample("pick", params)?;
        let said = serde_json::to_value(&sampled.content)?;
        Ok(format!(
            "{} roots; the model said {}",
            roots.roots.len(),
            said["text"]
        ))
    }
    let key = StateKey::from_secret_str("a test secret that is at least 32 bytes long").unwrap();
    let codec = RequestStateCodec::new(KeyRing::new("k1", key).unwrap());
    Arc::new(
        tessera_server::McpServer::builder("survey", "1.0.0")
            .request_state(codec)
            .tool(ToolDef::new("survey", survey))
            .build()
            .unwrap(),
    )
}

#[tokio::test]
async fn roots_and_sampling_are_pushed_as_the_requests_they_are() {
    let mut pipe = Pipe::serving(roots_and_sampling_server(), StdioOptions::default());
    pipe.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {"roots": {"listChanged": true}, "sampling": {}},
            "clientInfo": {"name": "t", "version": "1"}
        }}),
    )
    .await;
    pipe.recv().await;
    pipe.send(json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "survey", "arguments": {}}}))
        .await;
    let asked = pipe.recv().await;
    assert_eq!(asked["method"], "roots/list", "{asked}");
    pipe.send(json!({"jsonrpc": "2.0", "id": asked["id"],
        "result": {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}}))
        .await;
    let asked = pipe.recv().await;
    assert_eq!(asked["method"], "sampling/createMessage", "{asked}");
    assert_eq!(asked["params"]["maxTokens"], 10);
    assert_eq!(asked["params"]["_meta"]["dev.tessera/inputKey"], "pick");
    pipe.send(json!({"jsonrpc": "2.0", "id": asked["id"], "result": {
        "role": "assistant", "content": {"type": "text", "text": "b"}, "model": "m"}}))
        .await;
    let done = pipe.recv().await;
    assert_eq!(
        text(&done["result"]),
        "2 roots; the model said \"b\"",
        "{done}"
    );
}

#[tokio::test]
async fn a_malformed_response_is_never_answered_and_fails_its_question() {
    let mut pipe = legacy_client("2025-11-25", json!({"elicitation": {}})).await;
    pipe.send(legacy_call(1)).await;
    let asked = pipe.recv().await;
    // An error whose code is not a number: not valid JSON-RPC, and its id is the server's.
    pipe.send(json!({"jsonrpc": "2.0", "id": asked["id"], "error": {"code": "x", "message": "?"}}))
        .await;
    let e = pipe.recv().await;
    assert_eq!(
        e["id"], 1,
        "only the call is answered, never the server's own id: {e}"
    );
    assert_eq!(e["error"]["code"], -32603);
    assert!(
        e["error"]["message"].as_str().unwrap().contains("'amount'"),
        "{e}"
    );
}

#[tokio::test]
async fn an_unanswered_question_times_out_and_is_withdrawn() {
    let mut pipe = Pipe::start_with(StdioOptions {
        question_timeout: Duration::from_millis(200),
        ..StdioOptions::default()
    });
    pipe.send(
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
        "clientInfo": {"name": "t", "version": "1"}}}),
    )
    .await;
    pipe.recv().await;
    pipe.send(legacy_call(1)).await;
    let asked = pipe.recv().await;
    let withdrawn = pipe.recv().await;
    assert_eq!(
        withdrawn["method"], "notifications/cancelled",
        "{withdrawn}"
    );
    assert_eq!(withdrawn["params"]["requestId"], asked["id"]);
    let e = pipe.recv().await;
    assert_eq!(e["id"], 1);
    assert!(
        e["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did not answer input request 'amount'"),
        "{e}"
    );
}

#[tokio::test]
async fn cancelling_a_call_withdraws_its_open_question() {
    let mut pipe = legacy_client("2025-11-25", json!({"elicitation": {}})).await;
    pipe.send(legacy_call(4)).await;
    let asked = pipe.recv().await;
    pipe.send(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 4}}),
    )
    .await;
    let withdrawn = pipe.recv().await;
    assert_eq!(
        withdrawn["method"], "notifications/cancelled",
        "{withdrawn}"
    );
    assert_eq!(withdrawn["params"]["requestId"], asked["id"]);
}

#[tokio::test]
async fn a_closed_output_ends_the_server() {
    let mut pipe = legacy_client("2025-11-25", json!({"elicitation": {}})).await;
    pipe.send(legacy_call(1)).await;
    pipe.recv().await;
    // The client stops reading: its end of our output is gone, which the
    // server learns on its next write (here, the answer to a ping).
    let Pipe {
        mut to_server,
        from_server,
        served,
    } = pipe;
    drop(from_server);
    let w = to_server.as_mut().unwrap();
    w.write_all(b"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n")
        .await
        .unwrap();
    tokio::time::timeout(Duration::from_secs(5), served)
        .await
        .expect("the server ended once its output was closed")
        .unwrap()
        .ok();
    drop(to_server);
}

// --- subscriptions/listen over stdio ---

#[tokio::test]
async fn listen_over_stdio_carries_subscription_ids_and_ends_at_shutdown() {
    let server = server();
    let (client_out, server_in) = tokio::io::duplex(1 << 16);
    let (server_out, client_in) = tokio::io::duplex(1 << 16);
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let served = tokio::spawn(serve_connection(
        Arc::clone(&server),
        server_in,
        server_out,
        StdioOptions::default(),
        async {
            let _ = stopped.await;
        },
    ));
    let mut pipe = Pipe {
        to_server: Some(client_out),
        from_server: BufReader::new(client_in).lines(),
        served,
    };
    // Two subscriptions on one channel, told apart by their ids.
    for (id, filter) in [("a", json!({"toolsListChanged": true})), ("b", json!({}))] {
        pipe.send(
            json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
            "params": {"_meta": modern_meta(json!({})), "notifications": filter}}),
        )
        .await;
        let ack = pipe.recv().await;
        assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
        assert_eq!(
            ack["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
            id
        );
    }
    server.notifier().tools_list_changed().await.unwrap();
    let n = pipe.recv().await;
    assert_eq!(n["method"], "notifications/tools/list_changed");
    assert_eq!(
        n["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "a"
    );
    // Cancelling one ends it silently; the other stays.
    pipe.send(json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": "a"}}))
        .await;
    pipe.silent_for(Duration::from_millis(200)).await;
    // Shutdown: the remaining subscription gets its graceful result.
    stop.send(()).unwrap();
    let done = pipe.recv().await;
    assert_eq!(done["id"], "b");
    assert_eq!(
        done["result"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        "b"
    );
    tokio::time::timeout(Duration::from_secs(5), &mut pipe.served)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
}

#[tokio::test]
async fn end_of_input_ends_open_subscriptions_at_once() {
    let mut pipe = Pipe::start();
    pipe.send(
        json!({"jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {"_meta": modern_meta(json!({})), "notifications": {"toolsListChanged": true}}}),
    )
    .await;
    pipe.recv().await;
    pipe.close_input().await;
    tokio::time::timeout(Duration::from_secs(2), &mut pipe.served)
        .await
        .expect("no waiting for the shutdown grace on a subscription nobody can hear")
        .unwrap()
        .unwrap();
}

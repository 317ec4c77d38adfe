use release_gate::{Go, Rollout, YesNo, release_gate};
use tessera::McpServer;
use tessera::serde_json::json;
use tessera::testing::TestClient;

fn client() -> TestClient {
    TestClient::build(release_gate(McpServer::builder("release-gate", "0.1.0"))).unwrap()
}

#[tokio::test]
async fn the_gate_opens_after_a_ticket_a_percentage_and_a_yes() {
    let done = client()
        .call("open-gate", json!({"service": "checkout"}))
        .accept(Rollout {
            ticket: "CHG-1234".into(),
            rollout: 5,
        })
        .accept(Go { answer: YesNo::Yes })
        .run()
        .await
        .unwrap();
    assert_eq!(done.text(), "CHG-1234 is rolling out to 5% of checkout.");
    assert_eq!(done.rounds(), 3);
    assert_eq!(done.question(1, "rollout"), Some("What goes out for checkout?"));
}

#[tokio::test]
async fn a_decline_keeps_the_gate_closed() {
    let done = client()
        .call("open-gate", json!({"service": "checkout"}))
        .decline::<Rollout>()
        .run()
        .await
        .unwrap();
    assert_eq!(done.text(), "The gate stays closed.");
}

#[tokio::test]
async fn the_prompt_and_the_resource() {
    let client = client();
    let prompt = client
        .get_prompt("ticket_help", json!({"service": "checkout"}))
        .run()
        .await
        .unwrap();
    assert!(prompt.text().starts_with("Write a change ticket for checkout"));
    let policy = client.read_resource("gate://policy").run().await.unwrap();
    assert_eq!(policy.text(), "No rollout above 10% before a day at 10%.");
}

/// The form's fields go out in the order they are declared: the ticket,
/// then the rollout (alphabetical order would ask the rollout first).
#[tokio::test]
async fn form_fields_go_out_in_declaration_order() {
    let key = tessera::state::StateKey::generate().unwrap();
    let codec = tessera::state::RequestStateCodec::new(tessera::state::KeyRing::new("k1", key).unwrap());
    let server = release_gate(McpServer::builder("release-gate", "0.1.0"))
        .request_state(codec)
        .build()
        .unwrap();
    let request = tessera::protocol::JsonRpcRequest::new(
        tessera::protocol::RequestId::Integer(1.into()),
        "tools/call",
        Some(json!({
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
                "io.modelcontextprotocol/clientCapabilities": {"elicitation": {"form": {}}}
            },
            "name": "open-gate",
            "arguments": {"service": "checkout"}
        })),
    );
    let handled = server.handle(request, tessera::RequestFacts::modern()).await;
    let wire = handled.result.unwrap().get().to_owned();
    // The form's properties, as they are on the wire (the question's key is
    // `rollout` too, so look inside the requested schema).
    let schema = &wire[wire.find("\"requestedSchema\"").expect("a requested schema")..];
    let at = |field: &str| schema.find(&format!("\"{field}\":{{")).unwrap_or_else(|| panic!("{field} in {wire}"));
    assert!(at("ticket") < at("rollout"), "{wire}");
}

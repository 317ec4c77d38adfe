//! An initialize-era-only server over Streamable HTTP (the TypeScript SDK
//! 1.x): the client attempts a modern request, reads the 400 it gets, falls
//! back to `initialize` (keeping the session it is given) and answers the
//! `elicitation/create` the server pushes on the call's stream with its
//! Elicitor. Streamable HTTP, Backward Compatibility: "If the body is empty or
//! is not a recognized modern JSON-RPC error, fall back to initialize and
//! continue with the legacy version for subsequent requests."

use std::collections::HashMap;
use std::sync::Arc;

use serde_json::json;
use tessera_client::{McpClient, ScriptedAnswer, ScriptedElicitor};
use test_harness::LegacyHttpServer;

fn elicitor(answer: ScriptedAnswer) -> Arc<ScriptedElicitor> {
    Arc::new(ScriptedElicitor::new(HashMap::from([(
        "elicitation".to_owned(),
        answer,
    )])))
}

#[tokio::test]
async fn the_client_falls_back_to_initialize_and_answers_pushed_questions() {
    let server = LegacyHttpServer::start();
    for (answer, text) in [
        (
            ScriptedAnswer::Accept(json!({"name": "Ada"}).as_object().unwrap().clone()),
            "Hello, Ada!",
        ),
        (ScriptedAnswer::Decline, "No greeting."),
    ] {
        let client = McpClient::builder(&server.url)
            .elicitor(elicitor(answer))
            .build()
            .unwrap();
        // The first request is the probe: a modern tools/list the server refuses with 400.
        let tools = client.list_tools().await.unwrap();
        assert_eq!(tools[0].name, "greet");
        assert!(client.is_initialize_era().await.unwrap());
        assert_eq!(client.protocol_version(), "2025-11-25");
        let result = client.call_tool("greet", json!({})).await.unwrap();
        assert_eq!(result.content[0].as_text(), Some(text));
        let features = client.server_features().await.unwrap();
        assert!(!features.tasks && !features.listen, "{features:?}");
    }
}

#[tokio::test]
async fn a_client_without_an_elicitor_declares_no_elicitation_to_an_old_server() {
    // The handshake's capabilities say what the client can answer: without an
    // Elicitor none, so the server does not ask and says why.
    let server = LegacyHttpServer::start();
    let client = McpClient::builder(&server.url).build().unwrap();
    let result = client.call_tool("greet", json!({})).await.unwrap();
    assert_eq!(result.is_error, Some(true));
    assert_eq!(
        result.content[0].as_text(),
        Some("Client does not support form elicitation.")
    );
}

//! The counter through the in-process test kit: every flow of the tutorial,
//! no socket, no transport.

use serde_json::json;
use tessera::state::{KeyRing, RequestStateCodec, StateKey};
use tessera::testing::{Answer, TestClient};

const CANCELLED: &str = "Counter increase cancelled.";

fn client() -> TestClient {
    let key = StateKey::from_secret_str("counter-kit-test-key-0123456789abcdef").unwrap();
    let codec = RequestStateCodec::new(KeyRing::new("k1", key).unwrap());
    TestClient::new(counter_tool::counter_server(codec).unwrap())
}

#[tokio::test]
async fn lists_the_tool() {
    let tools = client().list_tools().await.unwrap();
    assert_eq!(tools.len(), 1);
    assert_eq!(tools[0].name, "increase-counter");
}

#[tokio::test]
async fn accept_completes_in_three_rounds() {
    let done = client()
        .call("increase-counter", json!({"current": 10}))
        .answer("amount", Answer::accept(json!({"amount": 5})))
        .answer("confirmation", Answer::accept(json!({"confirm": true})))
        .run()
        .await
        .unwrap();
    assert_eq!(done.text(), "Counter increased by 5; next value is 15");
    assert_eq!(done.rounds(), 3);
    assert_eq!(
        done.question(1, "amount"),
        Some("By how much should the counter increase?")
    );
    assert_eq!(done.question(2, "confirmation"), Some("Increase 10 by 5?"));
}

#[tokio::test]
async fn declining_the_amount_cancels() {
    let done = client()
        .call("increase-counter", json!({"current": 10}))
        .answer("amount", Answer::Decline)
        .run()
        .await
        .unwrap();
    assert_eq!(done.text(), CANCELLED);
    assert_eq!(done.rounds(), 2);
}

#[tokio::test]
async fn cancelling_the_confirmation_cancels() {
    let done = client()
        .call("increase-counter", json!({"current": 10}))
        .answer("amount", Answer::accept(json!({"amount": 5})))
        .answer("confirmation", Answer::Cancel)
        .run()
        .await
        .unwrap();
    assert_eq!(done.text(), CANCELLED);
    assert_eq!(done.rounds(), 3);
}

#[tokio::test]
async fn not_confirming_cancels() {
    let done = client()
        .call("increase-counter", json!({"current": 10}))
        .answer("amount", Answer::accept(json!({"amount": 5})))
        .answer("confirmation", Answer::accept(json!({"confirm": false})))
        .run()
        .await
        .unwrap();
    assert_eq!(done.text(), CANCELLED);
}

/// As in the reference counter (its `acceptedContent(..)` fails, then
/// `cancelled()`): an answer that does not fit the form ends the call.
#[tokio::test]
async fn an_amount_that_is_not_a_number_cancels_the_increase() {
    let done = client()
        .call("increase-counter", json!({"current": 10}))
        .answer("amount", Answer::accept(json!({"amount": "five"})))
        .run()
        .await
        .unwrap();
    assert_eq!(done.text(), CANCELLED);
    assert_eq!(done.rounds(), 2);
}

#[tokio::test]
async fn a_question_without_a_scripted_answer_names_its_key() {
    let err = client()
        .call("increase-counter", json!({"current": 10}))
        .answer("amount", Answer::accept(json!({"amount": 5})))
        .run()
        .await
        .unwrap_err();
    let message = err.to_string();
    assert!(
        message.contains("round 2")
            && message.contains("\"confirmation\"")
            && message.contains("Increase 10 by 5?"),
        "{message}"
    );
}

#[tokio::test]
async fn an_unknown_tool_is_the_servers_error() {
    let err = client().call("nope", json!({})).run().await.unwrap_err();
    assert!(
        matches!(&err, tessera::testing::TestError::Rpc { error, .. } if error.code == -32602),
        "{err}"
    );
}

/// Arguments that do not fit the tool's input schema are the tool's error
/// result, for the model to correct; the handler does not run.
#[tokio::test]
async fn invalid_arguments_are_an_error_result() {
    let done = client()
        .call("increase-counter", json!({"current": "ten"}))
        .run()
        .await
        .unwrap();
    assert!(done.is_error(), "{:?}", done.result);
    assert!(done.text().contains("current"), "{}", done.text());
}

//! Values built with our constructors validate against the 2026-07-28 schema,
//! and malformed input is rejected with an error that names the problem.

use std::path::Path;

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::{Value, json};
use tessera_protocol::*;

fn assert_valid(definition: &str, value: &impl Serialize) {
    let text = std::fs::read_to_string(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../spec/2026-07-28/schema.json"),
    )
    .unwrap();
    let mut schema: Value = serde_json::from_str(&text).unwrap();
    schema["$ref"] = json!(format!("#/$defs/{definition}"));
    let validator = jsonschema::validator_for(&schema).unwrap();
    let value = serde_json::to_value(value).unwrap();
    let errors: Vec<String> = validator
        .iter_errors(&value)
        .map(|e| e.to_string())
        .collect();
    assert!(errors.is_empty(), "{definition}: {value} fails: {errors:?}");
}

fn amount_form() -> ElicitationSchema {
    ElicitationSchema::from_value(&json!({
        "type": "object",
        "properties": {"amount": {"type": "number", "title": "Amount"}},
        "required": ["amount"]
    }))
    .unwrap()
}

#[test]
fn constructed_results_validate() {
    assert_valid(
        "CallToolResult",
        &CallToolResult::text("Counter increased by 5; next value is 15"),
    );
    assert_valid("CallToolResult", &CallToolResult::error("bad"));
    assert_valid(
        "CallToolResult",
        &CallToolResult::structured(json!({"n": 1})),
    );

    let mut requests = IndexMap::new();
    requests.insert(
        "amount".to_owned(),
        InputRequest::Elicit(ElicitRequestParams::Form(ElicitFormParams {
            mode: Some(FormMode),
            message: "By how much should the counter increase?".into(),
            requested_schema: amount_form(),
        })),
    );
    requests.insert(
        "login".to_owned(),
        InputRequest::Elicit(ElicitRequestParams::Url(ElicitUrlParams {
            message: "Sign in".into(),
            url: "https://example.com/login".into(),
            elicitation_id: None,
        })),
    );
    requests.insert("roots".to_owned(), InputRequest::ListRoots(None));
    let ir = InputRequiredResult {
        input_requests: Some(requests),
        request_state: Some("t1e.k1.abc".into()),
        meta: None,
    };
    assert_valid("InputRequiredResult", &ir);
    assert_valid(
        "CallToolResultResponse",
        &JsonRpcResultResponse::new(
            RequestId::from(3),
            Outcome::<CallToolResult>::InputRequired(ir),
        ),
    );

    let discover = DiscoverResult {
        supported_versions: vec![LATEST_PROTOCOL_VERSION.into()],
        capabilities: ServerCapabilities {
            tools: Some(ListChangedCapability::default()),
            ..Default::default()
        },
        ttl_ms: 60_000,
        cache_scope: CacheScope::Public,
        meta: Some(ResultMeta {
            server_info: Some(Implementation::new("s", "1")),
            other: Default::default(),
        }),
        ..Default::default()
    };
    assert_valid("DiscoverResult", &discover);
    assert_valid(
        "ListToolsResult",
        &ListToolsResult {
            tools: vec![],
            ttl_ms: 0,
            cache_scope: CacheScope::Private,
            ..Default::default()
        },
    );
    assert_valid(
        "ProgressNotification",
        &JsonRpcNotification::new(
            PROGRESS_NOTIFICATION,
            ProgressNotificationParams::new(RequestId::from("t"), 1.0, Some(2.0), None),
        ),
    );
    assert_valid(
        "UnsupportedProtocolVersionError",
        &JsonRpcErrorResponse::new(
            Some(RequestId::from(1)),
            ErrorObject::new(
                UNSUPPORTED_PROTOCOL_VERSION,
                "Unsupported protocol version: 2099-01-01",
            )
            .with_data(
                serde_json::to_value(UnsupportedVersionData {
                    supported: vec![LATEST_PROTOCOL_VERSION.into()],
                    requested: Some("2099-01-01".into()),
                })
                .unwrap(),
            ),
        ),
    );
    assert_valid("ElicitResult", &ElicitResult::decline());
    assert_valid(
        "CallToolRequest",
        &JsonRpcRequest {
            jsonrpc: JsonRpcVersion,
            id: RequestId::from("x"),
            method: "tools/call".into(),
            params: Some(CallToolRequestParams {
                meta: RequestMeta::new(
                    Implementation::new("c", "1"),
                    ClientCapabilities::default(),
                ),
                name: "increase-counter".into(),
                arguments: Some(json!({"current": 10}).as_object().unwrap().clone()),
                ..Default::default()
            }),
        },
    );
}

#[test]
fn negative_cases_name_the_problem() {
    let err =
        serde_json::from_value::<InputRequiredResult>(json!({"resultType": "input_required"}))
            .unwrap_err();
    assert!(err.to_string().contains("neither"), "{err}");

    let err = serde_json::from_value::<Outcome<CallToolResult>>(
        json!({"resultType": "maybe", "content": []}),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("unknown resultType \"maybe\""),
        "{err}"
    );

    let err = serde_json::from_value::<ElicitFormParams>(json!({
        "message": "x",
        "requestedSchema": {"type": "object", "properties": {"a": {"type": "object"}}}
    }))
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("form field `a`: nested objects are not allowed"),
        "{err}"
    );

    let err = serde_json::from_value::<JsonRpcRequest>(
        json!({"jsonrpc": "2.0", "id": 1.5, "method": "x"}),
    )
    .unwrap_err();
    assert!(
        err.to_string().contains("must be a string or an integer"),
        "{err}"
    );
}

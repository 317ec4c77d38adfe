//! `Mcp-Param-{Name}` headers (`x-mcp-header`) checked against the arguments
//! over real HTTP. The spec's rules, quoted where they are tested.

use serde_json::{Value, json};
use tessera_http::EndpointOptions;
use tessera_server::{BuildError, McpServer, ToolDef};

mod support;
use support::{body, raw, start_with};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Query {
    #[schemars(extend("x-mcp-header" = "Region"))]
    region: Option<String>,
    #[schemars(extend("x-mcp-header" = "Priority"))]
    priority: Option<i64>,
    query: String,
}

fn server() -> McpServer {
    McpServer::builder("param-headers", "1.0.0")
        .tool(ToolDef::new(
            "execute_sql",
            |_ctx: tessera_server::Context, q: Query| async move {
                format!("{} in {:?} at {:?}", q.query, q.region, q.priority)
            },
        ))
        .build()
        .unwrap()
}

async fn call(
    addr: std::net::SocketAddr,
    arguments: Value,
    params: &[(&str, &str)],
) -> (u16, Value) {
    let mut headers = vec![
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "execute_sql"),
    ];
    headers.extend_from_slice(params);
    let request = body(
        1,
        "tools/call",
        json!({"name": "execute_sql", "arguments": arguments}),
    );
    let r = raw(addr, "POST", "/mcp", &headers, &request).await;
    (r.status, r.json())
}

fn mismatch(reply: &(u16, Value)) -> bool {
    reply.0 == 400 && reply.1["error"]["code"] == -32020
}

#[tokio::test]
async fn mirrored_parameters_must_match_the_body() {
    let addr = start_with(server(), EndpointOptions::default()).await;
    let args = json!({"region": "us-west1", "priority": 42, "query": "SELECT 1"});
    // "Parameter value provided: Server MUST validate header matches body".
    let ok = call(
        addr,
        args.clone(),
        &[
            ("Mcp-Param-Region", "us-west1"),
            ("Mcp-Param-Priority", "42"),
        ],
    )
    .await;
    assert_eq!(ok.0, 200, "{}", ok.1);
    assert_eq!(
        ok.1["result"]["content"][0]["text"],
        "SELECT 1 in Some(\"us-west1\") at Some(42)"
    );
    // Header names in any case; integers compared numerically.
    let ok = call(
        addr,
        args.clone(),
        &[
            ("mcp-param-region", "us-west1"),
            ("MCP-PARAM-PRIORITY", "42.0"),
        ],
    )
    .await;
    assert_eq!(ok.0, 200, "{}", ok.1);
    // "servers MUST decode an encoded ... Mcp-Param-{Name} value before comparing it".
    let ok = call(
        addr,
        args.clone(),
        &[
            ("Mcp-Param-Region", "=?base64?dXMtd2VzdDE=?="),
            ("Mcp-Param-Priority", "42"),
        ],
    )
    .await;
    assert_eq!(ok.0, 200, "{}", ok.1);
    // "Client omits header but value is in body: Server MUST reject the request".
    assert!(mismatch(
        &call(addr, args.clone(), &[("Mcp-Param-Priority", "42")]).await
    ));
    // A header that disagrees; bad base64 (padding, alphabet).
    assert!(mismatch(
        &call(
            addr,
            args.clone(),
            &[
                ("Mcp-Param-Region", "eu-west1"),
                ("Mcp-Param-Priority", "42")
            ]
        )
        .await
    ));
    assert!(mismatch(
        &call(
            addr,
            args.clone(),
            &[
                ("Mcp-Param-Region", "=?base64?dXMtd2VzdDE?="),
                ("Mcp-Param-Priority", "42")
            ]
        )
        .await
    ));
    assert!(mismatch(
        &call(
            addr,
            args.clone(),
            &[
                ("Mcp-Param-Region", "=?base64?dXMt!!!d2VzdDE=?="),
                ("Mcp-Param-Priority", "42")
            ]
        )
        .await
    ));
    assert!(mismatch(
        &call(
            addr,
            args.clone(),
            &[
                ("Mcp-Param-Region", "us-west1"),
                ("Mcp-Param-Priority", "43")
            ]
        )
        .await
    ));
    // Sent twice.
    assert!(mismatch(
        &call(
            addr,
            args.clone(),
            &[
                ("Mcp-Param-Region", "us-west1"),
                ("Mcp-Param-Region", "us-west1"),
                ("Mcp-Param-Priority", "42")
            ]
        )
        .await
    ));
    // "Parameter value is null / not in arguments: Server MUST NOT expect the header".
    let ok = call(addr, json!({"region": null, "query": "SELECT 1"}), &[]).await;
    assert_eq!(ok.0, 200, "{}", ok.1);
    // A header for a value the body does not have disagrees with it.
    assert!(mismatch(
        &call(
            addr,
            json!({"query": "SELECT 1"}),
            &[("Mcp-Param-Region", "us-west1")]
        )
        .await
    ));
}

#[test]
fn a_tool_with_an_invalid_annotation_is_not_published() {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Scored {
        #[schemars(extend("x-mcp-header" = "Score"))]
        score: f64,
    }
    let built = McpServer::builder("bad", "1.0.0")
        .tool(ToolDef::new(
            "score",
            |_ctx: tessera_server::Context, s: Scored| async move { s.score.to_string() },
        ))
        .build();
    let Err(BuildError(message)) = built else {
        panic!("a number parameter cannot be mirrored");
    };
    assert!(
        message.contains("\"score\"") && message.contains("number"),
        "{message}"
    );
}

/// Counts how often it is asked whether a caller sees `execute_sql`.
#[derive(Clone, Default)]
struct CountingVisibility(std::sync::Arc<std::sync::atomic::AtomicUsize>);

impl tessera_server::Visibility for CountingVisibility {
    fn shows(&self, _: &tessera_server::Viewer<'_>, item: tessera_server::Offered<'_>) -> bool {
        if matches!(item, tessera_server::Offered::Tool(tool) if tool.definition().name == "execute_sql")
        {
            self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        }
        true
    }
}

/// A call is resolved once: the tool its headers are checked against is the
/// one it runs, looked up once from one snapshot of the catalog (the caller's
/// visibility asked once, not once for the header check and again to serve).
#[tokio::test]
async fn a_call_looks_its_tool_up_once() {
    let asked = CountingVisibility::default();
    let server = McpServer::builder("param-headers", "1.0.0")
        .visibility(asked.clone())
        .tool(ToolDef::new(
            "execute_sql",
            |_ctx: tessera_server::Context, q: Query| async move { q.query },
        ))
        .build()
        .unwrap();
    let addr = start_with(server, EndpointOptions::default()).await;
    for round in 1..=3 {
        let before = asked.0.load(std::sync::atomic::Ordering::SeqCst);
        let reply = call(
            addr,
            json!({"region": "eu", "query": "SELECT 1"}),
            &[("Mcp-Param-Region", "eu")],
        )
        .await;
        assert_eq!(reply.0, 200, "{}", reply.1);
        assert_eq!(reply.1["result"]["content"][0]["text"], "SELECT 1");
        let after = asked.0.load(std::sync::atomic::Ordering::SeqCst);
        assert_eq!(
            after - before,
            1,
            "call {round} looked its tool up {} times",
            after - before
        );
    }
}

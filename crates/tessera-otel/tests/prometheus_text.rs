//! The metrics as Prometheus reads them, from a server served in process:
//! names mapped the usual way, and no series for names a client made up.

use serde_json::{Value, json};
use tessera_server::intake::Request;
use tessera_server::{Context, McpServer, RequestFacts, ToolDef};

async fn echo(_ctx: Context, args: Value) -> tessera_server::Result<String> {
    Ok(args.to_string())
}

fn server() -> McpServer {
    McpServer::builder("metrics-test", "1.0.0")
        .tool(ToolDef::new("echo", echo).description("Echoes its arguments"))
        .build()
        .unwrap()
}

/// One 2026-07-28 request, served as every transport serves it.
async fn serve(server: &McpServer, id: i64, method: &str, params: Value) {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    });
    let request = Request::new(id.into(), method, Some(params));
    let facts = RequestFacts::modern().with_transport(tessera_server::NetworkTransport::Tcp);
    let resolved = server.resolve(&request, &facts);
    let observed = server.observe(&request, &facts, &resolved);
    observed
        .run(server.serve_resolved(request, facts, resolved))
        .await;
}

#[tokio::test]
async fn durations_are_counted_per_method_and_tool_and_made_up_names_count_as_other() {
    let telemetry = tessera_otel::Telemetry::builder("metrics-test")
        .prometheus(true)
        .from_env()
        .unwrap();
    assert!(telemetry.records_metrics());
    let server = server();
    for id in 0..3 {
        serve(
            &server,
            id,
            "tools/call",
            json!({"name": "echo", "arguments": {"n": id}}),
        )
        .await;
    }
    serve(
        &server,
        10,
        "tools/call",
        json!({"name": "no-such-tool-1f3a", "arguments": {}}),
    )
    .await;
    serve(&server, 11, "made/up-method-9c2e", json!({})).await;
    serve(&server, 12, "tools/list", json!({})).await;
    // A ticket this server cannot open (it has no key): a refusal by reason.
    serve(
        &server,
        13,
        "tools/call",
        json!({"name": "echo", "arguments": {}, "requestState": "v1.forged"}),
    )
    .await;

    let text = telemetry.prometheus_text().unwrap();
    let count = |labels: &str| {
        text.lines()
            .find(|l| {
                l.starts_with("mcp_server_operation_duration_seconds_count{") && l.contains(labels)
            })
            .and_then(|l| l.rsplit(' ').next())
            .and_then(|v| v.parse::<f64>().ok())
    };
    assert_eq!(
        count(r#"gen_ai_tool_name="echo",mcp_method_name="tools/call""#),
        Some(3.0),
        "{text}"
    );
    assert_eq!(
        count(r#"mcp_method_name="tools/list""#),
        Some(1.0),
        "{text}"
    );
    assert!(text.contains(r#"gen_ai_tool_name="_OTHER""#), "{text}");
    assert!(text.contains(r#"mcp_method_name="_OTHER""#), "{text}");
    assert!(
        !text.contains("no-such-tool-1f3a") && !text.contains("made/up"),
        "{text}"
    );
    assert!(text.contains(r#"error_type="-32602""#), "{text}");
    assert!(text.contains(r#"network_transport="tcp""#), "{text}");
    assert!(
        text.contains("# TYPE mcp_server_operation_duration_seconds histogram"),
        "{text}"
    );

    // An open listen stream counts while it is open, anonymous or not.
    let endpoint = tessera_http::McpEndpoint::new(
        std::sync::Arc::new(self::server()),
        tessera_http::EndpointOptions::default(),
    );
    let body = json!({"jsonrpc": "2.0", "id": 30, "method": "subscriptions/listen", "params": {
        "_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        },
        "notifications": {"toolsListChanged": true}
    }});
    let head = http::Request::post("/mcp")
        .header("host", "127.0.0.1")
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "subscriptions/listen")
        .body(())
        .unwrap()
        .into_parts()
        .0;
    let listening = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        endpoint.handle(head, bytes::Bytes::from(body.to_string())),
    )
    .await
    .expect("the listen stream starts");
    assert_eq!(listening.status(), 200);
    let streams = || {
        let text = telemetry.prometheus_text().unwrap();
        text.lines()
            .find(|l| l.starts_with("tessera_listen_streams{"))
            .and_then(|l| l.rsplit(' ').next().map(str::to_owned))
    };
    assert_eq!(streams().as_deref(), Some("1"));
    drop(listening);
    assert_eq!(streams().as_deref(), Some("0"));
}

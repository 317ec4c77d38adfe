//! What an operator sees of the counter, checked with real receivers: an
//! OTLP/HTTP receiver decoding the official protobuf definitions
//! (`tests/peers/otlp_receiver.py`, PyPI `opentelemetry-proto`), and a real
//! Prometheus scraping `--metrics`.
//!
//! The OpenTelemetry conventions for MCP (gen-ai/mcp.md): "Instrumentations
//! SHOULD propagate trace context inside MCP request params._meta property
//! bag", and the span name "SHOULD follow the format `{mcp.method.name}
//! {target}`".

use std::process::{Command, Stdio};
use std::time::Duration;

use serde_json::{Value, json};
use test_harness::{Listening, OtlpReceiver, Prometheus, mcp_post};

const KEY: &str = "telemetry-test-key-0123456789abcdef0123";

/// A caller's `tracestate`: two vendors' entries.
const CALLER_STATE: &str = "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7";

/// A caller's span: trace `t`, span `s`.
fn traceparent(trace: &str, span: &str) -> String {
    format!("00-{trace}-{span}-01")
}

const CALLER_TRACE: &str = "4bf92f3577b34da6a3ce929d0e0e4736";
const CALLER_SPAN: &str = "00f067aa0ba902b7";

/// The counter on a free port; exporting to `otlp` when given.
fn counter(args: &[&str], otlp: Option<&OtlpReceiver>) -> Listening {
    let mut command = Command::new(env!("CARGO_BIN_EXE_counter"));
    command
        .args(["--addr", "127.0.0.1:0"])
        .args(args)
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .env_remove("MRTR_REQUEST_STATE_KEYS");
    otel_env(&mut command, otlp);
    Listening::start(command)
}

/// The standard variables pointing `command` at `otlp` (or clearing them).
fn otel_env(command: &mut Command, otlp: Option<&OtlpReceiver>) {
    for var in [
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
        "OTEL_EXPORTER_OTLP_PROTOCOL",
        "OTEL_SDK_DISABLED",
        "OTEL_TRACES_EXPORTER",
        "TRACEPARENT",
        "TRACESTATE",
    ] {
        command.env_remove(var);
    }
    if let Some(otlp) = otlp {
        command
            .env("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint())
            .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
            .env("OTEL_SERVICE_NAME", "counter-under-test")
            .env("OTEL_BSP_SCHEDULE_DELAY", "100")
            .env("OTEL_METRIC_EXPORT_INTERVAL", "300");
    }
}

fn accept(content: Value) -> Value {
    json!({"action": "accept", "content": content})
}

/// The three rounds of increase-counter over HTTP; `meta(round)` is each
/// round's extra `_meta` (trace context, or none).
async fn three_rounds(url: &str, meta: impl Fn(usize) -> Value) -> Value {
    let http = reqwest::Client::new();
    let mut params = json!({"name": "increase-counter", "arguments": {"current": 10}});
    let answers = [
        json!({"amount": accept(json!({"amount": 5}))}),
        json!({"confirmation": accept(json!({"confirm": true}))}),
    ];
    let mut last = Value::Null;
    for round in 1..=3 {
        params["_meta"] = meta(round);
        let reply = mcp_post(&http, url, None, round as i64, "tools/call", params.clone()).await;
        assert_eq!(reply.status, 200, "round {round}: {}", reply.body);
        last = reply.body["result"].clone();
        if round < 3 {
            assert_eq!(
                last["resultType"], "input_required",
                "round {round}: {last}"
            );
            params["requestState"] = last["requestState"].clone();
            params["inputResponses"] = answers[round - 1].clone();
        }
    }
    last
}

/// The SERVER spans named `tools/call increase-counter`, in the order they began.
fn tool_spans(spans: &[Value]) -> Vec<Value> {
    let mut found: Vec<Value> = spans
        .iter()
        .filter(|s| s["kind"] == "SERVER" && s["name"] == "tools/call increase-counter")
        .cloned()
        .collect();
    found.sort_by_key(|s| s["attributes"]["mcp.mrtr.round"].as_i64());
    found
}

fn wait_for_tool_spans(otlp: &OtlpReceiver, n: usize) -> Vec<Value> {
    let spans = otlp.wait_for(Duration::from_secs(20), |spans| {
        tool_spans(spans).len() >= n
    });
    tool_spans(&spans)
}

fn links(span: &Value) -> Vec<(String, String)> {
    span["links"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            (
                l["trace_id"].as_str().unwrap_or_default().to_owned(),
                l["span_id"].as_str().unwrap_or_default().to_owned(),
            )
        })
        .collect()
}

/// What every span of a counter flow says, whatever its parent.
fn assert_conventions(spans: &[Value]) {
    let flow = &spans[0]["attributes"]["mcp.mrtr.flow_id"];
    assert!(flow.as_str().is_some_and(|f| !f.is_empty()), "{}", spans[0]);
    for (i, span) in spans.iter().enumerate() {
        let a = &span["attributes"];
        assert_eq!(a["mcp.method.name"], "tools/call", "{span}");
        assert_eq!(a["gen_ai.tool.name"], "increase-counter", "{span}");
        assert_eq!(a["gen_ai.operation.name"], "execute_tool", "{span}");
        assert_eq!(a["mcp.protocol.version"], "2026-07-28", "{span}");
        // A new JSON-RPC id every round.
        assert!(
            a["jsonrpc.request.id"]
                .as_str()
                .is_some_and(|id| !id.is_empty()),
            "{span}"
        );
        if i > 0 {
            assert_ne!(
                a["jsonrpc.request.id"],
                spans[i - 1]["attributes"]["jsonrpc.request.id"]
            );
        }
        assert_eq!(a["mcp.mrtr.round"], (i + 1) as i64, "{span}");
        assert_eq!(
            &a["mcp.mrtr.flow_id"], flow,
            "one flow id for every round: {span}"
        );
        assert_eq!(span["service_name"], "counter-under-test", "{span}");
        // Arguments and answers never become attributes.
        let text = a.to_string();
        assert!(
            !text.contains("\"current\"") && !text.contains("confirm\":"),
            "{text}"
        );
    }
    let network = &spans[0]["attributes"]["network.transport"];
    assert!(network == "tcp" || network == "pipe", "{}", spans[0]);
    assert_eq!(spans[0]["attributes"]["mcp.mrtr.outcome"], "input_required");
    assert_eq!(spans[0]["attributes"]["mcp.mrtr.input_keys"], "amount");
    assert_eq!(
        spans[1]["attributes"]["mcp.mrtr.input_keys"],
        "confirmation"
    );
    assert_eq!(spans[2]["attributes"]["mcp.mrtr.outcome"], "complete");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flow_with_trace_context_on_round_one_only_is_one_trace_continuing_round_one() {
    let otlp = OtlpReceiver::start();
    let server = counter(&[], Some(&otlp));
    let result = three_rounds(&server.url, |round| {
        if round == 1 {
            json!({"traceparent": traceparent(CALLER_TRACE, CALLER_SPAN),
                "tracestate": CALLER_STATE})
        } else {
            json!({})
        }
    })
    .await;
    assert_eq!(
        result["content"][0]["text"],
        "Counter increased by 5; next value is 15"
    );
    let spans = wait_for_tool_spans(&otlp, 3);
    assert_eq!(spans.len(), 3, "{spans:#?}");
    assert_conventions(&spans);
    let first = spans[0]["span_id"].as_str().unwrap().to_owned();
    assert_eq!(
        spans[0]["parent_span_id"], CALLER_SPAN,
        "round one's parent is the caller's span"
    );
    // The caller's tracestate, whole, on round one and every later round
    // (carried in the ticket) and on the link to round one.
    assert_eq!(spans[0]["trace_state"], CALLER_STATE, "{}", spans[0]);
    for later in &spans[1..] {
        assert_eq!(later["trace_state"], CALLER_STATE, "{later}");
        assert_eq!(later["links"][0]["trace_state"], CALLER_STATE, "{later}");
        assert_eq!(later["trace_id"], CALLER_TRACE, "{later}");
        assert_eq!(
            later["parent_span_id"],
            first.as_str(),
            "continues round one: {later}"
        );
        assert_eq!(
            links(later),
            vec![(CALLER_TRACE.to_owned(), first.clone())],
            "{later}"
        );
    }
    assert_eq!(spans[0]["trace_id"], CALLER_TRACE);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_fresh_traceparent_per_round_keeps_each_parent_and_links_to_round_one() {
    let otlp = OtlpReceiver::start();
    let server = counter(&[], Some(&otlp));
    let traces = [
        "11111111111111111111111111111111",
        "22222222222222222222222222222222",
        "33333333333333333333333333333333",
    ];
    let parents = ["1111111111111111", "2222222222222222", "3333333333333333"];
    three_rounds(
        &server.url,
        |round| json!({"traceparent": traceparent(traces[round - 1], parents[round - 1])}),
    )
    .await;
    let spans = wait_for_tool_spans(&otlp, 3);
    assert_conventions(&spans);
    let first = (
        traces[0].to_owned(),
        spans[0]["span_id"].as_str().unwrap().to_owned(),
    );
    for (i, span) in spans.iter().enumerate() {
        assert_eq!(span["trace_id"], traces[i], "{span}");
        assert_eq!(span["parent_span_id"], parents[i], "{span}");
        if i > 0 {
            assert_eq!(
                links(span),
                vec![first.clone()],
                "linked to round one: {span}"
            );
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn arguments_and_answers_appear_only_when_the_operator_opts_in() {
    let otlp = OtlpReceiver::start();
    let server = counter(&["--trace-arguments"], Some(&otlp));
    three_rounds(&server.url, |_| json!({})).await;
    let spans = wait_for_tool_spans(&otlp, 3);
    assert_eq!(
        spans[0]["attributes"]["mcp.request.arguments"], r#"{"current":10}"#,
        "{}",
        spans[0]
    );
    let answers = spans[1]["attributes"]["mcp.request.input_responses"]
        .as_str()
        .unwrap_or_default();
    assert!(answers.contains(r#""amount":5"#), "{}", spans[1]);
}

#[tokio::test(flavor = "multi_thread")]
async fn the_http_traceparent_header_is_the_parent_when_meta_has_none() {
    let otlp = OtlpReceiver::start();
    let server = counter(&[], Some(&otlp));
    let http = reqwest::Client::new();
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    }}});
    let reply = http
        .post(&server.url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", "2026-07-28")
        .header("mcp-method", "tools/list")
        .header("traceparent", traceparent(CALLER_TRACE, CALLER_SPAN))
        .body(body.to_string())
        .send()
        .await
        .unwrap();
    assert_eq!(reply.status(), 200);
    let spans = otlp.wait_for(Duration::from_secs(20), |s| {
        s.iter().any(|s| s["name"] == "tools/list")
    });
    let span = spans.iter().find(|s| s["name"] == "tools/list").unwrap();
    assert_eq!(span["kind"], "SERVER");
    assert_eq!(span["trace_id"], CALLER_TRACE, "{span}");
    assert_eq!(span["parent_span_id"], CALLER_SPAN, "{span}");
    assert_eq!(span["attributes"]["mcp.mrtr.outcome"], "complete", "{span}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refused_ticket_is_an_error_span_with_the_reason_and_the_json_rpc_code() {
    let otlp = OtlpReceiver::start();
    let server = counter(&[], Some(&otlp));
    let http = reqwest::Client::new();
    let reply = mcp_post(
        &http,
        &server.url,
        None,
        7,
        "tools/call",
        json!({"name": "increase-counter", "arguments": {"current": 1}, "requestState": "v1.forged"}),
    )
    .await;
    assert!(reply.body["error"].is_object(), "{}", reply.body);
    let spans = wait_for_tool_spans(&otlp, 1);
    let a = &spans[0]["attributes"];
    let code = reply.body["error"]["code"].as_i64().unwrap().to_string();
    assert_eq!(a["error.type"], code.as_str(), "{}", spans[0]);
    assert_eq!(a["rpc.response.status_code"], code.as_str(), "{}", spans[0]);
    assert_eq!(a["mcp.mrtr.outcome"], "malformed", "{}", spans[0]);
    assert_eq!(spans[0]["status"]["code"], "ERROR", "{}", spans[0]);
}

/// The `tessera` CLI beside the counter (`cargo test --workspace` builds both).
fn tessera_cli() -> std::path::PathBuf {
    let cli = std::path::Path::new(env!("CARGO_BIN_EXE_counter")).with_file_name("tessera");
    assert!(
        cli.exists(),
        "{} is missing: build it with `cargo build -p tessera-cli` (cargo test --workspace does)",
        cli.display()
    );
    cli
}

/// `tessera call` for the counter's three rounds, answers scripted, inside
/// the trace `TRACEPARENT` names; `target` is the URL or `--stdio COMMAND`.
fn cli_flow(target: &[&str], otlp: &OtlpReceiver) {
    let mut command = Command::new(tessera_cli());
    command
        .arg("call")
        .args(target)
        .args(["increase-counter", "current=10"])
        .args([
            "--answer",
            "amount.amount=5",
            "--answer",
            "confirmation.confirm=true",
        ])
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .stdin(Stdio::null());
    otel_env(&mut command, Some(otlp));
    command.env("TRACEPARENT", traceparent(CALLER_TRACE, CALLER_SPAN));
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        "Counter increased by 5; next value is 15"
    );
}

fn assert_every_round_in_the_callers_trace(spans: &[Value], transport: &str) {
    assert_eq!(spans.len(), 3, "{spans:#?}");
    assert_conventions(spans);
    for span in spans {
        assert_eq!(span["trace_id"], CALLER_TRACE, "{span}");
        assert_eq!(span["parent_span_id"], CALLER_SPAN, "{span}");
        assert_eq!(span["attributes"]["network.transport"], transport, "{span}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn tessera_call_with_traceparent_puts_every_round_in_that_trace() {
    let otlp = OtlpReceiver::start();
    let server = counter(&[], Some(&otlp));
    cli_flow(&[server.url.as_str()], &otlp);
    let spans = wait_for_tool_spans(&otlp, 3);
    assert_every_round_in_the_callers_trace(&spans, "tcp");
}

#[tokio::test(flavor = "multi_thread")]
async fn over_stdio_every_round_is_in_the_callers_trace_too() {
    let otlp = OtlpReceiver::start();
    // The CLI starts the counter; the counter inherits the OTEL_* variables.
    let command = format!("'{}' --stdio", env!("CARGO_BIN_EXE_counter"));
    cli_flow(&["--stdio", &command], &otlp);
    let spans = wait_for_tool_spans(&otlp, 3);
    assert_every_round_in_the_callers_trace(&spans, "pipe");
}

/// The official Python SDK client in the initialize era, `target` the
/// counter command (stdio) or URL: the era bridge pushes each form.
fn python_legacy_flow(target: &[&str], otlp: &OtlpReceiver) {
    let peers = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/peers");
    let python = peers.join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} is not installed: run scripts/install-test-peers (scripts/test does)",
        python.display()
    );
    let mut command = Command::new(python);
    command
        .arg(peers.join("python_client.py"))
        .args(["legacy", "accept"])
        .args(target)
        .env("MRTR_REQUEST_STATE_KEY", KEY);
    otel_env(&mut command, Some(otlp));
    let out = command.output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("Counter increased by 5; next value is 15"),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// One SERVER span for the initialize-era call, each pushed question a CLIENT span inside it.
fn assert_pushed_questions_are_child_spans(otlp: &OtlpReceiver, transport: &str) {
    let spans = otlp.wait_for(Duration::from_secs(20), |spans| {
        !tool_spans(spans).is_empty() && spans.iter().filter(|s| s["kind"] == "CLIENT").count() >= 2
    });
    let call = &tool_spans(&spans)[0];
    assert_eq!(call["attributes"]["network.transport"], transport, "{call}");
    assert_eq!(call["attributes"]["mcp.mrtr.outcome"], "complete", "{call}");
    assert!(
        call["attributes"]["mcp.protocol.version"]
            .as_str()
            .is_some_and(|v| v != "2026-07-28"),
        "an initialize-era version: {call}"
    );
    // Every round runs inside this one span: it links to nothing, not even itself.
    assert!(links(call).is_empty(), "{call}");
    let questions: Vec<&Value> = spans.iter().filter(|s| s["kind"] == "CLIENT").collect();
    assert_eq!(questions.len(), 2, "{spans:#?}");
    let keys: Vec<&Value> = questions
        .iter()
        .map(|q| &q["attributes"]["mcp.mrtr.input_key"])
        .collect();
    assert_eq!(keys, [&json!("amount"), &json!("confirmation")]);
    for q in questions {
        assert_eq!(q["name"], "elicitation/create", "{q}");
        assert_eq!(q["trace_id"], call["trace_id"], "{q}");
        assert_eq!(
            q["parent_span_id"], call["span_id"],
            "a child of the call: {q}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn over_stdio_the_era_bridge_pushes_each_question_as_a_child_span() {
    let otlp = OtlpReceiver::start();
    python_legacy_flow(&[env!("CARGO_BIN_EXE_counter"), "--stdio"], &otlp);
    assert_pushed_questions_are_child_spans(&otlp, "pipe");
}

#[tokio::test(flavor = "multi_thread")]
async fn over_http_the_era_bridge_pushes_each_question_as_a_child_span() {
    let otlp = OtlpReceiver::start();
    let server = counter(&["--legacy", "serve"], Some(&otlp));
    python_legacy_flow(&[server.url.as_str()], &otlp);
    assert_pushed_questions_are_child_spans(&otlp, "tcp");
}

/// A client in a trace of its own (an OpenTelemetry tracer, no exporter: its
/// spans only need real contexts), its span current while it calls.
#[tokio::test(flavor = "current_thread")]
async fn tessera_client_carries_the_current_span_into_every_round() {
    use std::collections::HashMap;
    use std::sync::Arc;

    use opentelemetry::trace::{TraceContextExt as _, TracerProvider as _};
    use tessera::client::{McpClient, ScriptedAnswer, ScriptedElicitor};
    use tracing::Instrument as _;
    use tracing_opentelemetry::OpenTelemetrySpanExt as _;
    use tracing_subscriber::layer::SubscriberExt as _;

    let otlp = OtlpReceiver::start();
    let server = counter(&[], Some(&otlp));
    // No global propagator is set: `_meta` carries W3C trace context regardless.
    let provider = opentelemetry_sdk::trace::SdkTracerProvider::builder().build();
    let subscriber = tracing_subscriber::registry()
        .with(tracing_opentelemetry::layer().with_tracer(provider.tracer("test-client")));
    // This test's thread only: the runtime is current-thread.
    let _default = tracing::subscriber::set_default(subscriber);

    let content = |v: Value| ScriptedAnswer::Accept(v.as_object().unwrap().clone());
    let elicitor = Arc::new(ScriptedElicitor::new(HashMap::from([
        ("amount".to_owned(), content(json!({"amount": 5}))),
        ("confirmation".to_owned(), content(json!({"confirm": true}))),
    ])));
    let client = McpClient::builder(&server.url)
        .elicitor(elicitor)
        .build()
        .unwrap();
    let caller = tracing::info_span!("book a trip");
    let context = caller.context().span().span_context().clone();
    assert!(context.is_valid());
    let result = client
        .call_tool("increase-counter", json!({"current": 10}))
        .instrument(caller)
        .await
        .unwrap();
    assert_eq!(
        result.content[0].as_text(),
        Some("Counter increased by 5; next value is 15")
    );
    let spans = wait_for_tool_spans(&otlp, 3);
    assert_eq!(spans.len(), 3, "{spans:#?}");
    for span in &spans {
        assert_eq!(span["trace_id"], context.trace_id().to_string(), "{span}");
        assert_eq!(
            span["parent_span_id"],
            context.span_id().to_string(),
            "{span}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_duration_metric_reaches_the_otlp_receiver() {
    let otlp = OtlpReceiver::start();
    let server = counter(&[], Some(&otlp));
    three_rounds(&server.url, |_| json!({})).await;
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    loop {
        let metrics = otlp.metrics();
        let counted: i64 = metrics
            .iter()
            .filter(|m| m["name"] == "mcp.server.operation.duration")
            .flat_map(|m| m["points"].as_array().cloned().unwrap_or_default())
            .filter(|p| p["attributes"]["mcp.method.name"] == "tools/call")
            .map(|p| p["count"].as_i64().unwrap_or(0))
            .max()
            .unwrap_or(0);
        if counted == 3 {
            let m = metrics
                .iter()
                .find(|m| m["name"] == "mcp.server.operation.duration")
                .unwrap();
            assert_eq!(m["unit"], "s", "{m}");
            assert_eq!(m["kind"], "histogram", "{m}");
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "no count of 3 tools/call in {metrics:#?}"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn prometheus_scraping_metrics_counts_every_tools_call() {
    let metrics_port = test_harness::free_port();
    let metrics_addr = format!("127.0.0.1:{metrics_port}");
    let server = counter(&["--metrics", &metrics_addr], None);
    let http = reqwest::Client::new();
    const N: i64 = 7;
    for id in 1..=N {
        let reply = mcp_post(
            &http,
            &server.url,
            None,
            id,
            "tools/call",
            json!({"name": "increase-counter", "arguments": {"current": id}}),
        )
        .await;
        assert_eq!(reply.body["result"]["resultType"], "input_required");
    }
    // And requests that are not tool calls, which must not count.
    mcp_post(&http, &server.url, None, 99, "tools/list", json!({})).await;
    let text = http
        .get(format!("http://{metrics_addr}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        text.contains("mcp_server_operation_duration_seconds_count{"),
        "{text}"
    );
    let prometheus = Prometheus::start(&metrics_addr);
    let query = r#"sum(mcp_server_operation_duration_seconds_count{mcp_method_name="tools/call"})"#;
    let counted = prometheus.wait_for_value(query, N as f64, Duration::from_secs(30));
    assert_eq!(counted, N as f64);
    let listed =
        r#"sum(mcp_server_operation_duration_seconds_count{mcp_method_name="tools/list"})"#;
    assert_eq!(prometheus.query(listed), Some(1.0));
}

#[test]
fn an_otlp_protocol_this_build_lacks_stops_the_boot_with_its_name() {
    let out = Command::new(env!("CARGO_BIN_EXE_counter"))
        .args(["--addr", "127.0.0.1:0"])
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", "http://127.0.0.1:4317")
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "grpc")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("OTEL_EXPORTER_OTLP_PROTOCOL=grpc") && stderr.contains("http/protobuf"),
        "{stderr}"
    );
}

//! The gateway's traces and metrics: its span is the parent of each
//! upstream request (the trace context is sent on), and each upstream
//! request is measured under the upstream's name. Both the gateway and its
//! upstream (the Tessera counter) export to a real OTLP receiver.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};
use test_harness::{Listening, OtlpReceiver, TempDir, mcp_post};

const KEY: &str = "gateway-telemetry-key-0123456789abcdef01234";

fn exporting(mut command: Command, otlp: &OtlpReceiver, service: &str) -> Listening {
    command
        .env("MRTR_REQUEST_STATE_KEY", KEY)
        .env("OTEL_EXPORTER_OTLP_ENDPOINT", otlp.endpoint())
        .env("OTEL_EXPORTER_OTLP_PROTOCOL", "http/protobuf")
        .env("OTEL_SERVICE_NAME", service)
        .env("OTEL_BSP_SCHEDULE_DELAY", "100")
        .env("OTEL_METRIC_EXPORT_INTERVAL", "300")
        .env_remove("TRACEPARENT");
    Listening::start(command)
}

#[tokio::test]
async fn the_gateways_span_is_the_parent_of_the_upstream_request() {
    let counter_bin = Path::new(env!("CARGO_BIN_EXE_tessera-gateway")).with_file_name("counter");
    assert!(
        counter_bin.exists(),
        "{} is not built: run cargo build --workspace --bins (scripts/test does)",
        counter_bin.display()
    );
    let otlp = OtlpReceiver::start();
    let mut counter = Command::new(&counter_bin);
    counter.args(["--addr", "127.0.0.1:0"]);
    let upstream = exporting(counter, &otlp, "counter-upstream");
    let dir = TempDir::new("gateway-telemetry");
    let config = dir.0.join("gateway.toml");
    std::fs::write(
        &config,
        format!(
            "[[upstream]]\nname = \"counter\"\nurl = \"{}\"\n",
            upstream.url
        ),
    )
    .unwrap();
    let mut gateway = Command::new(env!("CARGO_BIN_EXE_tessera-gateway"));
    gateway
        .arg("--config")
        .arg(&config)
        .args(["--addr", "127.0.0.1:0"]);
    let gw = exporting(gateway, &otlp, "gateway-under-test");

    let http = reqwest::Client::new();
    let first = mcp_post(
        &http,
        &gw.url,
        None,
        1,
        "tools/call",
        json!({"name": "counter__increase-counter", "arguments": {"current": 10}}),
    )
    .await;
    assert_eq!(
        first.body["result"]["resultType"], "input_required",
        "{}",
        first.body
    );

    let of = |spans: &[Value], service: &str, name: &str| -> Option<Value> {
        spans
            .iter()
            .find(|s| s["service_name"] == service && s["kind"] == "SERVER" && s["name"] == name)
            .cloned()
    };
    let spans = otlp.wait_for(Duration::from_secs(20), |spans| {
        of(spans, "counter-upstream", "tools/call increase-counter").is_some()
            && of(
                spans,
                "gateway-under-test",
                "tools/call counter__increase-counter",
            )
            .is_some()
    });
    let at_gateway = of(
        &spans,
        "gateway-under-test",
        "tools/call counter__increase-counter",
    )
    .unwrap();
    let upstream_span = of(&spans, "counter-upstream", "tools/call increase-counter").unwrap();
    assert_eq!(
        upstream_span["trace_id"], at_gateway["trace_id"],
        "one trace: {upstream_span} {at_gateway}"
    );
    let parent = upstream_span["parent_span_id"].as_str().unwrap();
    let gateway_ids: Vec<&Value> = spans
        .iter()
        .filter(|s| s["service_name"] == "gateway-under-test")
        .map(|s| &s["span_id"])
        .collect();
    assert!(
        gateway_ids.iter().any(|id| id.as_str() == Some(parent)),
        "the upstream's span has a span of the gateway's as its parent: {upstream_span}"
    );

    // The upstream request, measured under the upstream's name.
    let started = std::time::Instant::now();
    loop {
        let measured = otlp.metrics().into_iter().any(|m| {
            m["name"] == "tessera.gateway.upstream.duration"
                && m["points"].as_array().is_some_and(|points| {
                    points.iter().any(|p| {
                        p["attributes"]["tessera.upstream"] == "counter"
                            && p["attributes"]["mcp.method.name"] == "tools/call"
                    })
                })
        });
        if measured {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "no tessera.gateway.upstream.duration for counter"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

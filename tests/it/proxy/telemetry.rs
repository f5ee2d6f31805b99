//! OpenTelemetry: the proxy's audit records reach a real OTLP/HTTP receiver
//! (`tests/fixtures/otel/receiver.py`, decoding with the official
//! `opentelemetry-proto` definitions) as log records and metrics; a
//! collector that is down changes nothing for the host.

use super::*;

/// A receiver on a free loopback port, writing what it gets to a file; it
/// exits when dropped (its stdin closes).
struct Receiver {
    child: Child,
    port: u16,
    out: PathBuf,
}

impl Receiver {
    fn start(python: &str, dir: &Path) -> Receiver {
        let out = dir.join("otlp.jsonl");
        let mut child = std::process::Command::new(python)
            .arg(fixture_path("otel/receiver.py"))
            .arg(&out)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        let port = line
            .trim()
            .parse()
            .unwrap_or_else(|e| panic!("{line:?}: {e}"));
        Receiver { child, port, out }
    }

    /// Everything received, per signal.
    fn received(&self, signal: &str) -> Vec<Value> {
        std::fs::read_to_string(&self.out)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .filter(|v| v["signal"] == signal)
            .map(|v| v["request"].clone())
            .collect()
    }
}

impl Drop for Receiver {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = common::wait_for(&mut self.child, Duration::from_secs(10));
    }
}

fn fixture_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// A log record's attributes as a map of JSON values.
fn attributes(record: &Value) -> serde_json::Map<String, Value> {
    record["attributes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|kv| {
            let value = &kv["value"];
            let value = value
                .get("stringValue")
                .or_else(|| value.get("boolValue"))
                .or_else(|| value.get("intValue"))
                .or_else(|| value.get("arrayValue"))
                .cloned()
                .unwrap_or(Value::Null);
            (kv["key"].as_str().unwrap().to_string(), value)
        })
        .collect()
}

#[test]
fn audit_records_reach_a_real_otlp_receiver_as_log_records_and_metrics() {
    let Some(python) = common::mcp_python("the OTLP receiver (opentelemetry-proto)") else {
        return;
    };
    let dir = common::scratch("proxy", "telemetry");
    let receiver = Receiver::start(&python, &dir);
    let endpoint = format!("http://127.0.0.1:{}", receiver.port);
    let mut proxy = Proxy::start(
        &[
            "rules/file-server.yaml",
            "--no-probe",
            "--policy",
            "docs/policies/ask-destructive.yaml",
            "--otlp",
            &endpoint,
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    proxy.initialize(declaring());
    let call = |action: &str| json!({"name": "manage_files", "arguments": {"path": "a", "action": action}});
    // The host's trace context rides in `_meta` (MCP 2026-07-28).
    let host_trace = "0af7651916cd43dd8448eb211c80319c";
    let host_span = "b7ad6b7169203331";
    let mut traced = call("read");
    traced["_meta"] = json!({"traceparent": format!("00-{host_trace}-{host_span}-01")});
    let answer = proxy.request(1, "tools/call", traced);
    assert!(answer["result"].is_object(), "{answer}");
    // Asked, but the host declared no elicitation: refused.
    let answer = proxy.request(2, "tools/call", call("delete"));
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");

    let logs: Vec<Value> = receiver
        .received("logs")
        .iter()
        .flat_map(|r| r["resourceLogs"].as_array().cloned().unwrap_or_default())
        .collect();
    assert!(!logs.is_empty(), "no logs: {stderr:?}");
    let service = logs[0]["resource"]["attributes"]
        .as_array()
        .unwrap()
        .iter()
        .find(|kv| kv["key"] == "service.name")
        .map(|kv| kv["value"]["stringValue"].clone());
    assert_eq!(service, Some(json!("mcp-resolve-proxy")));
    let records: Vec<serde_json::Map<String, Value>> = logs
        .iter()
        .flat_map(|r| r["scopeLogs"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s["logRecords"].as_array().cloned().unwrap_or_default())
        .map(|r| attributes(&r))
        .collect();
    let summary: Vec<(Value, Value, Value, Value)> = records
        .iter()
        .map(|a| {
            (
                a["gen_ai.tool.name"].clone(),
                a["mcp_resolve.variant"].clone(),
                a["mcp_resolve.decision"].clone(),
                a["mcp_resolve.outcome"].clone(),
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            (
                json!("manage_files"),
                json!("read"),
                json!("allow"),
                json!("forwarded")
            ),
            (
                json!("manage_files"),
                json!("overwrite"),
                json!("ask"),
                json!("refused")
            ),
        ],
        "{records:#?}"
    );
    assert_eq!(records[0]["mcp.method.name"], "tools/call");
    assert_eq!(records[1]["mcp_resolve.rule"], "destructive");

    // The decisions counter, by decision and outcome.
    let metrics = receiver.received("metrics");
    let names: Vec<String> = metrics
        .iter()
        .flat_map(|r| r["resourceMetrics"].as_array().cloned().unwrap_or_default())
        .flat_map(|r| r["scopeMetrics"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s["metrics"].as_array().cloned().unwrap_or_default())
        .filter_map(|m| m["name"].as_str().map(str::to_string))
        .collect();
    assert!(
        names.iter().any(|n| n == "mcp_resolve.decisions"),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n == "mcp_resolve.upstream.duration"),
        "{names:?}"
    );

    // The call's spans continue the host's trace: the proxy's server span
    // is the host span's child, its client span the server span's.
    use base64::Engine as _;
    let b64 = |hex: &str| {
        let bytes: Vec<u8> = (0..hex.len())
            .step_by(2)
            .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
            .collect();
        base64::engine::general_purpose::STANDARD.encode(bytes)
    };
    let spans: Vec<Value> = receiver
        .received("traces")
        .iter()
        .flat_map(|r| r["resourceSpans"].as_array().cloned().unwrap_or_default())
        .flat_map(|r| r["scopeSpans"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s["spans"].as_array().cloned().unwrap_or_default())
        .filter(|s| s["traceId"] == b64(host_trace))
        .collect();
    let server = spans
        .iter()
        .find(|s| s["kind"] == "SPAN_KIND_SERVER")
        .unwrap_or_else(|| panic!("{spans:#?}"));
    let client = spans
        .iter()
        .find(|s| s["kind"] == "SPAN_KIND_CLIENT")
        .unwrap_or_else(|| panic!("{spans:#?}"));
    assert_eq!(server["parentSpanId"], b64(host_span), "{server:#}");
    assert_eq!(client["parentSpanId"], server["spanId"], "{client:#}");
    assert_eq!(server["name"], "tools/call manage_files");
    let server_attributes = attributes(server);
    assert_eq!(server_attributes["mcp.method.name"], "tools/call");
    assert_eq!(server_attributes["gen_ai.tool.name"], "manage_files");
    assert_eq!(server_attributes["mcp_resolve.variant"], "read");
    assert_eq!(server_attributes["mcp_resolve.decision"], "allow");
    assert_eq!(server_attributes["mcp_resolve.hint.readOnlyHint"], true);
}

#[test]
fn a_collector_that_is_down_changes_nothing_for_the_host() {
    // A port nothing listens on: every export fails.
    let closed = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut proxy = Proxy::start(
        &[
            "rules/file-server.yaml",
            "--no-probe",
            "--policy",
            "docs/policies/ask-destructive.yaml",
            "--otlp",
            &format!("http://127.0.0.1:{closed}"),
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    proxy.initialize(declaring());
    for id in 1..=20 {
        let answer = proxy.request(
            id,
            "tools/call",
            json!({"name": "manage_files", "arguments": {"path": "a", "action": "read"}}),
        );
        assert!(answer["result"].is_object(), "{answer}");
    }
    // The proxy exits as it would without telemetry (`finish` waits a
    // bounded time for it, and fails the test otherwise).
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
}

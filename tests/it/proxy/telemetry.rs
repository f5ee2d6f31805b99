//! OpenTelemetry: the proxy's audit records reach a real OTLP/HTTP receiver
//! (`tests/fixtures/otel/receiver.py`, decoding with the official
//! `opentelemetry-proto` definitions) as log records and metrics; a
//! collector that is down changes nothing for the host.

use super::*;

/// A receiver on a free loopback port, writing what it gets to a file; it
/// exits when dropped (its stdin closes).
pub(crate) struct Receiver {
    child: Child,
    pub(crate) port: u16,
    out: PathBuf,
}

impl Receiver {
    pub(crate) fn start(python: &str, dir: &Path) -> Receiver {
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
    pub(crate) fn received(&self, signal: &str) -> Vec<Value> {
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
pub(crate) fn attributes(record: &Value) -> serde_json::Map<String, Value> {
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

/// A real receiver, and a proxy with the asking policy exporting to it
/// (`None`: the receiver's Python is not installed, outside CI).
fn exporting(test: &str) -> Option<(Receiver, Proxy)> {
    let python = common::mcp_python("the OTLP receiver (opentelemetry-proto)")?;
    let dir = common::scratch("proxy", test);
    let receiver = Receiver::start(&python, &dir);
    let endpoint = format!("http://127.0.0.1:{}", receiver.port);
    let proxy = Proxy::start(
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
    Some((receiver, proxy))
}

/// Every span received.
fn spans_received(receiver: &Receiver) -> Vec<Value> {
    receiver
        .received("traces")
        .iter()
        .flat_map(|r| r["resourceSpans"].as_array().cloned().unwrap_or_default())
        .flat_map(|r| r["scopeSpans"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s["spans"].as_array().cloned().unwrap_or_default())
        .collect()
}

/// Every metric's name received.
fn metric_names(receiver: &Receiver) -> Vec<String> {
    receiver
        .received("metrics")
        .iter()
        .flat_map(|r| r["resourceMetrics"].as_array().cloned().unwrap_or_default())
        .flat_map(|r| r["scopeMetrics"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s["metrics"].as_array().cloned().unwrap_or_default())
        .filter_map(|m| m["name"].as_str().map(str::to_string))
        .collect()
}

/// An id in hex as OTLP's JSON form writes it (base64).
fn b64(hex: &str) -> String {
    use base64::Engine as _;
    let bytes: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// A call the user is asked about, through a host that answers the
/// question: one trace from the host's span, the server span over the
/// question and the server's answer, the client span from the acceptance.
#[test]
fn an_asked_call_is_one_trace_in_a_real_receiver() {
    let Some((receiver, mut proxy)) = exporting("telemetry-ask") else {
        return;
    };
    let mut capabilities = declaring();
    capabilities["elicitation"] = json!({});
    proxy.initialize(capabilities);
    let host_trace = "5bf92f3577b34da6a3ce929d0e0e4736";
    let mut ask = |id: i64, host_span: &str, action: &str| {
        proxy.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "manage_files", "arguments": {"path": "a", "action": "delete"},
                       "_meta": {"traceparent": format!("00-{host_trace}-{host_span}-01")}}}));
        let question = proxy.receive();
        assert_eq!(question["method"], "elicitation/create", "{question}");
        std::thread::sleep(Duration::from_millis(50));
        proxy.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": action}}));
        proxy.receive()
    };
    let accepted = ask(1, "00000000000000a1", "accept");
    assert!(accepted["result"].is_object(), "{accepted}");
    let declined = ask(2, "00000000000000a2", "decline");
    assert_eq!(declined["error"]["code"], -32001, "{declined}");
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");

    let spans: Vec<Value> = spans_received(&receiver)
        .into_iter()
        .filter(|s| s["traceId"] == b64(host_trace))
        .collect();
    let child_of = |parent: &str, kind: &str| {
        spans
            .iter()
            .find(|s| s["parentSpanId"] == parent && s["kind"] == kind)
            .unwrap_or_else(|| panic!("no {kind} child of {parent}: {spans:#?}"))
    };
    let nanos = |span: &Value, key: &str| span[key].as_str().unwrap().parse::<u64>().unwrap();
    // Accepted: the server span covers the question; the client span only
    // the server's work.
    let server = child_of(&b64("00000000000000a1"), "SPAN_KIND_SERVER");
    let client = child_of(server["spanId"].as_str().unwrap(), "SPAN_KIND_CLIENT");
    let a = attributes(server);
    assert_eq!(a["mcp_resolve.decision"], "ask");
    assert_eq!(a["mcp_resolve.ask.outcome"], "accepted");
    assert_eq!(a["mcp_resolve.outcome"], "accepted");
    assert!(nanos(server, "startTimeUnixNano") < nanos(client, "startTimeUnixNano"));
    assert!(
        nanos(client, "startTimeUnixNano") - nanos(server, "startTimeUnixNano") >= 50_000_000,
        "the question's wait is before the client span"
    );
    // Declined: the server span alone, with the refusal.
    let server = child_of(&b64("00000000000000a2"), "SPAN_KIND_SERVER");
    let a = attributes(server);
    assert_eq!(a["mcp_resolve.ask.outcome"], "declined");
    assert_eq!(a["error.type"], "-32001");
    assert!(
        !spans.iter().any(|s| s["parentSpanId"] == server["spanId"]),
        "nothing of the declined call went upstream"
    );
    let names = metric_names(&receiver);
    for name in [
        "mcp_resolve.asks.pending",
        "mcp_resolve.ask.duration",
        "mcp.server.operation.duration",
    ] {
        assert!(names.iter().any(|n| n == name), "{name}: {names:?}");
    }
}

#[test]
fn audit_records_reach_a_real_otlp_receiver_as_log_records_and_metrics() {
    let Some((receiver, mut proxy)) = exporting("telemetry") else {
        return;
    };
    proxy.initialize(declaring());
    let call = |action: &str| json!({"name": "manage_files", "arguments": {"path": "a", "action": action}});
    // The host's trace context rides in `_meta` (MCP 2026-07-28).
    let host_trace = "0af7651916cd43dd8448eb211c80319c";
    let host_span = "b7ad6b7169203331";
    let mut traced = call("read");
    traced["_meta"] = json!({"traceparent": format!("00-{host_trace}-{host_span}-01")});
    let answer = proxy.request(1, "tools/call", traced);
    assert!(answer["result"].is_object(), "{answer}");
    // The server was sent the proxy's span as the request's trace context
    // (the fake server echoes the params it got).
    let echoed = answer["result"]["content"][0]["text"].as_str().unwrap();
    let sent: Value = serde_json::from_str(echoed.strip_prefix("called ").unwrap()).unwrap();
    let upstream = sent["_meta"]["traceparent"].as_str().unwrap().to_string();
    assert!(
        upstream.starts_with(&format!("00-{host_trace}-")) && !upstream.contains(host_span),
        "{upstream}"
    );
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
    let raw_records: Vec<Value> = logs
        .iter()
        .flat_map(|r| r["scopeLogs"].as_array().cloned().unwrap_or_default())
        .flat_map(|s| s["logRecords"].as_array().cloned().unwrap_or_default())
        .collect();
    let records: Vec<serde_json::Map<String, Value>> = raw_records.iter().map(attributes).collect();
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
    let names = metric_names(&receiver);
    assert!(
        names.iter().any(|n| n == "mcp_resolve.decisions"),
        "{names:?}"
    );
    for name in [
        "mcp.server.operation.duration",
        "mcp.client.operation.duration",
    ] {
        assert!(names.iter().any(|n| n == name), "{name}: {names:?}");
    }

    // The call's spans continue the host's trace: the proxy's server span
    // is the host span's child, its client span the server span's.
    let spans: Vec<Value> = spans_received(&receiver)
        .into_iter()
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
    assert_eq!(server_attributes["network.transport"], "pipe");
    // What the server was sent is the client span.
    assert!(
        upstream.contains(&{
            use base64::Engine as _;
            let id = base64::engine::general_purpose::STANDARD
                .decode(client["spanId"].as_str().unwrap())
                .unwrap();
            id.iter().map(|b| format!("{b:02x}")).collect::<String>()
        }),
        "{upstream} {client:#}"
    );
    // The call's log record is linked to its server span.
    assert_eq!(
        raw_records[0]["traceId"],
        b64(host_trace),
        "{:#}",
        raw_records[0]
    );
    assert_eq!(raw_records[0]["spanId"], server["spanId"]);

    // The refused call: answered by the proxy, one server span in a trace
    // of its own, with the decision and the refusal's code.
    let all_spans = spans_received(&receiver);
    let refused = all_spans
        .iter()
        .find(|s| attributes(s).get("mcp_resolve.decision") == Some(&json!("ask")))
        .unwrap_or_else(|| panic!("{all_spans:#?}"));
    let refused_attributes = attributes(refused);
    assert_eq!(refused["kind"], "SPAN_KIND_SERVER");
    assert_eq!(refused_attributes["mcp_resolve.outcome"], "refused");
    assert_eq!(refused_attributes["error.type"], "-32001");
    assert_eq!(refused["status"]["code"], "STATUS_CODE_ERROR");
    assert_eq!(raw_records[1]["spanId"], refused["spanId"]);
    assert!(
        !all_spans
            .iter()
            .any(|s| s["traceId"] == refused["traceId"] && s["kind"] == "SPAN_KIND_CLIENT"),
        "nothing of the refused call went upstream"
    );
}

/// Over HTTP (`--listen`), a request's `traceparent` header continues the
/// host's trace, and the spans name the session.
#[test]
fn an_http_hosts_traceparent_header_continues_its_trace() {
    let Some(python) = common::mcp_python("the OTLP receiver (opentelemetry-proto)") else {
        return;
    };
    let dir = common::scratch("proxy", "telemetry-http");
    let receiver = Receiver::start(&python, &dir);
    let endpoint = format!("http://127.0.0.1:{}", receiver.port);
    let proxy = common::Listening::start(
        &["rules/file-server.yaml", "--otlp", &endpoint],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    let json_headers = [
        ("Accept", "application/json"),
        ("Content-Type", "application/json"),
    ];
    let (status, headers, body) = super::http::http_at(
        &proxy.addr,
        "POST",
        "/mcp",
        &json_headers,
        &super::http::initialize_body(1),
    );
    assert_eq!(status, 200, "{body}");
    let session = headers
        .iter()
        .find(|(n, _)| n == "mcp-session-id")
        .map(|(_, v)| v.clone())
        .unwrap();
    let host_trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let host_span = "00f067aa0ba902b7";
    let traceparent = format!("00-{host_trace}-{host_span}-01");
    let call = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"}}});
    let mut with_session = json_headers.to_vec();
    with_session.push(("Mcp-Session-Id", &session));
    with_session.push(("traceparent", &traceparent));
    let (status, _, body) = super::http::http_at(
        &proxy.addr,
        "POST",
        "/mcp",
        &with_session,
        &call.to_string(),
    );
    assert_eq!(status, 200, "{body}");
    assert!(
        body.contains(host_trace),
        "the server got the trace: {body}"
    );
    // Stopped as a service manager would: what is queued is sent.
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:#?}");

    let spans: Vec<Value> = spans_received(&receiver)
        .into_iter()
        .filter(|s| s["traceId"] == b64(host_trace))
        .collect();
    let server = spans
        .iter()
        .find(|s| s["kind"] == "SPAN_KIND_SERVER")
        .unwrap_or_else(|| panic!("{spans:#?}"));
    let server_attributes = attributes(server);
    assert_eq!(server_attributes["mcp.session.id"], json!(session));
    assert_eq!(server_attributes["network.transport"], "tcp");
    assert_eq!(server_attributes["network.protocol.name"], "http");
    assert!(spans.iter().any(|s| s["kind"] == "SPAN_KIND_CLIENT"));
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
    // A failing collector is said once per signal while running, and what
    // was lost is counted at exit.
    for signal in ["traces", "logs"] {
        let said = stderr
            .iter()
            .filter(|l| l.contains(&format!("telemetry: cannot export {signal}")))
            .count();
        assert!(said <= 1, "{signal} said {said} times: {stderr:#?}");
    }
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("cannot send traces:")
                && l.contains("not accepted by the collector")),
        "{stderr:#?}"
    );
}

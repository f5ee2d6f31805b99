//! Traces with telemetry on: every host request's server span (forwarded,
//! answered by the proxy, held for a question), the client span of what
//! goes upstream, the audit records that name their span, and the
//! measures for the metrics.

use super::*;
use crate::session::with_http_traceparent;
use mcp_resolve_telemetry::{ClientSpan, Measure, SpanRecord};

/// The asking guard, its session tracing (telemetry on).
fn telemetry_guard() -> Guarded {
    Guarded {
        traces: true,
        ..asking_guard()
    }
}

fn spans(out: &[Effect]) -> Vec<&SpanRecord> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Span(span) => Some(&**span),
            _ => None,
        })
        .collect()
}

fn measures(out: &[Effect]) -> Vec<&Measure> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Measure(m) => Some(m),
            _ => None,
        })
        .collect()
}

fn attribute(span: &SpanRecord, key: &str) -> Option<Value> {
    span.attributes()
        .into_iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v)
}

/// A session past `initialize` (its own trace: ids 1–3), the host able to
/// be asked.
fn traced_session<'s>(rules: &'s ProxyRules, guard: &'s Guarded) -> Harness<'s> {
    let mut h = Harness::new(rules, guard, Some(TIMEOUT));
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25",
                   "capabilities": {"elicitation": {}, "extensions": {EXTENSION: {}}},
                   "clientInfo": {"name": "test", "version": "1"}}});
    sole_request(&h.host(&init.to_string()));
    let out = h.server(
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#,
    );
    assert_eq!(spans(&out).len(), 1);
    h
}

/// The audit record the span's decision is joined from (it names the
/// span).
fn record_of(out: &[Effect], span: &SpanRecord) -> Value {
    let id = format!("{:016x}", span.span_id);
    audits(out)
        .into_iter()
        .find(|r| r["spanId"] == id.as_str())
        .unwrap_or_else(|| panic!("no record names span {id}: {out:?}"))
}

/// With telemetry on, a forwarded call continues the host's trace: the
/// server gets the proxy's client span as its `traceparent`, and the answer
/// ends the request's spans (the server span, child of the host's; the
/// client span, child of the server span), the audit record naming them.
#[test]
fn a_forwarded_call_continues_the_hosts_trace() {
    let rules = rules(Dialect::Extension);
    let guard = telemetry_guard();
    let mut h = Harness::new(&rules, &guard, None);
    // The initialize request is traced too: a trace of its own (id 1),
    // spans 2 and 3.
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "test", "version": "1"}}});
    let forwarded = sole_request(&h.host(&init.to_string()));
    assert_eq!(
        forwarded["params"]["_meta"]["traceparent"],
        "00-00000000000000000000000000000001-0000000000000003-01"
    );
    h.server(
        r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#,
    );
    let host = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let call = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"},
                   "_meta": {"traceparent": host}}});
    let out = h.host(&call.to_string());
    let forwarded = sole_request(&out);
    // The call continues the host's trace: spans 4 (server) and 5 (client).
    assert_eq!(
        forwarded["params"]["_meta"]["traceparent"],
        "00-0af7651916cd43dd8448eb211c80319c-0000000000000005-01"
    );
    assert_eq!(forwarded["params"]["arguments"]["action"], "read");
    let out = h.server(r#"{"jsonrpc":"2.0","id":5,"result":{"content":[]}}"#);
    let [server] = spans(&out)[..] else {
        panic!("{out:?}")
    };
    assert_eq!(server.trace_id, 0x0af7651916cd43dd8448eb211c80319c);
    assert_eq!(server.parent, Some(0xb7ad6b7169203331));
    assert_eq!(server.span_id, 4);
    assert_eq!(server.client.map(|c| c.span_id), Some(5));
    assert_eq!(server.name(), "tools/call manage_files");
    let record = record_of(&out, server);
    assert_eq!(record["traceId"], "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(record["variant"], "read");
    assert_eq!(record["decision"], "allow");
    assert_eq!(
        attribute(server, "gen_ai.tool.name"),
        Some(json!("manage_files"))
    );
    assert_eq!(
        attribute(server, "mcp.protocol.version"),
        Some(json!("2025-11-25"))
    );
    assert!(server.error.is_none());
    // An error answer is the spans' error.type.
    let out = h.host(&json!({"jsonrpc": "2.0", "id": 6, "method": "prompts/get"}).to_string());
    assert!(sole_request(&out)["params"]["_meta"]["traceparent"].is_string());
    let out = h.server(r#"{"jsonrpc":"2.0","id":6,"error":{"code":-32601,"message":"no"}}"#);
    let errors: Vec<Option<String>> = out
        .iter()
        .filter_map(|e| match e {
            Effect::Span(span) => Some(span.error.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(errors, vec![Some("-32601".into())]);
    // `isError` is a tool result's: a call's makes `tool_error`, another
    // request's result is not searched for it.
    let error_of = |out: &[Effect]| spans(out).first().map(|span| span.error.clone());
    let call = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"}}});
    h.host(&call.to_string());
    let out = h.server(r#"{"jsonrpc":"2.0","id":7,"result":{"content":[],"isError":true}}"#);
    assert_eq!(error_of(&out), Some(Some("tool_error".into())));
    h.host(&json!({"jsonrpc": "2.0", "id": 8, "method": "prompts/get"}).to_string());
    let out = h.server(r#"{"jsonrpc":"2.0","id":8,"result":{"isError":true}}"#);
    assert_eq!(error_of(&out), Some(None));
}

/// A call the proxy answers itself has one span, a server span, with the
/// decision and its answer's `error.type`; its audit record names it.
#[test]
fn requests_the_proxy_answers_have_a_server_span_and_linked_records() {
    let rules = rules(Dialect::Extension);
    let guard = telemetry_guard();
    let mut h = traced_session(&rules, &guard);
    // Arguments the schema refuses: a tool result with `isError`.
    let host = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";
    let bad = json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "chmod"},
                   "_meta": {"traceparent": host}}});
    let out = h.host(&bad.to_string());
    assert!(!out.iter().any(|e| matches!(e, Effect::Server(_))));
    let [span] = spans(&out)[..] else {
        panic!("{out:?}")
    };
    assert_eq!(span.client, None, "nothing went upstream");
    assert_eq!(span.parent, Some(0xb7ad6b7169203331));
    assert_eq!(span.error.as_deref(), Some("tool_error"));
    assert_eq!(record_of(&out, span)["outcome"], "invalid");
    assert_eq!(attribute(span, "network.transport"), Some(json!("pipe")));
    assert_eq!(attribute(span, "jsonrpc.request.id"), Some(json!("7")));
    let records = audits(&out);
    assert_eq!(records[0]["traceId"], "0af7651916cd43dd8448eb211c80319c");
    assert_eq!(records[0]["spanId"], format!("{:016x}", span.span_id));
    // A resolution: the resolved variant and hints on the span.
    let resolve = json!({"jsonrpc": "2.0", "id": "r", "method": "tools/resolve",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "delete"}}});
    let out = h.host(&resolve.to_string());
    let [span] = spans(&out)[..] else {
        panic!("{out:?}")
    };
    assert_eq!(span.name(), "tools/resolve manage_files");
    assert!(span.parent.is_none());
    assert!(span.error.is_none());
    let record = record_of(&out, span);
    assert_eq!(record["variant"], "overwrite");
    assert_eq!(record["annotations"]["destructiveHint"], true);
    assert_eq!(
        attribute(span, "gen_ai.tool.name"),
        Some(json!("manage_files"))
    );
    assert_eq!(attribute(span, "gen_ai.operation.name"), None);
    // A resolution refused: the code the host is answered with.
    let unknown = json!({"jsonrpc": "2.0", "id": "u", "method": "tools/resolve",
        "params": {"name": "no_such_tool", "arguments": {}}});
    let out = h.host(&unknown.to_string());
    let [span] = spans(&out)[..] else {
        panic!("{out:?}")
    };
    let answer = out
        .iter()
        .find_map(|e| match e {
            Effect::Host(line) => mcp_resolve_protocol::json::from_str::<Value>(line).ok(),
            _ => None,
        })
        .unwrap();
    let code = answer["error"]["code"].as_i64().unwrap();
    assert_eq!(span.error, Some(code.to_string()));
    // A protocol error: its code.
    let nameless = json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": {}});
    let out = h.host(&nameless.to_string());
    assert_eq!(spans(&out)[0].error.as_deref(), Some("-32602"));
}

/// A held call: its server span runs from the call to the answer, with the
/// question's outcome and wait; the client span from the acceptance; the
/// questions pending go up and down.
#[test]
fn an_asked_call_is_one_trace_from_the_call_through_the_question() {
    let rules = rules(Dialect::Extension);
    let guard = telemetry_guard();
    let mut h = traced_session(&rules, &guard);
    let out = h.host(&call(5, "delete"));
    assert!(spans(&out).is_empty(), "{out:?}");
    assert_eq!(measures(&out), [&Measure::AskOpened]);
    let question = host_lines(&out)[0]["id"].clone();
    h.clock.advance(Duration::from_millis(1500));
    let accept = json!({"jsonrpc": "2.0", "id": question, "result": {"action": "accept"}});
    let out = h.host(&accept.to_string());
    assert_eq!(
        measures(&out),
        [&Measure::AskClosed {
            outcome: "accepted",
            wait: Duration::from_millis(1500)
        }]
    );
    let forwarded = sole_request(
        &out.iter()
            .filter(|e| matches!(e, Effect::Server(_)))
            .cloned()
            .collect::<Vec<_>>(),
    );
    let traceparent = forwarded["params"]["_meta"]["traceparent"]
        .as_str()
        .unwrap()
        .to_string();
    h.clock.advance(Duration::from_millis(20));
    let out = h.server(r#"{"jsonrpc":"2.0","id":5,"result":{"content":[],"isError":true}}"#);
    let [server] = spans(&out)[..] else {
        panic!("{out:?}")
    };
    let Some(ClientSpan {
        span_id: client,
        start: sent,
    }) = server.client
    else {
        panic!("{server:?}")
    };
    assert!(traceparent.contains(&format!("{client:016x}")));
    assert_eq!(
        server.end.duration_since(server.start).unwrap(),
        Duration::from_millis(1520)
    );
    assert_eq!(
        server.end.duration_since(sent).unwrap(),
        Duration::from_millis(20)
    );
    assert_eq!(
        attribute(server, "mcp_resolve.ask.outcome"),
        Some(json!("accepted"))
    );
    assert_eq!(
        attribute(server, "mcp_resolve.ask.wait_ms"),
        Some(json!(1500.0))
    );
    assert_eq!(record_of(&out, server)["outcome"], "accepted");
    assert_eq!(server.error.as_deref(), Some("tool_error"));
    // A question nobody answers: given up, its span ended with the refusal.
    let out = h.host(&call(6, "delete"));
    assert_eq!(measures(&out), [&Measure::AskOpened]);
    let out = h.tick(ASK_TIMEOUT);
    let [span] = spans(&out)[..] else {
        panic!("{out:?}")
    };
    assert_eq!(
        attribute(span, "mcp_resolve.ask.outcome"),
        Some(json!("timed out"))
    );
    assert_eq!(span.error.as_deref(), Some("-32001"));
    assert!(matches!(
        measures(&out)[..],
        [Measure::AskClosed {
            outcome: "timed out",
            ..
        }]
    ));
    // A question left when the server exits: ended with the session.
    h.host(&call(7, "delete"));
    let mut out = Vec::new();
    h.session
        .server_exited("the server exited".into(), h.clock.now(), &mut out);
    let [span] = spans(&out)[..] else {
        panic!("{out:?}")
    };
    assert_eq!(span.error.as_deref(), Some("server_exited"));
    assert!(measures(&out).contains(&&Measure::UpstreamError { kind: "exited" }));
}

/// A request that times out upstream is an upstream error, and its spans
/// say `timeout`.
#[test]
fn a_timed_out_request_ends_its_spans_and_counts_an_upstream_error() {
    let rules = rules(Dialect::Extension);
    let guard = telemetry_guard();
    let mut h = traced_session(&rules, &guard);
    sole_request(&h.host(&call(9, "read")));
    let out = h.tick(TIMEOUT);
    let errors: Vec<_> = spans(&out).iter().map(|s| s.error.clone()).collect();
    assert_eq!(errors, [Some("timeout".into())]);
    assert_eq!(
        measures(&out),
        [&Measure::UpstreamError { kind: "timeout" }]
    );
    assert_eq!(audits(&out)[0]["outcome"], "timed out");
    assert!(audits(&out)[0]["traceId"].is_string());
}

/// An HTTP `traceparent` header goes into a request that names no trace
/// context of its own; the message's own wins.
#[test]
fn an_http_traceparent_is_honoured_unless_the_message_has_one() {
    let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let plain = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#;
    let out = with_http_traceparent(plain, header).unwrap();
    let out: Value = mcp_resolve_protocol::json::from_str(&out).unwrap();
    assert_eq!(out["params"]["_meta"]["traceparent"], header);
    let own = r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}"#;
    assert!(with_http_traceparent(own, header).is_none());
    assert!(with_http_traceparent(plain, "garbage").is_none());
    // Notifications and responses are left alone.
    let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    assert!(with_http_traceparent(note, header).is_none());
}

/// The header's trace context placed in a request already read (the HTTP
/// route) gives what a read of the request with it placed gives — where
/// its `_meta` is, too — and reads the request again only when its params
/// were not parsed.
#[test]
fn an_http_traceparent_placed_in_a_read_is_what_a_read_would_give() {
    use crate::session::{HostMessage, adopt_http_traceparent, read_host, reads_params};
    use mcp_resolve_protocol::Screen;
    use mcp_resolve_protocol::json::reads;
    let rules = rules(Dialect::Extension);
    let read = |text: &str| {
        let (message, params) =
            read_host(&mut Screen::default().per_message(), &rules, text).unwrap();
        HostMessage::read(text, &message, params)
    };
    let header = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
    let texts = [
        (r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}  "#, false),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"_meta":1}}}"#,
            false,
        ),
        (
            r#"{"method":"tools/call","params":{ "name":"t","_meta":{"progressToken":2}},"jsonrpc":"2.0","id":"a"}"#,
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"a":1,"traceparent":"bad"}}}"#,
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","_meta":{"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}"#,
            false,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"resources/read","params":{"uri":"file:///a"}}"#,
            true,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, false),
        (
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            false,
        ),
    ];
    for (text, reads_again) in texts {
        let mut handed = read(text);
        let parses = handed
            .method
            .as_deref()
            .is_some_and(|m| reads_params(m, rules.method()));
        let before = reads();
        adopt_http_traceparent(&mut handed, header, parses);
        let read_again = reads() - before;
        let expected = match with_http_traceparent(text, header) {
            Some(placed) => read(&placed),
            None => read(text),
        };
        assert_eq!(handed, expected, "{text}");
        assert_eq!(read_again.reads > 0, reads_again, "{text}: {read_again:?}");
    }
}

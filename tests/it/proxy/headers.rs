//! SEP-2243's headers on every HTTP route: what a host sends is checked
//! where the proxy receives it, with the status and error a 2026-07-28
//! server gives (the TypeScript SDK v2 server, side by side); what the
//! proxy sends an upstream carries the 2026-07-28 headers on 2026-07-28
//! requests only.

use super::http::{http_at, initialize_body};
use super::isolation::V2Http;
use super::*;

const MODERN_META: &str = r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientInfo":{"name":"headers","version":"1"},"io.modelcontextprotocol/clientCapabilities":{}}"#;

fn call_body() -> String {
    format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{"name":"slow","arguments":{{"host":"h","call":0,"steps":1,"delayMs":1}},"_meta":{MODERN_META}}}}}"#
    )
}

/// The status and JSON-RPC error code of one POST.
fn outcome(addr: &str, headers: &[(&str, &str)], body: &str) -> (u16, Option<i64>, String) {
    let mut all = vec![
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
    ];
    all.extend_from_slice(headers);
    let (status, _, text) = http_at(addr, "POST", "/mcp", &all, body);
    let code = text
        .lines()
        .map(|l| l.strip_prefix("data: ").unwrap_or(l))
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find_map(|m| m.pointer("/error/code").and_then(Value::as_i64));
    (status, code, text)
}

/// A label, the headers sent, the body.
type Case<'a> = (&'a str, Vec<(&'a str, &'a str)>, &'a str);

#[test]
fn sep_2243_headers_are_refused_as_the_server_refuses_them_on_every_route() {
    let Some(server) = ts_script("v2_server.mjs") else {
        return;
    };
    let scratch = common::scratch("proxy", "sep2243");
    let direct = V2Http::start(&server, &scratch.join("direct.log"));
    let direct_addr = direct
        .url
        .trim_start_matches("http://")
        .trim_end_matches("/mcp")
        .to_string();
    let rules = fixture("v2_server.yaml");
    let server_text = server.to_string_lossy().into_owned();
    let child_log = scratch.join("child.log").to_string_lossy().into_owned();
    let child = common::Listening::start(&[&rules], &["node", &server_text, "stdio", &child_log]);
    let upstream = common::Listening::start(&[&rules, "--upstream", &direct.url], &[]);

    let body = call_body();
    let good = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "slow"),
    ];
    let with = |name: &str, value: Option<&'static str>| -> Vec<(&'static str, &'static str)> {
        good.iter()
            .filter_map(|&(n, v)| {
                if n.eq_ignore_ascii_case(name) {
                    value.map(|value| (n, value))
                } else {
                    Some((n, v))
                }
            })
            .collect()
    };
    let legacy_init = initialize_body(1);
    let bare_list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{}}"#;
    let cases: Vec<Case<'_>> = vec![
        ("all three headers agree", good.to_vec(), &body),
        (
            "Mcp-Method names another method",
            with("mcp-method", Some("tools/list")),
            &body,
        ),
        ("no Mcp-Method", with("mcp-method", None), &body),
        (
            "Mcp-Name names another tool",
            with("mcp-name", Some("fast")),
            &body,
        ),
        (
            "Mcp-Name Base64 of the right name",
            with("mcp-name", Some("=?base64?c2xvdw==?=")),
            &body,
        ),
        (
            "Mcp-Name not Base64",
            with("mcp-name", Some("=?base64?***?=")),
            &body,
        ),
        ("no Mcp-Name", with("mcp-name", None), &body),
        (
            "the version header contradicts _meta",
            with("mcp-protocol-version", Some("2025-11-25")),
            &body,
        ),
        (
            "no version header",
            with("mcp-protocol-version", None),
            &body,
        ),
        (
            "initialize with a 2026-07-28 header",
            vec![("MCP-Protocol-Version", "2026-07-28")],
            &legacy_init,
        ),
        (
            "a 2026-07-28 header on a body without _meta",
            vec![
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/list"),
            ],
            bare_list,
        ),
    ];
    for (label, headers, body) in &cases {
        let (status, code, text) = outcome(&direct_addr, headers, body);
        assert!(
            (status == 200) == (*label == "all three headers agree" || label.contains("Base64 of")),
            "{label}: the server answered {status}: {text}"
        );
        for (route, proxy) in [
            ("--listen, a child", &child),
            ("--listen --upstream", &upstream),
        ] {
            let (p_status, p_code, p_text) = outcome(&proxy.addr, headers, body);
            assert_eq!(
                (p_status, p_code),
                (status, code),
                "{label} through {route}: {p_text}\ndirectly: {text}"
            );
        }
    }
    for proxy in [child, upstream] {
        let (status, stderr) = proxy.stop();
        assert_eq!(status, 0, "{stderr:#?}");
    }
}

/// The header log of `header_server.py`, one JSON object a request.
fn header_log(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

struct HeaderServer(Child);

impl Drop for HeaderServer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn header_server(log: &Path) -> (HeaderServer, String) {
    let mut child = std::process::Command::new("python3")
        .arg(fixture("header_server.py"))
        .arg(log)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let port = common::port_line(&mut child);
    (HeaderServer(child), format!("http://127.0.0.1:{port}/mcp"))
}

/// What an older-protocol request carries upstream: what a client of that
/// protocol sends (no `Mcp-Method`, no `Mcp-Name`, no version header on
/// `initialize`, the negotiated version after it); a 2026-07-28 request
/// carries all three.
fn assert_headers_by_era(log: &[Value]) {
    let of =
        |method: &str| -> Vec<&Value> { log.iter().filter(|r| r["method"] == method).collect() };
    let init = of("initialize");
    assert_eq!(init.len(), 1, "{log:#?}");
    assert_eq!(init[0]["mcp-method"], Value::Null, "{log:#?}");
    assert_eq!(init[0]["mcp-protocol-version"], Value::Null, "{log:#?}");
    let lists = of("tools/list");
    assert_eq!(lists.len(), 2, "{log:#?}");
    assert_eq!(lists[0]["mcp-method"], Value::Null, "{log:#?}");
    assert_eq!(lists[0]["mcp-protocol-version"], "2025-11-25", "{log:#?}");
    assert_eq!(lists[1]["mcp-method"], "tools/list", "{log:#?}");
    assert_eq!(lists[1]["mcp-protocol-version"], "2026-07-28", "{log:#?}");
    let calls = of("tools/call");
    assert_eq!(calls.len(), 1, "{log:#?}");
    assert_eq!(calls[0]["mcp-method"], "tools/call", "{log:#?}");
    assert_eq!(calls[0]["mcp-name"], "manage_files", "{log:#?}");
    // The tasks extension's methods pass through, named by their task.
    for method in ["tasks/get", "tasks/update"] {
        let tasks = of(method);
        assert_eq!(tasks.len(), 1, "{log:#?}");
        assert_eq!(tasks[0]["mcp-method"], method, "{log:#?}");
        assert_eq!(tasks[0]["mcp-name"], "task-1", "{log:#?}");
    }
}

/// A 2026-07-28 request of the tasks extension (`io.modelcontextprotocol/tasks`).
fn task_request(id: i64, method: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": method,
           "params": {"taskId": "task-1", "_meta": serde_json::from_str::<Value>(MODERN_META).unwrap()}})
}

#[test]
fn an_older_protocol_request_reaches_an_http_upstream_without_the_2026_headers() {
    let scratch = common::scratch("proxy", "legacy-headers");
    let modern_list = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
        "params": {"_meta": serde_json::from_str::<Value>(MODERN_META).unwrap()}});
    let modern_call = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"},
                   "_meta": serde_json::from_str::<Value>(MODERN_META).unwrap()}});

    // A host over HTTP (--listen --upstream).
    let log = scratch.join("listen.jsonl");
    let (_server, url) = header_server(&log);
    let proxy = common::Listening::start(&["rules/file-server.yaml", "--upstream", &url], &[]);
    let accept = ("Accept", "application/json, text/event-stream");
    let json_body = ("Content-Type", "application/json");
    let (status, headers, body) = http_at(
        &proxy.addr,
        "POST",
        "/mcp",
        &[accept, json_body],
        &initialize_body(1),
    );
    assert_eq!(status, 200, "{body}");
    let session = headers
        .iter()
        .find(|(n, _)| n == "mcp-session-id")
        .map(|(_, v)| v.clone())
        .unwrap();
    let in_session = [
        accept,
        json_body,
        ("Mcp-Session-Id", session.as_str()),
        ("MCP-Protocol-Version", "2025-11-25"),
    ];
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}).to_string();
    let (status, _, body) = http_at(&proxy.addr, "POST", "/mcp", &in_session, &list);
    assert_eq!(status, 200, "{body}");
    let modern = [accept, json_body, ("MCP-Protocol-Version", "2026-07-28")];
    let (status, _, body) = http_at(
        &proxy.addr,
        "POST",
        "/mcp",
        &[modern.as_slice(), &[("Mcp-Method", "tools/list")]].concat(),
        &modern_list.to_string(),
    );
    assert_eq!(status, 200, "{body}");
    let (status, _, body) = http_at(
        &proxy.addr,
        "POST",
        "/mcp",
        &[
            modern.as_slice(),
            &[("Mcp-Method", "tools/call"), ("Mcp-Name", "manage_files")],
        ]
        .concat(),
        &modern_call.to_string(),
    );
    assert_eq!(status, 200, "{body}");
    for (id, method) in [(5, "tasks/get"), (6, "tasks/update")] {
        let headers = [
            modern.as_slice(),
            &[("Mcp-Method", method), ("Mcp-Name", "task-1")],
        ]
        .concat();
        let (status, _, body) = http_at(
            &proxy.addr,
            "POST",
            "/mcp",
            &headers,
            &task_request(id, method).to_string(),
        );
        assert_eq!(status, 200, "{method}: {body}");
        // The server's answer, as it wrote it (its own spacing).
        assert!(
            body.contains(&format!(r#""id": {id}, "result": {{}}"#)),
            "{method}: {body}"
        );
        // Without the Mcp-Name its taskId requires: refused at the proxy.
        let headers = [modern.as_slice(), &[("Mcp-Method", method)]].concat();
        let (status, _, body) = http_at(
            &proxy.addr,
            "POST",
            "/mcp",
            &headers,
            &task_request(id, method).to_string(),
        );
        assert_eq!(status, 400, "{method}: {body}");
    }
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:#?}");
    assert_headers_by_era(&header_log(&log));

    // A host on stdio (--upstream).
    let log = scratch.join("stdio.jsonl");
    let (_server, url) = header_server(&log);
    let mut proxy = Proxy::start(
        &["rules/file-server.yaml", "--no-probe", "--upstream", &url],
        &[],
    );
    proxy.initialize(json!({}));
    proxy.request(2, "tools/list", json!({}));
    proxy.send(&modern_list);
    assert_eq!(proxy.receive()["id"], 3);
    proxy.send(&modern_call);
    assert_eq!(proxy.receive()["id"], 4);
    for (id, method) in [(5, "tasks/get"), (6, "tasks/update")] {
        proxy.send(&task_request(id, method));
        assert_eq!(proxy.receive()["id"], id);
    }
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:#?}");
    assert_headers_by_era(&header_log(&log));
}

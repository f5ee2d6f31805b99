//! Hosts over HTTP (`--listen`) and HTTP upstreams (`--upstream`).

use super::*;

/// One raw HTTP/1.1 exchange with `addr` on `/mcp` (`Connection:
/// close`); the status, the headers (lower-case names) and the body.
fn http(
    addr: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    http_at(addr, method, "/mcp", headers, body)
}

/// [`http`] on `path`.
pub(super) fn http_at(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!("{method} {path} HTTP/1.1\r\nConnection: close\r\n");
    if !headers.iter().any(|(n, _)| n.eq_ignore_ascii_case("host")) {
        request.push_str(&format!("Host: {addr}\r\n"));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n{body}", body.len()));
    stream.write_all(request.as_bytes()).unwrap();
    let mut response = String::new();
    stream.read_to_string(&mut response).unwrap();
    let (head, body) = response.split_once("\r\n\r\n").unwrap_or((&response, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(n, v)| (n.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, body.to_string())
}

/// The SEP-2243 headers a 2026-07-28 client sends with `body` (none for a
/// message of an older session): `MCP-Protocol-Version`, `Mcp-Method` and,
/// for the methods that name something, `Mcp-Name`.
pub(super) fn modern_headers(body: &str) -> Vec<(&'static str, String)> {
    let Ok(message) = serde_json::from_str::<Value>(body) else {
        return Vec::new();
    };
    let Some(version) = message
        .pointer("/params/_meta/io.modelcontextprotocol~1protocolVersion")
        .and_then(Value::as_str)
    else {
        return Vec::new();
    };
    let method = message["method"].as_str().unwrap_or_default();
    let mut headers = vec![
        ("MCP-Protocol-Version", version.to_string()),
        ("Mcp-Method", method.to_string()),
    ];
    let name = match method {
        "tools/call" | "prompts/get" => message.pointer("/params/name"),
        "resources/read" => message.pointer("/params/uri"),
        _ => None,
    };
    if let Some(name) = name.and_then(Value::as_str) {
        headers.push(("Mcp-Name", name.to_string()));
    }
    headers
}

fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

const JSON: (&str, &str) = ("Accept", "application/json");
const JSON_BODY: (&str, &str) = ("Content-Type", "application/json");

pub(super) fn initialize_body(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "initialize",
           "params": {"protocolVersion": "2025-11-25", "capabilities": declaring(),
                      "clientInfo": {"name": "proxy-test", "version": "1"}}})
    .to_string()
}

#[test]
fn the_conformance_suite_passes_over_http_through_the_listening_proxy() {
    let Some(python) = common::mcp_python("the conformance suite over HTTP through the proxy")
    else {
        return;
    };
    let root = common::scratch("proxy", "notes-listen");
    let marker = root.to_str().unwrap().to_string();
    let proxy = common::Listening::start(
        &[&fixture("notes.yaml")],
        &[&python, &fixture("notes_server.py"), &marker],
    );
    // Requests that name no session (2026-07-28) and `initialize` sessions,
    // each with a server of its own, ended by the suite's DELETE.
    let url = proxy.url.clone();
    let failed = suite_result(&python, &[], &["--http", &url])
        .and_then(|()| suite_result(&python, &["--legacy"], &["--http", &url]));
    let (status, stderr) = proxy.stop();
    if let Err(failed) = failed {
        panic!("{failed}\nthe proxy's stderr:\n{}", stderr.join("\n"));
    }
    assert_eq!(status, 0, "{stderr:?}");
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("every session's server was stopped")),
        "{stderr:?}"
    );
    // No server outlives the proxy.
    assert_eq!(common::outlived(&marker), 0, "a server outlived the proxy");
}

#[test]
fn the_python_sdk_as_a_host_over_http_through_the_proxy() {
    let Some(python) = common::mcp_python("the Python SDK over HTTP through the proxy") else {
        return;
    };
    let output = std::process::Command::new(&python)
        .arg(fixture("sdk_client.py"))
        .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
        .arg("--listen")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("ok calls answer as without the proxy"),
        "the Python SDK client failed over HTTP through the proxy:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for mode in ["ok auto (2026-07-28, http)", "ok legacy (2025-11-25, http)"] {
        assert!(stdout.contains(mode), "{mode} missing:\n{stdout}");
    }
}

#[test]
fn the_conformance_suite_passes_through_the_proxy_to_an_http_upstream() {
    let Some(python) = common::mcp_python("the conformance suite to an HTTP upstream") else {
        return;
    };
    // The notes server on the Python SDK's streamable HTTP transport.
    let root = common::scratch("proxy", "notes-upstream");
    let port = free_port().to_string();
    let mut server = std::process::Command::new(&python)
        .args([
            &fixture("notes_server.py"),
            root.to_str().unwrap(),
            "--http",
            &port,
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let addr = format!("127.0.0.1:{port}");
    let start = std::time::Instant::now();
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the server does not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let upstream = format!("http://{addr}/mcp");
    let rules = fixture("notes.yaml");
    // A host on stdio, the server over HTTP.
    let target = [
        "--stdio",
        "--",
        env!("CARGO_BIN_EXE_mcp-resolve"),
        "proxy",
        &rules,
        "--upstream",
        &upstream,
    ];
    suite(&python, &[], &target);
    suite(&python, &["--legacy"], &target);
    // HTTP on both sides.
    let proxy = common::Listening::start(&[&rules, "--upstream", &upstream], &[]);
    suite(&python, &["--legacy"], &["--http", &proxy.url]);
    suite(&python, &[], &["--http", &proxy.url]);
    let (status, stderr) = proxy.stop();
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(status, 0, "{stderr:?}");
}

#[test]
fn the_listening_proxy_guards_hosts_origins_and_sessions() {
    let root = common::scratch("proxy", "listen-guards");
    let marker = root.join("pid").to_str().unwrap().to_string();
    let proxy = common::Listening::start(
        &["rules/file-server.yaml", "--max-sessions", "2"],
        &["python3", fake_server().to_str().unwrap(), "well", &marker],
    );
    let addr = proxy.addr.clone();
    let init = initialize_body(1);

    // DNS rebinding: a foreign Host or Origin is refused before anything starts.
    let (status, _, body) = http(
        &addr,
        "POST",
        &[("Host", "evil.example"), JSON, JSON_BODY],
        &init,
    );
    assert_eq!(status, 403, "{body}");
    let (status, _, body) = http(
        &addr,
        "POST",
        &[("Origin", "https://evil.example"), JSON, JSON_BODY],
        &init,
    );
    assert_eq!(status, 403, "{body}");
    assert_eq!(
        common::processes_with(&marker),
        0,
        "a server started for a refused request"
    );

    // A loopback origin opens a session, with an id of the proxy's.
    let (status, headers, body) = http(
        &addr,
        "POST",
        &[("Origin", "http://localhost:3000"), JSON, JSON_BODY],
        &init,
    );
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], 1, "{answer}");
    assert!(
        answer["result"]["capabilities"]["extensions"][EXTENSION].is_object(),
        "{answer}"
    );
    let session = header(&headers, "mcp-session-id")
        .expect("a session id")
        .to_string();
    assert!(session.len() >= 32, "{session}");
    assert_eq!(common::processes_with(&marker), 1);

    // The host's own id comes back, whatever id the server saw.
    let list = json!({"jsonrpc": "2.0", "id": "mine", "method": "tools/list", "params": {}});
    let (status, _, body) = http(
        &addr,
        "POST",
        &[JSON, JSON_BODY, ("Mcp-Session-Id", &session)],
        &list.to_string(),
    );
    assert_eq!(status, 200, "{body}");
    let answer: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(answer["id"], "mine", "{answer}");
    assert!(answer["result"]["tools"].is_array(), "{answer}");

    // Framing errors are answered here, with 400; oversized bodies with 413.
    let (status, _, body) = http(&addr, "POST", &[JSON, JSON_BODY], "{not json");
    assert_eq!(status, 400, "{body}");
    assert_eq!(
        serde_json::from_str::<Value>(&body).unwrap()["error"]["code"],
        -32700
    );
    // A GET stream belongs to a session; other methods are not served.
    let (status, _, _) = http(&addr, "GET", &[("Accept", "text/event-stream")], "");
    assert_eq!(status, 405);
    let (status, _, _) = http(&addr, "PUT", &[JSON_BODY], "{}");
    assert_eq!(status, 405);

    // A request that names no session and is not a 2026-07-28 one (as the
    // TypeScript SDK v1 sends after `terminateSession()`) is refused with
    // 400, as a server refuses it, and no server is started for it.
    let before = common::processes_with(&marker);
    let (status, _, body) = http(
        &addr,
        "POST",
        &[JSON, JSON_BODY, ("MCP-Protocol-Version", "2025-11-25")],
        &list.to_string(),
    );
    assert_eq!(status, 400, "{body}");
    let refused: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(refused["id"], "mine", "{refused}");
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    assert_eq!(common::processes_with(&marker), before);

    // An unknown session is 404; so is a session after its DELETE, whose
    // server is stopped.
    let (status, _, _) = http(
        &addr,
        "POST",
        &[JSON, JSON_BODY, ("Mcp-Session-Id", "nope")],
        &list.to_string(),
    );
    assert_eq!(status, 404);
    let (status, _, _) = http(&addr, "DELETE", &[("Mcp-Session-Id", &session)], "");
    assert_eq!(status, 204);
    let (status, _, _) = http(
        &addr,
        "POST",
        &[JSON, JSON_BODY, ("Mcp-Session-Id", &session)],
        &list.to_string(),
    );
    assert_eq!(status, 404);
    let start = std::time::Instant::now();
    while common::processes_with(&marker) > 0 {
        assert!(
            start.elapsed() < Duration::from_secs(20),
            "the session's server was not stopped"
        );
        std::thread::sleep(Duration::from_millis(50));
    }

    // --max-sessions: the third concurrent session is refused with 503.
    for _ in 0..2 {
        let (status, _, body) = http(&addr, "POST", &[JSON, JSON_BODY], &init);
        assert_eq!(status, 200, "{body}");
    }
    let (status, _, body) = http(&addr, "POST", &[JSON, JSON_BODY], &init);
    assert_eq!(status, 503, "{body}");
    assert_eq!(common::processes_with(&marker), 2);

    // SIGTERM ends every session and stops every server.
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:?}");
    assert_eq!(common::outlived(&marker), 0, "a server outlived the proxy");
}

#[test]
fn an_unreachable_upstream_fails_each_request_and_the_proxy_goes_on() {
    let url = format!("http://127.0.0.1:{}/mcp", free_port());
    let mut proxy = Proxy::start(
        &["rules/file-server.yaml", "--no-probe", "--upstream", &url],
        &[],
    );
    for id in 1..=2 {
        let answer = proxy.request(id, "tools/list", json!({}));
        assert_eq!(answer["error"]["code"], -32603, "{answer}");
        let message = answer["error"]["message"].as_str().unwrap();
        assert!(message.contains(&url), "{message}");
    }
    // The proxy's own answers do not need the server.
    let signature = proxy.request(3, "signature", json!({}));
    assert!(
        signature["result"]["fingerprint"].is_string(),
        "{signature}"
    );
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
}

#[test]
fn command_and_upstream_are_one_or_the_other() {
    let output = common::bin()
        .args([
            "proxy",
            "rules/file-server.yaml",
            "--upstream",
            "http://127.0.0.1:1/mcp",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let output = common::bin()
        .args(["proxy", "rules/file-server.yaml", "--listen", "nowhere"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("is not an address"));
}

// ---------------------------------------------------------------------------
// The guard: arguments checked, a policy per call, an audit line per call.

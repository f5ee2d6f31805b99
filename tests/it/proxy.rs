//! `mcp-resolve proxy` end to end: a host (this test) speaks raw JSON-RPC
//! to the proxy, which runs a server as its child — a misbehaving fake
//! (`tests/fixtures/proxy/fake_server.py`) for the fault cases, and a real
//! server from npm (`@modelcontextprotocol/server-filesystem`, installed by
//! `.ci/run`) for the real case.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

const EXTENSION: &str = "io.modelcontextprotocol/tool-resolution";
const VARIANT: &str = "io.github.mcp-resolve/variant";

fn fake_server() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/proxy/fake_server.py")
}

/// A proxy under test, with its stdio piped to the test.
struct Proxy {
    child: Child,
    stdin: Option<ChildStdin>,
    answers: mpsc::Receiver<Value>,
    stderr: mpsc::Receiver<String>,
}

impl Proxy {
    fn start(args: &[&str], server: &[&str]) -> Proxy {
        let mut command = common::bin();
        command.arg("proxy").args(args);
        if !server.is_empty() {
            command.arg("--").args(server);
        }
        let mut child = command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let value = serde_json::from_str(&line).unwrap_or_else(|e| {
                    panic!("the proxy wrote a line that is not JSON ({e}): {line}")
                });
                if tx.send(value).is_err() {
                    break;
                }
            }
        });
        let stderr = common::lines_of(child.stderr.take().unwrap());
        Proxy {
            stdin: child.stdin.take(),
            child,
            answers,
            stderr,
        }
    }

    fn send(&mut self, message: &Value) {
        let stdin = self.stdin.as_mut().unwrap();
        writeln!(stdin, "{message}").unwrap();
        stdin.flush().unwrap();
    }

    fn receive(&self) -> Value {
        self.answers
            .recv_timeout(Duration::from_secs(30))
            .expect("an answer from the proxy within 30 s")
    }

    fn request(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let answer = self.receive();
        assert_eq!(answer["id"], json!(id), "{answer}");
        answer
    }

    /// Opens a legacy session declaring `capabilities`.
    fn initialize(&mut self, capabilities: Value) -> Value {
        let answer = self.request(
            0,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": capabilities,
                   "clientInfo": {"name": "proxy-test", "version": "1"}}),
        );
        self.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        answer
    }

    /// Closes the host side and waits for the proxy to exit.
    fn finish(mut self) -> (i32, Vec<String>) {
        drop(self.stdin.take());
        let status = common::wait_for(&mut self.child, Duration::from_secs(20));
        // Every line, up to the end of the stream (the process has exited).
        let mut stderr = Vec::new();
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(10)) {
            stderr.push(line);
        }
        (status, stderr)
    }
}

/// Whether process `pid` still exists (Linux).
fn alive(pid: &str) -> bool {
    Path::new("/proc").join(pid.trim()).exists()
}

fn declaring() -> Value {
    json!({"extensions": {EXTENSION: {}, VARIANT: {}}})
}

#[test]
fn without_a_command_it_is_a_usage_error() {
    let out = common::bin()
        .args(["proxy", "rules/file-server.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("after `--`"));
}

#[test]
fn a_rules_error_stops_it_before_the_server_starts() {
    let dir = common::scratch("proxy", "rules-error");
    let pidfile = dir.join("pid");
    let out = common::bin()
        .args([
            "proxy",
            "tests/fixtures/invalid/array-conditions.yaml",
            "--",
            "python3",
        ])
        .arg(fake_server())
        .arg("well")
        .arg(&pidfile)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(String::from_utf8_lossy(&out.stderr).contains("error["));
    assert!(!pidfile.exists(), "the server was started");
}

#[test]
fn it_adds_resolution_and_passes_everything_else_through() {
    let dir = common::scratch("proxy", "through");
    let pidfile = dir.join("pid");
    let server = fake_server();
    let mut proxy = Proxy::start(
        &["rules/file-server.yaml"],
        &[
            "python3",
            server.to_str().unwrap(),
            "well",
            pidfile.to_str().unwrap(),
        ],
    );
    let init = proxy.initialize(declaring());
    let caps = &init["result"]["capabilities"];
    assert_eq!(caps["extensions"][EXTENSION], json!({}), "{init}");
    assert_eq!(caps["experimental"]["signature"], json!({}));
    assert!(
        caps["tools"].is_object(),
        "the server's own capabilities stay"
    );
    assert_eq!(init["result"]["serverInfo"]["name"], "fake");

    let list = proxy.request(1, "tools/list", json!({}));
    let tool = &list["result"]["tools"][0];
    assert_eq!(
        tool["_meta"][EXTENSION],
        json!({"resolvable": true}),
        "{tool}"
    );
    assert_eq!(
        tool["annotations"]["title"], "Manage files",
        "the server's title stays"
    );
    assert_eq!(tool["annotations"]["readOnlyHint"], false);
    assert_eq!(
        tool["x-unknown-field"],
        json!({"kept": true}),
        "unknown fields pass"
    );

    let resolved = proxy.request(
        2,
        "tools/resolve",
        json!({"name": "manage_files", "arguments": {"path": "a", "action": "read"}}),
    );
    let result = &resolved["result"];
    assert_eq!(result["resultType"], "complete", "{resolved}");
    assert_eq!(result["annotations"]["readOnlyHint"], true, "{resolved}");
    assert_eq!(result["_meta"][VARIANT]["variant"], "read", "{resolved}");
    let invalid = proxy.request(
        3,
        "tools/resolve",
        json!({"name": "manage_files", "arguments": {"path": "a", "action": "rename"}}),
    );
    assert_eq!(invalid["error"]["code"], -32602, "{invalid}");
    let signature = proxy.request(4, "signature", json!({}));
    assert!(
        signature["result"]["fingerprint"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );

    // The server's own methods, answers and errors, unchanged (the line
    // that is not JSON-RPC before each answer is skipped).
    let call = proxy.request(
        5,
        "tools/call",
        json!({"name": "manage_files", "arguments": {"path": "a", "action": "read"}}),
    );
    assert!(
        call["result"]["content"][0]["text"]
            .as_str()
            .unwrap()
            .starts_with("called "),
        "{call}"
    );
    let unknown = proxy.request(6, "no/such/method", json!({"x": 1}));
    assert_eq!(
        unknown["error"],
        json!({"code": -32601, "message": "Method not found", "data": {"method": "no/such/method"}})
    );
    // Malformed input is answered by the proxy, never forwarded.
    proxy.send(&json!({"jsonrpc": "2.0", "id": 7, "method": "tools/list", "params": []}));
    assert_eq!(proxy.receive()["error"]["code"], -32602);

    let pid = std::fs::read_to_string(&pidfile).unwrap();
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
    assert!(
        stderr.iter().any(|l| l.contains("not JSON-RPC; skipped")),
        "{stderr:?}"
    );
    assert!(!alive(&pid), "the server outlived the proxy");
}

#[test]
fn a_client_without_the_extension_gets_32021_and_no_marker() {
    let server = fake_server();
    let mut proxy = Proxy::start(
        &["rules/file-server.yaml", "--no-probe"],
        &["python3", server.to_str().unwrap(), "well"],
    );
    proxy.initialize(json!({}));
    let list = proxy.request(1, "tools/list", json!({}));
    assert!(list["result"]["tools"][0].get("_meta").is_none(), "{list}");
    let resolved = proxy.request(
        2,
        "tools/resolve",
        json!({"name": "manage_files", "arguments": {"path": "a", "action": "read"}}),
    );
    assert_eq!(resolved["error"]["code"], -32021, "{resolved}");
    assert_eq!(proxy.finish().0, 0);
}

#[test]
fn a_crashing_server_fails_pending_requests_and_the_proxy_exits_nonzero() {
    let server = fake_server();
    let mut proxy = Proxy::start(
        &["rules/file-server.yaml", "--no-probe"],
        &["python3", server.to_str().unwrap(), "crash"],
    );
    proxy.initialize(declaring());
    let call = proxy.request(
        1,
        "tools/call",
        json!({"name": "manage_files", "arguments": {"path": "a", "action": "read"}}),
    );
    assert_eq!(call["error"]["code"], -32603, "{call}");
    let message = call["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("exited") && message.contains("crashing on purpose"),
        "{message}"
    );
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 1, "{stderr:?}");
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("exited") && l.contains("the proxy stops")),
        "{stderr:?}"
    );
}

#[test]
fn a_silent_server_times_out_and_the_session_goes_on() {
    let server = fake_server();
    let mut proxy = Proxy::start(
        &["rules/file-server.yaml", "--no-probe", "--timeout", "1"],
        &["python3", server.to_str().unwrap(), "silent"],
    );
    proxy.initialize(declaring());
    let call = proxy.request(
        1,
        "tools/call",
        json!({"name": "manage_files", "arguments": {"path": "a", "action": "read"}}),
    );
    assert_eq!(call["error"]["code"], -32603, "{call}");
    assert!(
        call["error"]["message"]
            .as_str()
            .unwrap()
            .contains("within 1s")
    );
    let list = proxy.request(2, "tools/list", json!({}));
    assert!(list["result"]["tools"].is_array(), "{list}");
    assert_eq!(proxy.finish().0, 0);
}

#[test]
fn a_late_answer_after_the_timeout_is_dropped() {
    let server = fake_server();
    let mut proxy = Proxy::start(
        &["rules/file-server.yaml", "--no-probe", "--timeout", "1"],
        &["python3", server.to_str().unwrap(), "slow"],
    );
    proxy.initialize(declaring());
    let call = proxy.request(
        1,
        "tools/call",
        json!({"name": "manage_files", "arguments": {"path": "a", "action": "read"}}),
    );
    assert_eq!(call["error"]["code"], -32603, "{call}");
    // The server answers request 1 a second later; the proxy drops it and
    // says so. Request 2 goes out only then, so its own deadline is never
    // near: the host sees only the answer to 2 (`request` asserts the id).
    let mut stderr = Vec::new();
    while !stderr.iter().any(|l: &String| l.contains("late answer")) {
        match proxy.stderr.recv_timeout(Duration::from_secs(30)) {
            Ok(line) => stderr.push(line),
            Err(_) => panic!("no note of the late answer: {stderr:?}"),
        }
    }
    let list = proxy.request(2, "tools/list", json!({}));
    assert!(list["result"]["tools"].is_array(), "{list}");
    let (status, rest) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?} {rest:?}");
}

#[test]
fn a_real_server_from_npm_behind_the_proxy() {
    let Some(dir) = common::real_servers("a real server behind the proxy") else {
        return;
    };
    let root = common::scratch("proxy", "filesystem-root");
    std::fs::write(root.join("notes.txt"), "hello\n").unwrap();
    let root = root.canonicalize().unwrap();
    let server = dir.join("node/node_modules/.bin/mcp-server-filesystem");
    let mut proxy = Proxy::start(
        &["rules/real-server-filesystem.yaml"],
        &[server.to_str().unwrap(), root.to_str().unwrap()],
    );
    let init = proxy.initialize(declaring());
    assert_eq!(
        init["result"]["capabilities"]["extensions"][EXTENSION],
        json!({})
    );
    let list = proxy.request(1, "tools/list", json!({}));
    let tools = list["result"]["tools"].as_array().unwrap();
    let edit = tools.iter().find(|t| t["name"] == "edit_file").unwrap();
    assert_eq!(
        edit["_meta"][EXTENSION],
        json!({"resolvable": true}),
        "{edit}"
    );
    let notes = root.join("notes.txt");
    let path = notes.to_str().unwrap();
    let dry_run = proxy.request(
        2,
        "tools/resolve",
        json!({"name": "edit_file", "arguments": {"path": path, "edits": [{"oldText": "hello", "newText": "bye"}], "dryRun": true}}),
    );
    assert_eq!(
        dry_run["result"]["annotations"]["readOnlyHint"], true,
        "{dry_run}"
    );
    assert_eq!(dry_run["result"]["_meta"][VARIANT]["variant"], "preview");
    let read = proxy.request(
        3,
        "tools/call",
        json!({"name": "read_text_file", "arguments": {"path": path}}),
    );
    assert_eq!(read["result"]["content"][0]["text"], "hello\n", "{read}");
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
}

#[test]
fn the_rules_are_compared_with_the_servers_list_at_start() {
    let server = fake_server();
    let proxy = Proxy::start(
        &["rules/file-server.yaml"],
        &["python3", server.to_str().unwrap(), "well"],
    );
    // Nothing is sent: the probe runs before the host is served.
    std::thread::sleep(Duration::from_millis(100));
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
    let text = stderr.join("\n");
    assert!(
        text.contains("`manage_files`: the server's inputSchema differs"),
        "{text}"
    );
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/proxy")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

/// Runs the conformance suite (`tests/conformance/suite.py`) with
/// `target` (`--stdio -- COMMAND…` or `--http URL`); every case must pass.
fn suite(python: &str, mode: &[&str], target: &[&str]) {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/suite.py");
    let output = std::process::Command::new(python)
        .arg(suite)
        .args(mode)
        .args(target)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("12 of 12 cases passed"),
        "the conformance suite failed through the proxy ({mode:?}, {target:?}):\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs the conformance suite against `proxy RULES -- SERVER…`, a fresh
/// proxy and server per session.
fn conformance(python: &str, mode: &[&str], rules: &str, server: &[&str]) {
    let mut target = vec![
        "--stdio",
        "--",
        env!("CARGO_BIN_EXE_mcp-resolve"),
        "proxy",
        rules,
        "--no-probe",
        "--",
    ];
    target.extend_from_slice(server);
    suite(python, mode, &target);
}

#[test]
fn the_conformance_suite_passes_through_the_proxy_in_front_of_a_python_sdk_server() {
    let Some(python) = common::mcp_python("the conformance suite through the proxy") else {
        return;
    };
    let root = common::scratch("proxy", "notes-conformance");
    let server = [
        python.as_str(),
        &fixture("notes_server.py"),
        root.to_str().unwrap(),
    ];
    let rules = fixture("notes.yaml");
    // The Python SDK speaks both styles: per-request capabilities
    // (2026-07-28) and `initialize` sessions.
    conformance(&python, &[], &rules, &server);
    conformance(&python, &["--legacy"], &rules, &server);
}

#[test]
fn the_conformance_suite_passes_through_the_proxy_in_front_of_server_filesystem() {
    let (Some(python), Some(dir)) = (
        common::mcp_python("the conformance suite through the proxy"),
        common::real_servers("the conformance suite through the proxy"),
    ) else {
        return;
    };
    let root = common::scratch("proxy", "filesystem-conformance");
    let server = dir.join("node/node_modules/.bin/mcp-server-filesystem");
    // server-filesystem (TypeScript SDK v1) speaks only `initialize`
    // sessions, so the suite runs in that style.
    conformance(
        &python,
        &["--legacy"],
        "rules/real-server-filesystem.yaml",
        &[server.to_str().unwrap(), root.to_str().unwrap()],
    );
}

#[test]
fn the_python_sdk_as_a_host_through_the_proxy() {
    let Some(python) = common::mcp_python("the Python SDK through the proxy") else {
        return;
    };
    let output = std::process::Command::new(&python)
        .arg(fixture("sdk_client.py"))
        .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("ok calls answer as without the proxy"),
        "the Python SDK client failed through the proxy:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for mode in ["ok auto (2026-07-28)", "ok legacy (2025-11-25)"] {
        assert!(stdout.contains(mode), "{mode} missing:\n{stdout}");
    }
}

/// A copy of fixture `name` where Node finds the TypeScript SDK
/// (`MCP_RESOLVE_TS_CLIENT`, which `scripts/test.sh` installs; a failure in CI
/// without it, a skip elsewhere): Node resolves packages next to the script.
fn ts_script(name: &str) -> Option<PathBuf> {
    let sdk = common::component(
        "MCP_RESOLVE_TS_CLIENT",
        "the TypeScript SDK through the proxy",
    )?;
    assert!(
        sdk.join("node_modules/@modelcontextprotocol/client")
            .is_dir(),
        "MCP_RESOLVE_TS_CLIENT={} has no @modelcontextprotocol/client",
        sdk.display()
    );
    let script = sdk.join(format!("proxy_{name}"));
    std::fs::copy(fixture(name), &script).unwrap();
    Some(script)
}

#[test]
fn the_typescript_sdk_as_a_host_through_the_proxy() {
    let (Some(python), Some(servers)) = (
        common::mcp_python("the TypeScript SDK through the proxy"),
        common::real_servers("the TypeScript SDK through the proxy"),
    ) else {
        return;
    };
    let Some(script) = ts_script("sdk_client.mjs") else {
        return;
    };
    let notes = common::scratch("proxy", "notes-ts");
    let everything =
        servers.join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let output = std::process::Command::new("node")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
        .arg(&python)
        .arg(&notes)
        .arg(&everything)
        .arg(fixture(""))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("all checks passed"),
        "the TypeScript SDK client failed through the proxy:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

// ---------------------------------------------------------------------------
// Streamable HTTP: hosts through `--listen`, servers through `--upstream`.

/// One raw HTTP/1.1 exchange with `addr` (`Connection: close`); the
/// status, the headers (lower-case names) and the body.
fn http(
    addr: &str,
    method: &str,
    headers: &[(&str, &str)],
    body: &str,
) -> (u16, Vec<(String, String)>, String) {
    use std::io::Read;
    let mut stream = std::net::TcpStream::connect(addr).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    let mut request = format!("{method} /mcp HTTP/1.1\r\nConnection: close\r\n");
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

fn header<'h>(headers: &'h [(String, String)], name: &str) -> Option<&'h str> {
    headers
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
}

const JSON: (&str, &str) = ("Accept", "application/json");
const JSON_BODY: (&str, &str) = ("Content-Type", "application/json");

fn initialize_body(id: i64) -> String {
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
    suite(&python, &[], &["--http", &proxy.url]);
    suite(&python, &["--legacy"], &["--http", &proxy.url]);
    let (status, stderr) = proxy.stop();
    assert_eq!(status, 0, "{stderr:?}");
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("every session's server was stopped")),
        "{stderr:?}"
    );
    // No server outlives the proxy.
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        common::processes_with(&marker),
        0,
        "a server outlived the proxy"
    );
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

/// A port nothing listens on (bound, then released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
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
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(
        common::processes_with(&marker),
        0,
        "a server outlived the proxy"
    );
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

fn audit_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("audit line {l:?}: {e}")))
        .collect()
}

#[test]
fn the_policy_allows_denies_and_asks_and_every_call_is_audited() {
    let dir = common::scratch("proxy", "guard");
    let audit = dir.join("audit.jsonl");
    let mut proxy = Proxy::start(
        &[
            "rules/file-server.yaml",
            "--no-probe",
            "--policy",
            &fixture("guard-policy.yaml"),
            "--audit",
            audit.to_str().unwrap(),
            "--audit-arguments",
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    let mut capabilities = declaring();
    capabilities["elicitation"] = json!({});
    proxy.initialize(capabilities);
    let call = |action: &str| json!({"name": "manage_files", "arguments": {"path": "notes.txt", "action": action, "content": "x"}});

    // allow: forwarded, answered by the server.
    let answer = proxy.request(1, "tools/call", call("read"));
    assert!(answer["result"].is_object(), "{answer}");

    // deny: never forwarded; the error names the rule and the variant.
    let answer = proxy.request(2, "tools/call", call("delete"));
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    assert_eq!(answer["error"]["data"]["rule"], "no-overwrites", "{answer}");
    assert_eq!(answer["error"]["data"]["variant"], "overwrite", "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`manage_files` (variant `overwrite`) is denied"),
        "{message}"
    );

    // ask: the user is asked through elicitation; accept forwards the call.
    let mut ask = |id: i64, action: Value| {
        proxy.send(
            &json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": call("append")}),
        );
        let question = proxy.receive();
        assert_eq!(question["method"], "elicitation/create", "{question}");
        let text = question["params"]["message"].as_str().unwrap();
        assert!(
            text.contains("`manage_files` (variant `append`)")
                && text.contains("destructiveHint: false"),
            "{text}"
        );
        proxy.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": action}}));
        let answer = proxy.receive();
        assert_eq!(answer["id"], id, "{answer}");
        answer
    };
    let accepted = ask(3, json!("accept"));
    assert!(accepted["result"].is_object(), "{accepted}");
    let declined = ask(4, json!("decline"));
    assert_eq!(declined["error"]["code"], -32001, "{declined}");
    assert!(
        declined["error"]["message"]
            .as_str()
            .unwrap()
            .contains("declined by the user")
    );
    let cancelled = ask(5, json!("cancel"));
    assert!(
        cancelled["error"]["message"]
            .as_str()
            .unwrap()
            .contains("cancelled")
    );

    // Arguments the rules' inputSchema refuses never reach the server.
    let answer = proxy.request(
        6,
        "tools/call",
        json!({"name": "manage_files", "arguments": {"path": "a", "action": "rename"}}),
    );
    assert_eq!(answer["error"]["code"], -32602, "{answer}");

    // A resolution is audited too.
    let answer = proxy.request(7, "tools/resolve", call("read"));
    assert!(answer["result"]["annotations"].is_object(), "{answer}");
    // A call whose question is still open when the host leaves is audited too.
    proxy.send(
        &json!({"jsonrpc": "2.0", "id": 8, "method": "tools/call", "params": call("append")}),
    );
    assert_eq!(proxy.receive()["method"], "elicitation/create");
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");

    let lines = audit_lines(&audit);
    let summary: Vec<(String, String, String)> = lines
        .iter()
        .map(|l| {
            let text = |k: &str| l[k].as_str().unwrap_or("-").to_string();
            (text("event"), text("variant"), text("outcome"))
        })
        .collect();
    let expected = [
        ("call", "read", "forwarded"),
        ("call", "overwrite", "denied"),
        ("call", "append", "accepted"),
        ("call", "append", "declined"),
        ("call", "append", "cancelled"),
        ("resolve", "read", "-"),
        ("call", "append", "unasked"),
    ];
    assert_eq!(
        summary,
        expected
            .iter()
            .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
            .collect::<Vec<_>>(),
        "{lines:#?}"
    );
    assert_eq!(lines[0]["rule"], "reads");
    assert!(lines[0]["upstreamMs"].as_f64().is_some(), "{}", lines[0]);
    assert_eq!(lines[0]["arguments"]["action"], "read");
    assert_eq!(lines[1]["rule"], "no-overwrites");
    assert!(lines[1]["upstreamMs"].is_null());
    assert_eq!(lines[2]["decision"], "ask");
    assert!(
        lines[2]["rule"].is_null(),
        "the default decided: {}",
        lines[2]
    );
    assert_eq!(lines[0]["annotations"]["readOnlyHint"], true);
    assert!(lines[0]["time"].as_str().unwrap().ends_with('Z'));
}

#[test]
fn a_host_without_elicitation_is_refused_what_the_policy_would_ask() {
    let dir = common::scratch("proxy", "guard-no-elicitation");
    let audit = dir.join("audit.jsonl");
    let mut proxy = Proxy::start(
        &[
            "rules/file-server.yaml",
            "--no-probe",
            "--policy",
            &fixture("guard-policy.yaml"),
            "--audit",
            audit.to_str().unwrap(),
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    proxy.initialize(declaring());
    let answer = proxy.request(
        1,
        "tools/call",
        json!({"name": "manage_files", "arguments": {"path": "n", "action": "append", "content": "x"}}),
    );
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(message.contains("did not declare elicitation"), "{message}");
    let (status, _) = proxy.finish();
    assert_eq!(status, 0);
    let lines = audit_lines(&audit);
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert_eq!(lines[0]["outcome"], "refused");
    assert!(
        lines[0].get("arguments").is_none(),
        "arguments only with --audit-arguments"
    );
}

#[test]
fn a_question_the_user_leaves_unanswered_is_given_up_after_the_ask_timeout() {
    let dir = common::scratch("proxy", "guard-ask-timeout");
    let audit = dir.join("audit.jsonl");
    let mut proxy = Proxy::start(
        &[
            "rules/file-server.yaml",
            "--no-probe",
            "--policy",
            &fixture("guard-policy.yaml"),
            "--ask-timeout",
            "1",
            "--audit",
            audit.to_str().unwrap(),
        ],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    let mut capabilities = declaring();
    capabilities["elicitation"] = json!({});
    proxy.initialize(capabilities);
    let append = json!({"name": "manage_files", "arguments": {"path": "n", "action": "append", "content": "x"}});
    proxy.send(&json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": append}));
    let question = proxy.receive();
    assert_eq!(question["method"], "elicitation/create", "{question}");
    // Nobody answers: the question is withdrawn, the call refused.
    let withdrawn = proxy.receive();
    assert_eq!(
        withdrawn["method"], "notifications/cancelled",
        "{withdrawn}"
    );
    assert_eq!(
        withdrawn["params"]["requestId"], question["id"],
        "{withdrawn}"
    );
    let refused = proxy.receive();
    assert_eq!(refused["id"], 1, "{refused}");
    assert_eq!(refused["error"]["code"], -32001, "{refused}");
    let message = refused["error"]["message"].as_str().unwrap();
    assert!(message.contains("--ask-timeout"), "{message}");
    // A late answer goes nowhere: the next message is the next answer.
    proxy.send(&json!({"jsonrpc": "2.0", "id": question["id"], "result": {"action": "accept"}}));
    let read = json!({"name": "manage_files", "arguments": {"path": "n", "action": "read"}});
    let answer = proxy.request(2, "tools/call", read);
    assert!(answer["result"].is_object(), "{answer}");
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
    let outcomes: Vec<Value> = audit_lines(&audit)
        .iter()
        .map(|l| l["outcome"].clone())
        .collect();
    assert_eq!(outcomes, [json!("timed out"), json!("forwarded")]);
}

#[test]
fn a_policy_with_mistakes_stops_the_proxy_before_the_server_starts() {
    let dir = common::scratch("proxy", "guard-bad-policy");
    let policy = dir.join("policy.yaml");
    std::fs::write(
        &policy,
        "version: 1\ndefault: allow\nrules:\n  - name: r\n    when: { readOnlyHnt: true }\n    decision: alow\n",
    )
    .unwrap();
    let pidfile = dir.join("pid");
    let output = common::bin()
        .args([
            "proxy",
            "rules/file-server.yaml",
            "--no-probe",
            "--policy",
            policy.to_str().unwrap(),
        ])
        .args([
            "--",
            "python3",
            fake_server().to_str().unwrap(),
            "well",
            pidfile.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("policy.yaml:5:"), "{stderr}");
    assert!(stderr.contains("did you mean `readOnlyHint`?"), "{stderr}");
    assert!(stderr.contains("did you mean `allow`?"), "{stderr}");
    assert!(!pidfile.exists(), "the server was started");
}

#[test]
fn a_pinned_signature_withholds_what_a_lying_server_changes() {
    let dir = common::scratch("proxy", "pin-liar");
    let audit = dir.join("audit.jsonl");
    let mut proxy = Proxy::start(
        &[
            &fixture("fake-rules.yaml"),
            "--no-probe",
            "--pin",
            &fixture("fake-signature.json"),
            "--audit",
            audit.to_str().unwrap(),
        ],
        &["python3", fake_server().to_str().unwrap(), "liar"],
    );
    proxy.initialize(declaring());
    let listed = proxy.request(1, "tools/list", json!({}));
    let tools = listed["result"]["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{listed}");
    assert_eq!(tools[0]["_meta"][EXTENSION]["resolvable"], true, "{listed}");
    let read = json!({"name": "manage_files", "arguments": {"path": "a", "action": "read"}});
    let answer = proxy.request(2, "tools/call", read.clone());
    assert!(answer["result"].is_object(), "{answer}");
    // The server announces a new list: another description, an unpinned
    // tool. The proxy reads the list itself before the host hears of it, so
    // a host that calls at once, without listing, is judged by the new list.
    let changed = proxy.receive();
    assert_eq!(
        changed["method"], "notifications/tools/list_changed",
        "{changed}"
    );
    let answer = proxy.request(3, "tools/call", read);
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("`manage_files` is withheld") && message.contains("`description`"),
        "{message}"
    );
    let listed = proxy.request(4, "tools/list", json!({}));
    assert_eq!(
        listed["result"]["tools"],
        json!([]),
        "nothing unpinned is listed: {listed}"
    );
    let answer = proxy.request(
        5,
        "tools/call",
        json!({"name": "exfiltrate", "arguments": {}}),
    );
    assert_eq!(answer["error"]["code"], -32001, "{answer}");
    assert!(
        answer["error"]["message"]
            .as_str()
            .unwrap()
            .contains("`exfiltrate`"),
        "{answer}"
    );
    // Resolution still answers from the pinned rules.
    let resolved = proxy.request(
        6,
        "tools/resolve",
        json!({"name": "manage_files", "arguments": {"path": "a", "action": "append"}}),
    );
    assert_eq!(
        resolved["result"]["annotations"]["destructiveHint"], false,
        "{resolved}"
    );
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("`exfiltrate` is withheld from the host")),
        "{stderr:?}"
    );
    let outcomes: Vec<Value> = audit_lines(&audit)
        .iter()
        .map(|l| l["outcome"].clone())
        .collect();
    assert_eq!(
        outcomes,
        [
            json!("forwarded"),
            json!("not pinned"),
            json!("not pinned"),
            Value::Null
        ]
    );
}

#[test]
fn a_tampered_or_foreign_pin_stops_the_proxy_before_the_server_starts() {
    let dir = common::scratch("proxy", "pin-tampered");
    let pidfile = dir.join("pid");
    let mut document: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("fake-signature.json")).unwrap())
            .unwrap();
    document["tools"][0]["annotations"]["destructiveHint"] = json!(false);
    let tampered = dir.join("tampered.json");
    std::fs::write(&tampered, document.to_string()).unwrap();
    for (rules, pin, expected) in [
        (
            fixture("fake-rules.yaml"),
            tampered.to_str().unwrap().to_string(),
            "fingerprint",
        ),
        (
            "rules/file-server.yaml".to_string(),
            fixture("fake-signature.json"),
            "review the change",
        ),
    ] {
        let output = common::bin()
            .args(["proxy", &rules, "--no-probe", "--pin", &pin])
            .args([
                "--",
                "python3",
                fake_server().to_str().unwrap(),
                "well",
                pidfile.to_str().unwrap(),
            ])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{output:?}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains(expected), "{stderr}");
        assert!(!pidfile.exists(), "the server was started");
    }
}

#[test]
fn the_python_sdk_host_is_asked_before_destructive_calls_and_sees_only_pinned_tools() {
    let Some(python) = common::mcp_python("the Python SDK behind the guard") else {
        return;
    };
    // Legacy: the proxy sends `elicitation/create` and holds the call.
    // 2026-07-28: the proxy answers `input_required`, the SDK retries.
    for mode in ["legacy", "2026-07-28"] {
        let dir = common::scratch("proxy", &format!("guard-sdk-{mode}"));
        let audit = dir.join("audit.jsonl");
        let output = std::process::Command::new(&python)
            .arg(fixture("sdk_guard.py"))
            .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
            .arg("docs/policies/ask-destructive.yaml")
            .arg(&audit)
            .arg(mode)
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        println!("{mode}: {stdout}");
        assert!(
            output.status.success() && stdout.contains("ok every call is in the audit log"),
            "the Python SDK host failed behind the guard ({mode}):\n{stdout}\n{}",
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

#[test]
fn no_audit_line_is_lost_when_the_proxy_is_stopped_under_load() {
    // SIGTERM and SIGINT end the proxy with 1; the host closing its side
    // ends it with 0. Either way every call in flight gets its line.
    for (stop, expected) in [("term", 1), ("int", 1), ("close", 0)] {
        let dir = common::scratch("proxy", &format!("guard-stop-{stop}"));
        let audit = dir.join("audit.jsonl");
        let mut proxy = Proxy::start(
            &[
                "rules/file-server.yaml",
                "--no-probe",
                "--audit",
                audit.to_str().unwrap(),
            ],
            &["python3", fake_server().to_str().unwrap(), "slow"],
        );
        proxy.initialize(declaring());
        // Twenty calls in flight (the server answers each two seconds late),
        // and twenty resolutions answered at once.
        for id in 1..=20 {
            proxy.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
                "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"}}}));
            proxy.send(
                &json!({"jsonrpc": "2.0", "id": 100 + id, "method": "tools/resolve",
                "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"},
                           "_meta": {"io.modelcontextprotocol/clientCapabilities": declaring()}}}),
            );
        }
        // Every resolution is answered (a call's answer may come in between,
        // when the machine is slow).
        let mut resolved = 0;
        while resolved < 20 {
            let answer = proxy.receive();
            if answer["id"].as_i64().unwrap() > 100 {
                assert!(answer["result"].is_object(), "{answer}");
                resolved += 1;
            }
        }
        let pid = rustix::process::Pid::from_raw(proxy.child.id() as i32).unwrap();
        match stop {
            "term" => rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap(),
            "int" => rustix::process::kill_process(pid, rustix::process::Signal::INT).unwrap(),
            _ => drop(proxy.stdin.take()),
        }
        let status = common::wait_for(&mut proxy.child, Duration::from_secs(30));
        assert_eq!(status, expected, "stopped by {stop}");
        let lines = audit_lines(&audit);
        let count = |event: &str, outcome: Option<&str>| {
            lines
                .iter()
                .filter(|l| l["event"] == event && outcome.is_none_or(|o| l["outcome"] == o))
                .count()
        };
        assert_eq!(count("resolve", None), 20, "{stop}: {lines:#?}");
        assert_eq!(
            count("call", Some("forwarded")) + count("call", Some("unanswered")),
            20,
            "{stop}: {lines:#?}"
        );
        assert_eq!(lines.len(), 40, "{stop}");
    }
}

#[test]
fn the_pin_is_checked_against_the_servers_listing_at_start() {
    let dir = common::scratch("proxy", "pin-start");
    let pin = dir.join("file-server.signature.json");
    let output = common::bin()
        .args([
            "signature",
            "rules/file-server.yaml",
            "-o",
            pin.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    // The fake server lists `manage_files` with another description than
    // these rules (and so the pin) give it.
    let proxy = Proxy::start(
        &["rules/file-server.yaml", "--pin", pin.to_str().unwrap()],
        &["python3", fake_server().to_str().unwrap(), "well"],
    );
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
    assert!(
        stderr
            .iter()
            .any(|l| l.contains("`manage_files` is withheld from the host")
                && l.contains("description")),
        "{stderr:?}"
    );
}

/// The example server's binary, which `cargo test --workspace` builds next
/// to this crate's (a failure in CI without it, a skip elsewhere).
fn file_server() -> Option<PathBuf> {
    let binary = Path::new(env!("CARGO_BIN_EXE_mcp-resolve")).with_file_name("file-server");
    if binary.exists() {
        return Some(binary);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI runs `cargo test --workspace`, which builds the example server"
    );
    eprintln!("skipped: the example server is not built (cargo test --workspace builds it)");
    None
}

#[test]
fn the_conformance_suite_passes_through_the_proxy_to_the_example_rmcp_server_over_http() {
    let (Some(python), Some(binary)) = (
        common::mcp_python("the proxy in front of the example server"),
        file_server(),
    ) else {
        return;
    };
    let root = common::scratch("proxy", "file-server-upstream");
    let port = free_port().to_string();
    let addr = format!("127.0.0.1:{port}");
    let mut server = std::process::Command::new(&binary)
        .args(["--root", root.to_str().unwrap(), "--http", &addr])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(
            server.try_wait().unwrap().is_none(),
            "the example server exited at start"
        );
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the example server does not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let upstream = format!("http://{addr}/mcp");
    // rmcp 3.11 requires the SEP-2243 headers and the request's protocol
    // version of 2026-07-28 requests: the proxy sends them.
    let target = [
        "--stdio",
        "--",
        env!("CARGO_BIN_EXE_mcp-resolve"),
        "proxy",
        "examples/file-server/rules/file-server.yaml",
        "--upstream",
        &upstream,
    ];
    suite(&python, &[], &target);
    suite(&python, &["--legacy"], &target);
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn the_typescript_sdk_host_is_asked_before_destructive_calls_and_sees_only_pinned_tools() {
    let Some(python) = common::mcp_python("the TypeScript SDK behind the guard") else {
        return;
    };
    let Some(script) = ts_script("sdk_guard.mjs") else {
        return;
    };
    let notes = common::scratch("proxy", "guard-ts");
    let policy = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/policies/ask-destructive.yaml");
    let output = std::process::Command::new("node")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
        .arg(&python)
        .arg(&notes)
        .arg(fixture(""))
        .arg(&policy)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("all checks passed"),
        "the TypeScript SDK host failed behind the guard:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

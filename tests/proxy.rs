//! `mcp-resolve proxy` end to end: a host (this test) speaks raw JSON-RPC
//! to the proxy, which runs a server as its child — a misbehaving fake
//! (`tests/fixtures/proxy/fake_server.py`) for the fault cases, and a real
//! server from npm (`@modelcontextprotocol/server-filesystem`, installed by
//! `.ci/run`) for the real case.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

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
        let mut child = common::bin()
            .arg("proxy")
            .args(args)
            .arg("--")
            .args(server)
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
        let errors = child.stderr.take().unwrap();
        let (etx, stderr) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(errors).lines() {
                let Ok(line) = line else { break };
                let _ = etx.send(line);
            }
        });
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
        let status = wait_for(&mut self.child, Duration::from_secs(20));
        // Every line, up to the end of the stream (the process has exited).
        let mut stderr = Vec::new();
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_secs(10)) {
            stderr.push(line);
        }
        (status, stderr)
    }
}

fn wait_for(child: &mut Child, limit: Duration) -> i32 {
    let start = std::time::Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return status.code().unwrap_or(-1);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            panic!("the proxy did not exit within {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
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
    // The server answers request 1 late, then request 2: the host sees
    // only the answer to 2 (`request` asserts the id).
    let list = proxy.request(2, "tools/list", json!({}));
    assert!(list["result"]["tools"].is_array(), "{list}");
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
    assert!(
        stderr.iter().any(|l| l.contains("late answer")),
        "{stderr:?}"
    );
}

#[test]
fn a_real_server_from_npm_behind_the_proxy() {
    let Some(dir) = std::env::var_os("MCP_RESOLVE_REAL_SERVERS").map(PathBuf::from) else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must set MCP_RESOLVE_REAL_SERVERS (see .ci/run)"
        );
        eprintln!("skipped: MCP_RESOLVE_REAL_SERVERS is not set (.ci/run installs the servers)");
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

/// The Python with the `mcp` SDK (`.ci/run` sets it; a failure in CI
/// without it, a skip elsewhere).
fn mcp_python(what: &str) -> Option<String> {
    match std::env::var("MCP_RESOLVE_MCP_PYTHON") {
        Ok(python) => Some(python),
        Err(_) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must set MCP_RESOLVE_MCP_PYTHON (see .ci/run)"
            );
            eprintln!(
                "skipped {what}: MCP_RESOLVE_MCP_PYTHON is not set (.ci/run installs the SDK)"
            );
            None
        }
    }
}

fn real_servers(what: &str) -> Option<PathBuf> {
    match std::env::var_os("MCP_RESOLVE_REAL_SERVERS") {
        Some(dir) => Some(PathBuf::from(dir)),
        None => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must set MCP_RESOLVE_REAL_SERVERS (see .ci/run)"
            );
            eprintln!(
                "skipped {what}: MCP_RESOLVE_REAL_SERVERS is not set (.ci/run installs the servers)"
            );
            None
        }
    }
}

fn fixture(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/proxy")
        .join(name)
        .to_str()
        .unwrap()
        .to_string()
}

/// Runs the conformance suite (`tests/conformance/suite.py`) against
/// `proxy RULES -- SERVER…`, a fresh proxy and server per session; every
/// case must pass.
fn conformance(python: &str, mode: &[&str], rules: &str, server: &[&str]) {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/suite.py");
    let output = std::process::Command::new(python)
        .arg(suite)
        .args(mode)
        .args([
            "--stdio",
            "--",
            env!("CARGO_BIN_EXE_mcp-resolve"),
            "proxy",
            rules,
            "--no-probe",
            "--",
        ])
        .args(server)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("12 of 12 cases passed"),
        "the conformance suite failed through the proxy ({mode:?}, {rules}):\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_conformance_suite_passes_through_the_proxy_in_front_of_a_python_sdk_server() {
    let Some(python) = mcp_python("the conformance suite through the proxy") else {
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
        mcp_python("the conformance suite through the proxy"),
        real_servers("the conformance suite through the proxy"),
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
    let Some(python) = mcp_python("the Python SDK through the proxy") else {
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

#[test]
fn the_typescript_sdk_as_a_host_through_the_proxy() {
    let (Some(python), Some(servers)) = (
        mcp_python("the TypeScript SDK through the proxy"),
        real_servers("the TypeScript SDK through the proxy"),
    ) else {
        return;
    };
    let Some(sdk) = std::env::var_os("MCP_RESOLVE_TS_CLIENT")
        .map(PathBuf::from)
        .filter(|d| d.join("node_modules/@modelcontextprotocol/client").is_dir())
    else {
        assert!(
            std::env::var_os("CI").is_none(),
            "CI must provide the TypeScript SDK (MCP_RESOLVE_TS_CLIENT, scripts/install-ts-client.sh)"
        );
        eprintln!("skipped: the TypeScript SDK is not installed (scripts/install-ts-client.sh)");
        return;
    };
    // Node resolves packages next to the script: run a copy from there.
    let script = sdk.join("proxy_sdk_client.mjs");
    std::fs::copy(fixture("sdk_client.mjs"), &script).unwrap();
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

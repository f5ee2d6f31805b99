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

/// The lines of an audit log, each parsed.
fn audit_lines(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("audit line {l:?}: {e}")))
        .collect()
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
    // The server's own stderr reaches the host's, line for line, in order.
    let own: Vec<&String> = stderr
        .iter()
        .filter(|l| l.starts_with("fake server: "))
        .collect();
    assert_eq!(
        own,
        [
            "fake server: initialized (stderr is the server's log)",
            "fake server: crashing on purpose"
        ],
        "{stderr:?}"
    );
}

/// Waits (30 s at most) until the fake server given `pids` as its PIDFILE
/// wrote its pid: Python has started, and its answers come at once, so a
/// short `--timeout` (every request's, `initialize`'s too) times the
/// server, not the interpreter's start on a loaded machine.
fn started(pids: &Path) {
    let since = std::time::Instant::now();
    while std::fs::read_to_string(pids).unwrap_or_default().is_empty() {
        assert!(
            since.elapsed() < Duration::from_secs(30),
            "the server did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn a_silent_server_times_out_and_the_session_goes_on() {
    let server = fake_server();
    let pids = common::scratch("proxy", "silent").join("pids");
    let mut proxy = Proxy::start(
        &["rules/file-server.yaml", "--no-probe", "--timeout", "1"],
        &[
            "python3",
            server.to_str().unwrap(),
            "silent",
            pids.to_str().unwrap(),
        ],
    );
    started(&pids);
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
    let pids = common::scratch("proxy", "late").join("pids");
    let mut proxy = Proxy::start(
        &["rules/file-server.yaml", "--no-probe", "--timeout", "1"],
        &[
            "python3",
            server.to_str().unwrap(),
            "slow",
            pids.to_str().unwrap(),
        ],
    );
    started(&pids);
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
    let pidfile = common::scratch("proxy", "compare-at-start").join("pid");
    let mut proxy = Proxy::start(
        &["rules/file-server.yaml"],
        &[
            "python3",
            server.to_str().unwrap(),
            "well",
            pidfile.to_str().unwrap(),
        ],
    );
    // The comparison is made on the host's own first listing.
    proxy.initialize(declaring());
    let list = proxy.request(1, "tools/list", json!({}));
    assert!(list["result"]["tools"].is_array(), "{list}");
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:?}");
    let text = stderr.join("\n");
    assert!(
        text.contains("`manage_files`: the server's inputSchema differs"),
        "{text}"
    );
    // The server was started once: for the host.
    let starts = std::fs::read_to_string(&pidfile).unwrap();
    assert_eq!(starts.lines().count(), 1, "{starts:?}");
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
    if let Err(failed) = suite_result(python, mode, target) {
        panic!("{failed}");
    }
}

/// [`suite`], its failure as a message (for a caller that adds what it
/// knows, such as a listening proxy's stderr).
fn suite_result(python: &str, mode: &[&str], target: &[&str]) -> Result<(), String> {
    let suite = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/suite.py");
    let output = std::process::Command::new(python)
        .arg(suite)
        .args(mode)
        .args(target)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    if output.status.success() && stdout.contains("12 of 12 cases passed") {
        return Ok(());
    }
    Err(format!(
        "the conformance suite failed through the proxy ({mode:?}, {target:?}):\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    ))
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
    Some(common::beside_packages(&sdk, fixture(name)))
}

/// A port nothing listens on (bound, then released).
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

mod auth;
mod cedar;
mod declarations;
mod deploy;
mod example;
mod guard;
mod headers;
mod hosts;
mod http;
mod instances;
mod isolation;
mod no_rules;
mod official;
pub(crate) mod telemetry;

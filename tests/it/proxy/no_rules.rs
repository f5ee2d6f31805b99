//! `mcp-resolve proxy` without rules: in front of a server nobody wrote
//! rules for, the host sees exactly what the server sends (no capability
//! added, the server's own `tools/resolve` answer), while the guard still
//! judges calls by the server's own annotations; what needs a variant is a
//! start-up error that names the fix.

use super::*;

/// The answers a host gets for `requests` from `command` (a server, or the
/// proxy in front of one), one request after another, as written.
fn answers(command: &mut std::process::Command, requests: &[Value]) -> Vec<String> {
    let mut child = command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut out = Vec::new();
    for request in requests {
        writeln!(stdin, "{request}").unwrap();
        stdin.flush().unwrap();
        if request.get("id").is_some() {
            out.push(lines.next().unwrap().unwrap());
        }
    }
    drop(stdin);
    common::wait_for(&mut child, Duration::from_secs(20));
    out
}

fn session(extension: bool) -> Vec<Value> {
    let capabilities = if extension { declaring() } else { json!({}) };
    vec![
        json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
               "params": {"protocolVersion": "2025-11-25", "capabilities": capabilities,
                          "clientInfo": {"name": "no-rules", "version": "1"}}}),
        json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}),
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/resolve",
               "params": {"name": "manage_note", "arguments": {"action": "read", "name": "n"}}}),
        json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
               "params": {"name": "list_notes", "arguments": {}}}),
    ]
}

#[test]
fn without_rules_a_host_sees_exactly_what_the_server_sends() {
    let Some(python) = common::mcp_python("the proxy without rules") else {
        return;
    };
    let notes = common::scratch("proxy", "no-rules");
    let server = fixture("notes_server.py");
    for extension in [false, true] {
        let requests = session(extension);
        let direct = answers(
            std::process::Command::new(&python).arg(&server).arg(&notes),
            &requests,
        );
        let proxied = answers(
            common::bin()
                .arg("proxy")
                .arg("--")
                .arg(&python)
                .arg(&server)
                .arg(&notes),
            &requests,
        );
        // Byte for byte: the proxy owns nothing here.
        assert_eq!(proxied, direct, "declaring the extension: {extension}");
        let proxied: Vec<Value> = proxied
            .iter()
            .map(|line| serde_json::from_str(line).unwrap())
            .collect();
        // The server's own answer to tools/resolve: it has none.
        assert_eq!(proxied[2]["error"]["code"], -32601, "{:#}", proxied[2]);
        assert!(
            proxied[0]["result"]["capabilities"]
                .pointer(&format!("/extensions/{}", EXTENSION.replace('/', "~1")))
                .is_none(),
            "{:#}",
            proxied[0]
        );
    }
}

#[test]
fn without_rules_the_guard_judges_calls_by_the_servers_annotations() {
    let Some(python) = common::mcp_python("the proxy without rules") else {
        return;
    };
    let notes = common::scratch("proxy", "no-rules-guard");
    let audit = notes.join("audit.jsonl");
    let audit_text = audit.to_string_lossy().into_owned();
    let python_server = [
        python.as_str(),
        &fixture("notes_server.py"),
        &notes.to_string_lossy(),
    ];
    let mut proxy = Proxy::start(
        &[
            "--policy",
            "docs/policies/read-only.yaml",
            "--audit",
            &audit_text,
        ],
        &python_server,
    );
    proxy.initialize(json!({}));
    proxy.request(1, "tools/list", json!({}));
    // list_notes is read-only as the server lists it: allowed.
    let read = proxy.request(
        2,
        "tools/call",
        json!({"name": "list_notes", "arguments": {}}),
    );
    assert!(read.get("result").is_some(), "{read:#}");
    // manage_note is not: refused before the server sees it.
    let write = proxy.request(
        3,
        "tools/call",
        json!({"name": "manage_note", "arguments": {"action": "append", "name": "n", "text": "x"}}),
    );
    assert_eq!(write["error"]["code"], -32001, "{write:#}");
    assert_eq!(write["error"]["data"]["annotations"]["readOnlyHint"], false);
    let (status, stderr) = proxy.finish();
    assert_eq!(status, 0, "{stderr:#?}");
    let lines = audit_lines(&audit);
    let decisions: Vec<(&str, &str)> = lines
        .iter()
        .filter_map(|l| Some((l["tool"].as_str()?, l["decision"].as_str()?)))
        .collect();
    assert_eq!(
        decisions,
        [("list_notes", "allow"), ("manage_note", "deny")],
        "{lines:#?}"
    );
    assert!(!notes.join("n.md").exists() && !notes.join("n").exists());
}

#[test]
fn without_rules_what_needs_a_variant_is_a_start_up_error_naming_the_fix() {
    let out = common::bin()
        .args([
            "proxy",
            "--policy",
            "tests/fixtures/proxy/guard-policy.yaml",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("reads a call's variant (`no-overwrites`)")
            && stderr.contains("name the rules file"),
        "{stderr}"
    );
    let name = common::scratch("proxy", "no-rules-key").join("key");
    let key = name.with_extension("pem");
    let out = common::bin()
        .args(["keygen", "-o"])
        .arg(&name)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = common::bin()
        .args(["proxy", "--sign-key"])
        .arg(&key)
        .args(["--server-uri", "https://mcp.example.com/mcp", "--", "true"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("--sign-key declares the tools the rules describe"),
        "{stderr}"
    );
    // A Cedar policy naming a tool's own action: Cedar's errors, then how
    // to write it without rules or where the rules go.
    let out = common::bin()
        .args([
            "proxy",
            "--policy",
            "docs/policies/file-server.cedar",
            "--",
            "true",
        ])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains("unrecognized action") && stderr.contains("help: no rules were given"),
        "{stderr}"
    );
    // A hints-only policy needs no rules. The server is `cat`, which stays
    // until the proxy closes its input on the host's end of input (`true`
    // could exit first, which the proxy reports as the server stopping).
    let out = common::bin()
        .args([
            "proxy",
            "--policy",
            "docs/policies/read-only.yaml",
            "--",
            "cat",
        ])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

//! JSON-RPC 2.0 framing over stdio, against the built server: every request
//! gets an answer with its `id` (a framing error too), a line that is not
//! JSON gets `-32700` with `"id": null`, a notification before the first
//! request does not end the session, and the session still works after all
//! of it.

use crate::common;

use std::io::{BufRead, BufReader, Write};
use std::path::PathBuf;
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

/// The server's output lines, parsed, on a channel (so a test waits with a
/// deadline, never forever).
fn answers_of(stdout: std::process::ChildStdout) -> mpsc::Receiver<Value> {
    let (tx, rx) = mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            let value = serde_json::from_str(&line).unwrap_or_else(|e| {
                panic!("the server wrote a line that is not JSON ({e}): {line}")
            });
            if tx.send(value).is_err() {
                break;
            }
        }
    });
    rx
}

/// The built server on a fresh sandbox: the child, its stdin, its answers.
fn start(name: &str) -> (Child, ChildStdin, mpsc::Receiver<Value>, PathBuf) {
    let root = common::sandbox(name);
    let mut child = Command::new(env!("CARGO_BIN_EXE_file-server"))
        .args(["--root", root.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let stdin = child.stdin.take().unwrap();
    let rx = answers_of(child.stdout.take().unwrap());
    (child, stdin, rx, root)
}

#[test]
fn framing_errors_are_answered_and_the_session_goes_on() {
    let (mut child, mut stdin, rx, root) = start("framing");
    let initialize = json!({"jsonrpc": "2.0", "id": 10, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}});
    let lines = [
        // A notification first: dropped, the session does not end.
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#.to_string(),
        "this is not JSON".to_string(),
        r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#.to_string(),
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":[]}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/list","params":"x"}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{"_meta":[]}}"#.to_string(),
        r#"{"jsonrpc":"1.0","id":5,"method":"tools/list"}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":6,"method":42}"#.to_string(),
        r#"{"jsonrpc":"2.0","id":[7],"method":"tools/list"}"#.to_string(),
        initialize.to_string(),
    ];
    for line in &lines {
        writeln!(stdin, "{line}").unwrap();
    }
    stdin.flush().unwrap();
    let mut answers: Vec<Value> = Vec::new();
    while answers.len() < 9 {
        let v = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no answer after {answers:?}"));
        answers.push(v);
    }
    let by_id = |id: Value| {
        answers
            .iter()
            .filter(|a| a["id"] == id)
            .map(|a| a["error"]["code"].as_i64().unwrap_or(0))
            .collect::<Vec<i64>>()
    };
    let mut nulls = by_id(Value::Null);
    nulls.sort_unstable();
    assert_eq!(nulls, vec![-32700, -32600, -32600], "{answers:?}");
    for (id, code) in [
        (2, -32602),
        (3, -32602),
        (4, -32602),
        (5, -32600),
        (6, -32600),
    ] {
        assert_eq!(by_id(json!(id)), vec![code], "id {id}: {answers:?}");
    }
    let init = answers.iter().find(|a| a["id"] == json!(10)).unwrap();
    assert!(init["result"]["capabilities"].is_object(), "{init}");
    // The session goes on: a well-formed request after all of it.
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","method":"notifications/initialized"}}"#
    )
    .unwrap();
    writeln!(
        stdin,
        r#"{{"jsonrpc":"2.0","id":11,"method":"tools/list"}}"#
    )
    .unwrap();
    stdin.flush().unwrap();
    let listed = rx
        .recv_timeout(Duration::from_secs(20))
        .expect("tools/list answer");
    assert_eq!(listed["id"], json!(11), "{listed}");
    assert!(listed["result"]["tools"].is_array(), "{listed}");
    drop(stdin);
    let status = child.wait().unwrap();
    assert!(status.code().is_some(), "killed by a signal: {status:?}");
    let _ = std::fs::remove_dir_all(&root);
}

/// A 2026-07-28 request whose capability metadata is missing or does not
/// declare the extension with a settings object gets `-32021`, as the
/// extension's table says (rmcp alone answers `-32602` there).
#[test]
fn malformed_capability_metadata_is_a_missing_capability() {
    let (mut child, mut stdin, rx, root) = start("caps");
    let meta = |caps: Option<Value>| {
        let mut m = json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        });
        if let Some(c) = caps {
            m["io.modelcontextprotocol/clientCapabilities"] = c;
        }
        m
    };
    let ext =
        |v: Value| Some(json!({"extensions": {"io.modelcontextprotocol/tool-resolution": v}}));
    let cases = [
        (1, meta(None), -32021),
        (2, meta(ext(json!(true))), -32021),
        (3, meta(ext(Value::Null)), -32021),
        (4, meta(Some(json!({}))), -32021),
        (5, meta(ext(json!({"futureRequiredMode": true}))), -32021),
        (6, meta(ext(json!({}))), 0),
    ];
    for (id, meta, _) in &cases {
        let request = json!({"jsonrpc": "2.0", "id": id, "method": "tools/resolve", "params": {
            "name": "manage_files", "arguments": {"path": "a", "action": "read"}, "_meta": meta}});
        writeln!(stdin, "{request}").unwrap();
    }
    stdin.flush().unwrap();
    let mut answers = Vec::new();
    while answers.len() < cases.len() {
        let v = rx
            .recv_timeout(Duration::from_secs(20))
            .unwrap_or_else(|_| panic!("no answer after {answers:?}"));
        answers.push(v);
    }
    drop(stdin);
    for (id, _, code) in &cases {
        let answer = answers.iter().find(|a| a["id"] == json!(id)).unwrap();
        if *code == 0 {
            assert_eq!(
                answer["result"]["annotations"]["readOnlyHint"],
                json!(true),
                "{answer}"
            );
        } else {
            assert_eq!(answer["error"]["code"], json!(code), "id {id}: {answer}");
        }
    }
    let _ = child.wait();
    let _ = std::fs::remove_dir_all(&root);
}

//! JSON-RPC 2.0 framing over stdio, against the built server: every request
//! gets an answer with its `id` (a framing error too), a line that is not
//! JSON gets `-32700` with `"id": null`, a notification before the first
//! request does not end the session, and the session still works after all
//! of it.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use serde_json::{Value, json};

#[test]
fn framing_errors_are_answered_and_the_session_goes_on() {
    let root = std::env::temp_dir().join(format!("file-server-framing-{}", std::process::id()));
    std::fs::create_dir_all(&root).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_file-server"))
        .args(["--root", root.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
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

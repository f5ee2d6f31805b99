//! `line-relay` moves lines both ways unchanged, and ends with its host.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::process::{Command, Stdio};

#[test]
fn lines_go_through_unchanged_and_the_relay_ends_with_its_host() {
    relayed(&[]);
    relayed(&["--threads"]);
}

fn relayed(mode: &[&str]) {
    // `cat` as the server: what goes in comes back.
    let mut relay = Command::new(env!("CARGO_BIN_EXE_line-relay"))
        .args(mode)
        .arg("cat")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = relay.stdin.take().unwrap();
    let mut output = BufReader::new(relay.stdout.take().unwrap());
    for line in [
        r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
        "not JSON at all: é",
    ] {
        writeln!(input, "{line}").unwrap();
        let mut back = String::new();
        output.read_line(&mut back).unwrap();
        assert_eq!(back, format!("{line}\n"));
    }
    drop(input);
    assert!(relay.wait().unwrap().success(), "{mode:?}");
    if !mode.is_empty() {
        return;
    }
    let usage = Command::new(env!("CARGO_BIN_EXE_line-relay"))
        .output()
        .unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

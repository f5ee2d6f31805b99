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

/// `line-relay --http`: a `POST`'s body goes to the server as a line, and
/// the server's next line comes back as an event or as the JSON body; a
/// body without an id gets `202`.
#[test]
fn posts_go_through_as_lines_and_answers_come_back() {
    use std::net::TcpStream;
    let mut relay = Command::new(env!("CARGO_BIN_EXE_line-relay"))
        .args(["--http", "cat"])
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut said = String::new();
    BufReader::new(relay.stderr.take().unwrap())
        .read_line(&mut said)
        .unwrap();
    let address = said
        .split_whitespace()
        .find_map(|w| w.strip_prefix("http://"))
        .and_then(|w| w.split('/').next())
        .unwrap()
        .to_owned();
    let host = TcpStream::connect(&address).unwrap();
    let mut out = host.try_clone().unwrap();
    let mut host = BufReader::new(host);
    let mut post = |body: &str, accept: &str| -> (String, String) {
        write!(
            out,
            "POST /mcp HTTP/1.1\r\nHost: x\r\nAccept: {accept}\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        let (mut status, mut length) = (String::new(), 0);
        host.read_line(&mut status).unwrap();
        loop {
            let mut line = String::new();
            host.read_line(&mut line).unwrap();
            if line == "\r\n" {
                break;
            }
            if let Some(n) = line.to_ascii_lowercase().strip_prefix("content-length:") {
                length = n.trim().parse().unwrap();
            }
        }
        let mut answer = vec![0; length];
        std::io::Read::read_exact(&mut host, &mut answer).unwrap();
        (
            status.trim_end().to_owned(),
            String::from_utf8(answer).unwrap(),
        )
    };
    let call = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let events = "application/json, text/event-stream";
    assert_eq!(
        post(call, events),
        (
            "HTTP/1.1 200 OK".into(),
            format!("event: message\ndata: {call}\n\n")
        )
    );
    assert_eq!(
        post(
            r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
            events
        ),
        ("HTTP/1.1 202 Accepted".into(), String::new())
    );
    // (`cat` answers the notification too: the next answer is its line.)
    let (status, answer) = post(call, "application/json");
    assert_eq!(status, "HTTP/1.1 200 OK");
    assert_eq!(
        answer,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#
    );
    relay.kill().unwrap();
    relay.wait().unwrap();
}

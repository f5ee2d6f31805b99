//! How often a `tools/call` and a `tools/list`, and their answers, are
//! read (`mcp_resolve_protocol::json` counts every read of JSON text in
//! the proxy's crates): a host's message once — the screen's walk of its
//! envelope, and one parse of the params the session reads — whether the
//! session reads it from a stream or is handed the read (`--listen`); a
//! server's answer in one walk, under `--list-by-scope` too.

use mcp_resolve_protocol::Screen;
use mcp_resolve_protocol::json::{Reads, reads};

use super::*;
use crate::session::{HostMessage, read_host};

/// The reads `f` makes on this thread, and its result.
fn counted<T>(f: impl FnOnce() -> T) -> (Reads, T) {
    let before = reads();
    let value = f();
    (reads() - before, value)
}

/// How a host's message reaches the session.
#[derive(Clone, Copy, Debug)]
enum Way {
    /// On a stream: the session's screen reads it.
    Stream,
    /// Read where it arrived (`--listen`) and handed to the session.
    Handed,
}

/// The reads of `text` from the host, the transport's and the session's
/// (`principal`: who a handed message's token speaks for).
fn from_host(
    h: &mut Harness<'_>,
    rules: &ProxyRules,
    way: Way,
    text: &str,
    principal: Option<mcp_resolve_policy::Principal>,
) -> Reads {
    counted(|| match way {
        Way::Stream => {
            h.host(text);
        }
        Way::Handed => {
            let (message, params) =
                read_host(&mut Screen::default().per_message(), rules, text).unwrap();
            let read = HostMessage::read(text, &message, params);
            let mut out = Vec::new();
            h.session.from_host(
                Input::Read(Box::new(read), principal),
                h.clock.now(),
                &mut out,
            );
        }
    })
    .0
}

/// Opens a legacy session (whatever the guard does with `initialize`).
fn open(h: &mut Harness<'_>) {
    h.host(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"elicitation":{}},"clientInfo":{"name":"test","version":"1"}}}"#);
    h.server(r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#);
}

/// The guards a session runs under: judging nothing, keeping records (an
/// audit log), exporting spans (telemetry), asking by policy; and a session
/// listing by scope (`--list-by-scope`), its handed messages from a token
/// that can call no tool the rules describe.
fn guards() -> Vec<(&'static str, Guarded)> {
    vec![
        ("plain", Guarded::default()),
        ("by scope", Guarded::default()),
        ("audited", audited()),
        (
            "traced",
            Guarded {
                traces: true,
                ..audited()
            },
        ),
        ("policy", asking_guard()),
    ]
}

/// The params of `text` as written (for the bytes a parse of them reads).
fn params_len(text: &str) -> u64 {
    mcp_resolve_protocol::Envelope::of(text)
        .and_then(|m| m.params)
        .map_or(0, |raw| raw.get().len() as u64)
}

const LISTING: &str = r#"{"result":{"tools":[{"name":"manage_files","description":"Reads, writes and deletes files","inputSchema":{"type":"object","properties":{"path":{"type":"string"},"action":{"type":"string"}}}},{"name":"other","inputSchema":{"type":"object"}}]},"jsonrpc":"2.0","id":1}"#;

const CALLED: &str =
    r#"{"result":{"content":[{"type":"text","text":"x"}]},"jsonrpc":"2.0","id":2}"#;

#[test]
fn a_call_and_a_listing_are_read_once_each_way() {
    let rules = rules(Dialect::Extension);
    let calls = [
        r#"{"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"a","action":"read"}},"jsonrpc":"2.0","id":2}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"a","action":"read"},"_meta":{"progressToken":2,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}"#,
    ];
    let lists = [
        r#"{"method":"tools/list","jsonrpc":"2.0","id":1}"#,
        r#"{"method":"tools/list","params":{},"jsonrpc":"2.0","id":1}"#,
        r#"{"method":"tools/list","params":{"_meta":{"progressToken":1}},"jsonrpc":"2.0","id":1}"#,
    ];
    let mut table = Vec::new();
    for (name, guard) in guards() {
        for way in [Way::Stream, Way::Handed] {
            for list in lists {
                let mut h = Harness::new(&rules, &guard, Some(TIMEOUT));
                let by_scope = name == "by scope";
                h.session.lists_by_scope = by_scope;
                let token = || by_scope.then(mcp_resolve_policy::Principal::default);
                let principal = token();
                open(&mut h);
                let asked = from_host(&mut h, &rules, way, list, principal);
                let (answered, out) = counted(|| h.server(LISTING));
                if by_scope && matches!(way, Way::Handed) {
                    // (The token was shown only the tool it can call.)
                    let names: Vec<Value> = host_lines(&out)[0]["result"]["tools"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|t| t["name"].clone())
                        .collect();
                    assert_eq!(names, [json!("other")]);
                }
                table.push((name, way, "list", list, asked, answered));
                for call in calls {
                    let principal = token();
                    let asked = from_host(&mut h, &rules, way, call, principal);
                    let (answered, _) = counted(|| h.server(CALLED));
                    table.push((name, way, "call", call, asked, answered));
                }
            }
        }
    }
    let mut wrong = Vec::new();
    for (name, way, what, text, asked, answered) in &table {
        let message = mcp_resolve_protocol::Envelope::of(text).unwrap();
        let id = message.id_raw.map_or(0, |raw| raw.get().len() as u64);
        // Once: the envelope's walk, the id read from it, one parse of the
        // params the session reads (`read_host` for a handed message), with
        // telemetry and a `_meta` too: the proxy's `traceparent` goes where
        // that parse found `_meta`.
        let mut once = text.len() as u64 + id + params_len(text);
        // A parse that finds where `_meta`'s members are written (a handed
        // message's, a traced one's) reads the few bytes of its progress
        // token and `traceparent` as values (as the id's).
        if matches!(way, Way::Handed) || *name == "traced" {
            for member in ["/_meta/progressToken", "/_meta/traceparent"] {
                if let Some(value) = message.params().and_then(|p| p.pointer(member).cloned()) {
                    once += value.to_string().len() as u64;
                }
            }
        }
        let answer_once = if *what == "list" {
            LISTING.len()
        } else {
            CALLED.len()
        } as u64
            + 1;
        eprintln!(
            "{name:8} {way:?} {what}: host {} bytes read of {} (once: {once}); answer {} of {}",
            asked.bytes,
            text.len(),
            answered.bytes,
            answer_once - 1,
        );
        if asked.bytes > once || answered.bytes > answer_once {
            wrong.push(format!(
                "{name} {way:?} {what} {text}: {asked:?} {answered:?}"
            ));
        }
    }
    assert!(wrong.is_empty(), "read more than once: {wrong:#?}");
}

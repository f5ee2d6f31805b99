//! Scripted and random exchanges driving a session without tokio: a host
//! and a server played by the test, a clock the test advances.

use std::collections::{BTreeMap, HashMap};
use std::time::{Duration, Instant, SystemTime};

use mcp_resolve_runtime::Dialect;
use proptest::prelude::*;
use serde_json::{Value, json};

use super::{Clock, Config, Effect, Ended, Input, Session};
use crate::guard::Guard;
use crate::rules::ProxyRules;
use crate::state::StateKeys;
use crate::state::tests::counter;
use mcp_resolve_policy::Policy;

const EXTENSION: &str = "io.modelcontextprotocol/tool-resolution";
const TIMEOUT: Duration = Duration::from_secs(10);
const ASK_TIMEOUT: Duration = Duration::from_secs(30);

fn rules(dialect: Dialect) -> ProxyRules {
    let project = mcp_resolve::load_str(
        "file-server.yaml",
        include_str!("../../../../../rules/file-server.yaml"),
    );
    let server = project.servers.into_iter().next().unwrap();
    ProxyRules::new(server, dialect).unwrap()
}

/// A guard with the `ask-destructive` policy, its session keeping records.
fn asking_guard() -> Guarded {
    let rules = rules(Dialect::Extension);
    let policy = Policy::parse(
        include_str!("../../../../../docs/policies/ask-destructive.yaml"),
        mcp_resolve::source::FileId(0),
        &[
            "readOnlyHint",
            "destructiveHint",
            "idempotentHint",
            "openWorldHint",
        ],
    )
    .unwrap();
    let policy =
        mcp_resolve_policy::cedar::Engine::from_yaml(rules.server(), &policy, None).unwrap();
    Guarded::recording(Guard {
        policy: Some(policy),
        ask_timeout: ASK_TIMEOUT,
        ..unkeyed()
    })
}

/// A guard that judges nothing, sealing request states with a key of its
/// own (distinct for every guard, as a process's random key is).
fn unkeyed() -> Guard {
    let mut key = [0u8; 32];
    counter(&mut key).unwrap();
    Guard::new(StateKeys::new(&[key], counter))
}

/// A guard, and what the transport wants of its session: records (an
/// audit log or telemetry) and spans (telemetry). The effects are the
/// tests' to read: nothing is written or exported.
struct Guarded {
    guard: Guard,
    records: bool,
    traces: bool,
}

impl Guarded {
    /// `guard`, its session keeping records.
    fn recording(guard: Guard) -> Guarded {
        Guarded {
            records: true,
            ..Guarded::from(guard)
        }
    }
}

impl Default for Guarded {
    fn default() -> Guarded {
        Guarded::from(unkeyed())
    }
}

impl From<Guard> for Guarded {
    fn from(guard: Guard) -> Guarded {
        Guarded {
            guard,
            records: false,
            traces: false,
        }
    }
}

impl std::ops::Deref for Guarded {
    type Target = Guard;
    fn deref(&self) -> &Guard {
        &self.guard
    }
}

impl std::ops::DerefMut for Guarded {
    fn deref_mut(&mut self) -> &mut Guard {
        &mut self.guard
    }
}

fn config(timeout: Option<Duration>) -> Config {
    Config {
        timeout,
        max_message_bytes: 1 << 20,
        per_message: false,
        compare_listing: false,
        span_attributes: vec![("network.transport", "pipe".into())],
        shared: false,
        records: false,
        traces: false,
        routes_answers: false,
        lists_by_scope: false,
        ids: {
            let mut id = 0u128;
            Box::new(move || {
                id += 1;
                id
            })
        },
    }
}

/// A test's clock: a fixed start, moved on by hand.
struct TestClock {
    start: Instant,
    at: Duration,
}

impl TestClock {
    fn new() -> TestClock {
        TestClock {
            start: Instant::now(),
            at: Duration::ZERO,
        }
    }

    fn now(&self) -> Clock {
        Clock {
            now: self.start + self.at,
            wall: SystemTime::UNIX_EPOCH + Duration::from_secs(1_800_000_000) + self.at,
        }
    }

    fn advance(&mut self, by: Duration) {
        self.at += by;
    }
}

/// Drives one session: feeds lines, collects effects.
struct Harness<'s> {
    session: Session<'s>,
    clock: TestClock,
}

impl<'s> Harness<'s> {
    fn new(rules: &'s ProxyRules, guard: &'s Guarded, timeout: Option<Duration>) -> Self {
        let config = Config {
            records: guard.records,
            traces: guard.traces,
            ..config(timeout)
        };
        Harness {
            session: Session::new(rules, &guard.guard, config),
            clock: TestClock::new(),
        }
    }

    fn host(&mut self, message: &str) -> Vec<Effect> {
        let mut out = Vec::new();
        self.session
            .from_host(Input::Line(message.into()), self.clock.now(), &mut out);
        out
    }

    fn server(&mut self, message: &str) -> Vec<Effect> {
        let mut out = Vec::new();
        self.session
            .from_server(Input::Line(message.into()), self.clock.now(), &mut out);
        out
    }

    fn tick(&mut self, by: Duration) -> Vec<Effect> {
        self.clock.advance(by);
        let mut out = Vec::new();
        self.session.tick(self.clock.now(), &mut out);
        out
    }

    /// Opens a legacy session whose host declares `capabilities`.
    fn initialize(&mut self, capabilities: Value) {
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": capabilities,
                       "clientInfo": {"name": "test", "version": "1"}}});
        let out = self.host(&init.to_string());
        assert_eq!(out, vec![Effect::Server(init.to_string())]);
        let out = self.server(
            r#"{"jsonrpc":"2.0","id":0,"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}}}"#,
        );
        let [Effect::Host(answer)] = &out[..] else {
            panic!("{out:?}");
        };
        let answer: Value = mcp_resolve_protocol::json::from_str(answer).unwrap();
        assert_eq!(answer["id"], 0);
        assert!(
            answer["result"]["capabilities"]["extensions"][EXTENSION].is_object(),
            "{answer}"
        );
        assert_eq!(answer["result"]["capabilities"]["tools"], json!({}));
    }
}

fn host_lines(out: &[Effect]) -> Vec<Value> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Host(line) => Some(mcp_resolve_protocol::json::from_str(line).unwrap()),
            _ => None,
        })
        .collect()
}

/// The one message the effects send the server (the proxy's own request).
fn sole_request(out: &[Effect]) -> Value {
    let [Effect::Server(request)] = out else {
        panic!("one request for the server: {out:?}");
    };
    mcp_resolve_protocol::json::from_str(request).unwrap()
}

fn audits(out: &[Effect]) -> Vec<Value> {
    out.iter()
        .filter_map(|e| match e {
            Effect::Audit(record) => Some(record.value()),
            _ => None,
        })
        .collect()
}

/// A guard whose session keeps records: every call is judged.
fn audited() -> Guarded {
    Guarded::recording(unkeyed())
}

fn call(id: u64, action: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
           "params": {"name": "manage_files", "arguments": {"path": "a", "action": action}}})
    .to_string()
}

#[test]
fn what_the_proxy_does_not_own_passes_byte_for_byte() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    let mut h = Harness::new(&rules, &guard, Some(TIMEOUT));
    h.initialize(json!({}));
    // Spacing, member order and escapes are kept both ways.
    let ping = r#"{ "method" : "ping", "jsonrpc":"2.0","id":"p\u0031" }"#;
    assert_eq!(h.host(ping), vec![Effect::Server(ping.into())]);
    let pong = r#"{"id":"p1",  "jsonrpc":"2.0","result":{ }}"#;
    assert_eq!(h.server(pong), vec![Effect::Host(pong.into())]);
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":2}}"#;
    assert_eq!(h.server(progress), vec![Effect::Host(progress.into())]);
    let sampling = r#"{"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{}}"#;
    assert_eq!(h.server(sampling), vec![Effect::Host(sampling.into())]);
    let reply = r#"{"jsonrpc":"2.0","id":"s1","result":{"content":[]}}"#;
    assert_eq!(h.host(reply), vec![Effect::Server(reply.into())]);
    // An allowed call and its answer, as written.
    let read = call(3, "read");
    assert_eq!(h.host(&read), vec![Effect::Server(read.clone())]);
    let done = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[{"type":"text","text":"é"}]}}"#;
    assert_eq!(h.server(done), vec![Effect::Host(done.into())]);
    assert_eq!(h.session.next_deadline(), None);
}

#[test]
fn tools_list_is_annotated_and_the_rest_of_the_answer_kept() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({"extensions": {EXTENSION: {}}}));
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    assert_eq!(h.host(list), vec![Effect::Server(list.into())]);
    let answer = r#"{"jsonrpc":"2.0", "id":1, "result":{"tools":[{"name":"manage_files","inputSchema":{"type":"object"}},{"name":"other","inputSchema":{"type":"object"}}]}, "extra": true}"#;
    let out = h.server(answer);
    let [Effect::Host(line)] = &out[..] else {
        panic!("{out:?}")
    };
    // Only the result changed: the envelope is spliced, not rewritten.
    assert!(
        line.starts_with(r#"{"jsonrpc":"2.0", "id":1, "result":{"#),
        "{line}"
    );
    assert!(line.ends_with(r#"}, "extra": true}"#), "{line}");
    let answer: Value = mcp_resolve_protocol::json::from_str(line).unwrap();
    let tools = answer["result"]["tools"].as_array().unwrap();
    assert_eq!(tools[0]["annotations"]["destructiveHint"], true);
    assert_eq!(
        tools[1],
        json!({"name": "other", "inputSchema": {"type": "object"}})
    );
}

#[test]
fn resolve_is_answered_by_the_proxy_and_audited_once() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::recording(Guard {
        audit_arguments: true,
        ..unkeyed()
    });
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({"extensions": {EXTENSION: {}}}));
    let resolve = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/resolve",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"}}});
    let out = h.host(&resolve.to_string());
    let answers = host_lines(&out);
    assert_eq!(answers.len(), 1, "{out:?}");
    assert_eq!(answers[0]["id"], 5);
    assert_eq!(answers[0]["result"]["annotations"]["readOnlyHint"], true);
    let records = audits(&out);
    assert_eq!(records.len(), 1);
    assert_eq!(records[0]["event"], "resolve");
    assert_eq!(records[0]["variant"], "read");
    assert_eq!(records[0]["time"], "2027-01-15T08:00:00.000Z");
    assert_eq!(records[0]["arguments"]["action"], "read");
    // Nothing reached the server.
    assert!(!out.iter().any(|e| matches!(e, Effect::Server(_))));
}

/// A call the rules' schema refuses and a resolution the proxy refuses get
/// their audit lines too: one line per call and per resolution.
#[test]
fn refused_calls_and_resolutions_are_audited() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::recording(Guard {
        audit_arguments: true,
        ..unkeyed()
    });
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({"extensions": {EXTENSION: {}}}));
    let bad = json!({"jsonrpc": "2.0", "id": "b", "method": "tools/call",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "chmod"}}});
    let out = h.host(&bad.to_string());
    assert_eq!(host_lines(&out)[0]["result"]["isError"], true);
    let records = audits(&out);
    assert_eq!(records.len(), 1, "{out:?}");
    assert_eq!(records[0]["event"], "call");
    assert_eq!(records[0]["tool"], "manage_files");
    assert_eq!(records[0]["outcome"], "invalid");
    assert_eq!(records[0]["error"]["code"], -32602);
    assert_eq!(records[0]["arguments"]["action"], "chmod");
    assert!(!out.iter().any(|e| matches!(e, Effect::Server(_))));
    for params in [
        json!({"name": "manage_files", "arguments": {"path": "a", "action": "chmod"}}),
        json!({"name": "no_such_tool", "arguments": {}}),
    ] {
        let resolve =
            json!({"jsonrpc": "2.0", "id": 6, "method": "tools/resolve", "params": params});
        let out = h.host(&resolve.to_string());
        assert_eq!(host_lines(&out)[0]["error"]["code"], -32602, "{out:?}");
        let records = audits(&out);
        assert_eq!(records.len(), 1, "{out:?}");
        assert_eq!(records[0]["event"], "resolve");
        assert_eq!(records[0]["tool"], params["name"]);
        assert_eq!(records[0]["error"]["code"], -32602);
    }
}

#[test]
fn invalid_arguments_and_garbage_are_answered_at_the_proxy() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({}));
    let bad = json!({"jsonrpc": "2.0", "id": "b", "method": "tools/call",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "chmod"}}});
    let answers = host_lines(&h.host(&bad.to_string()));
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["id"], "b");
    // A tool execution error the model can read and act on (SEP-1303),
    // not a protocol error.
    let result = &answers[0]["result"];
    assert_eq!(result["isError"], true, "{result}");
    let text = result["content"][0]["text"].as_str().unwrap();
    assert!(
        text.starts_with("invalid arguments: ") && text.contains("chmod"),
        "{text}"
    );
    // A call that names no tool is a protocol error still.
    let nameless = json!({"jsonrpc": "2.0", "id": "n", "method": "tools/call",
        "params": {"arguments": {}}});
    let answers = host_lines(&h.host(&nameless.to_string()));
    assert_eq!(answers[0]["error"]["code"], -32602);
    let answers = host_lines(&h.host("{not json"));
    assert_eq!(answers[0]["error"]["code"], -32700);
    let mut out = Vec::new();
    h.session.from_host(Input::TooLong, h.clock.now(), &mut out);
    h.session.from_host(Input::NotUtf8, h.clock.now(), &mut out);
    let codes: Vec<Value> = host_lines(&out)
        .iter()
        .map(|a| a["error"]["code"].clone())
        .collect();
    assert_eq!(codes, [json!(-32600), json!(-32700)]);
    // The server's garbage is logged, never delivered.
    let out = h.server("\u{1b}[31m not json");
    assert!(
        matches!(&out[..], [Effect::Log(line)] if line.contains("not JSON-RPC")),
        "{out:?}"
    );
}

#[test]
fn an_unobserved_call_is_checked_and_forwarded_as_the_host_wrote_it() {
    // No policy, no audit log, no telemetry: nothing reads the judgement,
    // so a call whose arguments pass goes on as written, and one whose
    // arguments do not is answered as always.
    let rules = rules(Dialect::Extension);
    let (plain, audited) = (Guarded::default(), audited());
    let mut h = Harness::new(&rules, &plain, None);
    h.initialize(json!({}));
    let mut a = Harness::new(&rules, &audited, None);
    a.initialize(json!({}));
    let undescribed = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
        "params": {"name": "not_in_the_rules", "arguments": {"x": [1, {"y": null}]}}})
    .to_string();
    for text in [call(1, "read"), call(2, "delete"), undescribed] {
        let out = h.host(&text);
        assert!(
            matches!(&out[..], [Effect::Server(sent)] if *sent == text),
            "{out:?}"
        );
        // The same call where a record is kept: forwarded alike, and its
        // answer audited.
        let out = a.host(&text);
        assert!(
            matches!(&out[..], [Effect::Server(sent)] if *sent == text),
            "{out:?}"
        );
        let id = mcp_resolve_protocol::json::from_str::<Value>(&text).unwrap()["id"].clone();
        let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}).to_string();
        assert_eq!(host_lines(&h.server(&answer)).len(), 1);
        let out = a.server(&answer);
        assert_eq!(host_lines(&out).len(), 1);
        assert_eq!(audits(&out).len(), 1, "{out:?}");
    }
    let answers = host_lines(&h.host(&call(3, "chmod")));
    assert_eq!(answers[0]["result"]["isError"], true, "{answers:?}");
}

/// The messages among `out` (what reaches the host and the server).
fn passed_on(out: Vec<Effect>) -> Vec<Effect> {
    out.into_iter()
        .filter(|e| matches!(e, Effect::Host(_) | Effect::Server(_)))
        .collect()
}

#[test]
fn a_call_read_on_its_text_is_decided_as_a_parsed_one() {
    // Without a record, a call's params are read on their text where they
    // can be; with one, they are parsed. What reaches the host and the
    // server is the same either way, whichever way the params are written.
    let rules = rules(Dialect::Extension);
    let (plain, audited) = (Guarded::default(), audited());
    let (mut h, mut a) = (
        Harness::new(&rules, &plain, None),
        Harness::new(&rules, &audited, None),
    );
    h.initialize(json!({}));
    a.initialize(json!({}));
    let calls = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"a","action":"read"}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"manage\u005ffiles","arguments":{"action":"r\u0065ad","path":"b"}}}"#,
        r#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"a","action":"chmod"}}}"#,
        r#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"a"}}}"#,
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"a","action":"read","mode":1.5}}}"#,
        r#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"manage_files"}}"#,
        r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":7,"arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"elsewhere","arguments":{"n":12,"ok":true,"z":null}}}"#,
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"a","action":"read"},"_meta":{"progressToken":"p9"}}}"#,
        r#"{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"\ud800","action":"read"}}}"#,
        r#"{"jsonrpc":"2.0","id":11,"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"a","action":"read","n":1e999}}}"#,
    ];
    for text in calls {
        let (quick, whole) = (passed_on(h.host(text)), passed_on(a.host(text)));
        assert_eq!(quick, whole, "{text}");
        assert!(!quick.is_empty(), "{text}");
    }
    // The progress of a call with a token reaches the host, as it does
    // for a parsed one.
    let progress = r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":"p9","progress":1}}"#;
    assert_eq!(passed_on(h.server(progress)), passed_on(a.server(progress)));
    assert_eq!(host_lines(&h.server(progress)).len(), 1);
}

#[test]
fn a_call_read_on_its_text_is_refused_as_a_parsed_one() {
    // Under a pin, a call to a tool the signature does not have is refused
    // alike whether its params were read on their text (nothing recorded)
    // or parsed (a record kept): the host gets the same error, the server
    // nothing.
    let rules = rules(Dialect::Extension);
    let pinned = || Guard {
        pin: Some(
            mcp_resolve_host::Signature::from_value(mcp_resolve::emit::signature::signature(
                rules.server(),
            ))
            .unwrap(),
        ),
        ..unkeyed()
    };
    let (plain, recorded) = (Guarded::from(pinned()), Guarded::recording(pinned()));
    let (mut h, mut a) = (
        Harness::new(&rules, &plain, None),
        Harness::new(&rules, &recorded, None),
    );
    h.initialize(json!({}));
    a.initialize(json!({}));
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"erase","arguments":{}}}"#,
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"er\u0061se","arguments":{"path":"a"}}}"#,
    ] {
        let (quick, whole) = (passed_on(h.host(text)), passed_on(a.host(text)));
        assert_eq!(quick, whole, "{text}");
        let answers = host_lines(&quick);
        assert_eq!(answers.len(), 1, "{quick:?}");
        assert!(
            answers[0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("`erase` is not in the pinned signature"),
            "{answers:?}"
        );
    }
    // A pinned tool goes on, either way.
    let text = call(3, "read");
    assert_eq!(passed_on(h.host(&text)), [Effect::Server(text.clone())]);
    assert_eq!(passed_on(a.host(&text)), [Effect::Server(text)]);
}

#[test]
fn a_request_past_its_timeout_gets_one_error_and_its_late_answer_is_dropped() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    let mut h = Harness::new(&rules, &guard, Some(TIMEOUT));
    h.initialize(json!({}));
    h.host(r#"{"jsonrpc":"2.0","id":9,"method":"ping"}"#);
    let deadline = h.session.next_deadline().unwrap();
    assert_eq!(deadline, h.clock.now().now + TIMEOUT);
    assert!(host_lines(&h.tick(TIMEOUT - Duration::from_millis(1))).is_empty());
    let answers = host_lines(&h.tick(Duration::from_millis(1)));
    assert_eq!(answers.len(), 1);
    assert_eq!(answers[0]["id"], 9);
    assert_eq!(answers[0]["error"]["code"], -32603);
    let out = h.server(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#);
    assert!(
        matches!(&out[..], [Effect::Log(line)] if line.contains("late answer")),
        "{out:?}"
    );
    assert_eq!(h.session.next_deadline(), None);
}

/// When the proxy gives up on a request, the server is told with
/// `notifications/cancelled`, and the request's progress stops reaching the
/// host (which has its answer); other requests' progress goes on.
#[test]
fn a_request_given_up_is_cancelled_at_the_server_and_its_progress_stops() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    let mut h = Harness::new(&rules, &guard, Some(TIMEOUT));
    h.initialize(json!({}));
    let slow = json!({"jsonrpc": "2.0", "id": "s", "method": "tools/call",
        "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"},
                   "_meta": {"progressToken": 42}}});
    assert_eq!(h.host(&slow.to_string()).len(), 1);
    let progress = |token: Value, n: u64| {
        json!({"jsonrpc": "2.0", "method": "notifications/progress",
               "params": {"progressToken": token, "progress": n}})
        .to_string()
    };
    // Before the timeout, progress reaches the host.
    let p1 = progress(json!(42), 1);
    assert_eq!(h.server(&p1), vec![Effect::Host(p1.clone())]);
    let out = h.tick(TIMEOUT);
    let cancelled: Vec<Value> = out
        .iter()
        .filter_map(|e| match e {
            Effect::Server(line) => Some(mcp_resolve_protocol::json::from_str(line).unwrap()),
            _ => None,
        })
        .collect();
    assert_eq!(cancelled.len(), 1, "{out:?}");
    assert_eq!(cancelled[0]["method"], "notifications/cancelled");
    assert_eq!(cancelled[0]["params"]["requestId"], "s");
    assert!(
        cancelled[0]["params"]["reason"]
            .as_str()
            .unwrap()
            .contains("--timeout")
    );
    assert_eq!(host_lines(&out)[0]["error"]["code"], -32603);
    // Its progress is dropped; another request's is not.
    assert!(h.server(&progress(json!(42), 2)).is_empty());
    let other = progress(json!("other"), 1);
    assert_eq!(h.server(&other), vec![Effect::Host(other.clone())]);
    // The late answer is dropped, and the token is free for a new request.
    assert!(matches!(
        &h.server(r#"{"jsonrpc":"2.0","id":"s","result":{}}"#)[..],
        [Effect::Log(_)]
    ));
    let p3 = progress(json!(42), 3);
    assert_eq!(h.server(&p3), vec![Effect::Host(p3.clone())]);
}

/// In front of a server that resolves calls itself, a resolution of a tool
/// the rules do not describe is the server's: forwarded, and its answer
/// passed back; the rules' tools are still answered by the proxy. In front
/// of one that does not, the proxy answers every resolution.
#[test]
fn resolutions_of_tools_the_rules_do_not_describe_go_to_a_resolving_server() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    for server_resolves in [true, false] {
        let mut h = Harness::new(&rules, &guard, None);
        let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
            "params": {"protocolVersion": "2025-11-25",
                       "capabilities": {"extensions": {EXTENSION: {}}},
                       "clientInfo": {"name": "test", "version": "1"}}});
        h.host(&init.to_string());
        let extensions = if server_resolves {
            json!({EXTENSION: {}})
        } else {
            json!({})
        };
        let answer = json!({"jsonrpc": "2.0", "id": 0, "result": {"protocolVersion": "2025-11-25",
            "capabilities": {"tools": {}, "extensions": extensions},
            "serverInfo": {"name": "s", "version": "1"}}});
        h.server(&answer.to_string());
        let theirs = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/resolve",
            "params": {"name": "copy_file", "arguments": {"from": "a", "to": "b"}}})
        .to_string();
        let out = h.host(&theirs);
        if server_resolves {
            assert_eq!(out, vec![Effect::Server(theirs.clone())], "{out:?}");
            let reply = r#"{"jsonrpc":"2.0","id":1,"result":{"resultType":"complete","name":"copy_file","annotations":{"readOnlyHint":false}}}"#;
            assert_eq!(h.server(reply), vec![Effect::Host(reply.into())]);
        } else {
            assert_eq!(host_lines(&out)[0]["error"]["code"], -32602, "{out:?}");
            assert!(!out.iter().any(|e| matches!(e, Effect::Server(_))));
        }
        // The server's own marker on a tool the rules do not describe is
        // listed only when the server resolves it.
        let list = r#"{"jsonrpc":"2.0","id":3,"method":"tools/list"}"#;
        h.host(list);
        let listed = json!({"jsonrpc": "2.0", "id": 3, "result": {"tools": [
            {"name": "copy_file", "inputSchema": {"type": "object"},
             "_meta": {EXTENSION: {"resolvable": true}, "other": 1}}]}});
        let out = h.server(&listed.to_string());
        let tool = &host_lines(&out)[0]["result"]["tools"][0];
        assert_eq!(
            tool["_meta"].get(EXTENSION).is_some(),
            server_resolves,
            "{tool}"
        );
        assert_eq!(tool["_meta"]["other"], 1, "{tool}");
        let ours = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/resolve",
            "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"}}});
        let out = h.host(&ours.to_string());
        assert_eq!(
            host_lines(&out)[0]["result"]["annotations"]["readOnlyHint"],
            true
        );
        assert!(!out.iter().any(|e| matches!(e, Effect::Server(_))));
    }
}

#[test]
fn when_the_server_exits_every_waiting_request_gets_an_error() {
    let rules = rules(Dialect::Extension);
    let guard = asking_guard();
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({"elicitation": {}}));
    h.host(&call(1, "read"));
    h.host(r#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#);
    h.host(&call(3, "delete")); // held for a question
    let mut out = Vec::new();
    h.session.from_server(
        Input::Ended("the server exited".into()),
        h.clock.now(),
        &mut out,
    );
    let mut ids: Vec<Value> = host_lines(&out).iter().map(|a| a["id"].clone()).collect();
    ids.sort_by_key(Value::to_string);
    assert_eq!(ids, [json!(1), json!(2), json!(3)]);
    let outcomes: Vec<Value> = audits(&out).iter().map(|r| r["outcome"].clone()).collect();
    assert_eq!(outcomes, [json!("server exited"), json!("unasked")]);
    assert_eq!(
        h.session.ended(),
        Some(&Ended::ServerExited("the server exited".into()))
    );
    // Nothing more happens after the end.
    assert!(h.host(&call(4, "read")).is_empty());
}

mod asking;
mod by_scope;
mod declarations;
mod handed;
mod hosts_as_they_are;
mod interleavings;
mod listing;
mod reads;
mod tracing;
mod trust;

/// A Cedar policy on `context.session`: the client's name and protocol
/// version come from `initialize` in a legacy session, and from the
/// request's own `_meta` in a 2026-07-28 one.
#[test]
fn cedar_policies_read_what_the_host_says_of_itself() {
    let rules = rules(Dialect::Extension);
    let policy = mcp_resolve_policy::cedar::Engine::load(
        rules.server(),
        &[mcp_resolve_policy::cedar::Source {
            file: mcp_resolve::source::FileId(0),
            name: "p.cedar",
            text: r#"@id("known-clients")
permit(principal, action, resource)
when { context.session has clientName && context.session.clientName == "test"
       && context.session has protocolVersion };"#,
        }],
        None,
    )
    .unwrap();
    let guard = Guarded::recording(Guard {
        policy: Some(policy),
        ..unkeyed()
    });
    // Legacy: `initialize` named the client `test`.
    let mut h = Harness::new(&rules, &guard, None);
    h.initialize(json!({}));
    let out = h.host(&call(1, "read"));
    assert!(matches!(&out[..], [Effect::Server(_)]), "{out:?}");
    // 2026-07-28: each request says it; another name is refused.
    let mut h = Harness::new(&rules, &guard, None);
    let said = |id: u64, name: &str| {
        json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"},
                       "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                                 "io.modelcontextprotocol/clientInfo": {"name": name, "version": "1"}}}})
        .to_string()
    };
    let out = h.host(&said(2, "test"));
    assert!(matches!(&out[..], [Effect::Server(_)]), "{out:?}");
    let answers = host_lines(&h.host(&said(3, "other")));
    assert_eq!(answers[0]["error"]["code"], -32001, "{answers:?}");
}

//! A host's message its transport read ([`Input::Read`], `--listen`) is
//! decided as the session decides the same message read on a stream
//! ([`Input::Line`]), and is not read again.

use mcp_resolve_protocol::{Screen, Screened};

use super::*;
use crate::consent::ASK_PREFIX;
use crate::session::{HostMessage, read_host};

/// What a transport that reads each message where it arrives does with
/// `text`: a refusal the screen answers is answered (here, as the effect
/// the session would give), anything else is handed to the session.
fn hand(h: &mut Harness<'_>, rules: &ProxyRules, text: &str) -> Vec<Effect> {
    let mut out = Vec::new();
    match read_host(&mut Screen::default().per_message(), rules, text) {
        Ok((message, params)) => {
            let read = HostMessage::read(text, &message, params);
            h.session
                .from_host(Input::Read(Box::new(read), None), h.clock.now(), &mut out);
        }
        Err(Screened::Reply(answer)) => out.push(Effect::Host(answer.to_string())),
        Err(_) => {}
    }
    out
}

/// The host's messages of the twin sessions' scripts.
fn host_message() -> impl Strategy<Value = String> {
    let id = 1u64..6;
    prop_oneof![
        id.clone().prop_map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": {}}).to_string()),
        id.clone().prop_map(|id| format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/list"}}"#)),
        (id.clone(), prop_oneof![Just("read"), Just("overwrite"), Just("delete"), Just("explode")])
            .prop_map(|(id, action)| call(id, action)),
        id.clone().prop_map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "manage_files", "arguments": {"path": 1}}}).to_string()),
        id.clone().prop_map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "manage_files", "arguments": {"path": "a", "action": "read"},
                       "_meta": {"progressToken": id, "traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}).to_string()),
        id.clone().prop_map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "nope", "arguments": {}}}).to_string()),
        id.clone().prop_map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "tools/resolve",
            "params": {"name": "manage_files", "arguments": {"path": "a", "action": "delete"}}}).to_string()),
        id.clone().prop_map(|id| json!({"jsonrpc": "2.0", "id": id, "method": "ping"}).to_string()),
        id.clone().prop_map(|id| json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": id, "reason": "x"}}).to_string()),
        (1u64..3, any::<bool>()).prop_map(|(n, yes)| json!({"jsonrpc": "2.0", "id": format!("{ASK_PREFIX}{n}"),
            "result": {"action": if yes { "accept" } else { "decline" }, "content": {}}}).to_string()),
        Just("{not json".to_string()),
        Just("[]".to_string()),
        Just(r#"{"jsonrpc":"2.0","id":1.5,"method":"ping"}"#.to_string()),
        Just(r#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":[1]}"#.to_string()),
    ]
}

/// A step of a script: the host says something, the server answers
/// request `id` (the proxy's questions go to the host, not the server), or
/// the transport cancels request `id` with a line of its own (as `--listen`
/// does for a host that let go of its request), which both sessions read.
#[derive(Clone, Debug)]
enum Step {
    Host(String),
    Answer(u64),
    Cancel(u64),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => host_message().prop_map(Step::Host),
        2 => (1u64..6).prop_map(Step::Answer),
        1 => (1u64..6).prop_map(Step::Cancel),
    ]
}

fn guard(kind: u8) -> Guarded {
    match kind {
        0 => Guarded::default(),
        1 => audited(),
        2 => asking_guard(),
        _ => Guarded {
            traces: true,
            ..audited()
        },
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// The same script, read on a stream and handed read, gives the same
    /// effects, in the same order.
    #[test]
    fn a_message_handed_read_is_decided_as_one_read_on_a_stream(
        kind in 0u8..4,
        script in prop::collection::vec(step(), 1..14),
    ) {
        let rules = rules(Dialect::Extension);
        let guard = guard(kind);
        let mut stream = Harness::new(&rules, &guard, Some(TIMEOUT));
        let mut handed = Harness::new(&rules, &guard, Some(TIMEOUT));
        let opening = [
            Step::Host(json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {"elicitation": {}},
                           "clientInfo": {"name": "test", "version": "1"}}}).to_string()),
            Step::Answer(0),
        ];
        for step in opening.into_iter().chain(script) {
            let (a, b) = match &step {
                Step::Host(text) => (stream.host(text), hand(&mut handed, &rules, text)),
                Step::Cancel(id) => {
                    let cancel = json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                        "params": {"requestId": id}}).to_string();
                    (stream.host(&cancel), handed.host(&cancel))
                }
                Step::Answer(id) => {
                    let result = if *id == 0 {
                        json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}},
                               "serverInfo": {"name": "s", "version": "1"}})
                    } else {
                        json!({"content": []})
                    };
                    let answer = json!({"jsonrpc": "2.0", "id": id, "result": result}).to_string();
                    (stream.server(&answer), handed.server(&answer))
                }
            };
            prop_assert_eq!(a, b, "{:?}", step);
        }
    }
}

/// What the session is handed is not read again: a read whose text would
/// not pass the screen goes on as the transport read it.
#[test]
fn a_message_handed_read_is_not_read_again() {
    let rules = rules(Dialect::Extension);
    let guard = Guarded::default();
    let mut h = Harness::new(&rules, &guard, Some(TIMEOUT));
    h.initialize(json!({}));
    let read = HostMessage {
        text: "not JSON: the session never reads this".into(),
        id: Some(json!(4)),
        method: Some("ping".into()),
        params_at: None,
        params: None,
        meta_at: mcp_resolve_protocol::MetaAt::Unknown,
        response: false,
    };
    let mut out = Vec::new();
    h.session
        .from_host(Input::Read(Box::new(read), None), h.clock.now(), &mut out);
    assert_eq!(
        out,
        vec![Effect::Server(
            "not JSON: the session never reads this".into()
        )]
    );
}

/// A session that routes answers by the proxy's id gives each forwarded
/// answer as [`Effect::Answer`]: the answer another session gives, with
/// where its id is written, whatever the order of its members and however
/// the proxy rewrote its result; and progress as [`Effect::Progress`], with
/// where its token is written.
#[test]
fn an_answer_routed_by_the_proxys_id_is_the_answer_and_says_where_its_id_is() {
    use crate::session::Answer;
    let rules = rules(Dialect::Extension);
    for guard in [Guarded::default(), asking_guard()] {
        let mut plain = Harness::new(&rules, &guard, Some(TIMEOUT));
        let mut routed = Harness::new(&rules, &guard, Some(TIMEOUT));
        routed.session.routes_answers = true;
        let script = [
            (true, json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                           "clientInfo": {"name": "test", "version": "1"}}}).to_string()),
            (false, r#"{"result":{"protocolVersion":"2025-11-25","capabilities":{"tools":{}},"serverInfo":{"name":"s","version":"1"}},"jsonrpc":"2.0","id":0}"#.to_string()),
            (true, r#"{"jsonrpc":"2.0","id":17,"method":"tools/list"}"#.to_string()),
            (false, r#"{"result":{"tools":[{"name":"manage_files","inputSchema":{"type":"object"}}]},"jsonrpc":"2.0","id":17}"#.to_string()),
            (true, r#"{"jsonrpc":"2.0","id":"s-2","method":"tools/list"}"#.to_string()),
            (false, r#"{"jsonrpc":"2.0", "id" : "s-2","result":{"tools":[{"name":"manage_files","inputSchema":{"type":"object"}}]}}"#.to_string()),
            (true, call(5, "read")),
            (false, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":"p-5"}}"#.to_string()),
            (false, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress\u0054oken":7, "progressToken" : {"k":[1]},"progress":2}}"#.to_string()),
            (false, r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":3}}"#.to_string()),
            (false, r#"{"result":{"content":[]},"jsonrpc":"2.0","id":5}"#.to_string()),
            (true, r#"{"jsonrpc":"2.0","id":6,"method":"ping"}"#.to_string()),
            (false, r#"{"jsonrpc":"2.0","id":6,"error":{"code":-1,"message":"no"}}"#.to_string()),
        ];
        let (mut answers, mut progress) = (0, 0);
        for (from_host, text) in script {
            let (a, b) = if from_host {
                (plain.host(&text), routed.host(&text))
            } else {
                (plain.server(&text), routed.server(&text))
            };
            let b: Vec<Effect> = b
                .into_iter()
                .map(|effect| match effect {
                    Effect::Answer(answer) => {
                        let Answer { text, to, id_at } = *answer;
                        let id: Value = mcp_resolve_protocol::json::from_str(&text[id_at]).unwrap();
                        let written: Value = mcp_resolve_protocol::json::from_str(&text).unwrap();
                        assert_eq!(id, written["id"], "{text}");
                        assert_eq!(to, mcp_resolve_protocol::id_key(&id));
                        answers += 1;
                        Effect::Host(text)
                    }
                    // Progress says where its token is written, and whose
                    // it is: the token as a parsed object has it.
                    Effect::Progress(routed) => {
                        let Answer { text, to, id_at } = *routed;
                        let token: Value =
                            mcp_resolve_protocol::json::from_str(&text[id_at]).unwrap();
                        let written: Value = mcp_resolve_protocol::json::from_str(&text).unwrap();
                        assert_eq!(token, written["params"]["progressToken"], "{text}");
                        assert_eq!(to, mcp_resolve_protocol::id_key(&token));
                        progress += 1;
                        Effect::Host(text)
                    }
                    other => other,
                })
                .collect();
            assert_eq!(a, b, "{text}");
        }
        assert_eq!(answers, 5);
        // (A notification without a token goes as it is.)
        assert_eq!(progress, 2);
    }
}

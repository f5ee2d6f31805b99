//! Random interleavings of host and server messages, garbage and time: every
//! host request gets exactly one answer with its own id, nothing is
//! duplicated or lost, and nothing panics.

use super::declarations::declarer;
use super::*;

/// One step of a random exchange.
#[derive(Clone, Debug)]
enum Step {
    /// The host sends a request of kind `n` (see [`request`]).
    Request(u8),
    /// The host sends a notification.
    Notify,
    /// The host cancels its `n`-th request still open.
    Cancel(usize),
    /// The host writes a line that is not a valid message.
    HostGarbage(u8),
    /// The host answers the `n`-th open question with action `a`.
    AnswerQuestion(usize, u8),
    /// The server answers its `n`-th open request (an error when `err`).
    Answer(usize, bool),
    /// The server sends a notification.
    ServerNotify,
    /// The server announces a changed tool list.
    ListChanged,
    /// The server sends a request of its own.
    ServerRequest,
    /// The server writes garbage.
    ServerGarbage,
    /// Time passes, in seconds.
    Wait(u8),
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        6 => any::<u8>().prop_map(Step::Request),
        1 => Just(Step::Notify),
        1 => any::<usize>().prop_map(Step::Cancel),
        1 => any::<u8>().prop_map(Step::HostGarbage),
        2 => (any::<usize>(), any::<u8>()).prop_map(|(n, a)| Step::AnswerQuestion(n, a)),
        6 => (any::<usize>(), any::<bool>()).prop_map(|(n, e)| Step::Answer(n, e)),
        1 => Just(Step::ServerNotify),
        1 => Just(Step::ListChanged),
        1 => Just(Step::ServerRequest),
        1 => Just(Step::ServerGarbage),
        2 => (0u8..40).prop_map(Step::Wait),
    ]
}

/// The host's request of kind `kind` with id `id`.
fn request(kind: u8, id: u64, stateless: bool) -> String {
    let action = ["read", "append", "replace", "delete", "chmod"][usize::from(kind % 5)];
    let meta = if stateless {
        json!({"io.modelcontextprotocol/protocolVersion": "2026-07-28",
               "io.modelcontextprotocol/clientCapabilities": {"elicitation": {}, "extensions": {EXTENSION: {}}}})
    } else {
        json!({})
    };
    let arguments = json!({"path": "a", "action": action, "content": "x"});
    let (method, params) = match kind % 9 {
        0..=3 => (
            "tools/call",
            json!({"name": "manage_files", "arguments": arguments, "_meta": meta}),
        ),
        4 => (
            "tools/call",
            json!({"name": "unknown_tool", "arguments": {}, "_meta": meta}),
        ),
        5 => (
            "tools/resolve",
            json!({"name": "manage_files", "arguments": arguments, "_meta": meta}),
        ),
        6 => ("tools/list", json!({"_meta": meta})),
        7 => ("declarations/manifest", json!({"_meta": meta})),
        _ => ("ping", json!({})),
    };
    let id = if kind.is_multiple_of(3) {
        json!(format!("h{id}"))
    } else {
        json!(id)
    };
    json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}).to_string()
}

/// What the test checks of one exchange, kept as it goes.
#[derive(Default)]
struct Ledger {
    /// Answers the host got, by the id of its request (as JSON text).
    answers: BTreeMap<String, usize>,
    /// The host's requests, by id text; `true` when cancelled.
    requests: BTreeMap<String, bool>,
    /// Server messages meant for the host, and how often each arrived.
    from_server: HashMap<String, usize>,
    /// Requests the server holds, as the proxy sent them (id text).
    at_server: Vec<Value>,
    /// Questions the proxy asked the host.
    questions: Vec<Value>,
}

impl Ledger {
    fn take(&mut self, out: Vec<Effect>) {
        for effect in out {
            match effect {
                Effect::Host(line) => {
                    let message: Value = mcp_resolve_protocol::json::from_str(&line).unwrap();
                    assert_eq!(message["jsonrpc"], "2.0", "{line}");
                    if let Some(count) = self.from_server.get_mut(&line) {
                        *count += 1;
                        continue;
                    }
                    if message.get("method") == Some(&json!("elicitation/create")) {
                        self.questions.push(message["id"].clone());
                        continue;
                    }
                    if message.get("method").is_some() {
                        continue; // the proxy's own notices
                    }
                    let id = message["id"].to_string();
                    if self.requests.contains_key(&id) {
                        *self.answers.entry(id).or_default() += 1;
                    } else {
                        // Answers to what the screen refused.
                        assert!(["null", "\"g\""].contains(&id.as_str()), "{line}");
                    }
                }
                Effect::Server(line) => {
                    let message: Value = mcp_resolve_protocol::json::from_str(&line).unwrap();
                    if message.get("method").is_some()
                        && let Some(id) = message.get("id")
                    {
                        self.at_server.push(id.clone());
                    }
                }
                Effect::Audit(record) => {
                    let record = record.value();
                    assert!(record["time"].is_string() && record["event"].is_string());
                }
                Effect::Log(_) | Effect::Trust(_) | Effect::Span(_) | Effect::Measure(_) => {}
                Effect::Answer(routed) | Effect::Progress(routed) => {
                    panic!("not asked to route answers: {routed:?}")
                }
            }
        }
    }
}

/// What a random exchange's host and server keep besides the ledger.
struct Players {
    next_id: u64,
    served: u64,
    stateless: bool,
}

/// Plays one step: the host's or the server's move, or time passing.
fn play(
    h: &mut Harness<'_>,
    ledger: &mut Ledger,
    players: &mut Players,
    step: &Step,
) -> Vec<Effect> {
    let Players {
        next_id,
        served,
        stateless,
    } = players;
    let stateless = *stateless;
    match step {
        Step::Request(kind) => {
            let line = request(*kind, *next_id, stateless);
            *next_id += 1;
            let id: Value =
                mcp_resolve_protocol::json::from_str::<Value>(&line).unwrap()["id"].clone();
            ledger.requests.insert(id.to_string(), false);
            h.host(&line)
        }
        Step::Notify => h.host(r#"{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}"#),
        Step::Cancel(n) => {
            let open: Vec<String> = ledger
                .requests
                .iter()
                .filter(|(id, cancelled)| !**cancelled && !ledger.answers.contains_key(*id))
                .map(|(id, _)| id.clone())
                .collect();
            if open.is_empty() {
                return Vec::new();
            }
            let id = open[n % open.len()].clone();
            ledger.requests.insert(id.clone(), true);
            h.host(&format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/cancelled","params":{{"requestId":{id}}}}}"#
            ))
        }
        Step::HostGarbage(kind) => h.host(
            [
                "{",
                "[]",
                "42",
                r#"{"jsonrpc":"2.0","id":{},"method":"x"}"#,
                r#"{"jsonrpc":"1.0","id":"g","method":"x"}"#,
                r#"{"jsonrpc":"2.0","id":"g","method":"x","params":[1]}"#,
                "",
            ][usize::from(*kind % 7)],
        ),
        Step::AnswerQuestion(n, action) => {
            if ledger.questions.is_empty() {
                return Vec::new();
            }
            let question = ledger.questions.remove(n % ledger.questions.len());
            let answer = match action % 4 {
                0 => json!({"jsonrpc": "2.0", "id": question, "result": {"action": "accept"}}),
                1 => json!({"jsonrpc": "2.0", "id": question, "result": {"action": "decline"}}),
                2 => json!({"jsonrpc": "2.0", "id": question, "result": {"action": "cancel"}}),
                _ => {
                    json!({"jsonrpc": "2.0", "id": question, "error": {"code": -1, "message": "no"}})
                }
            };
            h.host(&answer.to_string())
        }
        Step::Answer(n, error) => {
            if ledger.at_server.is_empty() {
                return Vec::new();
            }
            let id = ledger.at_server.remove(n % ledger.at_server.len());
            let answer = if *error {
                json!({"jsonrpc": "2.0", "id": id, "error": {"code": -32000, "message": "failed"}})
            } else if id
                .as_str()
                .is_some_and(|id| id.starts_with("mcp-resolve-list-"))
            {
                json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [
                    {"name": "manage_files", "inputSchema": {"type": "object"}}]}})
            } else {
                json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})
            };
            h.server(&answer.to_string())
        }
        Step::ServerNotify => {
            *served += 1;
            let line = format!(
                r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"n":{served}}}}}"#
            );
            ledger.from_server.insert(line.clone(), 0);
            h.server(&line)
        }
        Step::ListChanged => {
            h.server(r#"{"jsonrpc":"2.0","method":"notifications/tools/list_changed"}"#)
        }
        Step::ServerRequest => {
            *served += 1;
            let line = format!(r#"{{"jsonrpc":"2.0","id":"srv{served}","method":"roots/list"}}"#);
            ledger.from_server.insert(line.clone(), 0);
            h.server(&line)
        }
        Step::ServerGarbage => h.server("garbage"),
        Step::Wait(seconds) => h.tick(Duration::from_secs(u64::from(*seconds))),
    }
}

fn run_exchange(steps: &[Step], stateless: bool, watch: bool, declare: bool, verify: bool) {
    let rules = rules(Dialect::Extension);
    let mut guard = if watch {
        asking_guard()
    } else {
        Guarded::default()
    };
    if declare {
        guard.declare = Some(declarer(&rules));
    }
    if verify {
        let key =
            mcp_resolve_host::jws::PrivateKey::generate(mcp_resolve_host::jws::Algorithm::Ed25519)
                .unwrap();
        guard.verify = Some(crate::trust::Verifier::new(
            crate::trust::Policy::Pinned,
            vec![key.public().clone()],
            "https://s.example/mcp".into(),
            std::collections::BTreeMap::new(),
        ));
    }
    let mut h = Harness::new(&rules, &guard, Some(TIMEOUT));
    let mut ledger = Ledger::default();
    if !stateless {
        h.initialize(json!({"elicitation": {}, "extensions": {EXTENSION: {}}}));
    }
    let mut players = Players {
        next_id: 1,
        served: 0,
        stateless,
    };
    for step in steps {
        let out = play(&mut h, &mut ledger, &mut players, step);
        ledger.take(out);
        // At every step: no answer twice.
        for (id, count) in &ledger.answers {
            assert!(*count <= 1, "request {id} answered {count} times");
        }
    }
    // The server goes: whatever is still open is answered now.
    let mut out = Vec::new();
    h.session
        .from_server(Input::Ended("the end".into()), h.clock.now(), &mut out);
    ledger.take(out);
    for (id, cancelled) in &ledger.requests {
        let count = ledger.answers.get(id).copied().unwrap_or(0);
        if *cancelled {
            assert!(count <= 1, "cancelled request {id} answered {count} times");
        } else {
            assert_eq!(count, 1, "request {id} answered {count} times");
        }
    }
    for (line, count) in &ledger.from_server {
        assert_eq!(*count, 1, "{line} reached the host {count} times");
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_request_is_answered_once_in_any_interleaving(
        steps in proptest::collection::vec(step(), 0..60),
        stateless in any::<bool>(),
        watch in any::<bool>(),
        declare in any::<bool>(),
        verify in any::<bool>(),
    ) {
        run_exchange(&steps, stateless, watch, declare, verify);
    }
}

/// Found by the test above: under `--trust`, a page of the proxy's own
/// listing held for the manifest, its reading given up meanwhile, was
/// later taken as a page of the next reading, which then ended early; the
/// server's answer to the next reading's request reached the host.
#[test]
fn a_held_page_of_a_listing_given_up_is_not_the_next_readings() {
    use Step::{Answer, ListChanged, Request, Wait};
    run_exchange(
        &[
            Request(0),
            ListChanged,
            Wait(4),
            Answer(0, false),
            Wait(6),
            ListChanged,
            Wait(4),
            Answer(7_300_384_071_280_559_125, false),
        ],
        false,
        false,
        false,
        true,
    );
}

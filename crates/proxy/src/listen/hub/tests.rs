use super::*;
use proptest::prelude::*;

/// What happens next in a shared session's life.
#[derive(Clone, Debug)]
enum Step {
    /// Host `host` opens a request with id `id`, asking for progress
    /// (with token `token`) or not, on an event stream or not.
    Open {
        host: u8,
        id: u8,
        token: Option<u8>,
        events: bool,
    },
    /// The host of the `n`-th request opened closes its stream.
    Close(usize),
    /// The server answers the `n`-th request (or a request never
    /// opened, past the end).
    Answer(usize),
    /// The server reports progress with the `n`-th request's token.
    Progress(usize),
    /// The server sends a message on the `n`-th request's answer.
    Related(usize),
    /// The server sends a notification of the `subscriptions/listen`
    /// stream the `n`-th request opened.
    Subscribed(usize),
    /// The server sends a message that names no request.
    Stray,
}

fn step() -> impl Strategy<Value = Step> {
    prop_oneof![
        (0u8..4, 0u8..3, proptest::option::of(0u8..3), any::<bool>()).prop_map(
            |(host, id, token, events)| Step::Open {
                host,
                id,
                token,
                events
            }
        ),
        (0usize..12).prop_map(Step::Close),
        (0usize..12).prop_map(Step::Answer),
        (0usize..12).prop_map(Step::Progress),
        (0usize..12).prop_map(Step::Related),
        (0usize..12).prop_map(Step::Subscribed),
        Just(Step::Stray),
    ]
}

/// An answer the session routes by the proxy's id reaches the request
/// it answers as the answer read again would, with the host's id put
/// back, and is not read; one for no waiting request reaches no one.
#[test]
fn an_answer_routed_by_the_proxys_id_is_not_read_again() {
    use mcp_resolve_protocol::json::reads;
    for host_id in [Value::from("h-1"), Value::from(12)] {
        let (to_relay, _relay) = mpsc::channel(16);
        let read = HostSession::new(to_relay.clone(), true, None, Carried::default());
        let routed = HostSession::new(to_relay, true, None, Carried::default());
        let (proxy_id, mut by_reading) = read.wait(host_id.clone(), None, false);
        let (same_id, mut by_routing) = routed.wait(host_id.clone(), None, false);
        assert_eq!(proxy_id, same_id);
        let text = format!(
            r#"{{"result":{{"content":[{{"id":{proxy_id}}}]}},"jsonrpc":"2.0","id":{proxy_id}}}"#
        );
        read.route(text.clone(), None);
        let at = text.rfind(&proxy_id.to_string()).unwrap();
        let before = reads();
        routed.route_answer(crate::session::Answer {
            text: text.clone(),
            to: id_key(&Value::from(proxy_id)),
            id_at: at..at + proxy_id.to_string().len(),
        });
        assert_eq!(reads() - before, Default::default());
        let expected = by_reading.try_recv().unwrap();
        assert!(
            expected.ends_with(&format!(r#""id":{host_id}}}"#)),
            "{expected}"
        );
        assert_eq!(by_routing.try_recv().unwrap(), expected);
        // Answered: a second answer reaches no one.
        routed.route_answer(crate::session::Answer {
            text,
            to: id_key(&Value::from(proxy_id)),
            id_at: at..at + 1,
        });
        assert!(by_routing.try_recv().is_err());
    }
}

/// A request opened in the test: whose, and what it reads.
struct Opened {
    host: u8,
    id: u8,
    token: Option<u8>,
    proxy_id: u64,
    stream: Option<mpsc::UnboundedReceiver<String>>,
    answered: bool,
    /// Let go of before its answer came.
    cancelled: bool,
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(2000))]

    /// In the shared session, whatever hosts open and close and the
    /// server sends, a host receives only the answer to its own
    /// request (its id put back), that request's progress (its token
    /// put back) and what came on that request's answer; a request a
    /// host let go of is cancelled at the server once, by the proxy's
    /// id, and nothing of it reaches anyone afterwards.
    #[test]
    fn a_host_receives_only_what_belongs_to_its_own_requests(
        steps in proptest::collection::vec(step(), 1..60)
    ) {
        let (to_relay, mut relay) = mpsc::channel(1024);
        let session = HostSession::new(to_relay, true, None, Carried::default());
        let mut opened: Vec<Opened> = Vec::new();
        for step in steps {
            match step {
                Step::Open { host, id, token, events } => {
                    let raw = token.map(|t| {
                        RawValue::from_string(format!("\"h{host}-t{t}\"")).unwrap()
                    });
                    let (proxy_id, stream) = session.wait(
                        Value::from(format!("h{host}-{id}")),
                        raw,
                        events,
                    );
                    opened.push(Opened {
                        host, id, token, proxy_id,
                        stream: Some(stream),
                        answered: false,
                        cancelled: false,
                    });
                }
                Step::Close(n) => {
                    if let Some(request) = opened.get_mut(n)
                        && let Some(stream) = request.stream.take()
                    {
                        drop(stream);
                        let cancelled = session.abandon(request.proxy_id);
                        prop_assert_eq!(cancelled, !request.answered);
                        request.cancelled = cancelled;
                    }
                }
                Step::Answer(n) => {
                    let proxy_id = opened.get(n).map_or(999, |r| r.proxy_id);
                    session.route(
                        format!(r#"{{"jsonrpc":"2.0","id":{proxy_id},"result":{{"of":{proxy_id}}}}}"#),
                        None,
                    );
                    if let Some(request) = opened.get_mut(n) {
                        request.answered = true;
                    }
                }
                Step::Progress(n) => {
                    // As the session gives it: where the token is, and whose.
                    let proxy_id = opened.get(n).map_or(999, |r| r.proxy_id);
                    let text = format!(r#"{{"jsonrpc":"2.0","method":"notifications/progress","params":{{"progressToken":{proxy_id},"progress":1,"of":{proxy_id}}}}}"#);
                    let start = text.find("\"progressToken\":").unwrap() + 16;
                    let id_at = start..start + proxy_id.to_string().len();
                    session.route_progress(crate::session::Answer {
                        text,
                        to: id_key(&Value::from(proxy_id)),
                        id_at,
                    });
                }
                Step::Related(n) => {
                    let proxy_id = opened.get(n).map_or(999, |r| r.proxy_id);
                    session.route(
                        format!(r#"{{"jsonrpc":"2.0","method":"notifications/message","params":{{"of":{proxy_id}}}}}"#),
                        Some(&proxy_id.to_string()),
                    );
                }
                Step::Subscribed(n) => {
                    let proxy_id = opened.get(n).map_or(999, |r| r.proxy_id);
                    session.route(
                        format!(r#"{{"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{{"_meta":{{"io.modelcontextprotocol/subscriptionId":{proxy_id}}},"of":{proxy_id}}}}}"#),
                        None,
                    );
                }
                Step::Stray => session.route(
                    r#"{"jsonrpc":"2.0","method":"notifications/message","params":{"of":null}}"#.into(),
                    None,
                ),
            }
        }
        // What each request's stream got.
        let mut answers = 0;
        for request in &mut opened {
            let Some(stream) = request.stream.as_mut() else { continue };
            while let Ok(line) = stream.try_recv() {
                let message: Value = mcp_resolve_protocol::json::from_str(&line).unwrap();
                let of = message
                    .pointer("/result/of")
                    .or_else(|| message.pointer("/params/of"))
                    .cloned();
                prop_assert_eq!(of, Some(Value::from(request.proxy_id)), "{}", line);
                if message.get("result").is_some() {
                    answers += 1;
                    prop_assert_eq!(
                        &message["id"],
                        &Value::from(format!("h{}-{}", request.host, request.id))
                    );
                }
                if let Some(id) = message.pointer("/params/_meta/io.modelcontextprotocol~1subscriptionId") {
                    prop_assert_eq!(id, &Value::from(format!("h{}-{}", request.host, request.id)));
                }
                if message["method"] == "notifications/progress" {
                    let token = request.token.map(|t| format!("h{}-t{t}", request.host));
                    prop_assert_eq!(message["params"]["progressToken"].as_str(), token.as_deref());
                }
            }
        }
        prop_assert!(answers <= opened.iter().filter(|r| r.answered).count());
        // Each request let go of before its answer was cancelled once.
        let mut cancelled = Vec::new();
        while let Ok(Input::Line(line)) = relay.try_recv() {
            let message: Value = mcp_resolve_protocol::json::from_str(&line).unwrap();
            prop_assert_eq!(&message["method"], "notifications/cancelled");
            cancelled.push(message["params"]["requestId"].as_u64().unwrap());
        }
        cancelled.sort_unstable();
        let expected: Vec<u64> = opened
            .iter()
            .filter(|r| r.cancelled)
            .map(|r| r.proxy_id)
            .collect();
        prop_assert_eq!(cancelled, expected);
    }
}

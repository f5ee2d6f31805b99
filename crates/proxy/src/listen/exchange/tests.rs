use super::*;
use crate::session::reads_params;
use mcp_resolve_protocol::{Raw, Screen};
use proptest::prelude::*;

/// A read of `line` as the exchange reads one (the dialect's resolve
/// method is `tools/resolve`).
fn read(line: &str) -> (Envelope<'_>, Option<ParamsRead<'_>>) {
    Screen::default()
        .per_message()
        .read_parsing_with(
            line,
            |m| reads_params(m, "tools/resolve"),
            |_, raw| ParamsRead::of(raw),
        )
        .unwrap()
}

/// What a read of `line` gives the session.
fn fresh(line: &str) -> HostMessage {
    let (message, params) = read(line);
    HostMessage::read(line, &message, params)
}

proptest! {
    /// A request handed to its session under the proxy's id is what a
    /// read of the line that goes on would give: the id, the token in
    /// the parsed params, where the params are.
    #[test]
    fn a_request_under_the_proxys_id_reads_as_its_line(
        id in prop_oneof![
            Just(r#""h1""#.to_string()),
            Just(r#""h\u0031-long-id""#.to_string()),
            Just("12345678901".to_string()),
            Just("0".to_string()),
        ],
        method in prop_oneof![
            Just("tools/call"), Just("tools/list"), Just("resources/read"), Just("tools/resolve"),
        ],
        token in prop::option::of(prop_oneof![
            Just(r#""tok""#.to_string()),
            Just("7".to_string()),
            Just(r#""a\"b-much-longer-than-the-id""#.to_string()),
        ]),
        meta_first in any::<bool>(),
        traceparent in prop_oneof![
            Just(""),
            Just(r#","traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01""#),
        ],
        params_first in any::<bool>(),
        space in prop_oneof![Just(""), Just(" "), Just("\n  ")],
        opened in 0u64..100_000_000_000,
    ) {
        let meta = match &token {
            Some(t) => format!(r#""_meta":{space}{{"x":[1,{{"y":"z"}}],"progressToken":{space}{t}{traceparent}}}"#),
            None => format!(r#""_meta":{{"x":1{traceparent}}}"#),
        };
        let rest = r#""name":"t","arguments":{"path":"/tmp/a b","n":[1,2]}"#;
        let params = if meta_first { format!("{{{meta},{rest}}}") } else { format!("{{{rest},{space}{meta}}}") };
        let (head, tail) = (
            format!(r#""jsonrpc":"2.0",{space}"id":{space}{id}"#),
            format!(r#""method":"{method}",{space}"params":{params}"#),
        );
        let text = if params_first { format!("{{{tail},{head}}}") } else { format!("{{{head},{tail}}}") };
        let (message, params) = read(&text);
        let token = written_token(&message, params.as_ref());
        prop_assert_eq!(token.is_some(), token_written(&text));
        let handed = under_proxy_id(&text, &message, params, token, opened);
        let expected = fresh(&handed.text);
        prop_assert_eq!(&handed, &expected);
        prop_assert_eq!(handed.id, Some(Value::from(opened)));
    }
}

/// What the exchange reads of a request before it hands it to its
/// session — the headers' check, the 2026-07-28 test, the step-up by
/// scope, the progress token, the splice of the proxy's id — is the
/// one read of the session's screen: the envelope's walk, the params
/// parsed once, the id's and the token's few bytes as values.
#[test]
fn the_exchange_reads_a_request_once() {
    use mcp_resolve_protocol::json::reads;
    let project = mcp_resolve::load_str(
        "file-server.yaml",
        include_str!("../../../../../rules/file-server.yaml"),
    );
    let server = project.servers.into_iter().next().unwrap();
    let rules =
        crate::relay::ProxyRules::new(server, mcp_resolve_runtime::Dialect::Extension).unwrap();
    let modern =
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","progressToken":"p-1"}"#;
    let texts = [
        r#"{"method":"tools/list","jsonrpc":"2.0","id":1}"#.to_string(),
        r#"{"method":"tools/list","params":{},"jsonrpc":"2.0","id":1}"#.to_string(),
        r#"{"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"a","action":"delete"}},"jsonrpc":"2.0","id":"h-2"}"#.to_string(),
        format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{{"name":"manage_files","arguments":{{"path":"a","action":"read"}},{modern}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":4,"method":"tools/list","params":{{{modern}}}}}"#),
        r#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"manage_files","arguments":{"path":"a","action":"read"},"_meta":{"progressToken":5,"traceparent":"00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}}}"#.to_string(),
    ];
    let mut headers = HeaderMap::new();
    headers.insert(
        "mcp-protocol-version",
        HeaderValue::from_static("2026-07-28"),
    );
    let granted = std::collections::BTreeSet::from(["files:read".to_string()]);
    for text in &texts {
        let before = reads();
        let mut screen = rules.screen().per_message();
        let (message, read) = crate::session::read_host(&mut screen, &rules, text).unwrap();
        let params = read.as_ref().map(|read| &read.tree);
        let _ = super::super::headers::check(
            &super::super::headers::Sent::of(&headers),
            &message,
            params,
        );
        let _ = stateless(&message, params);
        let _ = mcp_resolve_proxy_core::judge::step_up(
            &rules,
            &granted,
            message.method.as_deref().unwrap(),
            params,
        );
        let token = written_token(&message, read.as_ref());
        let handed = under_proxy_id(text, &message, read, token, 7);
        let read = reads() - before;
        let raw = |part: Option<&str>| part.map_or(0, str::len);
        // A `traceparent` in `_meta`: its few bytes read as a value, and
        // where it is handed on, for the proxy's to take its place.
        let traceparent = match &handed.meta_at {
            mcp_resolve_protocol::MetaAt::At {
                traceparent: Some(at),
                ..
            } => {
                assert_eq!(
                    &handed.text[at.clone()],
                    format!("\"{}\"", &text[text.find("00-").unwrap()..][..55])
                );
                at.len()
            }
            mcp_resolve_protocol::MetaAt::At { .. } => 0,
            other => {
                assert!(!text.contains("_meta"), "{text}: {other:?}");
                0
            }
        };
        let once = text.len()
            + raw(message.id_raw.map(Raw::get))
            + raw(message.params.map(Raw::get))
            + raw(token.map(RawValue::get))
            + traceparent;
        assert!(
            read.bytes <= once as u64,
            "{text}: {read:?}, once is {once} bytes"
        );
        assert_eq!(handed.id, Some(Value::from(7)));
    }
}

/// Whether a line names a progress token (in these tests' lines).
fn token_written(text: &str) -> bool {
    text.contains("progressToken")
}

#[test]
fn a_cancellation_names_the_request_in_flight_by_the_proxys_id() {
    let (to_relay, _from_host) = mpsc::channel(1);
    let session = HostSession::new(to_relay, false, None, crate::link::Carried::default());
    if let Ok(mut routes) = session.routes.lock() {
        routes
            .by_host_id
            .insert(id_key(&Value::from("h1")), Value::from(7));
    }
    let text = r#"{"jsonrpc":"2.0", "method":"notifications/cancelled","params":{"requestId":"h1","reason":"x"}, "x-kept": 1}"#;
    let message = Envelope::of(text).unwrap();
    let read = cancellation(&session, text, &message, message.params()).unwrap();
    let line = r#"{"jsonrpc":"2.0", "method":"notifications/cancelled","params":{"requestId":7,"reason":"x"}, "x-kept": 1}"#;
    assert_eq!(read.text, line);
    // What the session is handed is what a read of the line gives.
    assert_eq!(read, fresh(line));
    // A request not in flight: nothing to pass on.
    let other = text.replace("h1", "h2");
    let message = Envelope::of(&other).unwrap();
    assert_eq!(
        cancellation(&session, &other, &message, message.params()),
        None
    );
}

use super::*;

const TP: &str = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01";

#[test]
fn the_traceparent_is_spliced_in_and_the_rest_kept_as_written() {
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t"}}"#,
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{{"traceparent":"{TP}"}},"name":"t"}}}}"#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{}}"#,
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"_meta":{{"traceparent":"{TP}"}}}}}}"#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"progressToken":7}, "a" : 1}}"#,
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"_meta":{{"traceparent":"{TP}","progressToken":7}}, "a" : 1}}}}"#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{"_meta":{"traceparent":"00-1-2-01"}}}"#,
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{{"_meta":{{"traceparent":"{TP}"}}}}}}"#
            ),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"_meta":{{"traceparent":"{TP}"}}}}}}"#
            ),
        ),
    ];
    for (text, expected) in cases {
        let out = inject(text, TP).unwrap();
        assert_eq!(out, expected);
        mcp_resolve_protocol::json::from_str::<Value>(&out).unwrap();
    }
    // Params that are not an object: left alone.
    assert!(inject(r#"{"jsonrpc":"2.0","id":1,"method":"x","params":[1]}"#, TP).is_none());
    // The host's context is read from params.
    let parent = host_parent(&format!(r#"{{"_meta":{{"traceparent":"{TP}"}}}}"#)).unwrap();
    assert_eq!(parent.span_id, 0xb7ad6b7169203331);
    assert!(host_parent(r#"{"_meta":{"traceparent":"garbage"}}"#).is_none());
    assert!(host_parent(r#"{"_meta":{"traceparent":7}}"#).is_none());
}

/// The slot found when the request was screened places the
/// `traceparent` exactly where reading the request again would.
#[test]
fn the_slot_places_the_traceparent_as_reading_again_would() {
    let texts = [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"t","arguments":{"a":[1,{"b":"}"}]}}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"x","params":{ }}"#,
        r#"{"params": { "name" : "t" } ,"jsonrpc":"2.0","id":"a","method":"x"}"#,
    ];
    for text in texts {
        let envelope = Envelope::of(text).unwrap();
        let params = envelope.params.unwrap().get();
        let slot = Slot::of(text, params, &MetaAt::Unknown).unwrap();
        let filled = slot.fill(text, TP).unwrap();
        assert_eq!(filled, inject(text, TP).unwrap(), "{text}");
        mcp_resolve_protocol::json::from_str::<Value>(&filled).unwrap();
        // Another text (the request rewritten) is not filled.
        let longer = text.replacen("\"id\"", " \"id\"", 1);
        assert!(slot.fill(&longer, TP).is_none(), "{text}");
    }
    // Params that name `_meta`, or could through an escape: none.
    for params in [
        r#"{"_meta":{}}"#,
        r#"{"\u005fmeta":{}}"#,
        r#"{"a":"_meta"}"#,
    ] {
        let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"x","params":{params}}}"#);
        let at = text.find(params).unwrap();
        let slot = Slot::of(&text, &text[at..at + params.len()], &MetaAt::Unknown).unwrap();
        assert!(matches!(slot.place, Place::Meta { .. }));
        assert_eq!(slot.fill(&text, TP), inject(&text, TP), "{text}");
    }
    // A string that is not a slice of the text: none.
    assert!(Slot::of(texts[1], &String::from("{}"), &MetaAt::Unknown).is_none());
    // A request without params: they go before its closing `}`.
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        "{\"method\":\"tools/list\",\"id\":\"}\",\"jsonrpc\":\"2.0\" } \n",
    ] {
        let slot = Slot::bare(text).unwrap();
        let filled = slot.fill(text, TP).unwrap();
        assert_eq!(filled, inject(text, TP).unwrap(), "{text}");
        mcp_resolve_protocol::json::from_str::<Value>(&filled).unwrap();
        let longer = text.replacen("\"id\"", " \"id\"", 1);
        assert!(slot.fill(&longer, TP).is_none(), "{text}");
    }
}

proptest::proptest! {
    /// Where one read of the params found `_meta`, the slot places the
    /// `traceparent` exactly where reading them again would, and where
    /// it did not, it reads them again.
    #[test]
    fn the_meta_found_in_the_read_places_the_traceparent_as_reading_again_would(
        meta in proptest::prop_oneof![
            proptest::strategy::Just("{}".to_string()),
            proptest::strategy::Just("{ }".to_string()),
            proptest::strategy::Just(r#"{"progressToken":7}"#.to_string()),
            proptest::strategy::Just(r#"{"traceparent":"00-1-2-01"}"#.to_string()),
            proptest::strategy::Just(r#"{"traceparent":7,"x":{"traceparent":1}}"#.to_string()),
            proptest::strategy::Just(r#"{"a":[{"}":"{"}],"traceparent" : "x" , "b":1}"#.to_string()),
            proptest::strategy::Just(r#"{"traceparent":"a","traceparent":"b"}"#.to_string()),
            proptest::strategy::Just("[1]".to_string()),
        ],
        space in proptest::prop_oneof![
            proptest::strategy::Just(""),
            proptest::strategy::Just(" "),
            proptest::strategy::Just("\n\t"),
        ],
        meta_first in proptest::prelude::any::<bool>(),
        escaped in proptest::prelude::any::<bool>(),
        twice in proptest::prelude::any::<bool>(),
    ) {
        let name = if escaped { r#""_m\u0065ta""# } else { r#""_meta""# };
        let mut members = vec![format!("{name}{space}:{space}{meta}"), r#""name":"t""#.to_string()];
        if !meta_first {
            members.reverse();
        }
        if twice {
            members.push(format!(r#""_meta":{meta}"#));
        }
        let params = format!("{{{space}{}}}", members.join(","));
        let text = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{params}}}"#);
        let at = text.find(&params).unwrap();
        let read = mcp_resolve_protocol::ParamsRead::of(&params).unwrap();
        let meta_at = read.meta_at.clone().mapped(|offset| at + offset);
        let slot = Slot::of(&text, &text[at..at + params.len()], &meta_at).unwrap();
        let placed = matches!(slot.place, Place::MetaAt { .. });
        proptest::prop_assert_eq!(
            placed,
            !escaped && !twice && meta.starts_with('{') && !meta.contains(r#""traceparent":"a""#),
            "{:?} {}", read.meta_at, text
        );
        proptest::prop_assert_eq!(slot.fill(&text, TP), inject(&text, TP), "{}", text);
    }
}

#[test]
fn an_answers_error_type_with_and_without_its_envelope() {
    let cases = [
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32602,"message":"m"}}"#,
            Some("-32602"),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}"#,
            Some("_OTHER"),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":true}}"#,
            Some("tool_error"),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"is\u0045rror":true}}"#,
            Some("tool_error"),
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[],"isError":false}}"#,
            None,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"isError"}]}}"#,
            None,
        ),
        (r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#, None),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"isError":false,"content":[{"text":"true"}]}}"#,
            None,
        ),
        (
            r#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"text":"isError"}],"isError" : true}}"#,
            Some("tool_error"),
        ),
    ];
    for (answer, expected) in cases {
        assert_eq!(error_type_of(answer, None).as_deref(), expected, "{answer}");
        let envelope = Envelope::of(answer).unwrap();
        let result = envelope
            .result_raw
            .filter(|_| !envelope.error)
            .map(|r| r.get());
        assert_eq!(
            error_type_of(answer, result).as_deref(),
            expected,
            "{answer}"
        );
    }
}

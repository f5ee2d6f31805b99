//! The scanner's envelope against serde_json's: on every message the
//! scanner reads, the same envelope, with the same texts at the same places
//! in the message; and the messages hosts write are read by it.

use proptest::prelude::*;

use super::Envelope;
use crate::scan::tests::{broken, json};

/// Everything read of a message, with where each text lies in it.
fn shape(text: &str, envelope: &Envelope<'_>) -> String {
    let at = |part: &str| {
        let start = part.as_ptr() as usize - text.as_ptr() as usize;
        format!("{start}+{}", part.len())
    };
    format!(
        "id {:?} {:?} jsonrpc {} method {:?} {} params {:?} result {} {:?} error {} skipped {}",
        envelope.id,
        envelope.id_raw.map(|raw| at(raw.get())),
        envelope.jsonrpc,
        envelope.method,
        envelope.has_method,
        envelope.params.map(|raw| at(raw.get())),
        envelope.result,
        envelope.result_raw.map(|raw| at(raw.get())),
        envelope.error,
        envelope.skipped,
    )
}

/// What each way makes of `text` (`None`: not read so).
fn both(text: &str) -> (Option<String>, Option<String>) {
    let serde = Envelope::by_serde(text).map(|envelope| shape(text, &envelope));
    let scanned = Envelope::scan(text).map(|envelope| shape(text, &envelope));
    (serde, scanned)
}

#[test]
fn reads_the_messages_hosts_write() {
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        r#"{"method":"tools/call","params":{"name":"a","arguments":{"x":[1,2.5e3,"é\n"]}},"jsonrpc":"2.0","id":"ask-7"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}"#,
        " { \"jsonrpc\" : \"2.0\" ,\n\"id\" : -42 , \"method\":\"ping\" } \n",
        r#"{"jsonrpc":"2.0","id":18446744073709551615,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":-9223372036854775808,"method":"m"}"#,
        // Wrong, but read: the screen answers them.
        r#"{"jsonrpc":"1.0","id":1,"method":"m","params":[1]}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"","params":"x"}"#,
        "{}",
    ] {
        let (serde, scanned) = both(text);
        assert!(scanned.is_some(), "{text}");
        assert_eq!(scanned, serde, "{text}");
        assert!(!Envelope::scan(text).unwrap().skipped, "{text}");
    }
}

#[test]
fn reads_the_answers_servers_write() {
    for text in [
        r#"{"result":{"content":[{"type":"text","text":"x"}]},"jsonrpc":"2.0","id":2}"#,
        r#"{"jsonrpc":"2.0","id":"a","result":null}"#,
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":-32601,"message":"Method not found"}}"#,
        // An error's id is null, or absent, when the request's could not
        // be read.
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#,
        r#"{"jsonrpc":"2.0","error":{"code":-32700,"message":"Parse error"}}"#,
    ] {
        let (serde, scanned) = both(text);
        assert!(scanned.is_some(), "{text}");
        assert_eq!(scanned, serde, "{text}");
        assert!(Envelope::of(text).unwrap().is_response(), "{text}");
    }
}

#[test]
fn leaves_the_rest_to_serde_json() {
    for text in [
        // Members of no meaning here, a member written twice.
        r#"{"jsonrpc":"2.0","id":1,"method":"m","extra":true}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{},"result":{}}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"a","method":"b"}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":2,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{},"params":{}}"#,
        // Ids serde_json reads otherwise, or that are not ids.
        r#"{"jsonrpc":"2.0","id":-0,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":18446744073709551616,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":-9223372036854775809,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1.0,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1e2,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":"\u0061","method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":[1],"method":"m"}"#,
        // Escapes, and members of the wrong type.
        r#"{"jsonrpc":"2.0","id":1,"method":"tools\/list"}"#,
        r#"{"jsonrpc":"2\u002e0","id":1,"method":"m"}"#,
        r#"{"json\u0072pc":"2.0","id":1,"method":"m"}"#,
        r#"{"jsonrpc":2,"id":1,"method":"m"}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":7}"#,
        // Not one object.
        r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m"} {}"#,
        r#"{"jsonrpc":"2.0","id":1,"method":"m""#,
        r#"{"jsonrpc":"2.0","id":01,"method":"m"}"#,
        "",
    ] {
        assert_eq!(Envelope::scan(text).map(|_| ()), None, "{text}");
    }
}

/// A member of a message, as hosts and hostile peers write them.
fn member() -> impl Strategy<Value = String> {
    let id = prop_oneof![
        "-?(0|[1-9][0-9]{0,20})".prop_map(|n| n.to_string()),
        prop::sample::select(vec![
            "\"ask-1\"",
            "\"\"",
            "\"\\u0061\"",
            "null",
            "1.5",
            "1e3",
            "-0",
            "true",
            "[1]",
            "{}",
            "\"é\"",
        ])
        .prop_map(str::to_string),
    ];
    let text = prop::sample::select(vec![
        "\"2.0\"",
        "\"1.0\"",
        "\"tools/call\"",
        "\"tools\\/list\"",
        "\"\"",
        "2",
        "null",
        "{}",
    ])
    .prop_map(str::to_string);
    let key = prop::sample::select(vec![
        "\"jsonrpc\"",
        "\"id\"",
        "\"method\"",
        "\"params\"",
        "\"result\"",
        "\"error\"",
        "\"other\"",
        "\"m\\u0065thod\"",
    ]);
    prop_oneof![
        id.prop_map(|id| format!("\"id\":{id}")),
        text.clone().prop_map(|t| format!("\"jsonrpc\":{t}")),
        text.prop_map(|t| format!("\"method\":{t}")),
        json().prop_map(|params| format!("\"params\":{params}")),
        (key, json()).prop_map(|(key, value)| format!("{key} : {value}")),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 4000, ..ProptestConfig::default() })]

    /// Whatever the scanner reads, serde_json reads the same way.
    #[test]
    fn reads_what_serde_json_reads_the_same_way(
        members in prop::collection::vec(member(), 0..6),
        space in prop::sample::select(vec!["", " ", "\n", "\t "]),
    ) {
        let text = format!("{space}{{{}}}{space}", members.join(&format!(",{space}")));
        let (serde, scanned) = both(&text);
        if let Some(scanned) = scanned {
            prop_assert_eq!(Some(scanned), serde, "{}", text);
        }
    }

    /// A request with any params, its members in any order: read by the
    /// scanner, as serde_json reads it.
    #[test]
    fn reads_any_request(
        params in json(),
        id in "-?[1-9][0-9]{0,17}|\"[a-z0-9-]{0,12}\"",
        order in Just([0usize, 1, 2, 3]).prop_shuffle(),
    ) {
        let members = [
            "\"jsonrpc\":\"2.0\"".to_string(),
            format!("\"id\":{id}"),
            "\"method\":\"tools/call\"".to_string(),
            format!("\"params\":{params}"),
        ];
        let text = format!("{{{}}}", order.map(|i| members[i].as_str()).join(","));
        let (serde, scanned) = both(&text);
        prop_assert!(scanned.is_some(), "{}", text);
        prop_assert_eq!(scanned, serde, "{}", text);
    }

    /// The same text with a byte changed, taken out or put in: whatever
    /// the scanner reads, serde_json reads the same way.
    #[test]
    fn reads_no_broken_message_otherwise(
        members in prop::collection::vec(member(), 1..5),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(b"\"\\{}[],:01-.eE+ntfu \x01a/".to_vec()),
        edit in 0..3u8,
    ) {
        if let Some(text) = broken(format!("{{{}}}", members.join(",")), at, byte, edit)
            && let (serde, Some(scanned)) = both(&text)
        {
            prop_assert_eq!(Some(scanned), serde, "{}", text);
        }
    }
}

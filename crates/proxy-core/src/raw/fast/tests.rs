//! The scanner's listing against serde_json's: on every answer the scanner
//! reads, the same envelope, the same texts and the same members, at the
//! same places in the answer.

use mcp_resolve_protocol::Envelope;
use proptest::prelude::*;

use super::super::{Listing, ListingSeed};
use super::listing;

/// Everything read of an answer, with where each text lies in it.
fn shape(text: &str, envelope: &Envelope<'_>, listing: &Listing<'_>) -> String {
    let at = |part: &str| {
        let start = part.as_ptr() as usize - text.as_ptr() as usize;
        format!("{start}+{}", part.len())
    };
    let tools: Vec<String> = listing
        .tools
        .iter()
        .map(|(tool, read)| {
            let read = read.as_ref().map(|read| {
                let members = |m: &super::Members<'_>| -> Vec<(String, String)> {
                    m.0.iter().map(|(k, v)| (k.to_string(), at(v))).collect()
                };
                (
                    members(&read.members),
                    read.annotations.as_ref().map(members),
                )
            });
            format!("{} {read:?}", at(tool))
        })
        .collect();
    format!(
        "id {:?} {:?} jsonrpc {} method {:?} {} params {:?} result {} {:?} error {} skipped {} | {} | {tools:?}",
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
        at(listing.text),
    )
}

/// The shapes serde_json's way and the scanner's give (`None`: not read so).
fn both(text: &str) -> (Option<String>, Option<String>) {
    let serde = Envelope::of_reading(text, ListingSeed(text))
        .and_then(|(envelope, listing)| Some(shape(text, &envelope, &listing?)));
    let fast = listing(text).map(|(envelope, listing)| shape(text, &envelope, &listing));
    (serde, fast)
}

#[test]
fn reads_real_listings_as_serde_json_does() {
    for (fixture, pretty) in [
        (
            "server-filesystem-2026.8.31.json",
            include_str!("../../../../../tests/fixtures/real/server-filesystem-2026.8.31.json"),
        ),
        (
            "server-filesystem-2026.1.14.json",
            include_str!("../../../../../tests/fixtures/real/server-filesystem-2026.1.14.json"),
        ),
    ] {
        let result: serde_json::Value = mcp_resolve_protocol::json::from_str(pretty).unwrap();
        for result in [result.to_string(), pretty.trim().to_string()] {
            for id in ["1", "\"k-1\"", "18446744073709551615", "-1", "null"] {
                let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{result}}}"#);
                let (serde, fast) = both(&text);
                assert!(fast.is_some(), "{fixture} {id}");
                assert_eq!(fast, serde, "{fixture} {id}");
            }
        }
    }
}

#[test]
fn reads_an_answer_with_other_members_as_serde_json_does() {
    for text in [
        r#"{"jsonrpc":"2.0","id":1,"method":"x","result":{"tools":[{"name":"a"}]}}"#,
        r#"{"error":{"code":1},"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}}"#,
        r#"{"result":{"tools":[{"name":"a"}]},"params":{}}"#,
    ] {
        let (serde, fast) = both(text);
        assert!(fast.is_some(), "{text}");
        assert_eq!(fast, serde, "{text}");
    }
}

#[test]
fn leaves_to_serde_json_what_it_does_not_read() {
    for text in [
        // Not read here, whatever serde_json makes of them.
        r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"no"}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"content":[]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{}]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","annotations":{}}]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","annotations":[]}]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a","name":"b"}]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"n\u0061me":"a"}]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"tools":[{"name":"b"}]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{"tools":[{"name":"a"}]}}"#,
        r#"{"jsonrpc":"2.0","id":-0,"result":{"tools":[{"name":"a"}]}}"#,
        r#"{"jsonrpc":"2.0","id":1.5,"result":{"tools":[{"name":"a"}]}}"#,
        r#"{"jsonrpc":"2.0","id":"\u006b","result":{"tools":[{"name":"a"}]}}"#,
        r#"{"jsonrpc":"2.0","id":18446744073709551616,"result":{"tools":[{"name":"a"}]}}"#,
        r#"{"jsonrpc":2,"id":1,"result":{"tools":[{"name":"a"}]}}"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}]}} x"#,
        r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"},2]}}"#,
        r#"{"jsonrpc":"2.0","id":1}"#,
    ] {
        let (serde, fast) = both(text);
        assert_eq!(fast, None, "{text} (serde_json: {serde:?})");
    }
}

/// JSON values to put in a tool's members.
fn value() -> impl Strategy<Value = String> {
    let leaf = prop_oneof![
        "\"([a-z {}\\[\\]:,]|\\\\n|\\\\\"|\\\\u00e9){0,8}\"",
        "-?(0|[1-9][0-9]{0,22})(\\.[0-9]{1,3})?([eE][+-]?[0-9]{1,3})?",
        prop::sample::select(vec!["null", "true", "false"]).prop_map(str::to_string),
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(|v| format!("[{}]", v.join(" ,"))),
            prop::collection::vec(("[a-z]{1,3}", inner), 0..4).prop_map(|m| {
                let m: Vec<String> = m
                    .into_iter()
                    .map(|(k, v)| format!("\"{k}\": {v}"))
                    .collect();
                format!("{{{}}}", m.join(","))
            }),
        ]
    })
}

/// An object written from `members`, with `space` around its tokens.
fn object(members: &[(String, String)], space: &str) -> String {
    let members: Vec<String> = members
        .iter()
        .map(|(k, v)| format!("{space}\"{k}\"{space}:{space}{v}{space}"))
        .collect();
    format!("{{{}}}", members.join(","))
}

/// Members with keys from `keys`, each at most once; now and then one
/// more, written twice, with an escape or of no meaning.
fn members(keys: &'static [&'static str]) -> impl Strategy<Value = Vec<(String, String)>> {
    let odd = prop_oneof![
        Just(keys[0].to_string()),
        Just("n\\u0061me".to_string()),
        "[a-z]{1,4}",
    ];
    (
        prop::sample::subsequence(keys, 0..=keys.len()).prop_shuffle(),
        prop::collection::vec(value(), keys.len() + 1),
        prop::option::weighted(0.1, odd),
    )
        .prop_map(|(keys, values, odd)| {
            keys.into_iter()
                .map(str::to_string)
                .chain(odd)
                .zip(values)
                .collect()
        })
}

/// `tools/list` answers, and answers that come near one.
fn answer() -> impl Strategy<Value = String> {
    let space = prop::sample::select(vec!["", "", " ", "\n ", "\t"]);
    let annotations = members(&["readOnlyHint", "destructiveHint", "title"]);
    let tool = (
        members(&["name", "description", "inputSchema"]),
        prop::option::of(annotations),
        space.clone(),
    )
        .prop_map(|(mut members, annotations, space)| {
            if let Some(annotations) = annotations {
                members.push(("annotations".into(), object(&annotations, space)));
            }
            object(&members, space)
        });
    let tool = prop_oneof![12 => tool, 1 => value()];
    let result = (
        prop::collection::vec(tool, 0..4),
        members(&["nextCursor", "_meta", "tools"]),
        space.clone(),
    )
        .prop_map(|(tools, mut others, space)| {
            let at = others.len() / 2;
            others.insert(
                at,
                (
                    "tools".into(),
                    format!("[{space}{}{space}]", tools.join(",")),
                ),
            );
            object(&others, space)
        });
    let id = prop_oneof![
        6 => prop::sample::select(vec!["1", "0", "42", "\"a\"", "18446744073709551615"]),
        1 => prop::sample::select(vec!["\"\\u0061\"", "-1", "1.0", "null", "18446744073709551616"]),
    ];
    let jsonrpc = prop_oneof![
        6 => Just("\"2.0\""),
        1 => prop::sample::select(vec!["\"1.0\"", "\"2\\u002e0\"", "2"]),
    ];
    let extra = prop::option::weighted(0.1, ("[a-z]{1,6}", value()));
    (
        result,
        id,
        jsonrpc,
        space,
        extra,
        any::<prop::sample::Index>(),
    )
        .prop_map(|(result, id, jsonrpc, space, extra, order)| {
            let mut members = vec![
                ("jsonrpc".to_string(), jsonrpc.to_string()),
                ("id".to_string(), id.to_string()),
                ("result".to_string(), result),
            ];
            members.rotate_left(order.index(3));
            members.extend(extra);
            object(&members, space)
        })
}

/// Whatever the scanner reads, serde_json reads the same way; and it
/// reads most of the answers that are listings.
#[test]
fn reads_listings_as_serde_json_does() {
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config {
        cases: 2000,
        ..Config::default()
    });
    let (read, same) = (std::cell::Cell::new(0), std::cell::Cell::new(0));
    let strategy = (answer(), any::<prop::sample::Index>(), 0..4u8);
    runner
        .run(&strategy, |(text, cut, edit)| {
            // Now and then a byte taken out: broken JSON, near a listing.
            let text = if edit == 0 {
                let mut bytes = text.into_bytes();
                bytes.remove(cut.index(bytes.len()));
                String::from_utf8(bytes).unwrap_or_default()
            } else {
                text
            };
            let (serde, fast) = both(&text);
            if serde.is_some() {
                read.set(read.get() + 1);
            }
            if fast.is_some() {
                same.set(same.get() + 1);
                prop_assert_eq!(fast, serde, "{}", text);
            }
            Ok(())
        })
        .unwrap();
    // (Not a bound on speed: that the property above is not empty.)
    eprintln!(
        "serde_json read {} listings, the scanner {}",
        read.get(),
        same.get()
    );
    assert!(
        same.get() * 4 > read.get(),
        "{} of {}",
        same.get(),
        read.get()
    );
}

//! The scanner against serde_json: where it reads a text, serde_json reads
//! it the same way; where serde_json reads valid JSON the scanner is meant
//! for, the scanner reads it too.

use proptest::prelude::*;
use serde_json::value::RawValue;

use super::Scanner;

/// What serde_json's walk makes of `text`: the value's text, when `text`
/// is one value.
#[allow(clippy::disallowed_methods)]
fn serde_reads(text: &str) -> Option<&str> {
    serde_json::from_str::<&RawValue>(text)
        .ok()
        .map(RawValue::get)
}

/// What the scanner makes of it.
fn scanner_reads(text: &str) -> Option<&str> {
    let mut scanner = Scanner::new(text);
    let value = scanner.value()?;
    scanner.end()?;
    Some(value)
}

#[test]
fn reads_what_json_writes() {
    for text in [
        "0",
        "-0",
        "12",
        "-12.5e+3",
        "1E-7",
        "0.0",
        "1e5",
        "true",
        "false",
        "null",
        r#""""#,
        r#""a\"b\\c\/d\b\f\n\r\t\u00e9\uD83D\uDE00 é""#,
        // A lone surrogate: passed over, as serde_json's walk does.
        r#""\ud800""#,
        "\"\u{7f}\"",
        " [ 1 , [ ] , { } , { \"a\" : [ null ] } ]\n",
        "{\"\":0,\"\":1}",
        r#"{"description":"Read the complete contents of a file as text.","type":"object"}"#,
    ] {
        assert_eq!(scanner_reads(text), serde_reads(text), "{text}");
        assert!(scanner_reads(text).is_some(), "{text}");
    }
}

#[test]
fn refuses_what_json_does_not_write() {
    for text in [
        "",
        " ",
        "01",
        "-",
        "-a",
        "1.",
        "1.e3",
        ".5",
        "1e",
        "1e+",
        "+1",
        "nul",
        "nulll",
        "True",
        "\"",
        "\"\\\"",
        "\"\\x\"",
        "\"\\u12\"",
        "\"\\u12g4\"",
        "\"a\u{1}b\"",
        "\"tab\there\"",
        "[1,]",
        "[,1]",
        "[1 2]",
        "{\"a\"}",
        "{\"a\":}",
        "{\"a\":1,}",
        "{a:1}",
        "{\"a\" 1}",
        "{'a':1}",
        "[",
        "]",
        "{",
        "1 2",
        "[] x",
        "NaN",
        "Infinity",
    ] {
        assert_eq!(serde_reads(text), None, "serde_json reads {text:?}");
        assert_eq!(scanner_reads(text), None, "{text:?}");
    }
}

/// A string's walk tests sixteen bytes at a time, then one at a time: each
/// byte it stops at (and a few it must pass), at every place in strings of
/// every length up to three blocks, and with text or none after the
/// string.
#[test]
fn a_string_stops_where_serde_json_does_wherever_the_byte_is() {
    let bytes: Vec<char> = (0u8..0x20)
        .map(char::from)
        .chain([
            '"',
            '\\',
            ' ',
            '!',
            '#',
            '[',
            ']',
            '\u{7f}',
            'é',
            '\u{1F600}',
        ])
        .collect();
    for len in 0..48 {
        for at in 0..len {
            for &b in &bytes {
                let mut inner: String = "a".repeat(len);
                inner.replace_range(at..=at, &b.to_string());
                for after in ["", " ", ",1]"] {
                    let text = format!("\"{inner}\"{after}");
                    let wrapped = format!("[{text}");
                    for text in [text.as_str(), wrapped.as_str()] {
                        assert_eq!(scanner_reads(text), serde_reads(text), "{text:?}");
                    }
                }
            }
        }
    }
}

#[test]
fn a_key_with_escapes_is_left_to_serde_json() {
    // Valid JSON, but its key is not its text.
    let text = r#"{"a\u0062":1}"#;
    assert!(serde_reads(text).is_some());
    assert!(
        Scanner::new(text)
            .object(|s, _| s.value().map(|_| ()))
            .is_none()
    );
    // As a value walked over, it is read.
    assert_eq!(scanner_reads(text), Some(text));
}

#[test]
fn nesting_past_the_depth_is_left_to_serde_json() {
    let deep = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert_eq!(
        scanner_reads(&deep(super::DEPTH)).map(str::len),
        Some(2 * super::DEPTH)
    );
    assert_eq!(scanner_reads(&deep(super::DEPTH + 1)), None);
    // serde_json's walk has no limit.
    assert!(serde_reads(&deep(10_000)).is_some());
}

#[test]
fn objects_and_arrays_give_their_text_and_members() {
    let text = r#" { "a" : [1, 2] , "b":{"c":"d"} } "#;
    let mut scanner = Scanner::new(text);
    let mut members = Vec::new();
    let object = scanner.object(|s, key| {
        members.push((key, s.value()?));
        Some(())
    });
    assert_eq!(object, Some(r#"{ "a" : [1, 2] , "b":{"c":"d"} }"#));
    assert_eq!(members, [("a", "[1, 2]"), ("b", r#"{"c":"d"}"#)]);
    assert_eq!(scanner.end(), Some(()));
    assert_eq!(scanner.at(), text.len());
}

/// `text` with the byte at `at` changed to `byte` (`edit` 0), taken out
/// (1) or `byte` put in before it (2), when that is still UTF-8.
pub(crate) fn broken(text: String, at: prop::sample::Index, byte: u8, edit: u8) -> Option<String> {
    let mut bytes = text.into_bytes();
    let i = at.index(bytes.len() + 1);
    match edit {
        0 if i < bytes.len() => bytes[i] = byte,
        1 if i < bytes.len() => {
            bytes.remove(i);
        }
        _ => bytes.insert(i, byte),
    }
    String::from_utf8(bytes).ok()
}

/// JSON values, written with whitespace, escapes and numbers of every
/// shape.
pub(crate) fn json() -> impl Strategy<Value = String> {
    let space = prop::sample::select(vec!["", "", " ", "\n", "\t", "\r", "  "]);
    let string = prop::collection::vec(
        prop_oneof![
            4 => "[a-zA-Z0-9 é\u{7f}\u{1F600}]{0,12}",
            1 => prop::sample::select(vec![
                "\\\"", "\\\\", "\\/", "\\b", "\\f", "\\n", "\\r", "\\t", "\\u00e9", "\\uD800",
                "\\uDE00", "\\uABcd",
            ])
            .prop_map(str::to_string),
        ],
        0..4,
    )
    .prop_map(|parts| format!("\"{}\"", parts.concat()));
    let number = "-?(0|[1-9][0-9]{0,25})(\\.[0-9]{1,5})?([eE][+-]?[0-9]{1,4})?";
    let leaf = prop_oneof![
        string.clone(),
        number.prop_map(|n| n.to_string()),
        prop::sample::select(vec!["null", "true", "false"]).prop_map(str::to_string),
    ];
    leaf.prop_recursive(5, 64, 6, move |inner| {
        let space = space.clone();
        prop_oneof![
            (prop::collection::vec((space.clone(), inner.clone(), space.clone()), 0..6)).prop_map(
                |items| {
                    let items: Vec<String> = items
                        .into_iter()
                        .map(|(a, v, b)| format!("{a}{v}{b}"))
                        .collect();
                    format!("[{}]", items.join(","))
                }
            ),
            (prop::collection::vec((space.clone(), string.clone(), space, inner), 0..6)).prop_map(
                |members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(a, k, b, v)| format!("{a}{k}{b}:{a}{v}{b}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }
            ),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Valid JSON: both read it, to the same text.
    #[test]
    fn reads_valid_json_as_serde_json_does(text in json()) {
        prop_assert!(serde_reads(&text).is_some(), "{}", text);
        prop_assert_eq!(scanner_reads(&text), serde_reads(&text), "{}", text);
    }

    /// The same text with a byte changed, taken out or put in: whatever
    /// the scanner reads, serde_json reads the same way.
    #[test]
    fn reads_no_broken_json(
        text in json(),
        at in any::<prop::sample::Index>(),
        byte in prop::sample::select(b"\"\\{}[],:01-.eE+ntfu \x01\x1fa/".to_vec()),
        edit in 0..3u8,
    ) {
        if let Some(text) = broken(text, at, byte, edit)
            && let Some(read) = scanner_reads(&text)
        {
            prop_assert_eq!(Some(read), serde_reads(&text), "{}", text);
        }
    }
}

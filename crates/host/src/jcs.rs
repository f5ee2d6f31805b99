//! RFC 8785 (JSON Canonicalization Scheme) text of a JSON value, and the
//! pretty text a signature document is written as, in the same member order.
//!
//! One walk over the value writes either form straight into a buffer:
//! members in the order of their names' UTF-16 code units (RFC 8785 §3.2.3),
//! strings escaped as `JSON.stringify` escapes them (§3.2.2.2, serde_json's
//! own escaping), and numbers as ECMAScript writes them (§3.2.2.3). A safe
//! integer (|n| ≤ 2^53, no fraction) is its decimal digits; every other
//! number is formatted by `serde_json_canonicalizer`, so ECMAScript's number
//! rules have one definition here.
//!
//! The differential tests (`tests/it/signature.rs`, the `jcs` fuzz target) hold
//! [`canonical`] to `serde_json_canonicalizer::to_string` byte for byte, and
//! [`pretty`] to serde_json's pretty printer over the canonical text re-read.

use serde_json::{Map, Number, Value};

/// The largest integer every IEEE 754 double holds exactly: up to it, an
/// integer's ECMAScript text is its decimal digits.
const SAFE_INTEGER: u64 = 1 << 53;

/// The RFC 8785 text of `value`.
pub fn canonical(value: &Value) -> String {
    let mut out = Vec::with_capacity(256);
    write_canonical(value, &mut out);
    into_string(out)
}

/// The RFC 8785 text of an object with `members`, whatever order they come
/// in (the members of a document a caller filters without copying it).
pub fn canonical_members<'a>(members: impl IntoIterator<Item = (&'a String, &'a Value)>) -> String {
    let mut out = Vec::with_capacity(256);
    let mut members: Vec<(&String, &Value)> = members.into_iter().collect();
    sort_members(&mut members);
    write_canonical_object(&members, &mut out);
    into_string(out)
}

/// Appends the RFC 8785 text of `value` to `out`.
pub fn write_canonical(value: &Value, out: &mut Vec<u8>) {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::Number(n) => write_canonical_number(n, out),
        Value::String(s) => write_string(s, out),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => write_canonical_object(&sorted(map), out),
    }
}

fn write_canonical_object(members: &[(&String, &Value)], out: &mut Vec<u8>) {
    out.push(b'{');
    for (i, (key, value)) in members.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        write_string(key, out);
        out.push(b':');
        write_canonical(value, out);
    }
    out.push(b'}');
}

/// `value` as serde_json's pretty printer writes the value its
/// [`canonical`] text parses back to: members in RFC 8785 order, two spaces
/// of indent, numbers in their canonical value.
pub fn pretty(value: &Value) -> String {
    let mut out = Vec::with_capacity(512);
    write_pretty(value, 0, &mut out);
    into_string(out)
}

/// Appends [`pretty`] of `value` to `out` as if it stood `depth` levels
/// deep: its first line is not indented, the lines after it carry
/// `2 × depth` more spaces.
pub fn write_pretty(value: &Value, depth: usize, out: &mut Vec<u8>) {
    match value {
        Value::Array(items) if !items.is_empty() => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                out.extend_from_slice(if i > 0 { b",\n" } else { b"\n" });
                indent(depth + 1, out);
                write_pretty(item, depth + 1, out);
            }
            out.push(b'\n');
            indent(depth, out);
            out.push(b']');
        }
        Value::Object(map) if !map.is_empty() => {
            out.push(b'{');
            for (i, (key, value)) in sorted(map).into_iter().enumerate() {
                out.extend_from_slice(if i > 0 { b",\n" } else { b"\n" });
                indent(depth + 1, out);
                write_string(key, out);
                out.extend_from_slice(b": ");
                write_pretty(value, depth + 1, out);
            }
            out.push(b'\n');
            indent(depth, out);
            out.push(b'}');
        }
        Value::Array(_) => out.extend_from_slice(b"[]"),
        Value::Object(_) => out.extend_from_slice(b"{}"),
        Value::Number(n) if safe_integer(n) => out.extend_from_slice(n.to_string().as_bytes()),
        // The number its canonical text reads back as.
        Value::Number(n) => {
            let text = canonical_number(n);
            match serde_json::from_str::<Number>(&text) {
                Ok(read) => out.extend_from_slice(read.to_string().as_bytes()),
                Err(_) => out.extend_from_slice(text.as_bytes()),
            }
        }
        scalar => write_canonical(scalar, out),
    }
}

fn indent(depth: usize, out: &mut Vec<u8>) {
    out.resize(out.len() + 2 * depth, b' ');
}

/// The members of `map` in RFC 8785 order.
fn sorted(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut members: Vec<(&String, &Value)> = map.iter().collect();
    sort_members(&mut members);
    members
}

/// RFC 8785 §3.2.3: by the names' UTF-16 code units. Names are distinct, so
/// the sort's stability does not matter.
fn sort_members(members: &mut [(&String, &Value)]) {
    members.sort_unstable_by(|(a, _), (b, _)| {
        if a.is_ascii() && b.is_ascii() {
            a.as_bytes().cmp(b.as_bytes())
        } else {
            a.encode_utf16().cmp(b.encode_utf16())
        }
    });
}

fn write_string(s: &str, out: &mut Vec<u8>) {
    // serde_json escapes as RFC 8785 asks: `"`, `\`, and the controls below
    // U+0020 (`\b \t \n \f \r` short, the rest as lower-case `\u00xx`);
    // everything else as it is. Writing to a Vec cannot fail.
    let _ = serde_json::to_writer(&mut *out, s);
}

/// Whether `n` is an integer whose ECMAScript text is its digits.
fn safe_integer(n: &Number) -> bool {
    match (n.as_u64(), n.as_i64()) {
        (Some(u), _) => u <= SAFE_INTEGER,
        (None, Some(i)) => i.unsigned_abs() <= SAFE_INTEGER,
        (None, None) => false,
    }
}

fn write_canonical_number(n: &Number, out: &mut Vec<u8>) {
    if safe_integer(n) {
        out.extend_from_slice(n.to_string().as_bytes());
    } else {
        out.extend_from_slice(canonical_number(n).as_bytes());
    }
}

/// ECMAScript's text of `n` (a float, or an integer past 2^53).
fn canonical_number(n: &Number) -> String {
    serde_json_canonicalizer::to_string(n).unwrap_or_else(|_| n.to_string())
}

fn into_string(bytes: Vec<u8>) -> String {
    // Every piece written is UTF-8: the value's own strings and ASCII.
    String::from_utf8(bytes).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use serde_json::json;

    #[test]
    fn members_in_utf16_order_where_it_differs_from_utf8() {
        // U+E000 sorts before U+1F600 in UTF-8 bytes (EE… < F0…), after it
        // in UTF-16 (E000 > D83D).
        let value = json!({"\u{1F600}": 1, "\u{E000}": 2, "a": 3, "": 4});
        let expected = serde_json_canonicalizer::to_string(&value).unwrap();
        assert_eq!(canonical(&value), expected);
        assert_eq!(expected, "{\"\":4,\"a\":3,\"\u{1F600}\":1,\"\u{E000}\":2}");
    }

    #[test]
    fn numbers_as_ecmascript_writes_them() {
        for (n, text) in [
            (json!(1.0), "1"),
            (json!(-0.0), "0"),
            (json!(1e21), "1e+21"),
            (json!(1152921504606846976_u64), "1152921504606847000"),
            (json!(9007199254740992_u64), "9007199254740992"),
            (json!(-9007199254740993_i64), "-9007199254740992"),
            (json!(0.1), "0.1"),
        ] {
            assert_eq!(canonical(&n), text, "{n}");
            assert_eq!(
                canonical(&n),
                serde_json_canonicalizer::to_string(&n).unwrap()
            );
        }
        // The pretty text holds the value the canonical text reads back as.
        assert_eq!(pretty(&json!(2.0)), "2");
        assert_eq!(pretty(&json!(1e21)), "1e+21");
        assert_eq!(
            pretty(&json!(1152921504606846976_u64)),
            "1152921504606847000"
        );
    }

    #[test]
    fn pretty_nests_as_serde_json_does_and_at_a_depth() {
        let value = json!({"b": [1, {}, []], "a": {"x": "\u{1}\n\"q\""}});
        assert_eq!(
            pretty(&value),
            "{\n  \"a\": {\n    \"x\": \"\\u0001\\n\\\"q\\\"\"\n  },\n  \"b\": [\n    1,\n    {},\n    []\n  ]\n}"
        );
        let mut out = Vec::new();
        write_pretty(&json!([1]), 2, &mut out);
        assert_eq!(String::from_utf8(out).unwrap(), "[\n      1\n    ]");
    }

    #[test]
    fn members_filtered_by_reference() {
        let value = json!({"b": 1, "a": 2, "c": 3});
        let map = value.as_object().unwrap();
        let text = canonical_members(map.iter().filter(|(k, _)| *k != "c"));
        assert_eq!(text, r#"{"a":2,"b":1}"#);
    }
}

//! The envelope of a JSON-RPC message — its id, method, params and result
//! as raw text — read in one pass without building the message: a proxy
//! passes most messages on as they were written and needs only this much
//! to route them, and the [`Screen`](super::Screen) judges a message's
//! framing from it. `params` and `result` stay raw text until something
//! that owns the method needs them, and the raw slices let a member be
//! replaced where it was written ([`splice`]).

use std::borrow::Cow;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::scan::Scanner;

/// What is read of a message. Read by hand rather than derived: a member
/// written twice is valid JSON as the rest of the project reads it (the
/// last one counts), where a derived reader would refuse the message; and
/// a member of the wrong type is recorded, not an error, so that the
/// screen can answer it with the message's id.
#[derive(Debug, Default)]
pub struct Envelope<'a> {
    /// The id, when the member is present (`Some(Value::Null)` for
    /// `"id": null`).
    pub id: Option<Value>,
    /// The id as written.
    pub id_raw: Option<Raw<'a>>,
    /// The method, when it is a string (requests and notifications).
    pub method: Option<Cow<'a, str>>,
    /// A `method` member is present (whatever its type).
    pub has_method: bool,
    /// `jsonrpc` is present and is `"2.0"`.
    pub jsonrpc: bool,
    /// `params`, unparsed.
    pub params: Option<Raw<'a>>,
    /// Whether `result` is present (even as `null`).
    pub result: bool,
    /// `result`, unparsed (the last one written).
    pub result_raw: Option<Raw<'a>>,
    /// Whether `error` is present.
    pub error: bool,
    /// Whether a member other than `params` was passed over or kept as
    /// written without being read as a tree reader reads JSON (numbers in
    /// range, escapes that decode, nesting within limits): `result`,
    /// `error`, a member of no meaning here, a `method` or `jsonrpc` that is
    /// not a string, an id that does not read, a repeated `params`. When it
    /// is `false`, checking `params` checks the whole message.
    pub skipped: bool,
}

/// A JSON value as a message wrote it: a slice of the message's text that
/// was walked as one value, by serde_json (the walk behind its `RawValue`)
/// or by the [scanner](crate::scan::Scanner), which accepts only what that
/// walk accepts. Its numbers' size and its escapes' meaning are not read:
/// a parse of it decides those.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Raw<'a>(&'a str);

impl<'a> Raw<'a> {
    /// A value one walk has read (its callers' walks accept only JSON).
    pub(crate) fn walked(text: &'a str) -> Raw<'a> {
        Raw(text)
    }

    /// `text`, when it is one JSON value (with whitespace around it, which
    /// is not kept), walked as [`Raw`] values are.
    pub fn of(text: &'a str) -> Option<Raw<'a>> {
        let mut scanner = crate::json::scan(text);
        let raw = scanner.raw()?;
        scanner.end()?;
        Some(raw)
    }

    /// The value's text, as written.
    pub fn get(self) -> &'a str {
        self.0
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Raw<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <&'de RawValue>::deserialize(deserializer).map(|raw| Raw(raw.get()))
    }
}

/// A member's value: a string (borrowed from the input when it has no
/// escapes), or something else, skipped.
enum Text<'a> {
    String(Cow<'a, str>),
    Other,
}

impl<'de: 'a, 'a> Deserialize<'de> for Text<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Any;
        impl<'de> Visitor<'de> for Any {
            type Value = Text<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a JSON value")
            }
            fn visit_borrowed_str<E: serde::de::Error>(self, v: &'de str) -> Result<Text<'de>, E> {
                Ok(Text::String(Cow::Borrowed(v)))
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<Text<'de>, E> {
                Ok(Text::String(Cow::Owned(v.to_string())))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_i128<E>(self, _: i128) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_u128<E>(self, _: u128) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_unit<E>(self) -> Result<Text<'de>, E> {
                Ok(Text::Other)
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<Text<'de>, A::Error> {
                while seq.next_element::<IgnoredAny>()?.is_some() {}
                Ok(Text::Other)
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Text<'de>, A::Error> {
                while map.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                Ok(Text::Other)
            }
        }
        deserializer.deserialize_any(Any)
    }
}

impl<'de: 'a, 'a> Deserialize<'de> for Envelope<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let (mut envelope, raw) = deserializer.deserialize_map(Members {
            result: RawResult,
            text: std::marker::PhantomData,
        })?;
        envelope.result_raw = raw.map(|raw: &RawValue| Raw(raw.get()));
        Ok(envelope)
    }
}

/// Reads `result` as written.
#[derive(Clone, Copy)]
struct RawResult;

impl<'de> DeserializeSeed<'de> for RawResult {
    type Value = &'de RawValue;
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        <&'de RawValue>::deserialize(deserializer)
    }
}

/// The envelope's members, with `result` read by `result` (the last one
/// written counts).
struct Members<'a, S> {
    result: S,
    text: std::marker::PhantomData<&'a ()>,
}

impl<'de: 'a, 'a, S: DeserializeSeed<'de> + Copy> Visitor<'de> for Members<'a, S> {
    type Value = (Envelope<'a>, Option<S::Value>);
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON-RPC message (an object)")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut envelope = Envelope::default();
        let mut result = None;
        while let Some(key) = map.next_key::<Cow<'de, str>>()? {
            match key.as_ref() {
                "id" => {
                    let raw: Raw<'de> = map.next_value()?;
                    envelope.id = crate::json::from_str(raw.get()).ok();
                    envelope.skipped |= envelope.id.is_none();
                    envelope.id_raw = Some(raw);
                }
                "method" => {
                    envelope.has_method = true;
                    envelope.method = match map.next_value::<Text<'de>>()? {
                        Text::String(method) => Some(method),
                        Text::Other => {
                            envelope.skipped = true;
                            None
                        }
                    };
                }
                "jsonrpc" => {
                    envelope.jsonrpc = match map.next_value::<Text<'de>>()? {
                        Text::String(version) => version == "2.0",
                        Text::Other => {
                            envelope.skipped = true;
                            false
                        }
                    };
                }
                "params" => {
                    envelope.skipped |= envelope.params.is_some();
                    envelope.params = Some(map.next_value()?);
                }
                "result" => {
                    result = Some(map.next_value_seed(self.result)?);
                    envelope.result = true;
                    envelope.skipped = true;
                }
                "error" => {
                    map.next_value::<IgnoredAny>()?;
                    envelope.error = true;
                    envelope.skipped = true;
                }
                _ => {
                    map.next_value::<IgnoredAny>()?;
                    envelope.skipped = true;
                }
            }
        }
        Ok((envelope, result))
    }
}

impl<'a> Envelope<'a> {
    /// The envelope of `text`, when it is one JSON object.
    ///
    /// Most messages are read by the [scanner](crate::scan::Scanner), the
    /// rest by serde_json, which decides: the same envelope either way (a
    /// property test and the `json_scan` fuzz target hold the two to it).
    pub fn of(text: &'a str) -> Option<Self> {
        Envelope::scan(text).or_else(|| Envelope::by_serde(text))
    }

    /// The envelope of `text` as serde_json reads it.
    fn by_serde(text: &'a str) -> Option<Self> {
        crate::json::from_str(text).ok()
    }

    /// The envelope of a message written as most are, read by the
    /// scanner: its members `jsonrpc`, `id`, `method`, `params`, `result`
    /// and `error`, each at most once and nothing else, its keys, `jsonrpc`
    /// and `method` without escapes, and an id as [`plain_id`] reads it.
    /// `None` for any other text (a member of no meaning here or written
    /// twice, an escape, text that is not JSON), given up where the scanner
    /// finds it.
    fn scan(text: &'a str) -> Option<Self> {
        let (mut envelope, raw) = Envelope::scan_reading(text, Scanner::raw)?;
        envelope.result_raw = raw;
        Some(envelope)
    }

    /// The envelope of `text` as [`Envelope::of`] reads it with the scanner
    /// (a message written as most are), with its `result` read by `result`
    /// in the same walk: the scanner's [`Envelope::of_reading`], for a reader
    /// that needs the result whole anyway. `result_raw` is `None`. `None`
    /// when the scanner does not read the message or `result` gives up on
    /// the result: read it with [`Envelope::of_reading`] then, which decides.
    pub fn scan_reading<R>(
        text: &'a str,
        mut result: impl FnMut(&mut Scanner<'a>) -> Option<R>,
    ) -> Option<(Self, Option<R>)> {
        let mut scanner = crate::json::scan(text);
        let mut envelope = Envelope::default();
        let mut read = None;
        let mut seen = [false; 6];
        scanner.object(|scanner, key| {
            let slot = match key {
                "jsonrpc" => 0,
                "id" => 1,
                "method" => 2,
                "params" => 3,
                "result" => 4,
                "error" => 5,
                _ => return None,
            };
            if std::mem::replace(&mut seen[slot], true) {
                return None;
            }
            match slot {
                0 => envelope.jsonrpc = scanner.plain_string()? == "2.0",
                1 => {
                    let raw = scanner.raw()?;
                    envelope.id = Some(plain_id(raw.get())?);
                    envelope.id_raw = Some(raw);
                }
                2 => {
                    envelope.method = Some(Cow::Borrowed(scanner.plain_string()?));
                    envelope.has_method = true;
                }
                3 => envelope.params = Some(scanner.raw()?),
                // Read by `result`, or passed over: `skipped`, as serde_json's
                // reading says.
                4 => {
                    read = Some(result(scanner)?);
                    envelope.result = true;
                    envelope.skipped = true;
                }
                _ => {
                    scanner.value()?;
                    envelope.error = true;
                    envelope.skipped = true;
                }
            }
            Some(())
        })?;
        scanner.end()?;
        Some((envelope, read))
    }

    /// The envelope of `text` with its `result` read by `result` in the
    /// same pass, for a reader that needs the result whole anyway (a proxy
    /// annotating a `tools/list` answer): one walk over the text instead of
    /// two. `None` when `text` is not one JSON object, or `result` refuses
    /// the result (the caller then reads it as [`Envelope::of`] does).
    /// `result_raw` is `None`: the reader keeps what it needs of the text.
    pub fn of_reading<S>(text: &'a str, result: S) -> Option<(Self, Option<S::Value>)>
    where
        S: DeserializeSeed<'a> + Copy,
    {
        let mut deserializer = crate::json::deserializer(text);
        let read = deserializer
            .deserialize_map(Members {
                result,
                text: std::marker::PhantomData,
            })
            .ok()?;
        deserializer.end().ok()?;
        Some(read)
    }

    /// A response (a `result` or an `error`, no method).
    pub fn is_response(&self) -> bool {
        !self.has_method && (self.result || self.error)
    }

    /// A request (a method and an id).
    pub fn is_request(&self) -> bool {
        self.method.is_some() && self.id.is_some()
    }

    /// `params`, parsed (`None` when absent or not JSON).
    pub fn params(&self) -> Option<Value> {
        self.params
            .and_then(|raw| crate::json::from_str(raw.get()).ok())
    }
}

/// The id serde_json reads from `raw` (a walked JSON value), when it is
/// `null`, a string without escapes or an integer serde_json reads as one
/// (`-0` and integers past 64 bits it reads as floats: `None`, as for the
/// rest).
fn plain_id(raw: &str) -> Option<Value> {
    if raw == "null" {
        return Some(Value::Null);
    }
    if let Some(inner) = raw.strip_prefix('"').and_then(|r| r.strip_suffix('"')) {
        return (!inner.contains('\\')).then(|| Value::String(inner.to_owned()));
    }
    // (A walked number of digits only has no leading zero but `0`.)
    let digits = raw.strip_prefix('-').unwrap_or(raw);
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    if digits.len() == raw.len() {
        raw.parse::<u64>().ok().map(Value::from)
    } else {
        raw.parse::<i64>().ok().filter(|&n| n < 0).map(Value::from)
    }
}

/// `text` with `part` — a slice of `text` itself, such as a member's raw
/// value in an [`Envelope`] read from it — replaced by `with`: a message
/// changed where it changes, the rest exactly as it was written. `None`
/// when `part` is not a slice of `text`.
pub fn splice(text: &str, part: &str, with: &str) -> Option<String> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    let (before, after) = (text.get(..start)?, text.get(end..)?);
    // One byte more: room for the newline a line-delimited transport adds.
    let mut out = String::with_capacity(before.len() + with.len() + after.len() + 1);
    out.push_str(before);
    out.push_str(with);
    out.push_str(after);
    Some(out)
}

/// A key for a JSON-RPC id that does not depend on how it was written
/// (ids are strings or integers; `"a"` and `"\u0061"` are one id).
///
/// It is the id's JSON text as serde_json writes it; the usual ids (an
/// integer, a string with nothing to escape) are written here directly,
/// without the serializer: every request forwarded looks one up twice.
pub fn id_key(id: &Value) -> String {
    match id {
        Value::Number(n) => match (n.as_u64(), n.as_i64()) {
            (Some(u), _) => itoa::Buffer::new().format(u).to_owned(),
            (None, Some(i)) => itoa::Buffer::new().format(i).to_owned(),
            (None, None) => id.to_string(),
        },
        Value::String(s) if !s.bytes().any(|b| b == b'"' || b == b'\\' || b < 0x20) => {
            let mut key = String::with_capacity(s.len() + 2);
            key.push('"');
            key.push_str(s);
            key.push('"');
            key
        }
        _ => id.to_string(),
    }
}

#[cfg(test)]
mod scanned;

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_the_envelope_without_the_rest() {
        let request =
            Envelope::of(r#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"a":[1,2]}}"#)
                .unwrap();
        assert!(request.is_request());
        assert_eq!(request.id, Some(Value::from(7)));
        assert_eq!(request.params.unwrap().get(), r#"{"a":[1,2]}"#);
        let response = Envelope::of(r#"{"jsonrpc":"2.0","id":"x","result":null}"#).unwrap();
        assert!(response.is_response());
        let error = Envelope::of(r#"{"id":null,"error":{"code":-32700}}"#).unwrap();
        assert!(error.is_response());
        assert_eq!(error.id, Some(Value::Null));
        let notification = Envelope::of(r#"{"method":"notifications/x"}"#).unwrap();
        assert!(!notification.is_request() && !notification.is_response());
        assert!(!notification.jsonrpc);
        assert!(notification.id.is_none());
        // A member of the wrong type is recorded, not an error.
        let odd = Envelope::of(r#"{"jsonrpc":"2.0","id":1,"method":7,"result":1}"#).unwrap();
        assert!(odd.jsonrpc && odd.has_method && odd.method.is_none() && !odd.is_response());
        // Escapes in a method are read, not compared raw.
        let escaped = Envelope::of(r#"{"id":1,"method":"tools\/list"}"#).unwrap();
        assert_eq!(escaped.method.as_deref(), Some("tools/list"));
    }

    #[test]
    fn a_member_written_twice_counts_once_the_last() {
        let twice =
            Envelope::of(r#"{"id":1,"method":"a","method":"tools/call","params":{}}"#).unwrap();
        assert_eq!(twice.method.as_deref(), Some("tools/call"));
        assert!(twice.is_request());
    }

    #[test]
    fn an_id_is_kept_as_written() {
        let message = Envelope::of(r#"{"id" : "\u0061","method":"m"}"#).unwrap();
        assert_eq!(message.id, Some(Value::from("a")));
        assert_eq!(message.id_raw.unwrap().get(), r#""\u0061""#);
    }

    #[test]
    fn a_result_read_in_the_same_pass() {
        // A seed that reads a result's `n`, refusing anything else.
        #[derive(Clone, Copy)]
        struct N;
        impl<'de> DeserializeSeed<'de> for N {
            type Value = u64;
            fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<u64, D::Error> {
                #[derive(Deserialize)]
                struct R {
                    n: u64,
                }
                R::deserialize(d).map(|r| r.n)
            }
        }
        let text = r#"{"result":{"n":1},"jsonrpc":"2.0","result":{"n":2},"id":"x"}"#;
        let (message, n) = Envelope::of_reading(text, N).unwrap();
        let plain = Envelope::of(text).unwrap();
        assert_eq!(n, Some(2), "the last one written counts");
        assert!(message.is_response() && message.result_raw.is_none());
        assert_eq!((message.id, message.jsonrpc), (plain.id, plain.jsonrpc));
        assert!(plain.result_raw.is_some());
        let (request, none) = Envelope::of_reading(r#"{"id":1,"method":"m"}"#, N).unwrap();
        assert!(request.is_request() && none.is_none());
        // A result the seed refuses, or text after the object: no envelope.
        assert!(Envelope::of_reading(r#"{"id":1,"result":{"m":1}}"#, N).is_none());
        assert!(Envelope::of_reading(r#"{"id":1,"result":{"n":1}} {}"#, N).is_none());
    }

    #[test]
    fn refuses_what_is_not_one_object() {
        for text in ["[1, \"m\"]", "[]", "3", "\"x\"", "not json", "{\"id\":"] {
            assert!(Envelope::of(text).is_none(), "{text}");
        }
    }

    #[test]
    fn ids_compare_as_values() {
        let a: Value = crate::json::from_str(r#""\u0061""#).unwrap();
        assert_eq!(id_key(&a), id_key(&Value::from("a")));
        assert_ne!(id_key(&Value::from(1)), id_key(&Value::from("1")));
    }

    #[test]
    fn a_member_is_spliced_where_it_was_written() {
        let text = r#"{"jsonrpc":"2.0", "id":7,"params" : {"a":[1, 2]},"x":"é"}"#;
        let envelope = Envelope::of(text).unwrap();
        let params = envelope.params.unwrap().get();
        assert_eq!(
            splice(text, params, r#"{"b":1}"#).unwrap(),
            r#"{"jsonrpc":"2.0", "id":7,"params" : {"b":1},"x":"é"}"#
        );
        // Only a slice of the text itself can be replaced.
        let elsewhere = String::from(params);
        assert_eq!(splice(text, &elsewhere, "{}"), None);
        let result = r#"{"id":1,"result":{"tools":[]}}"#;
        let raw = Envelope::of(result).unwrap().result_raw.unwrap().get();
        assert_eq!(
            splice(result, raw, "[]").unwrap(),
            r#"{"id":1,"result":[]}"#
        );
    }

    #[test]
    fn id_keys_are_the_ids_json_text() {
        let ids = [
            json!(0),
            json!(7),
            json!(-1),
            json!(-42),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(i64::MAX),
            json!(1.5),
            json!(-0.0),
            json!(1e300),
            json!(""),
            json!("a"),
            json!("ask-1"),
            json!("é ✓ 𝄞"),
            json!("\u{7f}/"),
            json!("a\"b"),
            json!("a\\b"),
            json!("line\nbreak"),
            json!("\u{1}"),
            json!(null),
            json!(true),
            json!([1]),
            json!({"a": 1}),
        ];
        for id in ids {
            assert_eq!(id_key(&id), id.to_string(), "{id:?}");
        }
        // One id however it is written.
        let written: Value = crate::json::from_str(r#""\u0061""#).unwrap();
        assert_eq!(id_key(&written), id_key(&json!("a")));
    }
}

//! A request's params parsed in one walk that also finds where its progress
//! token is written (`_meta.progressToken`), and where its `_meta` and the
//! `traceparent` in it are: what a transport needs that puts a token of its
//! own in the host's place, and what the proxy needs to put its trace
//! context in the request it forwards, without reading the params a second
//! time to find them.

use std::borrow::Cow;
use std::ops::Range;

use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::screen::{NESTING, nests_past};

/// A request's params as a tree, its progress token as written, and where
/// its `_meta` is.
#[derive(Clone, Debug)]
pub struct ParamsRead<'a> {
    /// The params.
    pub tree: Value,
    /// The progress token as written (of the last `_meta`, its last
    /// `progressToken`, as the tree has them), when `located`.
    pub token: Option<&'a RawValue>,
    /// Whether `token` was looked for (params parsed by another reader
    /// leave it unlooked for).
    pub located: bool,
    /// Where the params' `_meta` is written, as offsets in the params' text
    /// ([`MetaAt::Unknown`] when not `located`).
    pub meta_at: MetaAt,
}

/// Where a request's `_meta` is written, as one read of its params found
/// it: what places a member in it without reading the params again.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum MetaAt {
    /// Not known: not looked for, or not placed by one read (`_meta` named
    /// twice, or with an escape in its name; not an object; `traceparent`
    /// named twice in it). A writer reads the params again.
    #[default]
    Unknown,
    /// The params have no `_meta` member.
    Absent,
    /// `_meta` is an object whose `{` is at `open`, and its `traceparent`,
    /// when it has one, is written at `traceparent`.
    At {
        /// The offset of `_meta`'s `{`.
        open: usize,
        /// The range of its `traceparent`'s value as written.
        traceparent: Option<Range<usize>>,
    },
}

impl MetaAt {
    /// The same places, each offset `at` mapped by `to` (offsets in the
    /// params made offsets in the message, or moved by an edit before
    /// them).
    pub fn mapped(self, to: impl Fn(usize) -> usize) -> MetaAt {
        match self {
            MetaAt::At { open, traceparent } => MetaAt::At {
                open: to(open),
                traceparent: traceparent.map(|at| to(at.start)..to(at.end)),
            },
            other => other,
        }
    }
}

impl From<Value> for ParamsRead<'_> {
    fn from(tree: Value) -> Self {
        ParamsRead {
            tree,
            token: None,
            located: false,
            meta_at: MetaAt::Unknown,
        }
    }
}

impl crate::screen::Parsed for ParamsRead<'_> {
    fn meta_is_object(&self) -> Option<bool> {
        self.tree.meta_is_object()
    }
}

impl<'a> ParamsRead<'a> {
    /// `raw`, a request's params as written (valid JSON, read by the
    /// screen's walk), parsed as a tree reader parses them, with its
    /// progress token found in the same walk; `None` when the parse fails
    /// or nests past the screen's limit (the screen's own parse then gives
    /// the error).
    pub fn of(raw: &'a str) -> Option<ParamsRead<'a>> {
        let mut reader = crate::json::deserializer(raw);
        let (tree, found) = reader
            .deserialize_any(Walk {
                meta: false,
                text: raw,
            })
            .ok()?;
        reader.end().ok()?;
        // The limit counts from the message, one level above.
        if nests_past(raw, &tree, NESTING - 1) {
            return None;
        }
        Some(ParamsRead {
            tree,
            token: found.token,
            located: true,
            meta_at: found.meta_at,
        })
    }
}

/// What a [`Walk`] found besides the tree: a progress token as written,
/// where `_meta` is (in the params), and its `traceparent` as written and
/// how often it is named (in `_meta`).
struct Found<'de> {
    token: Option<&'de RawValue>,
    meta_at: MetaAt,
    traceparent: Option<&'de RawValue>,
    traceparents: usize,
}

impl Found<'_> {
    fn none() -> Self {
        Found {
            token: None,
            meta_at: MetaAt::Absent,
            traceparent: None,
            traceparents: 0,
        }
    }
}

/// Reads a value as serde_json's tree reader does, and keeps what
/// [`Found`] says: in the params (`meta` false), their `_meta` member is
/// read in turn (`meta` true), whose `progressToken` and `traceparent`
/// members are kept as written. `text`: the params' text, which the
/// offsets count in.
#[derive(Clone, Copy)]
struct Walk<'de> {
    meta: bool,
    text: &'de str,
}

impl<'de> DeserializeSeed<'de> for Walk<'de> {
    type Value = (Value, Found<'de>);
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'de> {
    type Value = (Value, Found<'de>);
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut members = Map::new();
        let mut found = Found::none();
        let mut metas = 0;
        while let Some(Key(name)) = map.next_key::<Key<'de>>()? {
            // Where the name is written, when it is as read.
            let (key, written) = match name {
                Cow::Borrowed(written) => (written.to_string(), Some(written)),
                Cow::Owned(key) => (key, None),
            };
            let value = match (self.meta, key.as_str()) {
                (false, "_meta") => {
                    metas += 1;
                    let (meta, inner) = map.next_value_seed(Walk {
                        meta: true,
                        text: self.text,
                    })?;
                    found.token = inner.token;
                    let open = written
                        .and_then(|name| value_at(self.text, name))
                        .filter(|_| meta.is_object() && inner.traceparents <= 1);
                    found.meta_at = match open {
                        Some(open) => MetaAt::At {
                            open,
                            traceparent: inner
                                .traceparent
                                .and_then(|raw| range_in(self.text, raw.get())),
                        },
                        None => MetaAt::Unknown,
                    };
                    meta
                }
                (true, "progressToken" | "traceparent") => {
                    let raw: &'de RawValue = map.next_value()?;
                    if key == "traceparent" {
                        found.traceparent = Some(raw);
                        found.traceparents += 1;
                    } else {
                        found.token = Some(raw);
                    }
                    // The member's few bytes, read as the tree reader reads
                    // them.
                    crate::json::from_str::<Value>(raw.get()).map_err(serde::de::Error::custom)?
                }
                _ => map.next_value::<Value>()?,
            };
            members.insert(key, value);
        }
        // Named twice: the tree keeps the last in the first's place, which
        // one read does not follow.
        if metas > 1 {
            found.meta_at = MetaAt::Unknown;
        }
        Ok((Value::Object(members), found))
    }
    fn visit_seq<S: SeqAccess<'de>>(self, seq: S) -> Result<Self::Value, S::Error> {
        Tree.visit_seq(seq).map(|tree| (tree, Found::none()))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok((Value::Bool(v), Found::none()))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok((Value::from(v), Found::none()))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok((Value::from(v), Found::none()))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok((Value::from(v), Found::none()))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok((Value::String(v.to_string()), Found::none()))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Value::Null, Found::none()))
    }
}

/// A member's name (or any string), borrowed from the text being read when
/// it is written without escapes: a slice of that text, which says where.
pub struct Key<'a>(pub Cow<'a, str>);

impl<'de: 'a, 'a> Deserialize<'de> for Key<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Text;
        impl<'de> Visitor<'de> for Text {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
        }
        deserializer.deserialize_str(Text)
    }
}

/// Where `part`, a slice of `text`, lies in it; `None` when it is not one.
fn range_in(text: &str, part: &str) -> Option<Range<usize>> {
    let start = (part.as_ptr() as usize).checked_sub(text.as_ptr() as usize)?;
    let end = start.checked_add(part.len())?;
    (end <= text.len()).then_some(start..end)
}

/// The offset of the `{` of an object member's value in `text`, its name
/// `name` (a slice of `text`, between its quotes): past the closing quote,
/// the whitespace and the colon the reader went over. `None` when the value
/// is not an object.
fn value_at(text: &str, name: &str) -> Option<usize> {
    let after = range_in(text, name)?.end;
    let bytes = text.as_bytes();
    let skip = |mut at: usize| {
        while matches!(bytes.get(at), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            at += 1;
        }
        at
    };
    (bytes.get(after) == Some(&b'"')).then_some(())?;
    let colon = skip(after + 1);
    (bytes.get(colon) == Some(&b':')).then_some(())?;
    let open = skip(colon + 1);
    (bytes.get(open) == Some(&b'{')).then_some(open)
}

/// serde_json's tree reader for arrays: each item a [`Value`].
struct Tree;

impl<'de> Visitor<'de> for Tree {
    type Value = Value;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array")
    }
    fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<Value, S::Error> {
        let mut items = Vec::new();
        while let Some(item) = seq.next_element::<Value>()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// JSON texts of params: objects with and without `_meta`, tokens of
    /// every kind, repeated names, escapes, nesting.
    fn params() -> impl Strategy<Value = String> {
        let scalar = prop_oneof![
            Just("1".to_string()),
            Just("-7".to_string()),
            Just("1.5e3".to_string()),
            Just(r#""t\u0041""#.to_string()),
            Just("null".to_string()),
            Just("true".to_string()),
            Just("[1,{\"a\":[]}]".to_string()),
            Just("{\"progressToken\":3}".to_string()),
        ];
        let key = prop_oneof![
            Just("\"progressToken\"".to_string()),
            Just("\"progress\\u0054oken\"".to_string()),
            Just("\"name\"".to_string()),
            Just("\"_meta\"".to_string()),
            Just(ESCAPED_META.to_string()),
            Just("\"traceparent\"".to_string()),
            Just(ESCAPED_TRACEPARENT.to_string()),
        ];
        let meta = prop::collection::vec((key.clone(), scalar.clone()), 0..4).prop_map(|members| {
            let inner: Vec<String> = members.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!("{{{}}}", inner.join(","))
        });
        let member = prop_oneof![
            (key, scalar.clone()).prop_map(|(k, v)| format!("{k}:{v}")),
            meta.clone().prop_map(|m| format!("\"_meta\" : {m}")),
            meta.clone().prop_map(|m| format!("\"_meta\":\n\t{m}")),
            scalar.prop_map(|v| format!("\"_meta\":{v}")),
        ];
        prop::collection::vec(member, 0..5)
            .prop_map(|members| format!("{{{}}}", members.join(", ")))
    }

    proptest! {
        /// The tree is the tree reader's, and the token found is the one
        /// the tree holds, written where it says.
        #[test]
        fn the_tree_is_the_parse_and_the_token_is_where_it_says(text in params()) {
            let read = ParamsRead::of(&text).unwrap();
            let parsed: Value = crate::json::from_str(&text).unwrap();
            prop_assert_eq!(&read.tree, &parsed);
            let held = parsed.get("_meta").and_then(|m| m.get("progressToken"));
            match (read.token, held) {
                (Some(raw), Some(held)) => {
                    let written: Value = crate::json::from_str(raw.get()).unwrap();
                    prop_assert_eq!(&written, held);
                    prop_assert!(crate::splice(&text, raw.get(), "0").is_some());
                }
                (None, None) => {}
                (found, held) => prop_assert!(false, "{:?} against {:?} in {}", found, held, text),
            }
        }
    }

    const ESCAPED_META: &str = "\"_m\\u0065ta\"";
    const ESCAPED_TRACEPARENT: &str = "\"trace\\u0070arent\"";

    proptest! {
        /// `_meta` is where the read says, as the tree has it, and so is
        /// its `traceparent`; it is unknown only where one read cannot
        /// place it.
        #[test]
        fn meta_and_its_traceparent_are_where_it_says(text in params()) {
            let read = ParamsRead::of(&text).unwrap();
            let parsed: Value = crate::json::from_str(&text).unwrap();
            match read.meta_at {
                MetaAt::Absent => prop_assert!(parsed.get("_meta").is_none(), "{}", text),
                MetaAt::At { open, traceparent } => {
                    // One value from `{` on; what follows it is not read.
                    let mut reader = crate::json::deserializer(&text[open..]);
                    let meta = <Value as serde::Deserialize>::deserialize(&mut reader).unwrap();
                    prop_assert_eq!(Some(&meta), parsed.get("_meta"), "{}", text);
                    match traceparent {
                        Some(at) => {
                            let written: Value = crate::json::from_str(&text[at]).unwrap();
                            prop_assert_eq!(Some(&written), meta.get("traceparent"));
                        }
                        None => prop_assert!(meta.get("traceparent").is_none(), "{}", text),
                    }
                }
                MetaAt::Unknown => {
                    let names = text.matches("\"_meta\"").count() + text.matches(ESCAPED_META).count();
                    let traceparents = text.matches("\"traceparent\"").count()
                        + text.matches(ESCAPED_TRACEPARENT).count();
                    prop_assert!(
                        names > 1
                            || text.contains(ESCAPED_META)
                            || !parsed["_meta"].is_object()
                            || traceparents > 1,
                        "{}", text
                    );
                }
            }
        }
    }

    #[test]
    fn meta_is_placed_in_the_common_shapes() {
        let text = r#"{"name":"t","_meta" : {"progressToken":1,"traceparent":"00-a-b-01"}}"#;
        let read = ParamsRead::of(text).unwrap();
        let MetaAt::At {
            open,
            traceparent: Some(at),
        } = read.meta_at
        else {
            panic!("{:?}", read.meta_at);
        };
        assert_eq!(&text[open..open + 2], "{\"");
        assert_eq!(&text[at], "\"00-a-b-01\"");
        let read = ParamsRead::of(r#"{"_meta":{}}"#).unwrap();
        assert_eq!(
            read.meta_at,
            MetaAt::At {
                open: 9,
                traceparent: None
            }
        );
        assert_eq!(ParamsRead::of("{}").unwrap().meta_at, MetaAt::Absent);
        for unplaced in [
            r#"{"_meta":1}"#,
            r#"{"_meta":{},"_meta":{}}"#,
            r#"{"_m\u0065ta":{}}"#,
            r#"{"_meta":{"traceparent":"a","traceparent":"b"}}"#,
        ] {
            assert_eq!(
                ParamsRead::of(unplaced).unwrap().meta_at,
                MetaAt::Unknown,
                "{unplaced}"
            );
        }
        assert_eq!(ParamsRead::from(Value::Null).meta_at, MetaAt::Unknown);
    }

    #[test]
    fn what_is_not_json_or_nests_too_deep_is_none() {
        assert!(ParamsRead::of("{\"a\":").is_none());
        assert!(ParamsRead::of("{\"a\":1e999}").is_none());
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(130), "]".repeat(130));
        assert!(ParamsRead::of(&deep).is_none());
        // Just under the limit (the message is one level more): read.
        let deep = format!("{{\"a\":{}1{}}}", "[".repeat(125), "]".repeat(125));
        assert!(ParamsRead::of(&deep).is_some());
    }
}

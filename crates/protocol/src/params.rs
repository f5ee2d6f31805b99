//! A request's params parsed in one walk that also finds where its progress
//! token is written (`_meta.progressToken`): what a transport needs that
//! puts a token of its own in the host's place, without reading the params
//! a second time to find it.

use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

use crate::screen::{NESTING, nests_past};

/// A request's params as a tree, and its progress token as written.
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
}

impl From<Value> for ParamsRead<'_> {
    fn from(tree: Value) -> Self {
        ParamsRead {
            tree,
            token: None,
            located: false,
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
        let (tree, token) = reader.deserialize_any(Walk { meta: false }).ok()?;
        reader.end().ok()?;
        // The limit counts from the message, one level above.
        if nests_past(raw, &tree, NESTING - 1) {
            return None;
        }
        Some(ParamsRead {
            tree,
            token,
            located: true,
        })
    }
}

/// Reads a value as serde_json's tree reader does, and keeps a progress
/// token as written: in the params (`meta` false), their `_meta` member is
/// read in turn (`meta` true), whose `progressToken` member is kept.
#[derive(Clone, Copy)]
struct Walk {
    meta: bool,
}

impl<'de> serde::de::DeserializeSeed<'de> for Walk {
    type Value = (Value, Option<&'de RawValue>);
    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Self::Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk {
    type Value = (Value, Option<&'de RawValue>);
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
        let mut members = Map::new();
        let mut token = None;
        while let Some(key) = map.next_key::<String>()? {
            let value = match (self.meta, key.as_str()) {
                (false, "_meta") => {
                    let (meta, found) = map.next_value_seed(Walk { meta: true })?;
                    token = found;
                    meta
                }
                (true, "progressToken") => {
                    let raw: &'de RawValue = map.next_value()?;
                    token = Some(raw);
                    // The token's few bytes, read as the tree reader reads
                    // them.
                    crate::json::from_str::<Value>(raw.get()).map_err(serde::de::Error::custom)?
                }
                _ => map.next_value::<Value>()?,
            };
            members.insert(key, value);
        }
        Ok((Value::Object(members), token))
    }
    fn visit_seq<S: SeqAccess<'de>>(self, seq: S) -> Result<Self::Value, S::Error> {
        Tree.visit_seq(seq).map(|tree| (tree, None))
    }
    fn visit_bool<E>(self, v: bool) -> Result<Self::Value, E> {
        Ok((Value::Bool(v), None))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Self::Value, E> {
        Ok((Value::from(v), None))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Self::Value, E> {
        Ok((Value::from(v), None))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Self::Value, E> {
        Ok((Value::from(v), None))
    }
    fn visit_str<E>(self, v: &str) -> Result<Self::Value, E> {
        Ok((Value::String(v.to_string()), None))
    }
    fn visit_unit<E>(self) -> Result<Self::Value, E> {
        Ok((Value::Null, None))
    }
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
        ];
        let meta = prop::collection::vec((key.clone(), scalar.clone()), 0..4).prop_map(|members| {
            let inner: Vec<String> = members.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!("{{{}}}", inner.join(","))
        });
        let member = prop_oneof![
            (key, scalar.clone()).prop_map(|(k, v)| format!("{k}:{v}")),
            meta.clone().prop_map(|m| format!("\"_meta\" : {m}")),
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

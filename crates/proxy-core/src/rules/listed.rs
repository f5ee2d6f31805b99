//! A tool's `tools/list` entry in the rules, kept twice: as the tree the
//! parsed path merges into a listed tool, and as JSON text written once,
//! when the rules are compiled, for the path that edits a listed tool's
//! text (a listing answered without a pin: each tool's members are read
//! as written, and only its annotations and markers change).

use std::borrow::Cow;

use serde_json::{Map, Value};

use crate::raw::Members;

/// One tool's entry.
pub struct Entry {
    /// As the tree path merges it.
    pub map: Map<String, Value>,
    /// The rules' `annotations`, each hint as JSON text; `None` when the
    /// entry has no annotations object.
    hints: Option<Vec<Member>>,
    /// What a marked listing adds, in the entry's order.
    marks: Vec<Mark>,
}

/// A member as JSON text: its key, its value, and both as an added member
/// (`,"key":value`).
struct Member {
    key: String,
    value: String,
    added: String,
}

impl Member {
    fn new(key: &str, value: &Value) -> Member {
        let value = text_of(value);
        Member {
            added: format!(",{}:{value}", text_of(key)),
            key: key.to_string(),
            value,
        }
    }
}

/// A member a marked listing sets.
enum Mark {
    /// `_meta`: the rules' members over the listed ones.
    Meta(Map<String, Value>),
    /// Any other member, replaced or added whole.
    Set(Member),
}

impl Entry {
    /// The entry `map` (an entry in the dialect, as the rules list it).
    pub fn new(map: Map<String, Value>) -> Entry {
        let hints = match map.get("annotations") {
            Some(Value::Object(annotations)) => Some(
                annotations
                    .iter()
                    .map(|(hint, value)| Member::new(hint, value))
                    .collect(),
            ),
            _ => None,
        };
        let marks = map
            .iter()
            .filter_map(|(key, value)| match key.as_str() {
                "name" | "title" | "description" | "inputSchema" | "outputSchema"
                | "annotations" | "icons" => None,
                "_meta" => match value {
                    Value::Object(meta) => Some(Mark::Meta(meta.clone())),
                    _ => None,
                },
                _ => Some(Mark::Set(Member::new(key, value))),
            })
            .collect();
        Entry { map, hints, marks }
    }

    /// Adds to `out` the edits that annotate one listed tool given as JSON
    /// text (`tool`, whose members are `members`, its `annotations` read
    /// as `listed` when they are an object), as the tree path annotates
    /// it: each a slice of `tool` and what replaces it — a member's value,
    /// or an empty slice before the closing brace where a member is added
    /// — in the order they stand. Every byte not edited stays as the
    /// server wrote it. `false` (and nothing added) when `tool` does not
    /// end with its closing brace.
    pub fn edits<'t>(
        &self,
        tool: &'t str,
        members: &Members<'t>,
        listed: Option<&Members<'_>>,
        marked: bool,
        out: &mut Vec<(&'t str, String)>,
    ) -> bool {
        let Some(close) = tool
            .len()
            .checked_sub(1)
            .filter(|&end| tool.as_bytes()[end] == b'}')
            .and_then(|end| tool.get(end..end))
        else {
            return false;
        };
        let from = out.len();
        let mut edits = Edits {
            members,
            close,
            edits: out,
        };
        if let Some(hints) = &self.hints {
            edits.set("annotations", ",\"annotations\":", merged(listed, hints));
        }
        if marked {
            for mark in &self.marks {
                match mark {
                    Mark::Meta(meta) => {
                        let mut listed = edits.object("_meta");
                        for (k, v) in meta {
                            listed.insert(k.clone(), v.clone());
                        }
                        edits.set("_meta", ",\"_meta\":", text_of(&listed));
                    }
                    Mark::Set(member) => edits.set_member(member),
                }
            }
            // In text order; members added, at one place, in the order set.
            // (Unmarked, there is one edit at most.)
            out[from..].sort_by_key(|(part, _)| part.as_ptr() as usize);
        }
        true
    }
}

/// The listed annotations (`listed`, as written) with the rules' hints
/// (`hints`) over them, as inserting the rules' into the parsed object
/// would have them: a hint both name keeps its listed place and takes the
/// rules' value, the rules' others follow in their order. What the rules
/// do not name stays as the server wrote it.
fn merged(listed: Option<&Members<'_>>, hints: &[Member]) -> String {
    let listed = listed.map_or(&[][..], |members| members.0.as_slice());
    let mut out = String::with_capacity(32 * (listed.len() + hints.len()) + 2);
    out.push('{');
    for (key, raw) in listed {
        if out.len() > 1 {
            out.push(',');
        }
        match key {
            // Read with no escape: it needs none written.
            Cow::Borrowed(key) => {
                out.push('"');
                out.push_str(key);
                out.push('"');
            }
            Cow::Owned(key) => out.push_str(&text_of(key)),
        }
        out.push(':');
        match hints.iter().find(|hint| hint.key == *key) {
            Some(hint) => out.push_str(&hint.value),
            None => out.push_str(raw),
        }
    }
    for hint in hints {
        if !listed.iter().any(|(key, _)| *key == hint.key) {
            // The first member written has no comma before it.
            let added = if out.len() > 1 {
                &hint.added
            } else {
                &hint.added[1..]
            };
            out.push_str(added);
        }
    }
    out.push('}');
    out
}

/// JSON text, written straight into a buffer (`to_string` goes through
/// `Display` and its formatter, a few times slower).
pub fn text_of<T: serde::Serialize + ?Sized>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// Edits of one tool's text (see [`Entry::edits`]).
struct Edits<'t, 'm> {
    members: &'m Members<'t>,
    /// Where members are added: an empty slice before the closing brace.
    close: &'t str,
    edits: &'m mut Vec<(&'t str, String)>,
}

impl<'t> Edits<'t, '_> {
    /// Member `key` as an object (empty when missing or not an object).
    fn object(&self, key: &str) -> Map<String, Value> {
        match self
            .members
            .get(key)
            .and_then(|v| mcp_resolve_protocol::json::from_str::<Value>(v).ok())
        {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        }
    }

    /// Sets member `key` to the JSON text `value`: in its place when
    /// present, last otherwise (`added`: `,"key":` as JSON text), as
    /// inserting into a parsed object does.
    fn set(&mut self, key: &str, added: &str, value: String) {
        match self.members.get(key) {
            Some(raw) => self.edits.push((raw, value)),
            None => self.edits.push((self.close, format!("{added}{value}"))),
        }
    }

    /// [`Edits::set`] of a member written once.
    fn set_member(&mut self, member: &Member) {
        match self.members.get(&member.key) {
            Some(raw) => self.edits.push((raw, member.value.clone())),
            None => self.edits.push((self.close, member.added.clone())),
        }
    }
}

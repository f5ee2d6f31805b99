//! JSON read without building it: an object's members as raw text, so the
//! proxy can change one member of a server's message and leave every other
//! byte as the server wrote it (a `tools/list` result's tools keep their
//! schemas unparsed while their annotations change).

use std::borrow::Cow;
use std::collections::HashMap;

use mcp_resolve_protocol::Envelope;
use serde::Deserialize;
use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde_json::value::RawValue;

mod fast;

/// An object's members as written: each key and its value's JSON text, in
/// order; a key written twice keeps its first place and its last value (as
/// a parsed object has it).
pub struct Members<'a>(pub Vec<(Cow<'a, str>, &'a str)>);

impl<'a> Members<'a> {
    /// The members of `text`, when it is one JSON object.
    pub fn of(text: &'a str) -> Option<Members<'a>> {
        mcp_resolve_protocol::json::from_str(text).ok()
    }

    /// The JSON text of member `key`.
    pub fn get(&self, key: &str) -> Option<&'a str> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| *v)
    }
}

impl<'de> Deserialize<'de> for Members<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Object;
        impl<'de> Visitor<'de> for Object {
            type Value = Members<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<M: MapAccess<'de>>(self, map: M) -> Result<Members<'de>, M::Error> {
                Ok(read_members(map, None)?.0)
            }
        }
        deserializer.deserialize_map(Object)
    }
}

/// An object's members, read from `map`; with `line` (the text `map` is
/// read from), its `annotations` also read as members, in the same pass
/// (an error when they are not an object whose text can be found).
fn read_members<'de, M: MapAccess<'de>>(
    mut map: M,
    line: Option<&'de str>,
) -> Result<(Members<'de>, Option<Members<'de>>), M::Error> {
    // (Room for a listed tool's members: one allocation.)
    let mut members: Vec<(Cow<'de, str>, &'de str)> = Vec::with_capacity(8);
    let mut annotations = None;
    // Where each key stands, once an object is large enough for a search
    // to cost: a repeated key is found at once, however many members a
    // hostile object has; a tool's handful of members is searched in place.
    let mut at: Option<HashMap<Cow<'de, str>, usize>> = None;
    while let Some(key) = map.next_key::<Key<'de>>()? {
        let value: &'de str = match line {
            Some(line) if key.0 == "annotations" => {
                let read: Members<'de> = map.next_value()?;
                let text = object_text(line, &read)
                    .ok_or_else(|| serde::de::Error::custom("not read in one pass"))?;
                annotations = Some(read);
                text
            }
            _ => map.next_value::<&'de RawValue>()?.get(),
        };
        let found = match &at {
            Some(at) => at.get(&key.0).copied(),
            None => members.iter().position(|(k, _)| *k == key.0),
        };
        match found {
            Some(i) => members[i].1 = value,
            None => {
                if let Some(at) = &mut at {
                    at.insert(key.0.clone(), members.len());
                } else if members.len() == SEARCHED {
                    at = Some(
                        members
                            .iter()
                            .enumerate()
                            .map(|(i, (k, _))| (k.clone(), i))
                            .chain([(key.0.clone(), members.len())])
                            .collect(),
                    );
                }
                members.push((key.0, value));
            }
        }
    }
    Ok((Members(members), annotations))
}

/// A listed tool as written: its members, and its `annotations`' members
/// when they are an object.
pub struct Tool<'a> {
    /// The tool's members.
    pub members: Members<'a>,
    /// Its `annotations`' members, when they are an object.
    pub annotations: Option<Members<'a>>,
}

impl<'a> Tool<'a> {
    /// The tool `text`, when it is a JSON object, read in two passes.
    fn of(text: &'a str) -> Option<Tool<'a>> {
        let members = Members::of(text)?;
        let annotations = members.get("annotations").and_then(Members::of);
        Some(Tool {
            members,
            annotations,
        })
    }
}

/// Reads a listing's tools in one pass out of `line`, the text they are
/// read from (each tool's `annotations` as members, with their text).
#[derive(Clone, Copy)]
struct ToolsSeed<'a>(&'a str);

impl<'a> DeserializeSeed<'a> for ToolsSeed<'a> {
    type Value = Vec<Tool<'a>>;
    fn deserialize<D: Deserializer<'a>>(self, deserializer: D) -> Result<Vec<Tool<'a>>, D::Error> {
        deserializer.deserialize_seq(self)
    }
}

impl<'a> Visitor<'a> for ToolsSeed<'a> {
    type Value = Vec<Tool<'a>>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("an array of tools")
    }
    fn visit_seq<S: SeqAccess<'a>>(self, mut seq: S) -> Result<Vec<Tool<'a>>, S::Error> {
        let mut tools = Vec::with_capacity(16);
        while let Some(tool) = seq.next_element_seed(ToolSeed(self.0))? {
            tools.push(tool);
        }
        Ok(tools)
    }
}

/// One tool of [`ToolsSeed`].
#[derive(Clone, Copy)]
struct ToolSeed<'a>(&'a str);

impl<'a> DeserializeSeed<'a> for ToolSeed<'a> {
    type Value = Tool<'a>;
    fn deserialize<D: Deserializer<'a>>(self, deserializer: D) -> Result<Tool<'a>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'a> Visitor<'a> for ToolSeed<'a> {
    type Value = Tool<'a>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a tool")
    }
    fn visit_map<M: MapAccess<'a>>(self, map: M) -> Result<Tool<'a>, M::Error> {
        let (members, annotations) = read_members(map, Some(self.0))?;
        Ok(Tool {
            members,
            annotations,
        })
    }
}

/// How many members an object's keys are searched among before they are
/// indexed.
const SEARCHED: usize = 16;

/// A key (or any string), borrowed from the text when it has no escapes.
pub use mcp_resolve_protocol::Key;

/// The `tools` member of a JSON object (a `tools/list` result) read with
/// `seed`, in one pass over the object; `None` when it is missing, or
/// cannot be read so (`null` among them).
fn tools_member<'a, S: DeserializeSeed<'a> + Copy>(result: &'a str, seed: S) -> Option<S::Value> {
    struct Object<S>(S);
    impl<'de, S: DeserializeSeed<'de> + Copy> Visitor<'de> for Object<S> {
        type Value = Option<S::Value>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("an object")
        }
        fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<Self::Value, M::Error> {
            let mut tools = None;
            while let Some(key) = map.next_key::<Key<'de>>()? {
                if key.0 == "tools" {
                    tools = Some(map.next_value_seed(self.0)?);
                } else {
                    map.next_value::<serde::de::IgnoredAny>()?;
                }
            }
            Ok(tools)
        }
    }
    let mut deserializer = mcp_resolve_protocol::json::deserializer(result);
    let tools = deserializer.deserialize_map(Object(seed)).ok()?;
    deserializer.end().ok()?;
    tools
}

/// The items of the `tools` member of a JSON object (a `tools/list`
/// result) as written, read in one pass over the object.
pub fn tools_of(result: &str) -> Option<Vec<&RawValue>> {
    tools_member(result, std::marker::PhantomData::<RawItems<'_>>).map(|items| items.0)
}

/// The items of the `tools` member of a JSON object (a `tools/list`
/// result), each as its text and its members. Where every item is an
/// object whose text can be found from its members (the common case), this
/// is one pass over the result; otherwise [`tools_of`] and
/// [`Members::of`] per item (non-objects have no members).
pub fn listed_tools(result: &str) -> Option<Vec<(&str, Option<Tool<'_>>)>> {
    if let Some(tools) = tools_in_one_pass(result) {
        return Some(tools);
    }
    Some(
        tools_of(result)?
            .into_iter()
            .map(|tool| (tool.get(), Tool::of(tool.get())))
            .collect(),
    )
}

/// [`listed_tools`] in one pass: the tools read as members, and each
/// tool's text found around them (`{`, then whitespace, before its first
/// key; whitespace, then `}`, after its last value). `None` when an item is
/// not an object, or is one whose text cannot be found that way (an empty
/// object, a first key with escapes).
fn tools_in_one_pass(result: &str) -> Option<Vec<(&str, Option<Tool<'_>>)>> {
    let tools = tools_member(result, ToolsSeed(result))?;
    tools
        .into_iter()
        .map(|tool| Some((object_text(result, &tool.members)?, Some(tool))))
        .collect()
}

/// The text in `outer` of the object whose members are `members`.
fn object_text<'a>(outer: &'a str, members: &Members<'a>) -> Option<&'a str> {
    let Cow::Borrowed(first) = &members.0.first()?.0 else {
        return None;
    };
    // The value written last ends last (a repeated key keeps its first
    // place and its last value): the greatest end, as an address.
    let last = members
        .0
        .iter()
        .map(|(_, v)| v.as_ptr() as usize + v.len())
        .max()?;
    let end = last.checked_sub(outer.as_ptr() as usize)?;
    around(outer, first, end, b'{', b'}')
}

/// Where `part` (a slice of `outer`) ends in `outer`.
fn end_in(outer: &str, part: &str) -> Option<usize> {
    (part.as_ptr() as usize + part.len()).checked_sub(outer.as_ptr() as usize)
}

/// The text in `outer` from the `open` before the quoted `first` (a slice
/// of `outer`), whitespace between, to the `close` after `end`, whitespace
/// between.
fn around<'a>(outer: &'a str, first: &str, end: usize, open: u8, close: u8) -> Option<&'a str> {
    let key = (first.as_ptr() as usize).checked_sub(outer.as_ptr() as usize)?;
    let bytes = outer.as_bytes();
    let before = bytes.get(..key.checked_sub(1)?)?;
    let start = before.iter().rposition(|b| !is_space(*b))?;
    let after = bytes.get(end..)?;
    let stop = end + after.iter().position(|b| !is_space(*b))?;
    (bytes.get(key - 1) == Some(&b'"') && before[start] == open && bytes[stop] == close)
        .then(|| outer.get(start..=stop))
        .flatten()
}

/// A `tools/list` result read with the envelope of the answer that carries
/// it ([`Envelope::of_reading`]): its text, and its tools as
/// [`listed_tools`] reads them. The seed refuses what it cannot read that
/// way (a tool that is not an object, a key with escapes, `tools` missing,
/// empty or written twice), and the answer is then read in two passes.
///
/// [`Envelope::of_reading`]: mcp_resolve_protocol::Envelope::of_reading
pub struct Listing<'a> {
    /// The result as written.
    pub text: &'a str,
    /// Each tool's text and members.
    pub tools: Vec<(&'a str, Option<Tool<'a>>)>,
}

/// An answer's result as it was read with the envelope.
pub enum Read<'a> {
    /// As written.
    Raw(&'a str),
    /// As a listing, in the same pass.
    Listing(Listing<'a>),
}

impl<'a> Read<'a> {
    /// The result as written.
    pub fn text(&self) -> &'a str {
        match self {
            Read::Raw(text) => text,
            Read::Listing(listing) => listing.text,
        }
    }

    /// Its tools as [`listed_tools`] reads them.
    pub fn tools(self) -> Option<Vec<(&'a str, Option<Tool<'a>>)>> {
        match self {
            Read::Raw(text) => listed_tools(text),
            Read::Listing(listing) => Some(listing.tools),
        }
    }
}

/// The envelope of `line`, an answer that may carry a `tools/list` result,
/// with that result read as a [`Listing`] in the same pass: by the
/// scanner where it reads the answer, by serde_json otherwise. `None` when
/// `line` is not one JSON object (read it with [`Envelope::of`]).
///
/// [`Envelope::of`]: mcp_resolve_protocol::Envelope::of
pub fn read_listing(line: &str) -> Option<(Envelope<'_>, Option<Listing<'_>>)> {
    if let Some((envelope, listing)) = fast::listing(line) {
        return Some((envelope, Some(listing)));
    }
    Envelope::of_reading(line, ListingSeed(line))
}

/// Reads a [`Listing`] out of `line`, the whole answer.
#[derive(Clone, Copy)]
pub struct ListingSeed<'a>(pub &'a str);

impl<'a> DeserializeSeed<'a> for ListingSeed<'a> {
    type Value = Listing<'a>;
    fn deserialize<D: Deserializer<'a>>(self, deserializer: D) -> Result<Listing<'a>, D::Error> {
        deserializer.deserialize_map(self)
    }
}

impl<'a> Visitor<'a> for ListingSeed<'a> {
    type Value = Listing<'a>;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a tools/list result")
    }
    fn visit_map<M: MapAccess<'a>>(self, mut map: M) -> Result<Listing<'a>, M::Error> {
        use serde::de::Error;
        let line = self.0;
        let unread = || M::Error::custom("not read in one pass");
        let (mut first, mut end, mut tools) = (None, 0, None);
        while let Some(Key(key)) = map.next_key::<Key<'a>>()? {
            let Cow::Borrowed(key) = key else {
                return Err(unread());
            };
            first.get_or_insert(key);
            let value_end = if key == "tools" {
                let items = map.next_value_seed(ToolsSeed(line))?;
                let texts = items
                    .iter()
                    .map(|tool| object_text(line, &tool.members))
                    .collect::<Option<Vec<_>>>()
                    .ok_or_else(unread)?;
                // The array ends at the `]` after its last item.
                let last = end_in(line, texts.last().ok_or_else(unread)?).ok_or_else(unread)?;
                let close = line.as_bytes()[last..]
                    .iter()
                    .position(|b| !is_space(*b))
                    .filter(|&i| line.as_bytes()[last + i] == b']')
                    .ok_or_else(unread)?;
                if tools.is_some() {
                    return Err(unread());
                }
                tools = Some(texts.into_iter().zip(items.into_iter().map(Some)).collect());
                last + close + 1
            } else {
                let value: &'a RawValue = map.next_value()?;
                end_in(line, value.get()).ok_or_else(unread)?
            };
            end = end.max(value_end);
        }
        let text = around(line, first.ok_or_else(unread)?, end, b'{', b'}').ok_or_else(unread)?;
        Ok(Listing {
            text,
            tools: tools.ok_or_else(unread)?,
        })
    }
}

/// JSON's whitespace.
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The string a JSON value (`text`, read as valid JSON) holds, borrowed
/// when it is written without escapes; `None` when it is no string.
pub fn string_of(text: &str) -> Option<Cow<'_, str>> {
    // The value is valid JSON: quoted, with no backslash, its text is
    // the string itself.
    if let Some(inner) = text.strip_prefix('"').and_then(|t| t.strip_suffix('"'))
        && !inner.contains('\\')
    {
        return Some(Cow::Borrowed(inner));
    }
    mcp_resolve_protocol::json::from_str::<Key<'_>>(text)
        .ok()
        .map(|key| key.0)
}

/// An array's items as written (anything else is an error).
struct RawItems<'a>(Vec<&'a RawValue>);

impl<'de: 'a, 'a> Deserialize<'de> for RawItems<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Array<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for Array<'a> {
            type Value = RawItems<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("an array")
            }
            fn visit_seq<S: SeqAccess<'de>>(self, mut seq: S) -> Result<RawItems<'a>, S::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element::<&'de RawValue>()? {
                    items.push(item);
                }
                Ok(RawItems(items))
            }
        }
        deserializer.deserialize_seq(Array(std::marker::PhantomData))
    }
}

/// What to take out of `text` to leave out the array items `items` (their
/// texts, slices of `text`, in order) at the indexes `cut` (ascending),
/// with the commas between them, so that what stays is the same array
/// without them: each run of left-out items from its first item to the
/// next item kept, or, for a run at the end, from the end of the last
/// item kept (or the start of the first item, when none is). `None` when
/// an index or a text is not where it should be.
pub fn cuts<'a>(text: &'a str, items: &[&'a str], cut: &[usize]) -> Option<Vec<&'a str>> {
    let start = |i: usize| (items.get(i)?.as_ptr() as usize).checked_sub(text.as_ptr() as usize);
    let end = |i: usize| end_in(text, items.get(i)?);
    let mut parts = Vec::new();
    let mut at = 0;
    while at < cut.len() {
        let first = cut[at];
        let mut last = first;
        while cut.get(at + 1) == Some(&(last + 1)) {
            at += 1;
            last += 1;
        }
        at += 1;
        let range = if last + 1 < items.len() {
            start(first)?..start(last + 1)?
        } else if first > 0 {
            end(first - 1)?..end(last)?
        } else {
            start(first)?..end(last)?
        };
        parts.push(text.get(range)?);
    }
    Some(parts)
}

/// `text` with each `(part, with)` replaced, every part a slice of `text`
/// itself, in the order they are written; `None` when one is not.
pub fn splice_all(text: &str, parts: &[(&str, String)]) -> Option<String> {
    let base = text.as_ptr() as usize;
    // One byte more: the newline the line gets when it is written.
    let mut out =
        String::with_capacity(text.len() + parts.iter().map(|(_, w)| w.len()).sum::<usize>() + 1);
    let mut at = 0;
    for (part, with) in parts {
        let start = (part.as_ptr() as usize).checked_sub(base)?;
        out.push_str(text.get(at..start)?);
        out.push_str(with);
        at = start.checked_add(part.len())?;
    }
    out.push_str(text.get(at..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_keep_their_text_order_and_last_value() {
        let text = r#"{ "b" : {"x": [1, 2]}, "a\u0062":1, "b":  2 }"#;
        let members = Members::of(text).unwrap();
        let keys: Vec<&str> = members.0.iter().map(|(k, _)| k.as_ref()).collect();
        assert_eq!(keys, ["b", "ab"]);
        assert_eq!(members.get("b").unwrap(), "2");
        assert!(Members::of("[1]").is_none());
        // A hostile object of many members (and repeats) reads in linear time.
        let many: Vec<String> = (0..100_000)
            .map(|i| format!(r#""k{}":{i}"#, i % 50_000))
            .collect();
        let many = format!("{{{}}}", many.join(","));
        let members = Members::of(&many).unwrap();
        assert_eq!(members.0.len(), 50_000);
        assert_eq!(members.get("k7").unwrap(), "50007");
        let result = r#"{"tools": [ {"a":1} , 2,"x"], "tools2": 1}"#;
        let list = tools_of(result).unwrap();
        let texts: Vec<&str> = list.iter().map(|r| r.get()).collect();
        assert_eq!(texts, [r#"{"a":1}"#, "2", r#""x""#]);
        assert!(tools_of(r#"{"tools": 3}"#).is_none());
        assert!(tools_of(r#"{"other": []}"#).is_none());
        let replaced = splice_all(
            result,
            &[(list[0].get(), "A".into()), (list[2].get(), "C".into())],
        );
        assert_eq!(replaced.unwrap(), r#"{"tools": [ A , 2,C], "tools2": 1}"#);
        // Read in one pass or in two, the tools are the same texts.
        for result in [
            r#"{"tools": [ {"a":1} , 2,"x"], "tools2": 1}"#,
            r#"{"x": {"tools": []}, "tools":[{ "name" : "a", "s": {"}": "{"} } ,{"b":[1,{}] ,"b":"2"	}]}"#,
            r#"{"tools": [{"n\u0061me": "a"}, {}]}"#,
            "{\"tools\": [\n  {\n \"name\": \"a\"\r\n }\n]}",
            r#"{"tools": null}"#,
        ] {
            let two: Option<Vec<&str>> =
                tools_of(result).map(|t| t.iter().map(|r| r.get()).collect());
            let one: Option<Vec<&str>> =
                listed_tools(result).map(|t| t.iter().map(|(text, _)| *text).collect());
            assert_eq!(one, two, "{result}");
        }
        assert!(
            tools_in_one_pass(r#"{"tools":[{ "name" : "a", "s": 1 } ,{"b":[1,{}] ,"b":"2"	}]}"#)
                .is_some()
        );
        assert_eq!(splice_all(result, &[]).unwrap(), result);
    }

    /// A tool's annotations read in the listing's one pass are the ones
    /// two passes read; what one pass cannot read leaves it to two.
    #[test]
    fn annotations_read_in_one_pass_are_those_read_in_two() {
        type Read<'a> = Vec<(Vec<(String, &'a str)>, Option<Vec<(String, &'a str)>>)>;
        fn members<'a>(m: &Members<'a>) -> Vec<(String, &'a str)> {
            m.0.iter().map(|(k, v)| (k.to_string(), *v)).collect()
        }
        fn read<'a>(tools: Vec<(&'a str, Option<Tool<'a>>)>) -> Read<'a> {
            tools
                .into_iter()
                .filter_map(|(_, tool)| tool)
                .map(|t| (members(&t.members), t.annotations.as_ref().map(members)))
                .collect()
        }
        let two = |result| -> Read<'_> {
            read(
                tools_of(result)
                    .unwrap()
                    .into_iter()
                    .map(|t| (t.get(), Tool::of(t.get())))
                    .collect(),
            )
        };
        for result in [
            r#"{"tools":[{"name":"a","annotations":{ "readOnlyHint" : true ,"t":"}"} }]}"#,
            r#"{"tools":[{"annotations":{"a":1},"name":"a","annotations":{"b":[2]}},{"name":"b"}]}"#,
        ] {
            assert_eq!(
                read(tools_in_one_pass(result).unwrap()),
                two(result),
                "{result}"
            );
        }
        for result in [
            r#"{"tools":[{"name":"a","annotations":{}}]}"#,
            r#"{"tools":[{"name":"a","annotations":[1]}]}"#,
            r#"{"tools":[{"name":"a","annotations":{"\u0061":1}}]}"#,
        ] {
            assert!(tools_in_one_pass(result).is_none(), "{result}");
            assert_eq!(read(listed_tools(result).unwrap()), two(result), "{result}");
        }
    }

    #[test]
    fn a_string_is_borrowed_unless_it_has_escapes() {
        assert!(matches!(string_of(r#""a b""#), Some(Cow::Borrowed("a b"))));
        assert!(matches!(string_of(r#""""#), Some(Cow::Borrowed(""))));
        assert_eq!(string_of(r#""a\u0062\"""#).unwrap(), "ab\"");
        assert!(string_of("1").is_none());
        assert!(string_of(r#"["a"]"#).is_none());
    }

    #[test]
    fn a_listing_read_with_its_envelope_is_the_listing_read_after_it() {
        use mcp_resolve_protocol::Envelope;
        fn read(line: &str) -> Option<(Option<serde_json::Value>, &str, Vec<&str>)> {
            let (message, listing) = Envelope::of_reading(line, ListingSeed(line))?;
            let listing = listing?;
            let tools: Vec<&str> = listing.tools.iter().map(|(text, _)| *text).collect();
            Some((message.id, listing.text, tools))
        }
        for line in [
            r#"{"result":{"tools":[{"name":"a","x":{"}":"{"}} , { "name" : "b" }]},"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":"k","result": { "nextCursor":"c", "tools" : [ {"name":"a"}
            ] ,"_meta":{}} }"#,
            r#"{"id":2,"result":{"tools":[{"name":"a"}],"x":[1,{"y":"]"}]}}"#,
        ] {
            let (id, text, tools) = read(line).unwrap_or_else(|| panic!("{line}"));
            let message = Envelope::of(line).unwrap();
            assert_eq!(id, message.id);
            assert_eq!(text, message.result_raw.unwrap().get());
            let after: Vec<&str> = listed_tools(text)
                .unwrap()
                .iter()
                .map(|(t, _)| *t)
                .collect();
            assert_eq!(tools, after, "{line}");
        }
        // What one pass cannot read is read in two.
        for line in [
            r#"{"id":1,"result":{"tools":[]}}"#,
            r#"{"id":1,"result":{"tools":[{"name":"a"}, 2]}}"#,
            r#"{"id":1,"result":{"tools":[{"n\u0061me":"a"}]}}"#,
            r#"{"id":1,"result":{"t\u006fols":[{"name":"a"}]}}"#,
            r#"{"id":1,"result":{"tools":[{"name":"a"}],"tools":[{"name":"b"}]}}"#,
            r#"{"id":1,"result":{"tools":null}}"#,
            r#"{"id":1,"result":{"other":1}}"#,
            r#"{"id":1,"result":[]}"#,
            r#"{"id":1,"result":{"tools":[{"name":"a"}]}} x"#,
        ] {
            assert!(read(line).is_none(), "{line}");
        }
        // An answer without a result reads as its envelope.
        let (message, listing) =
            Envelope::of_reading(r#"{"id":1,"error":{"code":1}}"#, ListingSeed("")).unwrap();
        assert!(message.error && listing.is_none());
    }

    proptest::proptest! {
        /// Cutting items out of an array as written leaves the array
        /// without them, whatever the items and the spacing between them.
        #[test]
        fn cut_items_leave_the_array_without_them(
            items in proptest::collection::vec((0..4usize, 0..3usize, proptest::bool::ANY), 0..8),
        ) {
            let spaces = ["", " ", "\n\t "];
            let values = [r#"{"a":[1,2]}"#, "3", r#""x,]""#, "[ ]"];
            let written: Vec<String> = items
                .iter()
                .map(|(v, space, _)| format!("{}{}", values[*v], spaces[*space]))
                .collect();
            let text = format!(r#"{{"tools": [ {} ] }}"#, written.join(", "));
            let raw = tools_of(&text).unwrap();
            let texts: Vec<&str> = raw.iter().map(|r| r.get()).collect();
            let cut: Vec<usize> = (0..items.len()).filter(|&i| items[i].2).collect();
            let parts = cuts(&text, &texts, &cut).unwrap();
            let parts: Vec<(&str, String)> = parts.into_iter().map(|p| (p, String::new())).collect();
            let after: serde_json::Value =
                mcp_resolve_protocol::json::from_str(&splice_all(&text, &parts).unwrap()).unwrap();
            let kept: Vec<serde_json::Value> = (0..items.len())
                .filter(|i| !items[*i].2)
                .map(|i| mcp_resolve_protocol::json::from_str(values[items[i].0]).unwrap())
                .collect();
            proptest::prop_assert_eq!(after, serde_json::json!({"tools": kept}));
        }
    }
}

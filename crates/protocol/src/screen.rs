//! The JSON-RPC 2.0 screen: what a server (or a proxy) must answer itself
//! because the message cannot be passed on, judged from the message's
//! [`Envelope`] — one pass over the text, no tree built — so that what
//! passes goes on with its envelope already read.
//!
//! - a line that is not JSON: `-32700` with `"id": null`;
//! - a batch (MCP has none), or a value that is not a request, notification
//!   or response: `-32600` with `"id": null`;
//! - a request with an `id` that is not a string or an integer: `-32600`
//!   with `"id": null`;
//! - a request with `"jsonrpc"` other than `"2.0"` or a method that is not a
//!   string: `-32600` with its `id`;
//! - a request whose `params` (or `params._meta`) is not an object: `-32602`
//!   with its `id` (MCP's params are always objects);
//! - a malformed notification gets no answer (JSON-RPC never answers one)
//!   and is dropped, and so is any notification before the first request;
//! - with [`Screen::checking`], a resolve request of the 2026-07-28
//!   lifecycle whose `_meta` client capabilities do not declare the
//!   extension as this version supports it ([`super::declares_extension`]):
//!   `-32021`, as the extension's table says.

use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use serde_json::Value;

use super::{Envelope, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, Raw, supported_settings};
use crate::RpcError;

/// Params as a reader of [`Screen::read_parsing_with`] gives them: a tree,
/// or something read from their text that stands for one.
pub trait Parsed: From<Value> {
    /// Whether the params' `_meta`, when they have one, is an object, when
    /// this reading knows (`None`: the screen reads it from their text).
    fn meta_is_object(&self) -> Option<bool>;
}

impl Parsed for Value {
    fn meta_is_object(&self) -> Option<bool> {
        Some(self.get("_meta").is_none_or(Value::is_object))
    }
}

/// What to do with one input line.
#[derive(Clone, Debug, PartialEq)]
pub enum Screened {
    /// Pass it to the server.
    Forward,
    /// Answer it with this error response; the server never sees it.
    Reply(Value),
    /// Neither: a notification that is malformed or comes too early, or a
    /// blank line.
    Drop(&'static str),
}

/// The screening of one stream: remembers whether a request has been
/// forwarded yet, and whether the session opened with `initialize`.
#[derive(Debug, Default)]
pub struct Screen {
    started: bool,
    legacy: bool,
    /// The resolve method whose client capability is checked here (the
    /// extension dialect), if any.
    resolve_method: Option<&'static str>,
}

/// A refusal: the error response for `id`.
fn refuse(id: Value, code: i64, message: &str) -> Screened {
    Screened::Reply(super::error_value(&id, &RpcError::new(code, message, None)))
}

impl Screen {
    /// A screen that also answers `-32021` for `method` requests whose
    /// capability metadata does not declare the extension (see the module
    /// documentation).
    pub fn checking(method: &'static str) -> Screen {
        Screen {
            resolve_method: Some(method),
            ..Screen::default()
        }
    }

    /// This screen for messages that each arrive on their own (one HTTP
    /// request each): there is no stream whose first request could be
    /// awaited, and a request is of the 2026-07-28 lifecycle when its own
    /// `_meta` says so.
    pub fn per_message(self) -> Screen {
        Screen {
            started: true,
            legacy: true,
            ..self
        }
    }

    /// Notes a request that another screen passed, as [`Screen::read`]
    /// would have noted it: a transport that screens each message where it
    /// arrives (a [`Screen::per_message`] screen, one HTTP request each)
    /// hands the session's screen what went on, so that the session does
    /// not read it again and its screen still knows the stream started.
    pub fn passed(&mut self, method: &str) {
        if !self.started {
            self.started = true;
            self.legacy = method == "initialize";
        }
    }

    /// Screens one line (without its newline).
    pub fn line(&mut self, line: &str) -> Screened {
        match self.read(line) {
            Ok(_) => Screened::Forward,
            Err(screened) => screened,
        }
    }

    /// Screens one line, and gives the envelope of what may pass on.
    pub fn read<'a>(&mut self, line: &'a str) -> Result<Envelope<'a>, Screened> {
        if line.trim().is_empty() {
            return Err(Screened::Drop("a blank line"));
        }
        // One walk checks that the line is JSON as a tree would have it
        // (numbers in range, escapes that decode, nesting within limits),
        // without building the tree; the envelope is then read from it.
        match crate::json::from_str::<Shape>(line) {
            Err(_) => {
                return Err(refuse(
                    Value::Null,
                    RpcError::PARSE_ERROR,
                    "Parse error: the message is not JSON",
                ));
            }
            Ok(Shape::Object) => {}
            Ok(shape) => {
                let why = if shape == Shape::Array {
                    "Invalid Request: batches are not supported"
                } else {
                    "Invalid Request: a message is a JSON object"
                };
                return Err(refuse(Value::Null, RpcError::INVALID_REQUEST, why));
            }
        }
        let Ok(message) = crate::json::from_str::<Envelope<'a>>(line) else {
            return Err(refuse(
                Value::Null,
                RpcError::INVALID_REQUEST,
                "Invalid Request: a message is a JSON object",
            ));
        };
        self.judge(message, None)
    }

    /// As [`Screen::read`], with the `params` of a message whose method
    /// `parses` names parsed too. Such a message, and one without params,
    /// is walked once less: when its envelope read every other member as a
    /// tree reader would, the parse of its params is the rest of the check
    /// (a message that fails it gets the `-32700` the walk would have
    /// given).
    pub fn read_parsing<'a>(
        &mut self,
        line: &'a str,
        parses: impl Fn(&str) -> bool,
    ) -> Result<(Envelope<'a>, Option<Value>), Screened> {
        self.read_parsing_with(line, parses, |_, _| None)
    }

    /// As [`Screen::read_parsing`], where `quick` may read the params of a
    /// method `parses` names on their text first (given the method and the
    /// params as written): what it gives stands for the parsed params, and
    /// must be given only for params it read as a tree reader would (every
    /// string's escapes decoded, every number in range, nesting within
    /// limits), since the parse it replaces is part of the check. `None`
    /// from it: the params are parsed as [`Screen::read_parsing`] does.
    pub fn read_parsing_with<'a, T: Parsed>(
        &mut self,
        line: &'a str,
        parses: impl Fn(&str) -> bool,
        quick: impl FnOnce(&str, &'a str) -> Option<T>,
    ) -> Result<(Envelope<'a>, Option<T>), Screened> {
        if let Some(message) = Envelope::of(line)
            && !message.skipped
        {
            let Some(params) = message.params else {
                // Every member was read as a tree reader reads it.
                return self.judge(message, None).map(|message| (message, None));
            };
            if let Some(method) = message.method.as_deref().filter(|m| parses(m)) {
                if let Some(read) = quick(method, params.get()) {
                    let meta = read.meta_is_object();
                    return self
                        .judge(message, meta)
                        .map(|message| (message, Some(read)));
                }
                return match crate::json::from_str::<Value>(params.get()) {
                    // The limit counts from the message, one level above.
                    // Whether `_meta` is an object is read from the tree,
                    // not from the text again.
                    Ok(value) if !nests_past(params.get(), &value, NESTING - 1) => {
                        let meta = value.get("_meta").is_none_or(Value::is_object);
                        self.judge(message, Some(meta))
                            .map(|message| (message, Some(T::from(value))))
                    }
                    _ => Err(refuse(
                        Value::Null,
                        RpcError::PARSE_ERROR,
                        "Parse error: the message is not JSON",
                    )),
                };
            }
        }
        let message = self.read(line)?;
        let params = match message.method.as_deref() {
            Some(method) if parses(method) => message.params().map(T::from),
            _ => None,
        };
        Ok((message, params))
    }

    /// `meta_is_object`: whether the params' `_meta`, when they have one,
    /// is an object, when the params were parsed already (`None`: read
    /// from their text here).
    fn judge<'a>(
        &mut self,
        message: Envelope<'a>,
        meta_is_object: Option<bool>,
    ) -> Result<Envelope<'a>, Screened> {
        // A response to a request of the server's: the server matches it.
        if message.is_response() {
            return Ok(message);
        }
        let Some(id) = &message.id else {
            // A notification: never answered.
            let well_formed =
                message.jsonrpc && message.method.is_some() && message.params.is_none_or(is_object);
            return if !well_formed {
                Err(Screened::Drop("a malformed notification"))
            } else if !self.started {
                Err(Screened::Drop("a notification before the first request"))
            } else {
                Ok(message)
            };
        };
        let valid_id = match id {
            Value::String(_) => true,
            Value::Number(n) => n.is_i64() || n.is_u64(),
            _ => false,
        };
        if !valid_id {
            return Err(refuse(
                Value::Null,
                RpcError::INVALID_REQUEST,
                "Invalid Request: `id` must be a string or an integer",
            ));
        }
        if !message.jsonrpc {
            return Err(refuse(
                id.clone(),
                RpcError::INVALID_REQUEST,
                "Invalid Request: `jsonrpc` must be \"2.0\"",
            ));
        }
        let Some(method) = message.method.as_deref() else {
            return Err(refuse(
                id.clone(),
                RpcError::INVALID_REQUEST,
                "Invalid Request: `method` must be a string",
            ));
        };
        if let Some(params) = message.params {
            if !is_object(params) {
                return Err(refuse(
                    id.clone(),
                    RpcError::INVALID_PARAMS,
                    "Invalid params: `params` must be an object",
                ));
            }
            if !meta_is_object.unwrap_or_else(|| self::meta_is_object(params)) {
                return Err(refuse(
                    id.clone(),
                    RpcError::INVALID_PARAMS,
                    "Invalid params: `params._meta` must be an object",
                ));
            }
        }
        self.passed(method);
        if self.resolve_method == Some(method) && !self.declares_extension(&message) {
            return Err(Screened::Reply(super::error_value(
                id,
                &RpcError::missing_capability(),
            )));
        }
        Ok(message)
    }

    /// Whether a resolve request may go on to the server: a request of a
    /// session opened with `initialize` that does not say it is 2026-07-28
    /// (the server checks the session's capabilities), or one whose `_meta`
    /// client capabilities declare the extension as this version supports.
    fn declares_extension(&self, message: &Envelope<'_>) -> bool {
        let params = message.params();
        let meta = params.as_ref().and_then(|p| p.get("_meta"));
        let modern = !self.legacy
            || meta
                .and_then(|m| m.get(META_PROTOCOL_VERSION))
                .and_then(Value::as_str)
                .is_some_and(super::is_stateless_version);
        if !modern {
            return true;
        }
        supported_settings(
            meta.and_then(|m| m.get(META_CLIENT_CAPABILITIES))
                .and_then(|c| c.get("extensions"))
                .and_then(|e| e.get(crate::EXTENSION_ID)),
        )
    }
}

/// The top-level kind of a JSON text whose every value was read as a tree
/// reader reads it (decoded, in range) but kept nowhere.
#[derive(Debug, PartialEq, Eq)]
enum Shape {
    Object,
    Array,
    Scalar,
}

impl<'de> Deserialize<'de> for Shape {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(ShapeOf)
    }
}

/// Reads any value through `deserialize_any` (so numbers are converted and
/// strings decoded, with the errors a tree reader would give) and keeps
/// only its kind.
struct ShapeOf;

impl<'de> Visitor<'de> for ShapeOf {
    type Value = Shape;
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a JSON value")
    }
    fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_unit<E>(self) -> Result<Shape, E> {
        Ok(Shape::Scalar)
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Shape, A::Error> {
        while seq.next_element::<Shape>()?.is_some() {}
        Ok(Shape::Array)
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Shape, A::Error> {
        while map.next_entry::<Key, Shape>()?.is_some() {}
        Ok(Shape::Object)
    }
}

/// An object's key, decoded and dropped.
struct Key;

impl<'de> Deserialize<'de> for Key {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Decode;
        impl Visitor<'_> for Decode {
            type Value = Key;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_str<E>(self, _: &str) -> Result<Key, E> {
                Ok(Key)
            }
        }
        deserializer.deserialize_str(Decode)
    }
}

/// The deepest a tree reader nests arrays and objects (serde_json's
/// recursion limit): a message that nests deeper is not JSON to it.
pub(crate) const NESTING: usize = 127;

/// Whether `value` (read from `text`) nests arrays and objects more than
/// `limit` deep. Text too short to nest that deep is not walked.
pub(crate) fn nests_past(text: &str, value: &Value, limit: usize) -> bool {
    fn depth(value: &Value) -> usize {
        match value {
            Value::Array(items) => 1 + items.iter().map(depth).max().unwrap_or(0),
            Value::Object(members) => 1 + members.values().map(depth).max().unwrap_or(0),
            _ => 0,
        }
    }
    // Each level is at least one bracket.
    text.len() > limit && depth(value) > limit
}

/// Whether a raw JSON value is an object.
fn is_object(raw: Raw<'_>) -> bool {
    raw.get().trim_start().starts_with('{')
}

/// Whether an object's `_meta` member, when it has one (the last one
/// written), is an object; read without building the object.
fn meta_is_object(params: Raw<'_>) -> bool {
    // Params that cannot name `_meta` (neither the word nor an escape that
    // could spell it) have none: not read again.
    if !super::may_name_meta(params.get()) {
        return true;
    }
    struct MetaShape(bool);
    impl<'de> Deserialize<'de> for MetaShape {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            struct Members;
            impl<'de> Visitor<'de> for Members {
                type Value = MetaShape;
                fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                    f.write_str("an object")
                }
                fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<MetaShape, M::Error> {
                    let mut ok = true;
                    while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
                        if key == "_meta" {
                            ok = is_object(map.next_value::<Raw<'de>>()?);
                        } else {
                            map.next_value::<IgnoredAny>()?;
                        }
                    }
                    Ok(MetaShape(ok))
                }
            }
            deserializer.deserialize_map(Members)
        }
    }
    crate::json::from_str::<MetaShape>(params.get()).is_ok_and(|shape| shape.0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]

    use proptest::prelude::*;
    use serde_json::json;

    use super::*;

    fn code(s: &Screened) -> (i64, Value) {
        match s {
            Screened::Reply(v) => (v["error"]["code"].as_i64().unwrap(), v["id"].clone()),
            other => panic!("not a reply: {other:?}"),
        }
    }

    #[test]
    fn every_malformed_request_is_answered_with_its_id() {
        let mut s = Screen::default();
        assert_eq!(code(&s.line("not json")), (-32700, Value::Null));
        assert_eq!(code(&s.line("{\"id\":")), (-32700, Value::Null));
        assert_eq!(code(&s.line("[1, 2]")), (-32600, Value::Null));
        assert_eq!(code(&s.line("42")), (-32600, Value::Null));
        assert_eq!(
            code(&s.line(r#"{"jsonrpc":"2.0","id":{"a":1},"method":"x"}"#)),
            (-32600, Value::Null)
        );
        assert_eq!(
            code(&s.line(r#"{"jsonrpc":"1.0","id":2,"method":"tools/list"}"#)),
            (-32600, json!(2))
        );
        assert_eq!(
            code(&s.line(r#"{"jsonrpc":"2.0","id":"a","method":7}"#)),
            (-32600, json!("a"))
        );
        for params in [
            r#"[]"#,
            r#""x""#,
            r#"{"_meta":[]}"#,
            r#"{"\u005fmeta":[]}"#,
            "null",
        ] {
            let line =
                format!(r#"{{"jsonrpc":"2.0","id":3,"method":"tools/list","params":{params}}}"#);
            assert_eq!(code(&s.line(&line)), (-32602, json!(3)), "{line}");
        }
    }

    #[test]
    fn notifications_are_never_answered_and_wait_for_the_first_request() {
        let mut s = Screen::default();
        let note = r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
        assert!(matches!(s.line(note), Screened::Drop(_)));
        assert!(matches!(
            s.line(r#"{"jsonrpc":"2.0","method":"n","params":[]}"#),
            Screened::Drop(_)
        ));
        assert_eq!(
            s.line(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{}}"#),
            Screened::Forward
        );
        assert_eq!(s.line(note), Screened::Forward);
        assert_eq!(
            s.line(r#"{"jsonrpc":"2.0","id":9,"result":{}}"#),
            Screened::Forward
        );
        assert!(matches!(s.line("   "), Screened::Drop(_)));
    }

    #[test]
    fn resolve_requests_without_the_declared_extension_get_32021() {
        let resolve = |meta: Value| {
            json!({"jsonrpc": "2.0", "id": 1, "method": "tools/resolve",
                   "params": {"name": "t", "arguments": {}, "_meta": meta}})
            .to_string()
        };
        let caps = |ext: Value| {
            json!({META_PROTOCOL_VERSION: "2026-07-28",
                   META_CLIENT_CAPABILITIES: {"extensions": {crate::EXTENSION_ID: ext}}})
        };
        let mut s = Screen::checking("tools/resolve");
        assert_eq!(
            code(&s.line(&resolve(json!({META_PROTOCOL_VERSION: "2026-07-28"})))).0,
            -32021
        );
        assert_eq!(code(&s.line(&resolve(caps(json!(true))))).0, -32021);
        assert_eq!(code(&s.line(&resolve(caps(Value::Null)))).0, -32021);
        assert_eq!(s.line(&resolve(caps(json!({})))), Screened::Forward);
        // Settings this version does not know count as not declared.
        assert_eq!(code(&s.line(&resolve(caps(json!({"x": 1}))))).0, -32021);
        // Other methods, and screens without the check, pass.
        let list = r#"{"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta":{}}}"#;
        assert_eq!(s.line(list), Screened::Forward);
        let mut plain = Screen::default();
        assert_eq!(plain.line(&resolve(json!({}))), Screened::Forward);
        // A legacy session: the server checks the capabilities of `initialize`.
        let mut legacy = Screen::checking("tools/resolve");
        legacy.line(r#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{}}"#);
        assert_eq!(legacy.line(&resolve(json!({}))), Screened::Forward);
        assert_eq!(
            code(&legacy.line(&resolve(json!({META_PROTOCOL_VERSION: "2026-07-28"})))).0,
            -32021
        );
    }

    /// The screen as first written: over the whole message parsed into a
    /// tree. The envelope screen must decide alike.
    fn reference(screen: &mut (bool, bool), line: &str) -> Result<(), (i64, Value)> {
        if line.trim().is_empty() {
            return Ok(());
        }
        let Ok(value) = crate::json::from_str::<Value>(line) else {
            return Err((-32700, Value::Null));
        };
        let Value::Object(message) = &value else {
            return Err((-32600, Value::Null));
        };
        let id = message.get("id");
        if !message.contains_key("method")
            && (message.contains_key("result") || message.contains_key("error"))
        {
            return Ok(());
        }
        if id.is_none() {
            return Ok(());
        }
        let valid = match id {
            Some(Value::String(_)) => true,
            Some(Value::Number(n)) => n.is_i64() || n.is_u64(),
            _ => false,
        };
        if !valid {
            return Err((-32600, Value::Null));
        }
        let id = id.cloned().unwrap_or_default();
        if message.get("jsonrpc") != Some(&json!("2.0")) {
            return Err((-32600, id));
        }
        if !message.get("method").is_some_and(Value::is_string) {
            return Err((-32600, id));
        }
        match message.get("params") {
            None => {}
            Some(Value::Object(p)) if p.get("_meta").is_some_and(|m| !m.is_object()) => {
                return Err((-32602, id));
            }
            Some(Value::Object(_)) => {}
            Some(_) => return Err((-32602, id)),
        }
        if !screen.0 {
            screen.0 = true;
            screen.1 = message.get("method") == Some(&json!("initialize"));
        }
        Ok(())
    }

    fn fragment() -> impl Strategy<Value = String> {
        prop_oneof![
            Just(r#""jsonrpc":"2.0""#.to_string()),
            Just(r#""jsonrpc":"1.0""#.to_string()),
            Just(r#""jsonrpc":2"#.to_string()),
            Just(r#""id":1"#.to_string()),
            Just(r#""id":"a""#.to_string()),
            Just(r#""id":1.5"#.to_string()),
            Just(r#""id":null"#.to_string()),
            Just(r#""id":{}"#.to_string()),
            Just(r#""id":18446744073709551616"#.to_string()),
            Just(r#""method":"tools/list""#.to_string()),
            Just(r#""method":"initialize""#.to_string()),
            Just(r#""method":"m\u0031""#.to_string()),
            Just(r#""method":[1]"#.to_string()),
            Just(r#""params":{}"#.to_string()),
            Just(r#""params":{"_meta":{}}"#.to_string()),
            Just(r#""params":{"_meta":1,"x":[{"_meta":2}]}"#.to_string()),
            Just(r#""params":{"_meta":[],"_meta":{}}"#.to_string()),
            Just(r#""params":{"\u005fmeta":1}"#.to_string()),
            Just(r#""params":{"x":"_meta","y":{"_met\u0061":[]}}"#.to_string()),
            Just(r#""params":[]"#.to_string()),
            Just(r#""params":null"#.to_string()),
            Just(r#""result":null"#.to_string()),
            Just(r#""error":{"code":1}"#.to_string()),
            Just(r#""other":{"a":[1,2,{"b":null}]}"#.to_string()),
            Just(r#""other":1e400"#.to_string()),
            Just(r#""params":{"x":[-1e999]}"#.to_string()),
            Just(r#""other":"\ud800""#.to_string()),
            Just(r#""\udc00":1"#.to_string()),
            Just(format!(r#""deep":{}{}"#, "[".repeat(130), "]".repeat(130))),
            Just(r#""method":"tools/call""#.to_string()),
            Just(r#""id":1e400"#.to_string()),
            Just(r#""id":"\udc00""#.to_string()),
            Just(r#""params":{"name":"t","arguments":{"n":1e400}}"#.to_string()),
            Just(r#""params":{"s":"\ud800"}"#.to_string()),
            Just(r#""params":{"a":1},"params":{"b":2}"#.to_string()),
            // Params nested to the tree reader's limit, and past it.
            Just(format!(r#""params":{}"#, nested(124))),
            Just(format!(r#""params":{}"#, nested(125))),
            Just(format!(r#""params":{}"#, nested(126))),
            Just(format!(r#""params":{}"#, nested(127))),
        ]
    }

    /// An object whose member `a` is `n` arrays, one in another.
    fn nested(n: usize) -> String {
        format!(r#"{{"a":{}{}}}"#, "[".repeat(n), "]".repeat(n))
    }

    /// Params parsed while screening are refused exactly where the whole
    /// message nests past what a tree reader reads, and out-of-range
    /// numbers and lone surrogates in them are a parse error as before.
    #[test]
    fn parsing_the_params_screens_to_the_same_limits() {
        let request = |params: &str| {
            format!(r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{params}}}"#)
        };
        let mut lines: Vec<String> = (120..=128).map(|n| request(&nested(n))).collect();
        lines.push(request(r#"{"name":"t","arguments":{"n":-1e999}}"#));
        lines.push(request(r#"{"s":"\ud800"}"#));
        lines.push(request(r#"{"name":"t","arguments":{"path":"a"}}"#));
        for line in &lines {
            let whole = Screen::default().line(line);
            let parsing = Screen::default().read_parsing(line, |_| true);
            match (&whole, &parsing) {
                (Screened::Forward, Ok((_, Some(params)))) => {
                    assert_eq!(
                        Some(params),
                        crate::json::from_str::<Value>(line).unwrap().get("params")
                    );
                }
                (Screened::Reply(a), Err(Screened::Reply(b))) => assert_eq!(a, b, "{line}"),
                _ => panic!("{line}: {whole:?} against {parsing:?}"),
            }
        }
        // 125 arrays in `a`, in `params`, in the message: 127 levels, the
        // most; one more is not JSON to a tree reader.
        assert_eq!(Screen::default().line(&lines[5]), Screened::Forward);
        assert_ne!(Screen::default().line(&lines[6]), Screened::Forward);
    }

    proptest! {
        #[test]
        fn the_envelope_screen_decides_as_the_tree_screen_did(
            members in proptest::collection::vec(fragment(), 0..6),
            wrap in 0u8..6,
        ) {
            let body = members.join(",");
            let line = match wrap {
                0 => format!("[{{{body}}}]"),
                1 => format!("{{{body}"),
                2 => format!(" {{ {body} }} "),
                _ => format!("{{{body}}}"),
            };
            let mut screen = Screen::default();
            let mut reference_state = (false, false);
            let ours = match screen.line(&line) {
                Screened::Reply(v) => Err((v["error"]["code"].as_i64().unwrap(), v["id"].clone())),
                _ => Ok(()),
            };
            prop_assert_eq!(&ours, &reference(&mut reference_state, &line), "{}", line);
            prop_assert_eq!((screen.started, screen.legacy), reference_state, "{}", line);
            // Parsing the params while screening decides alike, and gives
            // the params a tree reader gives.
            let mut parsing = Screen::default();
            let read = parsing.read_parsing(&line, |m| m != "initialize");
            let decided = match &read {
                Err(Screened::Reply(v)) => Err((v["error"]["code"].as_i64().unwrap(), v["id"].clone())),
                _ => Ok(()),
            };
            prop_assert_eq!(&decided, &ours, "{}", line);
            prop_assert_eq!((parsing.started, parsing.legacy), reference_state, "{}", line);
            if let Ok((message, params)) = read {
                let expected = match message.method.as_deref() {
                    Some(m) if m != "initialize" => message.params(),
                    _ => None,
                };
                prop_assert_eq!(params, expected, "{}", line);
            }
        }
    }
}

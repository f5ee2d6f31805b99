//! A `tools/call`'s params checked as written, without a tree: for a call
//! nothing will judge (no policy, pin, verification, audit or telemetry),
//! the proxy only needs to know that the rules' `inputSchema` accepts the
//! arguments. When that schema is a flat object of scalar properties (the
//! common case: `type`, `enum` of strings, `minLength`, `maxLength`,
//! `required`, `additionalProperties`, under a known draft's `$schema`, as
//! the TypeScript SDK writes them), the arguments are checked on their
//! text; anything else, or any doubt, goes the whole way (params parsed
//! into a tree, the JSON Schema validator), which also gives the error.
//!
//! The check only ever says "accepted" when the validator would: a
//! property test holds it to the validator on random schemas and calls.

use std::borrow::Cow;

use serde::de::{Deserialize, Deserializer, Error, MapAccess, Visitor};
use serde_json::Value;

use crate::raw::{Key, Members};

/// A scalar type `type` names.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Kind {
    String,
    Integer,
    Number,
    Boolean,
}

/// One property's schema: the keywords the check reads.
#[derive(Debug, Default)]
struct Property {
    kind: Option<Kind>,
    choices: Option<Vec<String>>,
    min_length: Option<u64>,
    max_length: Option<u64>,
}

/// A tool's `inputSchema` the check can decide on a call's text.
#[derive(Debug)]
pub struct QuickSchema {
    properties: Vec<(String, Property)>,
    required: Vec<String>,
    /// `additionalProperties: false`.
    closed: bool,
}

/// The drafts whose `$schema` the check accepts (with or without the
/// trailing `#`): in all of them, the keywords it reads mean the same for
/// the values it reads (an integer written with digits alone is an integer
/// in every draft). The schema compiled with the validator, so it is valid
/// in its draft. (`-0` is the exception, and [`scalar`] leaves it out.)
const DRAFTS: [&str; 5] = [
    "http://json-schema.org/draft-04/schema",
    "http://json-schema.org/draft-06/schema",
    "http://json-schema.org/draft-07/schema",
    "https://json-schema.org/draft/2019-09/schema",
    "https://json-schema.org/draft/2020-12/schema",
];

/// Keywords that only annotate: they never refuse an instance.
const ANNOTATIONS: [&str; 4] = ["description", "title", "default", "examples"];

impl QuickSchema {
    /// `schema` when every keyword in it is one the check reads (or only
    /// annotates), with the values the check understands; `None`
    /// otherwise (the call goes the whole way).
    pub fn of(schema: &Value) -> Option<QuickSchema> {
        let schema = schema.as_object()?;
        let mut quick = QuickSchema {
            properties: Vec::new(),
            required: Vec::new(),
            closed: false,
        };
        for (keyword, value) in schema {
            match keyword.as_str() {
                "type" => (value.as_str()? == "object").then_some(())?,
                "properties" => {
                    for (name, property) in value.as_object()? {
                        quick
                            .properties
                            .push((name.clone(), property_of(property)?));
                    }
                }
                "required" => {
                    for name in value.as_array()? {
                        quick.required.push(name.as_str()?.to_string());
                    }
                }
                "additionalProperties" => quick.closed = !value.as_bool()?,
                "$schema" => DRAFTS
                    .contains(&value.as_str()?.trim_end_matches('#'))
                    .then_some(())?,
                other if ANNOTATIONS.contains(&other) => {}
                _ => return None,
            }
        }
        Some(quick)
    }

    /// Whether the schema accepts the object whose members are `members`,
    /// each value as written and already read as valid JSON: `true` only
    /// when it surely does; `false` when it does not, or when the check
    /// cannot tell (a nested value, a number with a fraction or exponent).
    pub fn accepts(&self, members: &Members<'_>) -> bool {
        let all_known = members.0.iter().all(|(key, raw)| {
            match self.properties.iter().find(|(name, _)| name == key) {
                Some((_, property)) => property.accepts(raw),
                None => !self.closed && scalar(raw).is_some(),
            }
        });
        all_known
            && self
                .required
                .iter()
                .all(|name| members.0.iter().any(|(key, _)| key == name))
    }
}

/// A property's schema the check reads, or `None`.
fn property_of(schema: &Value) -> Option<Property> {
    let mut property = Property::default();
    for (keyword, value) in schema.as_object()? {
        match keyword.as_str() {
            "type" => {
                property.kind = Some(match value.as_str()? {
                    "string" => Kind::String,
                    "integer" => Kind::Integer,
                    "number" => Kind::Number,
                    "boolean" => Kind::Boolean,
                    _ => return None,
                })
            }
            "enum" => {
                let choices = value.as_array()?;
                property.choices = Some(
                    choices
                        .iter()
                        .map(|c| c.as_str().map(str::to_string))
                        .collect::<Option<_>>()?,
                );
            }
            "minLength" => property.min_length = Some(value.as_u64()?),
            "maxLength" => property.max_length = Some(value.as_u64()?),
            other if ANNOTATIONS.contains(&other) => {}
            _ => return None,
        }
    }
    Some(property)
}

/// A scalar as written, read as a tree reader reads it.
enum Scalar<'a> {
    String(Cow<'a, str>),
    Integer,
    Boolean,
    Null,
}

/// `raw` (one JSON value, already read as valid JSON) when it is a scalar
/// the check can read: a string (its escapes decoded), an integer of at
/// most 18 digits other than `-0` (in range whatever a tree reader does
/// with it), `true`, `false` or `null`. A number with a fraction or an
/// exponent, an object or an array: `None`.
fn scalar(raw: &str) -> Option<Scalar<'_>> {
    let bytes = raw.as_bytes();
    match bytes.first()? {
        // Borrowed when written without escapes: not read again.
        b'"' => crate::raw::string_of(raw).map(Scalar::String),
        // `-0` is read as the float −0.0, which draft 4 does not count as
        // an integer: left to the validator.
        b'-' | b'0'..=b'9' if raw != "-0" => {
            let digits = bytes.strip_prefix(b"-").unwrap_or(bytes);
            (!digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit))
                .then_some(Scalar::Integer)
        }
        _ => match raw {
            "true" | "false" => Some(Scalar::Boolean),
            "null" => Some(Scalar::Null),
            _ => None,
        },
    }
}

impl Property {
    /// Whether this property's schema surely accepts `raw`.
    fn accepts(&self, raw: &str) -> bool {
        let Some(value) = scalar(raw) else {
            return false;
        };
        let kind_fits = |kind: Kind| self.kind.is_none_or(|k| k == kind);
        match value {
            Scalar::String(text) => {
                let length = || text.chars().count() as u64;
                kind_fits(Kind::String)
                    && self
                        .choices
                        .as_ref()
                        .is_none_or(|choices| choices.iter().any(|c| *c == *text))
                    && self.min_length.is_none_or(|min| length() >= min)
                    && self.max_length.is_none_or(|max| length() <= max)
            }
            // An integer is a number too.
            Scalar::Integer => {
                self.choices.is_none()
                    && self
                        .kind
                        .is_none_or(|k| k == Kind::Integer || k == Kind::Number)
            }
            Scalar::Boolean => self.choices.is_none() && kind_fits(Kind::Boolean),
            Scalar::Null => self.choices.is_none() && self.kind.is_none(),
        }
    }
}

/// A `tools/call`'s params read on their text: the tool's name, and its
/// arguments' members (`None`: no `arguments`, the empty object).
pub struct QuickCall<'a> {
    /// The tool called.
    pub name: Cow<'a, str>,
    /// The arguments' members, each value as written.
    pub arguments: Option<Members<'a>>,
}

impl<'a> QuickCall<'a> {
    /// `params` (a request's params, as written) when they hold exactly a
    /// string `name` and, optionally, an object `arguments` whose values
    /// are all scalars `scalar` reads; every value then was read as a
    /// tree reader reads it. Anything else (`_meta`, a nested argument, a
    /// number with a fraction): `None`.
    pub fn of(params: &'a str) -> Option<QuickCall<'a>> {
        let call = mcp_resolve_protocol::json::from_str::<QuickCall<'a>>(params).ok()?;
        let scalars = call
            .arguments
            .as_ref()
            .is_none_or(|members| members.0.iter().all(|(_, v)| scalar(v).is_some()));
        scalars.then_some(call)
    }

    /// Whether `schema` surely accepts these arguments.
    pub fn accepted_by(&self, schema: &QuickSchema) -> bool {
        match &self.arguments {
            Some(members) => schema.accepts(members),
            None => schema.accepts(&Members(Vec::new())),
        }
    }
}

/// In one pass: `name` a string, `arguments` an object read as members,
/// nothing else (a key written twice keeps its last value, as a tree has
/// it).
impl<'de: 'a, 'a> Deserialize<'de> for QuickCall<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct CallParams<'a>(std::marker::PhantomData<&'a ()>);
        impl<'de: 'a, 'a> Visitor<'de> for CallParams<'a> {
            type Value = QuickCall<'a>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a tool call's params")
            }
            fn visit_map<M: MapAccess<'de>>(self, mut map: M) -> Result<QuickCall<'a>, M::Error> {
                let (mut name, mut arguments) = (None, None);
                while let Some(Key(key)) = map.next_key::<Key<'de>>()? {
                    match key.as_ref() {
                        "name" => name = Some(map.next_value::<Key<'de>>()?.0),
                        "arguments" => arguments = Some(map.next_value::<Members<'de>>()?),
                        _ => return Err(M::Error::custom("not read on its text")),
                    }
                }
                let name = name.ok_or_else(|| M::Error::custom("no name"))?;
                Ok(QuickCall { name, arguments })
            }
        }
        deserializer.deserialize_map(CallParams(std::marker::PhantomData))
    }
}

/// A request's params as the screen gives them: parsed into a tree, or a
/// `tools/call`'s read on their text.
pub enum Params<'a> {
    /// Parsed.
    Tree(Value),
    /// Parsed, with where their `_meta` is written ([`ParamsRead::of`]:
    /// a traced request's, whose `traceparent` the proxy places).
    ///
    /// [`ParamsRead::of`]: mcp_resolve_protocol::ParamsRead::of
    Read(mcp_resolve_protocol::ParamsRead<'a>),
    /// Read on their text ([`QuickCall::of`]).
    Call(QuickCall<'a>),
}

impl From<Value> for Params<'_> {
    fn from(value: Value) -> Self {
        Params::Tree(value)
    }
}

impl mcp_resolve_protocol::Parsed for Params<'_> {
    fn meta_is_object(&self) -> Option<bool> {
        match self {
            Params::Tree(tree) => tree.meta_is_object(),
            Params::Read(read) => read.meta_is_object(),
            // Read on their text only when they cannot name `_meta`: the
            // screen's look at the text is no read.
            Params::Call(_) => None,
        }
    }
}

/// The quick schemas of `tools` (name and `inputSchema`), the first of a
/// name kept (as the matcher keeps it): `None` for a tool whose schema the
/// check cannot decide.
pub fn schemas<'t>(
    tools: impl Iterator<Item = (&'t str, &'t Value)>,
) -> std::collections::HashMap<String, Option<QuickSchema>> {
    let mut quick = std::collections::HashMap::new();
    for (name, schema) in tools {
        quick
            .entry(name.to_string())
            .or_insert_with(|| QuickSchema::of(schema));
    }
    quick
}

#[cfg(test)]
mod tests;

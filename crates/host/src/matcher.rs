//! A resolver compiled at run time, for code that cannot run `build.rs`
//! (the `mcp-resolve proxy`): the same decisions the code generator makes —
//! a dispatch table from tool name to tool, one compiled validator per
//! `inputSchema`, conditions as direct tests (string compares, literal
//! prefix/suffix/substring checks, numeric bounds, regexes compiled once)
//! and every answer's JSON text computed once — held as data instead of
//! code.
//!
//! The compiler lowers a rules set's variants to [`Test`]s (its `Matcher`
//! in `mcp_resolve::matcher`); this module evaluates them with the JSON
//! Schema semantics of [`mcp_resolve_runtime::json`], the same helpers generated code
//! calls. A resolve is a hash lookup, validation, a walk over small trees and
//! a borrowed string.

use std::collections::HashMap;

use regex::Regex;
use serde_json::{Map, Value};

use mcp_resolve_runtime::json::{self, Num};
use mcp_resolve_runtime::{
    ArgumentValidator, Dialect, Resolution, RpcError, SchemaError, VARIANT_EXTENSION_ID,
};

/// A condition over a call's arguments object.
#[derive(Clone, Debug)]
pub enum Test {
    /// Always or never.
    Const(bool),
    /// Every test holds.
    All(Vec<Test>),
    /// Some test holds.
    Any(Vec<Test>),
    /// The test does not hold.
    Not(Box<Test>),
    /// The argument at the path (object keys from the arguments object) is
    /// present.
    Present(Vec<String>),
    /// The argument at the path is present and passes the check.
    At(Vec<String>, Check),
}

/// A check on one JSON value, with JSON Schema's semantics: a keyword that
/// does not apply to the value's type passes (`minLength` on a number).
#[derive(Clone, Debug)]
pub enum Check {
    /// Always or never.
    Const(bool),
    /// The value is this string.
    Str(String),
    /// The value is one of these strings.
    Strs(Vec<String>),
    /// The value equals this one (`const`, numbers by value).
    Equals(Value),
    /// The value has one of these JSON Schema types.
    Type(Vec<String>),
    /// Strings equal to the text; other values pass.
    Exact(String),
    /// Strings that start with the text; other values pass.
    Prefix(String),
    /// Strings that end with the text; other values pass.
    Suffix(String),
    /// Strings that contain the text; other values pass.
    Contains(String),
    /// Strings the regex finds a match in; other values pass. `None`: a
    /// pattern that did not compile, which matches no string.
    Pattern(Option<Regex>),
    /// `minLength`.
    MinLength(u64),
    /// `maxLength`.
    MaxLength(u64),
    /// `minimum`.
    Minimum(Num),
    /// `maximum`.
    Maximum(Num),
    /// `exclusiveMinimum`.
    ExclusiveMinimum(Num),
    /// `exclusiveMaximum`.
    ExclusiveMaximum(Num),
    /// `not`.
    Not(Box<Check>),
    /// `anyOf`.
    AnyOf(Vec<Check>),
    /// `allOf`.
    AllOf(Vec<Check>),
    /// `minItems`.
    MinItems(u64),
    /// `maxItems`.
    MaxItems(u64),
    /// `items`: every item passes.
    Items(Box<Check>),
    /// `contains`: some item passes.
    ContainsItem(Box<Check>),
    /// `properties`: each present property passes its check.
    Properties(Vec<(String, Check)>),
    /// `required`: each key is present.
    Required(Vec<String>),
}

impl Test {
    /// Whether the test holds for `arguments`.
    pub fn eval(&self, arguments: &Map<String, Value>) -> bool {
        match self {
            Test::Const(b) => *b,
            Test::All(tests) => tests.iter().all(|t| t.eval(arguments)),
            Test::Any(tests) => tests.iter().any(|t| t.eval(arguments)),
            Test::Not(test) => !test.eval(arguments),
            Test::Present(path) => lookup(arguments, path).is_some(),
            Test::At(path, check) => lookup(arguments, path).is_some_and(|v| check.eval(v)),
        }
    }
}

impl Check {
    /// Whether `value` passes.
    pub fn eval(&self, value: &Value) -> bool {
        match self {
            Check::Const(b) => *b,
            Check::Str(s) => value.as_str() == Some(s.as_str()),
            Check::Strs(strings) => value
                .as_str()
                .is_some_and(|v| strings.iter().any(|s| s == v)),
            Check::Equals(c) => json::json_equal(c, value),
            Check::Type(types) => types.iter().any(|t| json::has_type(value, t)),
            Check::Exact(text) => value.as_str().is_none_or(|s| s == text),
            Check::Prefix(text) => value.as_str().is_none_or(|s| s.starts_with(text.as_str())),
            Check::Suffix(text) => value.as_str().is_none_or(|s| s.ends_with(text.as_str())),
            Check::Contains(text) => value.as_str().is_none_or(|s| s.contains(text.as_str())),
            Check::Pattern(regex) => {
                mcp_resolve_runtime::pattern::pattern_matches(regex.as_ref(), value)
            }
            Check::MinLength(n) => json::min_length(value, *n),
            Check::MaxLength(n) => json::max_length(value, *n),
            Check::Minimum(n) => json::minimum(value, *n),
            Check::Maximum(n) => json::maximum(value, *n),
            Check::ExclusiveMinimum(n) => json::exclusive_minimum(value, *n),
            Check::ExclusiveMaximum(n) => json::exclusive_maximum(value, *n),
            Check::Not(check) => !check.eval(value),
            Check::AnyOf(checks) => checks.iter().any(|c| c.eval(value)),
            Check::AllOf(checks) => checks.iter().all(|c| c.eval(value)),
            Check::MinItems(n) => json::min_items(value, *n),
            Check::MaxItems(n) => json::max_items(value, *n),
            Check::Items(check) => value
                .as_array()
                .is_none_or(|a| a.iter().all(|v| check.eval(v))),
            Check::ContainsItem(check) => value
                .as_array()
                .is_none_or(|a| a.iter().any(|v| check.eval(v))),
            Check::Properties(properties) => value.as_object().is_none_or(|o| {
                properties
                    .iter()
                    .all(|(k, c)| o.get(k).is_none_or(|v| c.eval(v)))
            }),
            Check::Required(keys) => value
                .as_object()
                .is_none_or(|o| keys.iter().all(|k| o.contains_key(k))),
        }
    }
}

impl Check {
    /// The check a JSON Schema states, where every keyword in it (and in its
    /// subschemas) is one a [`Check`] has, with the same meaning: `const`,
    /// `enum`, `type`, `pattern`, the length, item-count and numeric bounds,
    /// `not`, `anyOf`, `allOf`, `items` (one schema), `contains`,
    /// `properties` and `required`; `title`, `description`, `$comment`,
    /// `examples` and `default` say nothing about the value. `None` for
    /// anything else (another keyword, a keyword's value in another form, a
    /// pattern that does not compile): the caller validates with
    /// `jsonschema` then. Host verification compiles `argumentPatterns`
    /// with it; `crates/compiler/tests/it/host.rs` holds the two to the same answers.
    pub fn from_schema(schema: &Value) -> Option<Check> {
        let keywords = match schema {
            Value::Bool(b) => return Some(Check::Const(*b)),
            Value::Object(keywords) => keywords,
            _ => return None,
        };
        let mut checks = Vec::with_capacity(keywords.len());
        for (keyword, value) in keywords {
            let count = || value.as_u64();
            let bound = || value.as_number().map(Num::of);
            let sub = |v: &Value| Check::from_schema(v).map(Box::new);
            let list = |v: &Value| -> Option<Vec<Check>> {
                let items = v.as_array().filter(|a| !a.is_empty())?;
                items.iter().map(Check::from_schema).collect()
            };
            checks.push(match keyword.as_str() {
                "title" | "description" | "$comment" | "examples" | "default" => continue,
                "const" => match value {
                    Value::String(s) => Check::Str(s.clone()),
                    other => Check::Equals(other.clone()),
                },
                "enum" => {
                    let items = value.as_array().filter(|a| !a.is_empty())?;
                    match items.iter().map(Value::as_str).collect::<Option<Vec<_>>>() {
                        Some(strings) => {
                            Check::Strs(strings.into_iter().map(str::to_string).collect())
                        }
                        None => Check::AnyOf(items.iter().cloned().map(Check::Equals).collect()),
                    }
                }
                "type" => {
                    const TYPES: [&str; 7] = [
                        "null", "boolean", "object", "array", "number", "string", "integer",
                    ];
                    let names = match value {
                        Value::String(t) => vec![t.clone()],
                        Value::Array(ts) if !ts.is_empty() => ts
                            .iter()
                            .map(|t| t.as_str().map(str::to_string))
                            .collect::<Option<Vec<_>>>()?,
                        _ => return None,
                    };
                    if !names.iter().all(|t| TYPES.contains(&t.as_str())) {
                        return None;
                    }
                    Check::Type(names)
                }
                "pattern" => Check::Pattern(Some(
                    mcp_resolve_runtime::pattern::compile_pattern(value.as_str()?).ok()?,
                )),
                "minLength" => Check::MinLength(count()?),
                "maxLength" => Check::MaxLength(count()?),
                "minItems" => Check::MinItems(count()?),
                "maxItems" => Check::MaxItems(count()?),
                "minimum" => Check::Minimum(bound()?),
                "maximum" => Check::Maximum(bound()?),
                "exclusiveMinimum" => Check::ExclusiveMinimum(bound()?),
                "exclusiveMaximum" => Check::ExclusiveMaximum(bound()?),
                "not" => Check::Not(sub(value)?),
                "anyOf" => Check::AnyOf(list(value)?),
                "allOf" => Check::AllOf(list(value)?),
                "items" if matches!(value, Value::Object(_) | Value::Bool(_)) => {
                    Check::Items(sub(value)?)
                }
                "contains" => Check::ContainsItem(sub(value)?),
                "properties" => Check::Properties(
                    value
                        .as_object()?
                        .iter()
                        .map(|(k, v)| Some((k.clone(), Check::from_schema(v)?)))
                        .collect::<Option<Vec<_>>>()?,
                ),
                "required" => Check::Required(
                    value
                        .as_array()?
                        .iter()
                        .map(|k| k.as_str().map(str::to_string))
                        .collect::<Option<Vec<_>>>()?,
                ),
                _ => return None,
            });
        }
        Some(match checks.len() {
            0 => Check::Const(true),
            1 => checks.pop()?,
            _ => Check::AllOf(checks),
        })
    }
}

/// The value at `path`, if every object on the way is present.
fn lookup<'v>(arguments: &'v Map<String, Value>, path: &[String]) -> Option<&'v Value> {
    let (first, rest) = path.split_first()?;
    rest.iter()
        .try_fold(arguments.get(first)?, |v, key| v.as_object()?.get(key))
}

/// One tool as the compiler hands it over.
#[derive(Clone, Debug)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: String,
    /// Its full `inputSchema`, which every call is validated against.
    pub input_schema: Value,
    /// Its `tools/list` entry (the SEP-1862 dialect's result repeats it).
    pub list_entry: Value,
    /// Whether it is marked resolvable (it has variants).
    pub resolvable: bool,
    /// Its variants in match order: the condition and the outcome.
    pub variants: Vec<(Test, Resolution)>,
    /// The outcome when no variant matches (the static annotations).
    pub fallback: Resolution,
}

/// One outcome, with its answer's text computed once.
#[derive(Clone, Debug)]
pub struct Outcome {
    resolution: Resolution,
    text: String,
    text_with_variant: String,
}

impl Outcome {
    fn new(dialect: Dialect, list_entry: &Value, resolution: Resolution) -> Self {
        let mut result = dialect.result(list_entry, &resolution);
        let text = result.to_string();
        if let Value::Object(map) = &mut result
            && let Value::Object(meta) = map
                .entry("_meta")
                .or_insert_with(|| Value::Object(Map::new()))
        {
            meta.insert(
                VARIANT_EXTENSION_ID.into(),
                serde_json::json!({
                    "variant": resolution.variant,
                    "requiredScopes": resolution.required_scopes,
                }),
            );
        }
        Outcome {
            text,
            text_with_variant: result.to_string(),
            resolution,
        }
    }

    /// The variant, annotations and scopes.
    pub fn resolution(&self) -> &Resolution {
        &self.resolution
    }

    /// The JSON-RPC `result` as JSON text, with the companion extension's
    /// `_meta` entry ([`VARIANT_EXTENSION_ID`]) when `variant_meta` (the
    /// client declared it).
    pub fn result_json(&self, variant_meta: bool) -> &str {
        if variant_meta {
            &self.text_with_variant
        } else {
            &self.text
        }
    }
}

struct CompiledTool {
    name: String,
    resolvable: bool,
    validator: ArgumentValidator,
    variants: Vec<(Test, Outcome)>,
    fallback: Outcome,
}

impl CompiledTool {
    /// The outcome of a call with `arguments`: `-32602` when the
    /// `inputSchema` refuses them, else the first matching variant's, else
    /// the fallback.
    fn outcome(&self, arguments: &Value) -> Result<&Outcome, RpcError> {
        let arguments = self.validator.validate_object(&self.name, arguments)?;
        Ok(self
            .variants
            .iter()
            .find(|(test, _)| test.eval(arguments))
            .map_or(&self.fallback, |(_, outcome)| outcome))
    }
}

/// A tool whose `inputSchema` does not compile.
#[derive(Debug, thiserror::Error)]
#[error("inputSchema of tool `{tool}`: {error}")]
pub struct CompileError {
    /// The tool.
    pub tool: String,
    /// Why its schema does not compile.
    pub error: SchemaError,
}

/// Every tool of a server, compiled for one dialect.
pub struct Matcher {
    dialect: Dialect,
    index: HashMap<String, usize>,
    tools: Vec<CompiledTool>,
}

impl Matcher {
    /// Compiles `tools` for `dialect`: a validator per schema and every
    /// outcome's answer text.
    pub fn new(tools: Vec<ToolSpec>, dialect: Dialect) -> Result<Self, CompileError> {
        let mut index = HashMap::with_capacity(tools.len());
        let mut compiled = Vec::with_capacity(tools.len());
        for spec in tools {
            let validator =
                ArgumentValidator::new(&spec.input_schema).map_err(|error| CompileError {
                    tool: spec.name.clone(),
                    error,
                })?;
            let entry = &spec.list_entry;
            let variants = spec
                .variants
                .into_iter()
                .map(|(test, resolution)| (test, Outcome::new(dialect, entry, resolution)))
                .collect();
            let fallback = Outcome::new(dialect, entry, spec.fallback);
            index.entry(spec.name.clone()).or_insert(compiled.len());
            compiled.push(CompiledTool {
                name: spec.name,
                resolvable: spec.resolvable,
                validator,
                variants,
                fallback,
            });
        }
        Ok(Matcher {
            dialect,
            index,
            tools: compiled,
        })
    }

    /// The dialect the answers are shaped for.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Whether `name` is a tool of this server.
    pub fn has_tool(&self, name: &str) -> bool {
        self.index.contains_key(name)
    }

    /// Every tool name, in declaration order.
    pub fn tool_names(&self) -> impl Iterator<Item = &str> {
        self.tools.iter().map(|t| t.name.as_str())
    }

    /// The outcome of a call to any tool of this server, resolvable or not
    /// (a tool without variants has its static annotations): `None` for a
    /// tool the rules do not describe, `-32602` for arguments that do not
    /// conform to its `inputSchema`. What a guard judges a `tools/call` by.
    pub fn outcome(&self, name: &str, arguments: &Value) -> Option<Result<&Outcome, RpcError>> {
        let tool = self.index.get(name).and_then(|&i| self.tools.get(i))?;
        Some(tool.outcome(arguments))
    }

    /// Whether `arguments` conform to the `inputSchema` of the tool `name`,
    /// without resolving the call; `None` for a tool the rules do not
    /// describe. (What a caller that needs no resolution asks: it is
    /// [`Matcher::outcome`]'s `Err` without the variants' conditions.)
    pub fn accepts(&self, name: &str, arguments: &Value) -> Option<bool> {
        let tool = self.index.get(name).and_then(|&i| self.tools.get(i))?;
        Some(
            tool.validator
                .validate_object(&tool.name, arguments)
                .is_ok(),
        )
    }

    /// Resolves a call: `-32602` for an unknown or non-resolvable tool and
    /// for arguments that do not conform to the tool's `inputSchema`.
    pub fn resolve(&self, name: &str, arguments: &Value) -> Result<&Outcome, RpcError> {
        let tool = self
            .index
            .get(name)
            .and_then(|&i| self.tools.get(i))
            .ok_or_else(|| RpcError::unknown_tool(name))?;
        if !tool.resolvable {
            return Err(RpcError::not_resolvable(name));
        }
        tool.outcome(arguments)
    }
}

impl std::fmt::Debug for Matcher {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Matcher")
            .field("dialect", &self.dialect)
            .field("tools", &self.tools.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use mcp_resolve_runtime::Annotations;
    use serde_json::json;

    fn path(p: &str) -> Vec<String> {
        p.split('.').map(str::to_string).collect()
    }

    fn args(v: Value) -> Map<String, Value> {
        match v {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn checks_follow_json_schema_semantics() {
        let a = args(json!({"p": "src/main.rs", "n": 3, "o": {"k": true}, "xs": [1, 2]}));
        let holds = |t: Test| t.eval(&a);
        assert!(holds(Test::At(path("p"), Check::Prefix("src/".into()))));
        assert!(holds(Test::At(path("p"), Check::Suffix(".rs".into()))));
        assert!(!holds(Test::At(path("p"), Check::Exact("src".into()))));
        // A string keyword passes on a number; `Str` does not.
        assert!(holds(Test::At(path("n"), Check::Prefix("x".into()))));
        assert!(!holds(Test::At(path("n"), Check::Str("3".into()))));
        assert!(holds(Test::At(path("n"), Check::Equals(json!(3.0)))));
        assert!(holds(Test::At(path("n"), Check::Minimum(Num::Int(3)))));
        assert!(!holds(Test::At(
            path("n"),
            Check::ExclusiveMinimum(Num::Int(3))
        )));
        assert!(holds(Test::At(path("o.k"), Check::Equals(json!(true)))));
        assert!(!holds(Test::Present(path("o.k.deeper"))));
        assert!(!holds(Test::At(path("missing"), Check::Const(true))));
        assert!(holds(Test::Not(Box::new(Test::Present(path("missing"))))));
        assert!(holds(Test::At(
            path("xs"),
            Check::ContainsItem(Box::new(Check::Equals(json!(2))))
        )));
        assert!(!holds(Test::At(
            path("xs"),
            Check::Items(Box::new(Check::Maximum(Num::Int(1))))
        )));
        assert!(holds(Test::At(
            path("p"),
            Check::Pattern(Some(Regex::new(r"\.rs$").unwrap()))
        )));
        assert!(!holds(Test::At(path("p"), Check::Pattern(None))));
        assert!(holds(Test::At(path("xs"), Check::Pattern(None))));
    }

    fn resolution(variant: Option<&str>, read_only: bool) -> Resolution {
        Resolution {
            tool: "t".into(),
            variant: variant.map(str::to_string),
            annotations: Annotations {
                read_only,
                destructive: !read_only,
                idempotent: false,
                open_world: true,
                extra: Default::default(),
            },
            required_scopes: vec!["s".into()],
        }
    }

    #[test]
    fn first_match_then_fallback_with_precomputed_text() {
        let schema =
            json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]});
        let spec = ToolSpec {
            name: "t".into(),
            input_schema: schema.clone(),
            list_entry: json!({"name": "t", "inputSchema": schema}),
            resolvable: true,
            variants: vec![(
                Test::At(path("a"), Check::Str("read".into())),
                resolution(Some("read"), true),
            )],
            fallback: resolution(None, false),
        };
        let plain = ToolSpec {
            name: "u".into(),
            resolvable: false,
            variants: Vec::new(),
            ..spec.clone()
        };
        let m = Matcher::new(vec![spec, plain], Dialect::Extension).unwrap();
        let read = m.resolve("t", &json!({"a": "read"})).unwrap();
        assert_eq!(read.resolution().variant.as_deref(), Some("read"));
        let text: Value = serde_json::from_str(read.result_json(false)).unwrap_or_default();
        assert_eq!(text["annotations"]["readOnlyHint"], json!(true));
        assert!(text.get("_meta").is_none());
        let text: Value = serde_json::from_str(read.result_json(true)).unwrap_or_default();
        assert_eq!(
            text["_meta"][VARIANT_EXTENSION_ID]["variant"],
            json!("read")
        );
        let other = m.resolve("t", &json!({"a": "x"})).unwrap();
        assert_eq!(other.resolution().variant, None);
        assert_eq!(
            m.resolve("t", &json!({})).map(|_| ()).unwrap_err().code,
            -32602
        );
        assert_eq!(
            m.resolve("u", &json!({"a": "x"}))
                .map(|_| ())
                .unwrap_err()
                .message,
            "tool is not resolvable: u"
        );
        assert_eq!(
            m.resolve("v", &json!({})).map(|_| ()).unwrap_err().message,
            "unknown tool: v"
        );
    }
}

use std::fmt;
use std::str::FromStr;

use serde_json::{Map, Value};

use crate::{Annotations, EXTENSION_ID};

/// The wire shape of a `tools/resolve` answer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Dialect {
    /// Tool-resolution extension draft 2026-08-20: `{resultType, name, annotations}`
    /// with exactly the four core hints.
    #[default]
    Extension,
    /// SEP-1862: `{tool: Tool}` with the full tool, `resolve: true` and `securitySchemes`.
    Sep1862,
    /// The earlier `tools/annotations` form: `{annotations}`.
    Annotations,
}

impl Dialect {
    /// Every dialect, in documentation order.
    pub const ALL: [Dialect; 3] = [Dialect::Extension, Dialect::Sep1862, Dialect::Annotations];

    /// The dialect's command-line name.
    pub fn as_str(self) -> &'static str {
        match self {
            Dialect::Extension => "extension",
            Dialect::Sep1862 => "sep1862",
            Dialect::Annotations => "annotations",
        }
    }

    /// The request method that resolves a call: `tools/annotations` in the
    /// `annotations` dialect (the earlier draft's name), else `tools/resolve`.
    pub fn method(self) -> &'static str {
        match self {
            Dialect::Extension | Dialect::Sep1862 => "tools/resolve",
            Dialect::Annotations => "tools/annotations",
        }
    }

    /// A tool object without any dialect's resolvable marker: the
    /// extension's member of `_meta` (and `_meta` itself when nothing else
    /// is left in it), SEP-1862's `resolve`, the earlier `dynamicAnnotations`.
    /// What remains is the tool as its server defines it.
    pub fn unmark(tool: &Map<String, Value>) -> Map<String, Value> {
        let mut tool = tool.clone();
        tool.remove("resolve");
        tool.remove("dynamicAnnotations");
        if let Some(Value::Object(meta)) = tool.get_mut("_meta") {
            meta.remove(EXTENSION_ID);
            if meta.is_empty() {
                tool.remove("_meta");
            }
        }
        tool
    }

    /// Marks a `tools/list` tool object as resolvable in this dialect.
    pub fn mark_resolvable(self, tool: &mut Map<String, Value>) {
        match self {
            Dialect::Extension => {
                let meta = tool
                    .entry("_meta")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(meta) = meta {
                    let mut marker = Map::new();
                    marker.insert("resolvable".into(), Value::Bool(true));
                    meta.insert(EXTENSION_ID.into(), Value::Object(marker));
                }
            }
            Dialect::Sep1862 => {
                tool.insert("resolve".into(), Value::Bool(true));
            }
            Dialect::Annotations => {
                tool.insert("dynamicAnnotations".into(), Value::Bool(true));
            }
        }
    }

    /// The JSON-RPC `result` for a resolution. `tool` is the tool's `tools/list`
    /// object (used by [`Dialect::Sep1862`], which returns the whole tool
    /// with its own `_meta`, without any dialect's resolvable marker).
    pub fn result(self, tool: &Value, resolution: &Resolution) -> Value {
        let mut map = Map::new();
        match self {
            Dialect::Extension => {
                map.insert("resultType".into(), Value::String("complete".into()));
                map.insert("name".into(), Value::String(resolution.tool.clone()));
                map.insert("annotations".into(), resolution.annotations.core_json());
            }
            Dialect::Sep1862 => {
                // The tool as its server defines it — its own `_meta` (MCP
                // Apps' `ui`, a vendor's key) kept, only a resolvable marker
                // left out — as the signature document has it.
                let mut t = match tool {
                    Value::Object(t) => Dialect::unmark(t),
                    _ => Map::new(),
                };
                t.remove("requiredScopes");
                t.insert("annotations".into(), resolution.annotations.complete_json());
                t.insert("resolve".into(), Value::Bool(true));
                t.insert(
                    "securitySchemes".into(),
                    security_schemes(&resolution.required_scopes),
                );
                map.insert("tool".into(), Value::Object(t));
            }
            Dialect::Annotations => {
                map.insert("annotations".into(), resolution.annotations.complete_json());
            }
        }
        Value::Object(map)
    }
}

/// SEP-1488 `securitySchemes` for a set of scopes.
fn security_schemes(scopes: &[String]) -> Value {
    let mut scheme = Map::new();
    if scopes.is_empty() {
        scheme.insert("type".into(), Value::String("noauth".into()));
    } else {
        scheme.insert("type".into(), Value::String("oauth2".into()));
        scheme.insert(
            "scopes".into(),
            Value::Array(scopes.iter().cloned().map(Value::String).collect()),
        );
    }
    Value::Array(vec![Value::Object(scheme)])
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The error of parsing a [`Dialect`] name.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UnknownDialect(pub String);

impl fmt::Display for UnknownDialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "unknown dialect `{}` (expected `extension`, `sep1862` or `annotations`)",
            self.0
        )
    }
}

impl std::error::Error for UnknownDialect {}

impl FromStr for Dialect {
    type Err = UnknownDialect;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.as_str() == s)
            .ok_or_else(|| UnknownDialect(s.to_string()))
    }
}

/// The outcome of resolving one call.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Resolution {
    /// The tool name.
    pub tool: String,
    /// The variant that matched, or `None` when no variant matched and the
    /// static annotations apply.
    pub variant: Option<String>,
    /// The resolved annotations, complete.
    pub annotations: Annotations,
    /// The OAuth scopes this call needs.
    pub required_scopes: Vec<String>,
}

//! The span-carrying tree YAML is read into, by either reader ([`super::yaml`]
//! through serde-saphyr, [`super::yaml_fast`] straight from the parser's
//! events), before the format is decoded.

use serde_json::{Number, Value};

/// A YAML node and the byte range it was written at.
#[derive(Clone, Debug, PartialEq)]
pub struct YNode {
    /// The value.
    pub value: YValue,
    /// First byte.
    pub start: usize,
    /// One past the last byte.
    pub end: usize,
}

/// A YAML value; mappings keep their keys' order and spans.
#[derive(Clone, Debug, PartialEq)]
pub enum YValue {
    /// `null`, `~` or empty.
    Null,
    /// A boolean.
    Bool(bool),
    /// A number.
    Number(Number),
    /// A string.
    String(String),
    /// A sequence.
    Seq(Vec<YNode>),
    /// A mapping, in source order.
    Map(Vec<(YNode, YNode)>),
}

impl YValue {
    /// What this kind of value is called in messages.
    pub fn kind(&self) -> &'static str {
        match self {
            YValue::Null => "null",
            YValue::Bool(_) => "a boolean",
            YValue::Number(_) => "a number",
            YValue::String(_) => "a string",
            YValue::Seq(_) => "a sequence",
            YValue::Map(_) => "a mapping",
        }
    }
}

impl YNode {
    /// The node as plain JSON (mapping keys become strings).
    pub fn to_json(&self) -> Value {
        match &self.value {
            YValue::Null => Value::Null,
            YValue::Bool(b) => Value::Bool(*b),
            YValue::Number(n) => Value::Number(n.clone()),
            YValue::String(s) => Value::String(s.clone()),
            YValue::Seq(items) => Value::Array(items.iter().map(YNode::to_json).collect()),
            YValue::Map(entries) => Value::Object(
                entries
                    .iter()
                    .map(|(k, v)| (k.key_string(), v.to_json()))
                    .collect(),
            ),
        }
    }

    /// The node as a mapping key. A sequence or mapping used as a key (YAML
    /// allows it; no rules or policy key is one) is written in flow style,
    /// its strings quoted once: as JSON text, each level of keys within keys
    /// would escape the level below again, and 30 levels (`? ? ? … a:`, 66
    /// bytes) would be a gigabyte.
    pub fn key_string(&self) -> String {
        match &self.value {
            YValue::String(s) => s.clone(),
            YValue::Null => "null".into(),
            YValue::Bool(b) => b.to_string(),
            YValue::Number(n) => n.to_string(),
            _ => {
                let mut out = String::new();
                self.write_flow(&mut out);
                out
            }
        }
    }

    /// The node in YAML flow style, strings JSON-quoted.
    fn write_flow(&self, out: &mut String) {
        match &self.value {
            YValue::String(s) => out.push_str(&Value::String(s.clone()).to_string()),
            YValue::Seq(items) => {
                out.push('[');
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    item.write_flow(out);
                }
                out.push(']');
            }
            YValue::Map(entries) => {
                out.push('{');
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    key.write_flow(out);
                    out.push_str(": ");
                    value.write_flow(out);
                }
                out.push('}');
            }
            _ => out.push_str(&self.key_string()),
        }
    }
}

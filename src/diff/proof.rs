//! What `diff` may call "no effect": changes proved not to alter which calls
//! are admitted or how they resolve. Anything else the search cannot tell
//! apart is "undecided", never "no effect".

use mcp_resolve_runtime::signature::SignatureTool;
use serde_json::{Map, Value};

use crate::schema::DESCRIPTIVE_KEYWORDS;

/// Keywords without effect on which instances are valid here, beyond the
/// descriptive ones: formats are not asserted by the validators this
/// project uses, and `contentSchema` only annotates.
const UNASSERTED: &[&str] = &["format", "contentSchema"];

fn descriptive(keyword: &str) -> bool {
    DESCRIPTIVE_KEYWORDS.contains(&keyword) || UNASSERTED.contains(&keyword)
}

/// Keywords whose value is a map of names to schemas (the names are data).
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];

/// Whether two schemas admit the same instances because they are equal
/// once descriptive keywords are removed (formats are not asserted by the
/// validators this project uses, so `format` is descriptive here too).
/// `false` means "not proved", not "different".
pub(super) fn same_instances(a: &Value, b: &Value) -> bool {
    strip(a, false) == strip(b, false)
}

/// A schema without its descriptive keywords; `in_map` when `v` is the value
/// of a keyword like `properties`, whose keys are property names.
fn strip(v: &Value, in_map: bool) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                if !in_map && descriptive(k) {
                    continue;
                }
                let value = match x {
                    // `enum`, `const` and `required` hold data, not schemas.
                    _ if !in_map && ["enum", "const", "required"].contains(&k.as_str()) => {
                        x.clone()
                    }
                    _ => strip(x, !in_map && SCHEMA_MAPS.contains(&k.as_str())),
                };
                out.insert(k.clone(), value);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(|x| strip(x, false)).collect()),
        other => other.clone(),
    }
}

/// Whether two tools resolve every call alike: the same entries in the same
/// order with the same patterns, annotations and scopes, only names apart.
pub(super) fn same_resolution(a: &SignatureTool, b: &SignatureTool) -> bool {
    let (va, vb) = (a.variants(), b.variants());
    va.len() == vb.len()
        && a.is_resolvable() == b.is_resolvable()
        && va.iter().zip(vb).all(|(x, y)| {
            normal(&serde_json::to_value(&x.when).unwrap_or_default())
                == normal(&serde_json::to_value(&y.when).unwrap_or_default())
                && x.annotations == y.annotations
                && x.required_scopes == y.required_scopes
        })
}

/// A pattern with each one-value `enum` written as the `const` it equals,
/// and descriptive keywords removed.
fn normal(v: &Value) -> Value {
    match strip(v, false) {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                match (k.as_str(), &x) {
                    ("enum", Value::Array(one)) if one.len() == 1 => {
                        out.insert("const".into(), one[0].clone());
                    }
                    _ => {
                        out.insert(k, normal(&x));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(normal).collect()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn descriptive_keywords_do_not_count_but_data_and_property_names_do() {
        let a = json!({"type": "object", "description": "x",
            "properties": {"title": {"type": "string", "description": "a"}}});
        let b = json!({"type": "object",
            "properties": {"title": {"type": "string", "description": "b"}}});
        assert!(same_instances(&a, &b));
        // A property called `description` is a name, not a keyword.
        let c = json!({"type": "object", "properties": {"description": {"type": "string"}}});
        let d = json!({"type": "object", "properties": {}});
        assert!(!same_instances(&c, &d));
        // Enum values are data even when they look like keywords.
        let e = json!({"enum": ["title"]});
        let f = json!({"enum": ["description"]});
        assert!(!same_instances(&e, &f));
        let g = json!({"type": "array", "items": {"enum": ["a"]}});
        let h = json!({"type": "array", "items": {"enum": ["a", "b"]}});
        assert!(!same_instances(&g, &h));
    }
}

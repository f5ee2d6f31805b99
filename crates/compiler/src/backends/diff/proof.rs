//! What `diff` may call "no effect": changes proved not to alter which calls
//! are admitted or how they resolve. Anything else the search cannot tell
//! apart is "undecided", never "no effect".

use mcp_resolve_host::signature::SignatureTool;
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
    "dependencies",
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
    strip(a, false, false) == strip(b, false, false)
}

/// Keywords whose value is data (values or property names), never a schema.
const DATA: &[&str] = &["enum", "const", "required", "dependentRequired"];

/// A schema without its descriptive keywords; `in_map` when `v` is the value
/// of a keyword like `properties`, whose keys are property names;
/// `const_enum` writes each one-value `enum` as the `const` it equals.
fn strip(v: &Value, in_map: bool, const_enum: bool) -> Value {
    match v {
        Value::Object(m) => {
            let mut out = Map::new();
            for (k, x) in m {
                if in_map {
                    out.insert(k.clone(), strip(x, false, const_enum));
                    continue;
                }
                if descriptive(k) {
                    continue;
                }
                match (k.as_str(), x) {
                    ("enum", Value::Array(one)) if const_enum && one.len() == 1 => {
                        out.insert("const".into(), one[0].clone());
                    }
                    _ if DATA.contains(&k.as_str()) => {
                        out.insert(k.clone(), x.clone());
                    }
                    _ => {
                        let map = SCHEMA_MAPS.contains(&k.as_str());
                        out.insert(k.clone(), strip(x, map, const_enum));
                    }
                }
            }
            Value::Object(out)
        }
        Value::Array(items) => {
            Value::Array(items.iter().map(|x| strip(x, false, const_enum)).collect())
        }
        other => other.clone(),
    }
}

/// Whether two tools resolve every call alike: the same entries in the same
/// order, each naming the same arguments with equal patterns (descriptive
/// keywords aside, a one-value `enum` equal to its `const`) and the same
/// annotations and scopes; only names apart.
pub(super) fn same_resolution(a: &SignatureTool, b: &SignatureTool) -> bool {
    let (va, vb) = (a.variants(), b.variants());
    let patterns = |m: &Map<String, Value>| -> Vec<(String, Value)> {
        // Argument names are data: only the patterns are normalised.
        m.iter()
            .map(|(name, p)| (name.clone(), strip(p, false, true)))
            .collect()
    };
    va.len() == vb.len()
        && a.is_resolvable() == b.is_resolvable()
        && va.iter().zip(vb).all(|(x, y)| {
            patterns(&x.when.argument_patterns) == patterns(&y.when.argument_patterns)
                && x.annotations == y.annotations
                && x.required_scopes == y.required_scopes
        })
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
        // So are the names in `dependentRequired`.
        let dr1 = json!({"dependentRequired": {"a": ["description"]}});
        let dr2 = json!({"dependentRequired": {"a": ["title"]}});
        assert!(!same_instances(&dr1, &dr2));
        let g = json!({"type": "array", "items": {"enum": ["a"]}});
        let h = json!({"type": "array", "items": {"enum": ["a", "b"]}});
        assert!(!same_instances(&g, &h));
    }

    fn tool(patterns: Value) -> SignatureTool {
        serde_json::from_value(json!({
            "name": "t",
            "inputSchema": {"type": "object"},
            "annotations": {},
            "resolvedVariants": [{"name": "v", "when": {"argumentPatterns": patterns},
                "annotations": {"readOnlyHint": true}}]
        }))
        .unwrap()
    }

    #[test]
    fn argument_names_are_data_and_a_one_value_enum_is_its_const() {
        // Arguments called like descriptive keywords are still arguments.
        let a = tool(json!({"title": {"const": "a"}}));
        let b = tool(json!({"title": {"const": "b"}}));
        assert!(!same_resolution(&a, &b));
        let a = tool(json!({"description": {"const": "a"}}));
        let b = tool(json!({}));
        assert!(!same_resolution(&a, &b));
        // An argument called `enum` is not the keyword.
        let a = tool(json!({"enum": {"const": "a"}}));
        let b = tool(json!({"const": {"const": "a"}}));
        assert!(!same_resolution(&a, &b));
        let a = tool(json!({"action": {"enum": ["read"], "description": "x"}}));
        let b = tool(json!({"action": {"const": "read"}}));
        assert!(same_resolution(&a, &b));
    }
}

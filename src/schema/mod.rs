//! JSON Schema navigation shared by the phases that read `inputSchema`s
//! (lowering, checks, analysis): local `$ref`s, argument paths, types.
//! Validator options live with the regex dialect in
//! [`mcp_resolve_runtime::pattern`].

use serde_json::Value;

pub mod patterns;

/// Resolves a local `$ref` (`#/...`).
pub fn resolve_ref<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    root.pointer(reference.strip_prefix('#')?)
}

/// The subschema for `segments` under `root` (following `properties` and
/// local `$ref`s), or `None` when the path is not spelled out in `properties`.
pub fn subschema<'a>(root: &'a Value, segments: &[String]) -> Option<&'a Value> {
    let mut schema = deref(root, root);
    for seg in segments {
        schema = deref(root, schema.get("properties")?.get(seg)?);
    }
    Some(schema)
}

/// Follows `$ref` chains (bounded).
pub fn deref<'a>(root: &'a Value, schema: &'a Value) -> &'a Value {
    let mut current = schema;
    for _ in 0..16 {
        match current
            .get("$ref")
            .and_then(Value::as_str)
            .and_then(|r| resolve_ref(root, r))
        {
            Some(target) => current = target,
            None => break,
        }
    }
    current
}

/// Whether the value at `segments` can be missing from a valid argument object
/// (an over-approximation: `true` unless every step is required and every
/// object on the way must be an object).
pub fn can_be_absent(root: &Value, segments: &[String]) -> bool {
    let mut schema = deref(root, root);
    for (i, seg) in segments.iter().enumerate() {
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(seg)));
        if !required {
            return true;
        }
        let Some(next) = schema.get("properties").and_then(|p| p.get(seg)) else {
            return true;
        };
        schema = deref(root, next);
        if i + 1 < segments.len() && !object_only(schema) {
            return true;
        }
    }
    false
}

/// Whether the schema admits objects only.
pub fn object_only(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(ts)) => !ts.is_empty() && ts.iter().all(|t| t == "object"),
        _ => false,
    }
}

/// Whether `segment` is required of an object valid against `schema`.
pub fn requires(schema: &Value, segment: &str) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(segment)))
}

/// The JSON types a schema's `type` keyword allows (`None`: unconstrained).
pub fn schema_types(schema: &Value) -> Option<Vec<String>> {
    match schema.get("type")? {
        Value::String(s) => Some(vec![s.clone()]),
        Value::Array(a) => Some(
            a.iter()
                .filter_map(|t| t.as_str().map(str::to_string))
                .collect(),
        ),
        _ => None,
    }
}

//! JSON Schema navigation shared by the phases that read `inputSchema`s
//! (lowering, checks, analysis): local `$ref`s, argument paths, types.
//! Validator options live with the regex dialect in
//! [`mcp_resolve_runtime::pattern`].

use serde_json::Value;

pub mod literal;
pub mod patterns;

/// Keywords that describe a schema without constraining instances (JSON
/// Schema 2020-12's meta-data and content vocabularies, and `$comment`).
pub const DESCRIPTIVE_KEYWORDS: &[&str] = &[
    "title",
    "description",
    "default",
    "examples",
    "deprecated",
    "readOnly",
    "writeOnly",
    "$comment",
    "contentEncoding",
    "contentMediaType",
];

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

/// What an object schema says about one property name, looking through
/// `$ref`, `allOf`/`anyOf`/`oneOf`, `if`/`then`/`else` and `dependentSchemas`.
#[derive(Debug)]
pub enum Property<'a> {
    /// Declared under `properties` of the schema or one of its branches
    /// (the first such declaration).
    Declared(&'a Value),
    /// Admitted without a declaration: `additionalProperties` true or a
    /// schema, a matching `patternProperties`, or a free-form object (one
    /// that declares no properties at all, as SDKs write "any object", and
    /// does not refuse undeclared ones).
    Open,
    /// Not declared, though other properties are.
    Undeclared {
        /// The names the schema and its branches declare, in order.
        known: Vec<&'a str>,
    },
}

/// Branches looked through at most this deep, and at most this many.
const MAX_BRANCH_DEPTH: usize = 8;
const MAX_BRANCHES: usize = 256;

/// [`Property`] for `name` in `schema` (a subschema of `root`).
pub fn property<'a>(root: &'a Value, schema: &'a Value, name: &str) -> Property<'a> {
    let mut all = Vec::new();
    object_branches(root, schema, 0, &mut all);
    let mut known: Vec<&str> = Vec::new();
    let mut declared = None;
    let mut open = false;
    let mut patterns = false;
    for s in &all {
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            for (key, sub) in props {
                if key == name && declared.is_none() {
                    declared = Some(deref(root, sub));
                }
                if !known.contains(&key.as_str()) {
                    known.push(key);
                }
            }
        }
        if matches!(
            s.get("additionalProperties"),
            Some(Value::Bool(true) | Value::Object(_))
        ) {
            open = true;
        }
        if let Some(pp) = s.get("patternProperties").and_then(Value::as_object) {
            patterns = true;
            open |= pp
                .keys()
                .any(|re| crate::regex_cache::compile_pattern(re).is_ok_and(|r| r.is_match(name)));
        }
    }
    match declared {
        Some(sub) => Property::Declared(sub),
        None if open || (known.is_empty() && !patterns && !refuses_extra(schema)) => Property::Open,
        None => Property::Undeclared { known },
    }
}

/// Whether `schema` itself refuses properties it does not declare.
fn refuses_extra(schema: &Value) -> bool {
    ["additionalProperties", "unevaluatedProperties"]
        .iter()
        .any(|k| schema.get(k) == Some(&Value::Bool(false)))
}

fn object_branches<'a>(root: &'a Value, schema: &'a Value, depth: usize, out: &mut Vec<&'a Value>) {
    let schema = deref(root, schema);
    if depth > MAX_BRANCH_DEPTH || out.len() >= MAX_BRANCHES || !schema.is_object() {
        return;
    }
    out.push(schema);
    for key in ["allOf", "anyOf", "oneOf"] {
        for branch in schema
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
        {
            object_branches(root, branch, depth + 1, out);
        }
    }
    for key in ["if", "then", "else"] {
        if let Some(branch) = schema.get(key) {
            object_branches(root, branch, depth + 1, out);
        }
    }
    if let Some(deps) = schema.get("dependentSchemas").and_then(Value::as_object) {
        for branch in deps.values() {
            object_branches(root, branch, depth + 1, out);
        }
    }
}

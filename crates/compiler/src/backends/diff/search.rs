//! The argument objects `diff` tries: one value per class of values the two
//! signatures' schemas and patterns tell apart, combined.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::{Landing, MAX_CANDIDATES, ToolSig};
use crate::analysis::{self, Limits};

/// The argument objects tried for one tool.
pub(super) struct Search<'a> {
    old: Option<&'a ToolSig<'a>>,
    new: Option<&'a ToolSig<'a>>,
    columns: Vec<(String, Vec<Option<Value>>)>,
    /// The argument objects, built once.
    pub(super) candidates: Vec<Value>,
}

/// A property name no schema lists, to see `additionalProperties` at work.
const UNLISTED: &str = "x-unlisted-argument";

impl<'a> Search<'a> {
    pub(super) fn new(old: Option<&'a ToolSig<'a>>, new: Option<&'a ToolSig<'a>>) -> Search<'a> {
        let sides: Vec<&ToolSig> = old.into_iter().chain(new).collect();
        // Every argument name any schema or pattern mentions.
        let mut names: Vec<String> = Vec::new();
        let mut note = |n: &str| {
            if !names.iter().any(|x| x == n) {
                names.push(n.to_string());
            }
        };
        for t in &sides {
            if let Some(props) = t.schema().get("properties").and_then(Value::as_object) {
                props.keys().for_each(|k| note(k));
            }
            for r in t
                .schema()
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
            {
                note(r);
            }
            for v in t.variants() {
                v.argument_patterns().keys().for_each(|k| note(k));
            }
        }
        note(UNLISTED);
        let columns = names
            .into_iter()
            .map(|name| {
                let mut schemas: Vec<(Value, Value)> = Vec::new();
                for t in &sides {
                    if let Some(s) = t
                        .schema()
                        .pointer(&format!("/properties/{}", escape(&name)))
                    {
                        schemas.push((s.clone(), t.schema().clone()));
                    }
                    for v in t.variants() {
                        if let Some(p) = v.argument_patterns().get(&name) {
                            schemas.push((p.clone(), p.clone()));
                        }
                    }
                }
                let mut values: Vec<Option<Value>> = vec![None];
                values.extend(column_values(&schemas, 0).into_iter().map(Some));
                (name, values)
            })
            .collect();
        let mut search = Search {
            old,
            new,
            columns,
            candidates: Vec::new(),
        };
        search.candidates = search.build_candidates();
        search
    }

    /// Candidate argument objects: every combination of the columns' values
    /// when there are few enough; otherwise each column varied around seeds
    /// (a base object, and one object per variant built from values its
    /// patterns accept).
    fn build_candidates(&self) -> Vec<Value> {
        let total = self
            .columns
            .iter()
            .try_fold(1usize, |acc, (_, v)| acc.checked_mul(v.len().max(1)));
        match total {
            Some(t) if t <= MAX_CANDIDATES => self.product(),
            _ => self.around_seeds(),
        }
    }

    fn product(&self) -> Vec<Value> {
        let mut out = Vec::new();
        let mut idx = vec![0usize; self.columns.len()];
        loop {
            out.push(self.object(|i| self.columns[i].1[idx[i]].clone()));
            let mut i = 0;
            loop {
                if i == idx.len() {
                    return out;
                }
                idx[i] += 1;
                if idx[i] < self.columns[i].1.len() {
                    break;
                }
                idx[i] = 0;
                i += 1;
            }
        }
    }

    fn around_seeds(&self) -> Vec<Value> {
        let mut seeds: Vec<Vec<Option<Value>>> = Vec::new();
        let base: Vec<Option<Value>> = self.columns.iter().map(|_| None).collect();
        // The smallest call each side admits, spread over the columns.
        let mut minimal_calls: Vec<Vec<Option<Value>>> = Vec::new();
        for t in [self.old, self.new].into_iter().flatten() {
            let Some(Value::Object(call)) = analysis::minimal_value(t.schema(), Limits::default())
            else {
                continue;
            };
            if t.accepts(&Value::Object(call.clone())) {
                minimal_calls.push(
                    self.columns
                        .iter()
                        .map(|(name, _)| call.get(name).cloned())
                        .collect(),
                );
            }
        }
        let base_valid = minimal_calls
            .first()
            .cloned()
            .unwrap_or_else(|| base.clone());
        seeds.extend(minimal_calls.iter().skip(1).cloned());
        seeds.push(base);
        seeds.push(base_valid.clone());
        for t in [self.old, self.new].into_iter().flatten() {
            for v in t.variants() {
                let mut seed = base_valid.clone();
                for (i, (name, values)) in self.columns.iter().enumerate() {
                    if let Some(p) = v.argument_patterns().get(name) {
                        let Ok(check) =
                            mcp_resolve_runtime::pattern::pattern_validator_options().build(p)
                        else {
                            continue;
                        };
                        seed[i] = if *p == Value::Bool(false) {
                            None
                        } else {
                            values.iter().flatten().find(|x| check.is_valid(x)).cloned()
                        };
                    }
                }
                seeds.push(seed);
            }
        }
        let mut out = Vec::new();
        for seed in &seeds {
            out.push(self.object(|i| seed[i].clone()));
            for (i, (_, values)) in self.columns.iter().enumerate() {
                for value in values {
                    if out.len() >= MAX_CANDIDATES {
                        return out;
                    }
                    let mut s = seed.clone();
                    s[i] = value.clone();
                    out.push(self.object(|j| s[j].clone()));
                }
            }
        }
        out
    }

    fn object(&self, value: impl Fn(usize) -> Option<Value>) -> Value {
        let mut m = Map::new();
        for (i, (name, _)) in self.columns.iter().enumerate() {
            if let Some(v) = value(i) {
                m.insert(name.clone(), v);
            }
        }
        Value::Object(m)
    }

    /// A call the new document admits.
    pub(super) fn first_valid_new(&self) -> Option<Value> {
        let n = self.new?;
        self.candidates
            .iter()
            .find(|a| n.land(a).is_some())
            .cloned()
    }

    /// A call the new document sends to its static set and the old one
    /// treats differently: refuses it, or resolves it to other annotations
    /// or scopes. A call a variant catches, or one both documents resolve
    /// alike, shows nothing of a change to the static set.
    pub(super) fn first_falling_through_unlike_old(&self) -> Option<Value> {
        let n = self.new?;
        let fallback = Landing(None);
        self.candidates
            .iter()
            .find(|a| {
                n.land(a) == Some(fallback)
                    && self.old.is_none_or(|o| {
                        o.land(a).is_none_or(|at| {
                            o.annotations(at) != n.annotations(fallback)
                                || o.scopes(at) != n.scopes(fallback)
                        })
                    })
            })
            .cloned()
    }
}

/// A JSON Pointer token.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// Values for one argument: the classes the schemas tell apart, and for
/// objects with listed properties, objects built field by field.
#[expect(
    clippy::too_many_lines,
    reason = "one candidate list grown in steps that each read what the previous ones added"
)]
fn column_values(schemas: &[(Value, Value)], depth: u32) -> Vec<Value> {
    let refs: Vec<(&Value, &Value)> = schemas.iter().map(|(s, r)| (s, r)).collect();
    let limits = Limits {
        max_regions: 256,
        max_string_states: 5_000,
        budget: 100_000,
        run_budget: 20_000_000,
        ..Limits::default()
    };
    let mut values = analysis::distinguishing_values(&refs, limits).unwrap_or_else(|_| {
        // Beyond the analysis limits: the literals and a few plain values.
        let mut v: Vec<Value> = vec![json!(""), json!(0), json!(true), json!(false), Value::Null];
        for (s, _) in schemas {
            if let Some(c) = s.get("const") {
                v.push(c.clone());
            }
            v.extend(
                s.get("enum")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
            );
        }
        v
    });
    // Every literal a schema names, each on its own: the analysis merges
    // the members of an `enum` no condition tells apart, but a pattern
    // nested in another argument's items may.
    for (s, _) in schemas {
        for branch in branches(s) {
            values.extend(branch.get("const").cloned());
            values.extend(
                branch
                    .get("enum")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .cloned(),
            );
        }
    }
    // Nested properties: vary each listed field around the smallest object.
    // Fields listed in `allOf`/`anyOf`/`oneOf` branches count (patterns on
    // items' fields are written that way).
    let mut fields: Vec<String> = Vec::new();
    for (s, _) in schemas {
        for branch in branches(s) {
            if let Some(props) = branch.get("properties").and_then(Value::as_object) {
                for k in props.keys() {
                    if !fields.contains(k) {
                        fields.push(k.clone());
                    }
                }
            }
        }
    }
    if depth < 3 && !fields.is_empty() {
        let mut base = Map::new();
        let mut per_field: Vec<(String, Vec<Value>)> = Vec::new();
        for f in &fields {
            let sub: Vec<(Value, Value)> = schemas
                .iter()
                .flat_map(|(s, r)| {
                    branches(s).into_iter().filter_map(move |b| {
                        b.pointer(&format!("/properties/{}", escape(f)))
                            .map(|p| (p.clone(), r.clone()))
                    })
                })
                .collect();
            let vals = column_values(&sub, depth + 1);
            let required = schemas.iter().any(|(s, _)| {
                s.get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|x| x == f.as_str()))
            });
            if required && let Some(first) = first_valid(&vals, &sub) {
                base.insert(f.clone(), first.clone());
            }
            per_field.push((f.clone(), vals));
        }
        values.push(Value::Object(base.clone()));
        // A key no schema lists, for `additionalProperties`.
        let mut unlisted = base.clone();
        unlisted.insert(UNLISTED.into(), json!(""));
        values.push(Value::Object(unlisted));
        for (f, vals) in per_field {
            for v in vals {
                let mut o = base.clone();
                o.insert(f.clone(), v);
                values.push(Value::Object(o));
            }
            let mut o = base.clone();
            if o.remove(&f).is_some() {
                values.push(Value::Object(o));
            }
        }
    }
    for (s, _) in schemas {
        values.extend(boundary_values(s));
    }
    // Maps: a key no schema lists, holding each value the
    // `additionalProperties` schemas tell apart.
    let extra: Vec<(Value, Value)> = schemas
        .iter()
        .filter_map(|(s, r)| {
            let a = s.get("additionalProperties").filter(|a| a.is_object())?;
            Some((a.clone(), r.clone()))
        })
        .collect();
    if depth < 3 && !extra.is_empty() {
        for v in column_values(&extra, depth + 1)
            .into_iter()
            .take(MAX_ITEM_VALUES)
        {
            values.push(json!({ UNLISTED: v }));
        }
    }
    if depth < 3 {
        values.extend(array_values(schemas, depth));
    }
    let mut seen = BTreeSet::new();
    values.retain(|v| seen.insert(serde_json::to_string(v).unwrap_or_default()));
    values
}

/// A schema and the subschemas of its `allOf`/`anyOf`/`oneOf` (one level).
fn branches(schema: &Value) -> Vec<&Value> {
    let mut out = vec![schema];
    for key in ["allOf", "anyOf", "oneOf"] {
        out.extend(
            schema
                .get(key)
                .and_then(Value::as_array)
                .into_iter()
                .flatten(),
        );
    }
    out
}

/// The longest string length bound tried on each side of.
const MAX_BOUND_LENGTH: u64 = 4096;

/// Values on each side of a schema's own bounds — numeric bounds and
/// `multipleOf`, string lengths, property counts — whatever the analysis
/// made of the schema, so a changed bound shows even where the analysis
/// gives up (`multipleOf`, `minProperties`).
fn boundary_values(schema: &Value) -> Vec<Value> {
    let mut out = Vec::new();
    let number = |k: &str| schema.get(k).and_then(Value::as_f64);
    let push_number = |out: &mut Vec<Value>, x: f64| {
        if x.is_finite() {
            if x.fract() == 0.0 && x.abs() < 9.0e15 {
                out.push(json!(x as i64));
            } else {
                out.push(json!(x));
            }
        }
    };
    for key in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
        if let Some(x) = number(key) {
            for d in [-1.0, -0.5, 0.0, 0.5, 1.0] {
                push_number(&mut out, x + d);
            }
        }
    }
    if let Some(m) = number("multipleOf").filter(|m| *m > 0.0) {
        for k in [-1.0, 1.0, 2.0, 3.0] {
            push_number(&mut out, m * k);
        }
        push_number(&mut out, m + 1.0);
        push_number(&mut out, m / 2.0);
    }
    for key in ["minLength", "maxLength"] {
        if let Some(n) = schema.get(key).and_then(Value::as_u64) {
            // Long enough for the bounds real schemas write, short enough
            // that thousands of candidates stay small.
            let n = n.min(MAX_BOUND_LENGTH) as usize;
            for len in [n.saturating_sub(1), n, n + 1] {
                out.push(json!("a".repeat(len)));
            }
        }
    }
    for key in ["minProperties", "maxProperties"] {
        if let Some(n) = schema.get(key).and_then(Value::as_u64) {
            let n = n.min(64) as usize;
            for len in [n.saturating_sub(1), n, n + 1] {
                let object: Map<String, Value> =
                    (0..len).map(|i| (format!("k{i}"), json!(""))).collect();
                out.push(Value::Object(object));
            }
        }
    }
    out
}

/// Whether `schema` (compiled on its own) accepts `value`; a schema that does
/// not compile alone (a `$ref` into its document) accepts everything here.
fn accepts(schema: &Value, value: &Value) -> bool {
    mcp_resolve_runtime::pattern::schema_validator_options()
        .build(schema)
        .map_or(true, |v| v.is_valid(value))
}

/// The first of `values` the most schemas of `schemas` accept (every one,
/// where some value is accepted by all; patterns that pin different values
/// of one field leave the one accepted by the schema and one pattern).
fn first_valid<'v>(values: &'v [Value], schemas: &[(Value, Value)]) -> Option<&'v Value> {
    let mut best: Option<(&Value, usize)> = None;
    for v in values {
        let n = schemas.iter().filter(|(s, _)| accepts(s, v)).count();
        if n == schemas.len() {
            return Some(v);
        }
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((v, n));
        }
    }
    best.map(|(v, _)| v)
}

/// The most item values one array column is built from.
const MAX_ITEM_VALUES: usize = 64;

/// Arrays for schemas that describe arrays: one per value the `items`
/// schemas tell apart (so an item enum, type, pattern, bound or nested field
/// that changed shows), and arrays at the lengths `minItems`/`maxItems` tell
/// apart, each side of each bound.
fn array_values(schemas: &[(Value, Value)], depth: u32) -> Vec<Value> {
    let is_array = |s: &Value| {
        s.get("items").is_some()
            || s.get("contains").is_some()
            || s.get("minItems").is_some()
            || s.get("maxItems").is_some()
            || match s.get("type") {
                Some(Value::String(t)) => t == "array",
                Some(Value::Array(ts)) => ts.iter().any(|t| t == "array"),
                _ => false,
            }
    };
    if !schemas.iter().any(|(s, _)| is_array(s)) {
        return Vec::new();
    }
    let item_schemas = |key: &'static str| -> Vec<(Value, Value)> {
        schemas
            .iter()
            .flat_map(|(s, r)| branches(s).into_iter().map(move |b| (b, r)))
            .filter_map(|(s, r)| {
                let items = s.get(key)?;
                let items = match items.get("$ref").and_then(Value::as_str) {
                    Some(reference) => crate::schema::resolve_ref(r, reference).unwrap_or(items),
                    None => items,
                };
                Some((items.clone(), r.clone()))
            })
            .collect()
    };
    let items = item_schemas("items");
    // Items are built from `contains` schemas too (a pattern `"x" in list`
    // names an item no `items` schema does).
    let mut sources = items.clone();
    sources.extend(item_schemas("contains"));
    let mut item_values = if sources.is_empty() {
        vec![json!(""), json!(0), json!(true)]
    } else {
        column_values(&sources, depth + 1)
    };
    item_values.truncate(MAX_ITEM_VALUES);
    // Arrays at the bounds are built from items the schemas accept, so the
    // length is what tells them apart.
    let valid_items: Vec<Value> = item_values
        .iter()
        .filter(|v| items.iter().all(|(s, _)| accepts(s, v)))
        .cloned()
        .collect();
    let mut out = vec![json!([])];
    out.extend(item_values.iter().map(|v| json!([v])));
    let mut lengths = BTreeSet::new();
    for (s, _) in schemas {
        for key in ["minItems", "maxItems"] {
            if let Some(n) = s.get(key).and_then(Value::as_u64) {
                let n = n.min(MAX_ITEM_VALUES as u64) as usize;
                lengths.extend([n.saturating_sub(1), n, n + 1]);
            }
        }
    }
    lengths.insert(2);
    for len in lengths {
        if len < 2 {
            continue;
        }
        // Repeated and (where there are enough values) distinct items, for
        // `uniqueItems` and for bounds.
        let pool = if valid_items.is_empty() {
            &item_values
        } else {
            &valid_items
        };
        if let Some(first) = pool.first() {
            out.push(Value::Array(vec![first.clone(); len]));
        }
        if pool.len() >= len {
            out.push(Value::Array(pool[..len].to_vec()));
        }
    }
    out
}

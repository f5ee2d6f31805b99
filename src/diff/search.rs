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

    /// A call the new document sends to `at` (else any call it admits).
    pub(super) fn first_landing_new(&self, at: Landing) -> Option<Value> {
        let n = self.new?;
        self.candidates
            .iter()
            .find(|a| n.land(a) == Some(at))
            .or_else(|| self.candidates.iter().find(|a| n.land(a).is_some()))
            .cloned()
    }
}

/// A JSON Pointer token.
fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// Values for one argument: the classes the schemas tell apart, and for
/// objects with listed properties, objects built field by field.
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
    // Nested properties: vary each listed field around the smallest object.
    let mut fields: Vec<String> = Vec::new();
    for (s, _) in schemas {
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            for k in props.keys() {
                if !fields.contains(k) {
                    fields.push(k.clone());
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
                .filter_map(|(s, r)| {
                    s.pointer(&format!("/properties/{}", escape(f)))
                        .map(|p| (p.clone(), r.clone()))
                })
                .collect();
            let vals = column_values(&sub, depth + 1);
            let required = schemas.iter().any(|(s, _)| {
                s.get("required")
                    .and_then(Value::as_array)
                    .is_some_and(|r| r.iter().any(|x| x == f.as_str()))
            });
            if required && let Some(first) = vals.first() {
                base.insert(f.clone(), first.clone());
            }
            per_field.push((f.clone(), vals));
        }
        values.push(Value::Object(base.clone()));
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
    let mut seen = BTreeSet::new();
    values.retain(|v| seen.insert(serde_json::to_string(v).unwrap_or_default()));
    values
}

//! Argument domains: each argument path a tool's patterns mention becomes a
//! *column*, and its values are split into *regions* on which every
//! predicate over that path has one value. Each region carries a concrete
//! witness value (or stands for "absent"), so a predicate's truth on a region
//! is its truth on the witness, evaluated by the resolver's own evaluator.
//!
//! Regions per JSON type:
//! - strings: one per reachable signature of the string automata ([`strings`]);
//! - numbers: every threshold a predicate names is a point; every gap between
//!   two thresholds is split into its integers and its non-integers;
//! - `true`, `false`, `null`;
//! - objects and arrays: every literal a predicate names, and one region for
//!   every other value (witness: the smallest value the schema allows).
//!
//! Regions outside the argument's schema are dropped; regions no predicate
//! tells apart are merged.

use std::cmp::Ordering;
use std::collections::HashMap;

use mcp_resolve_runtime::json::Num;
use serde_json::{Map, Number, Value};

use super::matrix::Budget;
use super::strings::{self, DfaCache, StringPreds};
use super::translate::to_pred;
use super::{Inconclusive, Limits};
use crate::eval::{Regexes, eval_pred, json_equal};
use crate::ir::{Pred, PredKind};
use crate::regex_cache::compile_pattern;
use crate::schema;

/// One argument path and the regions of its values.
#[derive(Debug)]
pub struct Column {
    /// The path segments.
    pub path: Vec<String>,
    /// The regions; `None` is absence.
    pub regions: Vec<Option<Value>>,
}

/// Shared state of a run: compiled patterns and DFAs.
#[derive(Default)]
pub struct Env {
    pub(super) regexes: Regexes,
    pub(super) dfas: DfaCache,
    pub(super) limits: Limits,
}

impl Env {
    /// Compiles every pattern in `pred` into the evaluator's cache.
    pub fn learn(&mut self, pred: &Pred) -> Result<(), Inconclusive> {
        let mut result = Ok(());
        pred.walk(&mut |p| {
            if let PredKind::Pattern(re) = &p.kind
                && !self.regexes.contains_key(re)
            {
                match compile_pattern(re) {
                    Ok(r) => {
                        self.regexes.insert(re.clone(), r);
                    }
                    Err(e) => result = Err(Inconclusive(format!("pattern does not compile: {e}"))),
                }
            }
        });
        result
    }

    /// The column for `path` of a tool whose inputSchema is `root`, split by
    /// `preds` (every predicate the patterns apply to this path).
    pub fn column(
        &mut self,
        root: &Value,
        path: &[String],
        preds: &[&Pred],
        budget: &mut Budget,
    ) -> Result<Column, Inconclusive> {
        let sub = schema::subschema(root, path).unwrap_or(&Value::Bool(true));
        // Absence first: examples then leave out what they can.
        let mut regions = Vec::new();
        if schema::can_be_absent(root, path) {
            regions.push(None);
        }
        regions.extend(self.values(root, sub, preds, 0, budget)?);
        if regions.len() > self.limits.max_regions {
            return Err(Inconclusive(format!(
                "argument `{}` splits into more than {} regions",
                path.join("."),
                self.limits.max_regions
            )));
        }
        Ok(Column {
            path: path.to_vec(),
            regions,
        })
    }

    /// The present regions of values valid against `sub`, split by `preds`.
    fn values(
        &mut self,
        root: &Value,
        sub: &Value,
        preds: &[&Pred],
        depth: u32,
        budget: &mut Budget,
    ) -> Result<Vec<Option<Value>>, Inconclusive> {
        let allowed = to_pred(sub, root, true, 0);
        self.learn(&allowed)?;
        for p in preds {
            self.learn(p)?;
        }
        let mut leaves: Vec<&Pred> = Vec::new();
        for p in preds.iter().copied().chain([&allowed]) {
            p.walk(&mut |l| {
                if !matches!(
                    l.kind,
                    PredKind::Not(_) | PredKind::AnyOf(_) | PredKind::AllOf(_)
                ) {
                    leaves.push(l);
                }
            });
        }
        let types = schema::schema_types(sub);
        let allows = |t: &str| {
            types.as_ref().is_none_or(|ts| {
                ts.iter()
                    .any(|x| x == t || (t == "number" && x == "integer"))
            })
        };
        let mut candidates: Vec<Value> = Vec::new();
        if allows("string") {
            let mut sp = StringPreds::default();
            leaves.iter().for_each(|l| sp.add(l));
            candidates.extend(
                strings::witnesses(&sp, &mut self.dfas, self.limits.max_string_states, budget)?
                    .into_iter()
                    .map(Value::String),
            );
        }
        if allows("number") {
            candidates.extend(numbers(&leaves).into_iter().map(Value::Number));
        }
        if allows("boolean") {
            candidates.extend([Value::Bool(false), Value::Bool(true)]);
        }
        if allows("null") {
            candidates.push(Value::Null);
        }
        for kind in ["object", "array"] {
            if allows(kind) {
                let literals = literals(&leaves, kind);
                let generic = if kind == "object" {
                    self.minimal_object(root, sub, depth, budget)?
                } else {
                    Value::Array(Vec::new())
                };
                if literals.iter().any(|l| json_equal(l, &generic)) {
                    return Err(Inconclusive(format!(
                        "no {kind} other than the literals the patterns name is known"
                    )));
                }
                candidates.push(generic);
                candidates.extend(literals);
            }
        }
        // Keep what the schema allows; merge what no predicate tells apart.
        let mut seen: HashMap<Vec<bool>, ()> = HashMap::new();
        let mut out = Vec::new();
        for v in candidates {
            if !eval_pred(&allowed, &v, &self.regexes) {
                continue;
            }
            let mut sig: Vec<bool> = vec![v.is_object()];
            sig.extend(preds.iter().map(|p| eval_pred(p, &v, &self.regexes)));
            sig.extend(leaves.iter().map(|p| eval_pred(p, &v, &self.regexes)));
            if seen.insert(sig, ()).is_none() {
                out.push(Some(v));
            }
        }
        Ok(out)
    }

    /// The smallest value valid against `sub` (best effort: callers validate).
    pub fn minimal(
        &mut self,
        root: &Value,
        sub: &Value,
        depth: u32,
        budget: &mut Budget,
    ) -> Result<Option<Value>, Inconclusive> {
        // Recursive schemas with several required self-references branch:
        // bounded depth, and every call is paid for.
        if depth > 8 {
            return Ok(None);
        }
        budget.spend_run(1000)?;
        let sub = schema::deref(root, sub);
        if let Some(c) = sub.get("const") {
            return Ok(Some(c.clone()));
        }
        if let Some(first) = sub
            .get("enum")
            .and_then(Value::as_array)
            .and_then(|e| e.first())
        {
            return Ok(Some(first.clone()));
        }
        let wants_object = schema::object_only(sub)
            || (sub.get("type").is_none()
                && (sub.get("properties").is_some() || sub.get("required").is_some()));
        if wants_object {
            return self.minimal_object(root, sub, depth, budget).map(Some);
        }
        Ok(self
            .values(root, sub, &[], depth + 1, budget)?
            .into_iter()
            .flatten()
            .next())
    }

    /// The smallest object valid against `sub`: its required properties, each
    /// at its smallest value.
    fn minimal_object(
        &mut self,
        root: &Value,
        sub: &Value,
        depth: u32,
        budget: &mut Budget,
    ) -> Result<Value, Inconclusive> {
        let sub = schema::deref(root, sub);
        let mut out = Map::new();
        let props = sub.get("properties");
        for name in sub
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            let prop = props
                .and_then(|p| p.get(name))
                .unwrap_or(&Value::Bool(true));
            if let Some(v) = self.minimal(root, prop, depth + 1, budget)? {
                out.insert(name.to_string(), v);
            }
        }
        Ok(Value::Object(out))
    }
}

/// Object or array literals the leaves compare with.
fn literals(leaves: &[&Pred], kind: &str) -> Vec<Value> {
    let wanted = |v: &Value| match kind {
        "object" => v.is_object(),
        _ => v.is_array(),
    };
    let mut out: Vec<Value> = Vec::new();
    for l in leaves {
        let vs: &[Value] = match &l.kind {
            PredKind::Const(v) => std::slice::from_ref(v),
            PredKind::Enum(vs) => vs,
            _ => &[],
        };
        for v in vs.iter().filter(|v| wanted(v)) {
            if !out.iter().any(|o| json_equal(o, v)) {
                out.push(v.clone());
            }
        }
    }
    out
}

fn cmp(a: &Number, b: &Number) -> Ordering {
    Num::of(a).compare(Num::of(b)).unwrap_or(Ordering::Equal)
}

/// Every threshold, and an integer and a non-integer in every gap.
fn numbers(leaves: &[&Pred]) -> Vec<Number> {
    let mut cuts: Vec<Number> = Vec::new();
    for l in leaves {
        match &l.kind {
            PredKind::Minimum(n)
            | PredKind::Maximum(n)
            | PredKind::ExclusiveMinimum(n)
            | PredKind::ExclusiveMaximum(n)
            | PredKind::Const(Value::Number(n)) => cuts.push(n.clone()),
            PredKind::Enum(vs) => cuts.extend(vs.iter().filter_map(|v| v.as_number().cloned())),
            _ => {}
        }
    }
    cuts.sort_by(cmp);
    cuts.dedup_by(|a, b| cmp(a, b) == Ordering::Equal);
    let mut out = Vec::new();
    let mut gap = |lo: Option<&Number>, hi: Option<&Number>| {
        let inside = |n: &Number| {
            lo.is_none_or(|l| cmp(l, n) == Ordering::Less)
                && hi.is_none_or(|h| cmp(n, h) == Ordering::Less)
        };
        let integral = |n: &Number| !n.is_f64() || n.as_f64().is_some_and(|f| f.fract() == 0.0);
        let (lo_f, hi_f) = (lo.and_then(Number::as_f64), hi.and_then(Number::as_f64));
        let mut ints: Vec<Number> = Vec::new();
        let mut fracs: Vec<f64> = Vec::new();
        match (lo, hi) {
            (None, None) => {
                ints.push(0.into());
                fracs.push(0.5);
            }
            (Some(l), _) => {
                ints.extend(int_after(l));
                if let Some(f) = lo_f {
                    fracs.push(f.floor() + 0.5);
                    fracs.push(f + 0.5);
                }
            }
            (None, Some(h)) => {
                ints.extend(int_before(h));
                if let Some(f) = hi_f {
                    fracs.push(f.ceil() - 0.5);
                    fracs.push(f - 0.5);
                }
            }
        }
        if let (Some(a), Some(b)) = (lo_f, hi_f) {
            let mid = a / 2.0 + b / 2.0;
            fracs.push(mid);
            if let Some(n) = Number::from_f64(mid.floor()) {
                ints.push(n);
            }
        }
        if let Some(n) = ints.into_iter().find(|n| inside(n) && integral(n)) {
            out.push(n);
        }
        if let Some(n) = fracs
            .into_iter()
            .filter(|f| f.fract() != 0.0)
            .filter_map(Number::from_f64)
            .find(inside)
        {
            out.push(n);
        }
    };
    let mut prev: Option<&Number> = None;
    for c in &cuts {
        gap(prev, Some(c));
        prev = Some(c);
    }
    gap(prev, None);
    // Points after gaps: witnesses read better as 0 than as a bound.
    out.extend(cuts.iter().cloned());
    out
}

fn from_i128(i: i128) -> Option<Number> {
    if let Ok(x) = i64::try_from(i) {
        Some(x.into())
    } else if let Ok(x) = u64::try_from(i) {
        Some(x.into())
    } else {
        Number::from_f64(i as f64)
    }
}

fn as_i128(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

fn int_after(n: &Number) -> Vec<Number> {
    match as_i128(n) {
        Some(i) => [i + 1, i + 2].into_iter().filter_map(from_i128).collect(),
        None => n
            .as_f64()
            .map(|f| {
                let base = f.floor() + 1.0;
                if base.abs() < 1e18 {
                    from_i128(base as i128).into_iter().collect()
                } else {
                    Number::from_f64(base).into_iter().collect()
                }
            })
            .unwrap_or_default(),
    }
}

fn int_before(n: &Number) -> Vec<Number> {
    match as_i128(n) {
        Some(i) => [i - 1, i - 2].into_iter().filter_map(from_i128).collect(),
        None => n
            .as_f64()
            .map(|f| {
                let base = f.ceil() - 1.0;
                if base.abs() < 1e18 {
                    from_i128(base as i128).into_iter().collect()
                } else {
                    Number::from_f64(base).into_iter().collect()
                }
            })
            .unwrap_or_default(),
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::ir::Loc;
    use crate::source::{FileId, Span};
    use serde_json::json;

    fn pred(kind: PredKind) -> Pred {
        Pred {
            kind,
            loc: Loc(Span::new(FileId(0), 0, 0)),
        }
    }

    #[test]
    fn numeric_gaps_split_into_integers_and_fractions() {
        let a = pred(PredKind::Minimum(1.into()));
        let b = pred(PredKind::ExclusiveMaximum(2.into()));
        let got: Vec<String> = numbers(&[&a, &b]).iter().map(|n| n.to_string()).collect();
        // below 1: 0, 0.5; between 1 and 2: (no integer), 1.5; above 2: 3, 2.5; points 1, 2
        assert_eq!(got, vec!["0", "0.5", "1.5", "3", "2.5", "1", "2"]);
    }

    #[test]
    fn integer_columns_drop_fractions_and_merge_equivalent_gaps() {
        let mut env = Env::default();
        let root = json!({"type": "object", "properties": {"n": {"type": "integer", "minimum": 0, "maximum": 10}}, "required": ["n"]});
        let le = pred(PredKind::Maximum(5.into()));
        let col = env
            .column(
                &root,
                &["n".to_string()],
                &[&le],
                &mut Budget::new(0, u64::MAX),
            )
            .unwrap();
        // ≤ 5 and > 5 are the only regions the pattern tells apart; absent is impossible.
        assert_eq!(col.regions.len(), 2);
        assert!(
            col.regions
                .iter()
                .all(|r| r.as_ref().is_some_and(|v| v.is_i64()))
        );
    }
}

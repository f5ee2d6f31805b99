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

use serde_json::{Map, Value};

use super::matrix::Budget;
use super::strings::{self, DfaCache, StringPreds};
use super::translate::to_pred;
use super::{Inconclusive, Limits};
use crate::eval::{Regexes, eval_pred, json_equal};
use crate::ir::{Pred, PredKind};
use crate::regex_cache::compile_pattern;
use crate::schema;

mod points;

use self::points::*;

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
        pred.walk_deep(&mut |p| {
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
        if allows("object") {
            candidates.extend(self.objects(root, sub, preds, &leaves, depth, budget)?);
        }
        if allows("array") {
            candidates.extend(self.arrays(root, sub, preds, &leaves, depth, budget)?);
        }
        // Keep what the schema allows; merge what no predicate tells apart.
        let mut seen: super::FastMap<Vec<bool>, ()> = super::FastMap::default();
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

/// Arrays the analysis builds at most, per argument.
const MAX_ARRAYS: usize = 1024;
/// Kinds of items (classes of the patterns' item predicates) combined at most.
const MAX_ITEM_KINDS: usize = 8;
/// The longest array the analysis builds.
const MAX_ARRAY_LENGTH: u64 = 256;
/// Object and array nesting the analysis follows.
const MAX_DEPTH: u32 = 8;

impl Env {
    /// Arrays valid against `sub`, one for every way the patterns can tell
    /// arrays apart: by length (each interval between the `minItems` and
    /// `maxItems` bounds) and by which kinds of items they hold (each subset
    /// of the classes of items that `items` and `contains` tell apart).
    /// These are all the predicates see of an array, so the regions are
    /// exact, besides the literals, which are regions of their own.
    #[expect(
        clippy::too_many_lines,
        reason = "lengths and item classes are combined in one product; apart, each half would need the other's state"
    )]
    fn arrays(
        &mut self,
        root: &Value,
        sub: &Value,
        preds: &[&Pred],
        leaves: &[&Pred],
        depth: u32,
        budget: &mut Budget,
    ) -> Result<Vec<Value>, Inconclusive> {
        let sub = schema::deref(root, sub);
        let mut item_preds: Vec<&Pred> = Vec::new();
        for p in preds {
            p.walk(&mut |l| {
                if let PredKind::Items(q) | PredKind::Contains(q) = &l.kind
                    && !item_preds.contains(&q.as_ref())
                {
                    item_preds.push(q);
                }
            });
        }
        let mut cuts: Vec<u64> = vec![0];
        for l in leaves {
            match l.kind {
                PredKind::MinItems(n) => cuts.push(n),
                PredKind::MaxItems(n) => cuts.push(n.saturating_add(1)),
                _ => {}
            }
        }
        cuts.sort_unstable();
        cuts.dedup();
        let items_schema = match sub.get("items") {
            Some(s @ (Value::Object(_) | Value::Bool(_))) => s,
            _ => &Value::Bool(true),
        };
        // Kinds of items: the classes the item predicates tell apart, each
        // with a few members (for arrays that must differ from a literal).
        let mut kinds: Vec<(Vec<bool>, Vec<Value>)> = Vec::new();
        if item_preds.is_empty() {
            // Nothing looks inside: any one valid item stands for all.
            let item = self
                .minimal(root, items_schema, depth + 1, budget)?
                .unwrap_or(Value::Null);
            kinds.push((Vec::new(), vec![item]));
            self.more_members(root, items_schema, &item_preds, &mut kinds)?;
        } else {
            if depth >= MAX_DEPTH {
                return Err(Inconclusive(
                    "arrays nest too deeply to analyse".to_string(),
                ));
            }
            for v in self
                .values(root, items_schema, &item_preds, depth + 1, budget)?
                .into_iter()
                .flatten()
            {
                let sig: Vec<bool> = item_preds
                    .iter()
                    .map(|p| eval_pred(p, &v, &self.regexes))
                    .collect();
                match kinds.iter_mut().find(|(s, _)| *s == sig) {
                    Some((_, members))
                        if members.len() < MAX_MEMBERS
                            && !members.iter().any(|m| json_equal(m, &v)) =>
                    {
                        members.push(v)
                    }
                    Some(_) => {}
                    None => kinds.push((sig, vec![v])),
                }
            }
            self.more_members(root, items_schema, &item_preds, &mut kinds)?;
            if kinds.len() > MAX_ITEM_KINDS {
                return Err(Inconclusive(format!(
                    "the item conditions split items into {} kinds, more than the {MAX_ITEM_KINDS} whose combinations are analysed",
                    kinds.len()
                )));
            }
        }
        let literals = literals(leaves, "array");
        let exact_pool = ["enum", "const"]
            .iter()
            .any(|k| schema::deref(root, items_schema).get(k).is_some());
        let mut out = Vec::new();
        for mask in 0u32..(1 << kinds.len()) {
            let members: Vec<&Vec<Value>> = kinds
                .iter()
                .enumerate()
                .filter(|(i, _)| mask & (1 << i) != 0)
                .map(|(_, (_, m))| m)
                .collect();
            let t = members.len() as u64;
            for (i, &lo) in cuts.iter().enumerate() {
                let hi = cuts.get(i + 1).copied().unwrap_or(u64::MAX);
                let n = lo.max(t);
                if n >= hi || (t == 0 && n > 0) {
                    continue;
                }
                if n > MAX_ARRAY_LENGTH {
                    return Err(Inconclusive(format!(
                        "telling the arrays apart needs arrays of {n} items, more than the {MAX_ARRAY_LENGTH} analysed"
                    )));
                }
                budget.spend_run(n + 1)?;
                let mut items: Vec<Value> = members.iter().map(|m| m[0].clone()).collect();
                while (items.len() as u64) < n {
                    items.push(members[0][0].clone());
                }
                let first = Value::Array(items);
                if !literals.iter().any(|l| json_equal(l, &first)) {
                    out.push(first);
                    continue;
                }
                // The array equals a literal: find another of its kind, or
                // show there is none (the empty array is the only one of
                // length 0).
                if t == 0 {
                    continue;
                }
                let exact = kinds.iter().enumerate().all(|(i, k)| {
                    mask & (1 << i) == 0
                        || (k.1.len() < MAX_MEMBERS && exact_kind(&item_preds, &k.0, exact_pool))
                });
                match other_array(&members, n, hi, &literals, budget)? {
                    Other::Found(a) => out.push(a),
                    Other::Exhausted if exact => {}
                    Other::Exhausted => {
                        return Err(Inconclusive(format!(
                            "could not find an array other than {first} that the conditions treat alike, nor show that there is none"
                        )));
                    }
                }
            }
            if out.len() > MAX_ARRAYS {
                return Err(Inconclusive(format!(
                    "the conditions tell apart more than {MAX_ARRAYS} kinds of arrays"
                )));
            }
        }
        out.extend(literals);
        Ok(out)
    }

    /// More members for the kinds of items, from a small pool of plain values
    /// valid against `items` (its `enum`, else strings, numbers, booleans,
    /// `null`): arrays that must differ from a literal are built from them.
    fn more_members(
        &mut self,
        root: &Value,
        items: &Value,
        item_preds: &[&Pred],
        kinds: &mut [(Vec<bool>, Vec<Value>)],
    ) -> Result<(), Inconclusive> {
        let items = schema::deref(root, items);
        let allowed = to_pred(items, root, true, 0);
        self.learn(&allowed)?;
        let mut pool: Vec<Value> = match (items.get("const"), items.get("enum")) {
            (Some(c), _) => vec![c.clone()],
            (None, Some(Value::Array(e))) => e.clone(),
            _ => ["", "a", "b", "c"]
                .into_iter()
                .map(Value::from)
                .chain([0, 1, 2].map(Value::from))
                .chain([Value::Bool(false), Value::Bool(true), Value::Null])
                .collect(),
        };
        // The values item conditions name: kinds they pin are enumerated.
        for p in item_preds {
            p.walk(&mut |l| match &l.kind {
                PredKind::Const(c) => pool.push(c.clone()),
                PredKind::Enum(vs) => pool.extend(vs.iter().cloned()),
                _ => {}
            });
        }
        for v in pool {
            if !eval_pred(&allowed, &v, &self.regexes) {
                continue;
            }
            let sig: Vec<bool> = item_preds
                .iter()
                .map(|p| eval_pred(p, &v, &self.regexes))
                .collect();
            if let Some((_, members)) = kinds.iter_mut().find(|(s, _)| *s == sig)
                && members.len() < MAX_MEMBERS
                && !members.iter().any(|m| json_equal(m, &v))
            {
                members.push(v);
            }
        }
        Ok(())
    }

    /// Objects valid against `sub`: for each property the patterns look at
    /// (`properties`, `required`), every region of its values and its
    /// absence, combined; else the smallest object. The literals are regions
    /// of their own.
    #[expect(
        clippy::too_many_lines,
        reason = "the properties' regions and their product are one walk over the same budget"
    )]
    fn objects(
        &mut self,
        root: &Value,
        sub: &Value,
        preds: &[&Pred],
        leaves: &[&Pred],
        depth: u32,
        budget: &mut Budget,
    ) -> Result<Vec<Value>, Inconclusive> {
        let sub = schema::deref(root, sub);
        let mut fields: Vec<(String, Vec<&Pred>)> = Vec::new();
        let mut found: Vec<(String, Option<&Pred>)> = Vec::new();
        for p in preds {
            p.walk(&mut |l| match &l.kind {
                PredKind::Properties(ps) => {
                    found.extend(ps.iter().map(|(k, q)| (k.clone(), Some(q))));
                }
                PredKind::Required(ks) => found.extend(ks.iter().map(|k| (k.clone(), None))),
                _ => {}
            });
        }
        for (name, p) in found {
            let i = match fields.iter().position(|(n, _)| *n == name) {
                Some(i) => i,
                None => {
                    fields.push((name, Vec::new()));
                    fields.len() - 1
                }
            };
            if let Some(p) = p
                && !fields[i].1.contains(&p)
            {
                fields[i].1.push(p);
            }
        }
        let base = self.minimal_object(root, sub, depth, budget)?;
        let literals = literals(leaves, "object");
        let mut out: Vec<Value> = Vec::new();
        if fields.is_empty() {
            out.push(base);
        } else {
            if depth >= MAX_DEPTH {
                return Err(Inconclusive(
                    "objects nest too deeply to analyse".to_string(),
                ));
            }
            let required: Vec<&str> = sub
                .get("required")
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(Value::as_str)
                .collect();
            let mut options: Vec<(String, Vec<Option<Value>>)> = Vec::new();
            for (name, ps) in &fields {
                let prop = match schema::property(root, sub, name) {
                    schema::Property::Declared(s) => s,
                    _ => &Value::Bool(true),
                };
                let mut vals: Vec<Option<Value>> = Vec::new();
                if !required.contains(&name.as_str()) {
                    vals.push(None);
                }
                vals.extend(self.values(root, prop, ps, depth + 1, budget)?);
                options.push((name.clone(), vals));
            }
            let total = options
                .iter()
                .try_fold(1usize, |acc, (_, v)| acc.checked_mul(v.len().max(1)))
                .filter(|&n| n <= MAX_ARRAYS)
                .ok_or_else(|| {
                    Inconclusive(format!(
                        "the property conditions tell apart more than {MAX_ARRAYS} kinds of objects"
                    ))
                })?;
            budget.spend_run(total as u64)?;
            for mut k in 0..total {
                let mut o = match &base {
                    Value::Object(m) => m.clone(),
                    _ => Map::new(),
                };
                for (name, vals) in &options {
                    let n = vals.len().max(1);
                    match vals.get(k % n) {
                        Some(Some(v)) => {
                            o.insert(name.clone(), v.clone());
                        }
                        _ => {
                            o.remove(name);
                        }
                    }
                    k /= n;
                }
                out.push(Value::Object(o));
            }
        }
        // An object equal to a literal stands for others only if one can be
        // built: the same with one more property the patterns do not name.
        let named = |k: &str| fields.iter().any(|(n, _)| n == k);
        let mut kept = Vec::with_capacity(out.len());
        for o in out {
            if !literals.iter().any(|l| json_equal(l, &o)) {
                kept.push(o);
                continue;
            }
            let Value::Object(m) = &o else { continue };
            let declared = sub.get("properties").and_then(Value::as_object);
            let extra = declared
                .into_iter()
                .flatten()
                .filter(|(k, _)| !m.contains_key(*k) && !named(k))
                .find_map(|(k, s)| {
                    self.minimal(root, s, depth + 1, budget)
                        .ok()
                        .flatten()
                        .map(|v| (k.clone(), v))
                })
                .or_else(|| {
                    (sub.get("additionalProperties") != Some(&Value::Bool(false)))
                        .then(|| ("_".to_string(), Value::Null))
                        .filter(|(k, _)| !m.contains_key(k) && !named(k))
                });
            let other = extra.map(|(k, v)| {
                let mut m = m.clone();
                m.insert(k, v);
                Value::Object(m)
            });
            match other {
                Some(a) if !literals.iter().any(|l| json_equal(l, &a)) => kept.push(a),
                _ => {
                    return Err(Inconclusive(format!(
                        "could not find an object other than {o} that the conditions treat alike, nor show that there is none"
                    )));
                }
            }
        }
        kept.extend(literals);
        Ok(kept)
    }
}

/// Members kept per kind of items.
const MAX_MEMBERS: usize = 64;

/// Whether the pool of [`Env::more_members`] holds every member of the kind
/// with signature `sig`: the items schema is an `enum` (or `const`), or an
/// item condition the kind satisfies is one. (Callers also check that the
/// kind did not reach [`MAX_MEMBERS`], where the pool was cut short.)
fn exact_kind(item_preds: &[&Pred], sig: &[bool], exact_pool: bool) -> bool {
    exact_pool
        || item_preds.iter().zip(sig).any(|(p, &holds)| {
            holds
                && match &p.kind {
                    PredKind::Const(_) | PredKind::Enum(_) => true,
                    PredKind::AllOf(ps) => ps
                        .iter()
                        .any(|q| matches!(q.kind, PredKind::Const(_) | PredKind::Enum(_))),
                    _ => false,
                }
        })
}

enum Other {
    Found(Value),
    /// None among the arrays tried; all of them when the kinds' members
    /// are complete and the lengths were all tried.
    Exhausted,
}

/// Arrays from the kinds `members` (each at least once), of the lengths in
/// `n..hi` up to one more length than there are literals, in order: the
/// first that is no literal.
fn other_array(
    members: &[&Vec<Value>],
    n: u64,
    hi: u64,
    literals: &[Value],
    budget: &mut Budget,
) -> Result<Other, Inconclusive> {
    let alphabet: Vec<(usize, &Value)> = members
        .iter()
        .enumerate()
        .flat_map(|(j, m)| m.iter().map(move |v| (j, v)))
        .collect();
    let last = hi.min(n.saturating_add(literals.len() as u64 + 1));
    let too_many =
        || Inconclusive("too many arrays of one kind to tell them from the literals".to_string());
    if last > MAX_ARRAY_LENGTH + 1 {
        return Err(too_many());
    }
    let mut tried: u64 = 0;
    for len in n..last {
        let len = usize::try_from(len).unwrap_or(usize::MAX);
        let mut digits = vec![0usize; len];
        loop {
            tried += 1;
            budget.spend_run(len as u64 + 1)?;
            if tried > 100_000 {
                return Err(too_many());
            }
            let covers = (0..members.len()).all(|j| digits.iter().any(|&d| alphabet[d].0 == j));
            if covers {
                let a = Value::Array(digits.iter().map(|&d| alphabet[d].1.clone()).collect());
                if !literals.iter().any(|l| json_equal(l, &a)) {
                    return Ok(Other::Found(a));
                }
            }
            // Next sequence (odometer).
            let mut i = 0;
            while i < len {
                digits[i] += 1;
                if digits[i] < alphabet.len() {
                    break;
                }
                digits[i] = 0;
                i += 1;
            }
            if i == len {
                break;
            }
        }
    }
    if last < hi {
        // Lengths beyond those tried hold other arrays, but none was built.
        return Err(Inconclusive(
            "could not build an array of the kinds the conditions tell apart".to_string(),
        ));
    }
    Ok(Other::Exhausted)
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
    fn literals_never_stand_for_members_beyond_the_enumerated_ones() {
        // 70 item values, the first 64 of them as one-item literals: the
        // arrays of the other 6 must keep a region (or the analysis must say
        // it cannot decide), never be taken as covered by the literals.
        let values: Vec<Value> = (0..70).map(|i| json!(format!("v{i:02}"))).collect();
        let root = json!({"type": "object", "properties": {"xs": {
            "type": "array", "maxItems": 1, "items": {"enum": values}}}, "required": ["xs"]});
        let literals: Vec<Value> = values[..64].iter().map(|v| json!([v])).collect();
        let p = pred(PredKind::Enum(literals.clone()));
        let mut env = Env::default();
        match env.column(
            &root,
            &["xs".to_string()],
            &[&p],
            &mut Budget::new(0, u64::MAX),
        ) {
            Ok(col) => assert!(
                col.regions
                    .iter()
                    .flatten()
                    .any(|r| r.as_array().is_some_and(|a| a.len() == 1) && !literals.contains(r)),
                "{:?}",
                col.regions
            ),
            Err(Inconclusive(why)) => assert!(why.contains("array"), "{why}"),
        }
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

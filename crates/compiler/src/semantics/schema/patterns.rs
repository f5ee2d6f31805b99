//! Conditions as `argumentPatterns`: a JSON Schema per argument, so a host
//! can evaluate variants with any JSON Schema validator.
//!
//! Encoding (documented in docs/signature.md):
//! - a condition is put in disjunctive normal form; each disjunct becomes one
//!   `resolvedVariants` entry (same variant name, in order);
//! - in an entry, `argumentPatterns[a]` is a schema the argument `a` must be
//!   present and valid against, or `false`, meaning `a` must be absent;
//! - nested paths become nested `properties` + `required` under the first segment.

use serde_json::{Map, Value, json};

use crate::ir::{ArgPath, Cond, Pred, PredKind};

/// The most entries one variant may expand to.
pub const MAX_DISJUNCTS: usize = 256;

/// A literal over one top-level argument.
#[derive(Clone, Debug, PartialEq)]
enum Lit {
    Absent(String),
    Test(String, Value),
}

/// The entries of one condition, or `Err` when it would expand past [`MAX_DISJUNCTS`].
pub fn argument_patterns(cond: &Cond) -> Result<Vec<Map<String, Value>>, usize> {
    let dnf = dnf(cond, false)?;
    Ok(dnf.into_iter().filter_map(|conj| to_map(&conj)).collect())
}

type Dnf = Vec<Vec<Lit>>;

fn dnf(cond: &Cond, negated: bool) -> Result<Dnf, usize> {
    match (cond, negated) {
        (Cond::Const(b), n) => Ok(if *b != n { vec![vec![]] } else { vec![] }),
        (Cond::Not(c), n) => dnf(c, !n),
        (Cond::And(cs), false) | (Cond::Or(cs), true) => {
            let mut acc: Dnf = vec![vec![]];
            for c in cs {
                let next = dnf(c, negated)?;
                let mut product = Vec::new();
                for a in &acc {
                    for b in &next {
                        let mut conj = a.clone();
                        conj.extend(b.iter().cloned());
                        product.push(conj);
                        if product.len() > MAX_DISJUNCTS {
                            return Err(product.len());
                        }
                    }
                }
                acc = product;
            }
            Ok(acc)
        }
        (Cond::Or(cs), false) | (Cond::And(cs), true) => {
            let mut acc = Vec::new();
            for c in cs {
                acc.extend(dnf(c, negated)?);
                if acc.len() > MAX_DISJUNCTS {
                    return Err(acc.len());
                }
            }
            Ok(acc)
        }
        (Cond::Present(p), false) => Ok(vec![vec![test(p, json!({}))]]),
        (Cond::Present(p), true) => Ok(absent(p)),
        (Cond::Test(p, pred), false) => Ok(vec![vec![test(p, pred_schema(pred))]]),
        (Cond::Test(p, pred), true) => {
            // Not (present and valid) = absent, or present and invalid.
            let mut out = absent(p);
            out.push(vec![test(p, json!({ "not": pred_schema(pred) }))]);
            Ok(out)
        }
    }
}

/// `a.b.c` present with value schema `s`: a schema on `a`.
fn test(path: &ArgPath, schema: Value) -> Lit {
    let (first, rest) = path
        .segments
        .split_first()
        .map_or(("", &[][..]), |(f, r)| (f.as_str(), r));
    let schema = rest.iter().rev().fold(
        schema,
        |inner, seg| json!({ "type": "object", "properties": { seg: inner }, "required": [seg] }),
    );
    Lit::Test(first.to_string(), schema)
}

/// `a.b.c` absent: `a` absent, or `a` present without `b.c`.
fn absent(path: &ArgPath) -> Dnf {
    let (first, rest) = path
        .segments
        .split_first()
        .map_or(("", &[][..]), |(f, r)| (f.as_str(), r));
    let mut out = vec![vec![Lit::Absent(first.to_string())]];
    if !rest.is_empty() {
        let schema = rest.iter().rev().fold(
            Value::Bool(false),
            |inner, seg| json!({ "properties": { seg: inner } }),
        );
        out.push(vec![Lit::Test(first.to_string(), schema)]);
    }
    out
}

/// One conjunction as an `argumentPatterns` map; `None` when contradictory.
fn to_map(conj: &[Lit]) -> Option<Map<String, Value>> {
    let mut names: Vec<&str> = conj
        .iter()
        .map(|l| match l {
            Lit::Absent(a) | Lit::Test(a, _) => a.as_str(),
        })
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut map = Map::new();
    for name in names {
        let absent = conj
            .iter()
            .any(|l| matches!(l, Lit::Absent(a) if a == name));
        let mut schemas: Vec<Value> = Vec::new();
        for l in conj {
            if let Lit::Test(a, s) = l
                && a == name
                && *s != json!({})
                && !schemas.contains(s)
            {
                schemas.push(s.clone());
            }
        }
        let present = conj
            .iter()
            .any(|l| matches!(l, Lit::Test(a, _) if a == name));
        let schema = match (absent, present) {
            (true, true) => return None,
            (true, false) => Value::Bool(false),
            _ => match schemas.len() {
                0 => json!({}),
                1 => schemas.pop().unwrap_or_else(|| json!({})),
                _ => json!({ "allOf": schemas }),
            },
        };
        map.insert(name.to_string(), schema);
    }
    Some(map)
}

/// A predicate as a JSON Schema.
pub fn pred_schema(pred: &Pred) -> Value {
    match &pred.kind {
        PredKind::Const(v) => json!({ "const": v }),
        PredKind::Enum(vs) => json!({ "enum": vs }),
        PredKind::Type(ts) if ts.len() == 1 => json!({ "type": ts[0] }),
        PredKind::Type(ts) => json!({ "type": ts }),
        PredKind::Pattern(re) => json!({ "pattern": re }),
        PredKind::MinLength(n) => json!({ "minLength": n }),
        PredKind::MaxLength(n) => json!({ "maxLength": n }),
        PredKind::Minimum(n) => json!({ "minimum": n }),
        PredKind::Maximum(n) => json!({ "maximum": n }),
        PredKind::ExclusiveMinimum(n) => json!({ "exclusiveMinimum": n }),
        PredKind::ExclusiveMaximum(n) => json!({ "exclusiveMaximum": n }),
        PredKind::Not(p) => json!({ "not": pred_schema(p) }),
        // JSON Schema requires non-empty `anyOf`/`allOf` arrays.
        PredKind::AnyOf(ps) if ps.is_empty() => json!({ "not": {} }),
        PredKind::AllOf(ps) if ps.is_empty() => json!({}),
        PredKind::AnyOf(ps) => json!({ "anyOf": ps.iter().map(pred_schema).collect::<Vec<_>>() }),
        PredKind::AllOf(ps) => json!({ "allOf": ps.iter().map(pred_schema).collect::<Vec<_>>() }),
        PredKind::MinItems(n) => json!({ "minItems": n }),
        PredKind::MaxItems(n) => json!({ "maxItems": n }),
        PredKind::Items(p) => json!({ "items": pred_schema(p) }),
        PredKind::Contains(p) => json!({ "contains": pred_schema(p) }),
        PredKind::Properties(ps) => json!({
            "properties": ps
                .iter()
                .map(|(k, p)| (k.clone(), pred_schema(p)))
                .collect::<Map<String, Value>>()
        }),
        PredKind::Required(ks) => json!({ "required": ks }),
    }
}

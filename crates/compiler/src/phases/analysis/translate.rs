//! What an argument's inputSchema allows, as a [`Pred`] the analysis can
//! split domains by.
//!
//! The translation is an over-approximation: keywords outside the matcher
//! subset (`format`, `multipleOf`, object and array keywords other than
//! `minItems`/`maxItems`, …) are dropped (the domains build items and
//! properties from their own subschemas, so values stay valid there),
//! so the predicate admits at least every value the schema admits. Under
//! `not`, polarity flips and a subschema with such keywords becomes `false`,
//! which keeps the whole translation an over-approximation. Claims that rest
//! on it ("unreachable", "exhaustive") are therefore sound; examples are
//! checked against the real validator before they are printed.

use serde_json::Value;

use crate::ir::{Loc, Pred, PredKind};
use crate::schema::{DESCRIPTIVE_KEYWORDS, resolve_ref};
use crate::source::{FileId, Span};

/// Keywords that never constrain a value: the descriptive ones, and the
/// identifiers and definitions a schema refers through.
const STRUCTURAL: &[&str] = &["$schema", "$id", "$anchor", "$defs", "definitions"];

fn never_constrains(keyword: &str) -> bool {
    DESCRIPTIVE_KEYWORDS.contains(&keyword) || STRUCTURAL.contains(&keyword)
}

fn loc() -> Loc {
    Loc(Span::new(FileId(0), 0, 0))
}

fn pred(kind: PredKind) -> Pred {
    Pred { kind, loc: loc() }
}

/// `true` as a predicate.
pub fn any() -> Pred {
    pred(PredKind::AllOf(Vec::new()))
}

fn none() -> Pred {
    pred(PredKind::AnyOf(Vec::new()))
}

/// The predicate for `schema` (a subschema of `root`). `positive`: the result
/// must admit every value the schema admits; otherwise it must admit none the
/// schema rejects (it sits under an odd number of `not`s).
pub fn to_pred(schema: &Value, root: &Value, positive: bool, depth: u32) -> Pred {
    let mut fuel = MAX_SCHEMA_NODES;
    translate(schema, root, positive, depth, &mut fuel)
}

/// Subschemas one translation visits at most: `$ref` cycles under `anyOf`
/// would otherwise branch exponentially.
const MAX_SCHEMA_NODES: u32 = 4096;

fn translate(schema: &Value, root: &Value, positive: bool, depth: u32, fuel: &mut u32) -> Pred {
    let unknown = || if positive { any() } else { none() };
    if depth > 32 || *fuel == 0 {
        return unknown();
    }
    *fuel -= 1;
    let obj = match schema {
        Value::Bool(true) => return any(),
        Value::Bool(false) => return none(),
        Value::Object(o) => o,
        _ => return unknown(),
    };
    let mut all = Vec::new();
    for (key, value) in obj {
        let part = match (key.as_str(), value) {
            (k, _) if never_constrains(k) => continue,
            ("type", Value::String(t)) => pred(PredKind::Type(vec![t.clone()])),
            ("type", Value::Array(ts)) => pred(PredKind::Type(
                ts.iter()
                    .filter_map(|t| t.as_str().map(str::to_string))
                    .collect(),
            )),
            ("const", v) => pred(PredKind::Const(v.clone())),
            ("enum", Value::Array(vs)) => pred(PredKind::Enum(vs.clone())),
            ("pattern", Value::String(p)) => pred(PredKind::Pattern(p.clone())),
            ("minLength", Value::Number(n)) if n.is_u64() => {
                pred(PredKind::MinLength(n.as_u64().unwrap_or(0)))
            }
            ("maxLength", Value::Number(n)) if n.is_u64() => {
                pred(PredKind::MaxLength(n.as_u64().unwrap_or(0)))
            }
            ("minItems", Value::Number(n)) if n.is_u64() => {
                pred(PredKind::MinItems(n.as_u64().unwrap_or(0)))
            }
            ("maxItems", Value::Number(n)) if n.is_u64() => {
                pred(PredKind::MaxItems(n.as_u64().unwrap_or(0)))
            }
            ("minimum", Value::Number(n)) => pred(PredKind::Minimum(n.clone())),
            ("maximum", Value::Number(n)) => pred(PredKind::Maximum(n.clone())),
            ("exclusiveMinimum", Value::Number(n)) => pred(PredKind::ExclusiveMinimum(n.clone())),
            ("exclusiveMaximum", Value::Number(n)) => pred(PredKind::ExclusiveMaximum(n.clone())),
            ("not", sub) => pred(PredKind::Not(Box::new(translate(
                sub,
                root,
                !positive,
                depth + 1,
                fuel,
            )))),
            ("anyOf", Value::Array(subs)) => pred(PredKind::AnyOf(
                subs.iter()
                    .map(|s| translate(s, root, positive, depth + 1, fuel))
                    .collect(),
            )),
            ("allOf", Value::Array(subs)) => pred(PredKind::AllOf(
                subs.iter()
                    .map(|s| translate(s, root, positive, depth + 1, fuel))
                    .collect(),
            )),
            // Exactly one holds ⇒ at least one holds.
            ("oneOf", Value::Array(subs)) if positive => pred(PredKind::AnyOf(
                subs.iter()
                    .map(|s| translate(s, root, positive, depth + 1, fuel))
                    .collect(),
            )),
            ("$ref", Value::String(r)) => match resolve_ref(root, r) {
                Some(target) => translate(target, root, positive, depth + 1, fuel),
                None => unknown(),
            },
            _ => unknown(),
        };
        all.push(part);
    }
    match all.len() {
        1 => all.pop().unwrap_or_else(any),
        _ => pred(PredKind::AllOf(all)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::eval_pred;
    use crate::schema::can_be_absent;
    use serde_json::json;

    #[test]
    fn unknown_keywords_widen_positively_and_narrow_under_not() {
        let root = json!({});
        let s = json!({"type": "string", "format": "email"});
        let p = to_pred(&s, &root, true, 0);
        assert!(eval_pred(&p, &json!("not an email"), &Default::default()));
        assert!(!eval_pred(&p, &json!(1), &Default::default()));
        let n = to_pred(&json!({"not": s}), &root, true, 0);
        // `not {format}` admits strings the real schema might reject, never fewer.
        assert!(eval_pred(&n, &json!("x@example.com"), &Default::default()));
    }

    #[test]
    fn recursive_refs_under_any_of_stay_bounded() {
        let root = json!({"anyOf": [{"$ref": "#"}, {"$ref": "#"}, {"type": "string"}]});
        // 3^32 nodes if unbounded; the fuel keeps it to a few thousand.
        let p = to_pred(&root, &root, true, 0);
        assert!(eval_pred(&p, &json!("x"), &Default::default()));
    }

    #[test]
    fn absence_follows_required_and_object_types() {
        let root = json!({
            "type": "object",
            "properties": {
                "a": {"type": "object", "properties": {"b": {}}, "required": ["b"]},
                "c": {}
            },
            "required": ["a"]
        });
        let seg = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        assert!(!can_be_absent(&root, &seg(&["a"])));
        assert!(!can_be_absent(&root, &seg(&["a", "b"])));
        assert!(can_be_absent(&root, &seg(&["c"])));
    }
}

//! Evaluation of conditions and predicates against argument objects, with
//! JSON Schema semantics for predicates (the reference the generated code and
//! host-side evaluation must agree with).

use std::collections::HashMap;

use regex::Regex;
use serde_json::Value;

use crate::ir::{ArgPath, Cond, Pred, PredKind};

/// Compiled regexes by source, so each pattern compiles once.
pub type Regexes = HashMap<String, Regex>;

/// The value at an argument path, if every object on the way is present.
pub fn lookup<'v>(arguments: &'v Value, path: &ArgPath) -> Option<&'v Value> {
    path.segments
        .iter()
        .try_fold(arguments, |v, seg| v.as_object()?.get(seg))
}

/// Whether `cond` holds for `arguments`.
pub fn eval_cond(cond: &Cond, arguments: &Value, regexes: &Regexes) -> bool {
    match cond {
        Cond::Const(b) => *b,
        Cond::And(cs) => cs.iter().all(|c| eval_cond(c, arguments, regexes)),
        Cond::Or(cs) => cs.iter().any(|c| eval_cond(c, arguments, regexes)),
        Cond::Not(c) => !eval_cond(c, arguments, regexes),
        Cond::Present(p) => lookup(arguments, p).is_some(),
        Cond::Test(p, pred) => lookup(arguments, p).is_some_and(|v| eval_pred(pred, v, regexes)),
    }
}

/// Whether `value` is valid against the predicate, as JSON Schema defines it.
pub fn eval_pred(pred: &Pred, value: &Value, regexes: &Regexes) -> bool {
    match &pred.kind {
        PredKind::Const(c) => json_equal(c, value),
        PredKind::Enum(vs) => vs.iter().any(|c| json_equal(c, value)),
        PredKind::Type(ts) => ts.iter().any(|t| has_type(value, t)),
        PredKind::Pattern(re) => match value {
            // A pattern that did not compile is reported by the checker; it matches nothing.
            Value::String(s) => regexes.get(re).is_some_and(|r| r.is_match(s)),
            _ => true,
        },
        PredKind::MinLength(n) => value
            .as_str()
            .is_none_or(|s| s.chars().count() as u64 >= *n),
        PredKind::MaxLength(n) => value
            .as_str()
            .is_none_or(|s| s.chars().count() as u64 <= *n),
        PredKind::Minimum(n) => num_cmp(value, n, |o| o.is_ge()),
        PredKind::Maximum(n) => num_cmp(value, n, |o| o.is_le()),
        PredKind::ExclusiveMinimum(n) => num_cmp(value, n, |o| o.is_gt()),
        PredKind::ExclusiveMaximum(n) => num_cmp(value, n, |o| o.is_lt()),
        PredKind::Not(p) => !eval_pred(p, value, regexes),
        PredKind::AnyOf(ps) => ps.iter().any(|p| eval_pred(p, value, regexes)),
        PredKind::AllOf(ps) => ps.iter().all(|p| eval_pred(p, value, regexes)),
    }
}

/// JSON Schema's `type` test (`integer` is any number with a zero fraction).
pub fn has_type(value: &Value, t: &str) -> bool {
    match (t, value) {
        ("null", Value::Null)
        | ("boolean", Value::Bool(_))
        | ("string", Value::String(_))
        | ("array", Value::Array(_))
        | ("object", Value::Object(_))
        | ("number", Value::Number(_)) => true,
        ("integer", Value::Number(n)) => {
            n.is_i64() || n.is_u64() || n.as_f64().is_some_and(|f| f.fract() == 0.0)
        }
        _ => false,
    }
}

/// Compares a number with a bound; non-numbers pass (the keyword does not apply).
fn num_cmp(
    value: &Value,
    bound: &serde_json::Number,
    ok: impl Fn(std::cmp::Ordering) -> bool,
) -> bool {
    match value {
        Value::Number(n) => compare_numbers(n, bound).is_some_and(ok),
        _ => true,
    }
}

/// Exact comparison of two JSON numbers (integers compare exactly, beyond f64 precision).
pub fn compare_numbers(
    a: &serde_json::Number,
    b: &serde_json::Number,
) -> Option<std::cmp::Ordering> {
    if let (Some(x), Some(y)) = (a.as_i64(), b.as_i64()) {
        return Some(x.cmp(&y));
    }
    if let (Some(x), Some(y)) = (a.as_u64(), b.as_u64()) {
        return Some(x.cmp(&y));
    }
    // Mixed signs with one beyond i64: the sign decides.
    if a.as_u64().is_some() && b.as_i64().is_some_and(|y| y < 0) {
        return Some(std::cmp::Ordering::Greater);
    }
    if b.as_u64().is_some() && a.as_i64().is_some_and(|x| x < 0) {
        return Some(std::cmp::Ordering::Less);
    }
    a.as_f64()?.partial_cmp(&b.as_f64()?)
}

/// JSON Schema equality: numbers by value (`1 == 1.0`), objects by key set.
pub fn json_equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            compare_numbers(x, y) == Some(std::cmp::Ordering::Equal)
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(a, b)| json_equal(a, b))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(k, v)| y.get(k).is_some_and(|w| json_equal(v, w)))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numbers_compare_by_value_and_exactly() {
        assert!(json_equal(&json!(1), &json!(1.0)));
        assert!(!json_equal(
            &json!(9007199254740993u64),
            &json!(9007199254740992u64)
        ));
        assert!(json_equal(&json!({"a": [1, 2.0]}), &json!({"a": [1.0, 2]})));
        assert!(has_type(&json!(2.0), "integer"));
        assert!(!has_type(&json!(2.5), "integer"));
        let big = serde_json::Number::from(u64::MAX);
        let neg = serde_json::Number::from(-1i64);
        assert_eq!(
            compare_numbers(&big, &neg),
            Some(std::cmp::Ordering::Greater)
        );
    }
}

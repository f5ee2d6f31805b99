//! Evaluation of conditions and predicates against argument objects, with
//! JSON Schema semantics for predicates (the reference the generated code and
//! host-side evaluation must agree with).

use std::collections::HashMap;

use mcp_resolve_runtime::json::{self, Num};
use mcp_resolve_runtime::pattern::pattern_matches;
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
        // A pattern that did not compile is reported by the checker; it matches nothing.
        PredKind::Pattern(re) => pattern_matches(regexes.get(re), value),
        PredKind::MinLength(n) => json::min_length(value, *n),
        PredKind::MaxLength(n) => json::max_length(value, *n),
        PredKind::Minimum(n) => json::minimum(value, Num::of(n)),
        PredKind::Maximum(n) => json::maximum(value, Num::of(n)),
        PredKind::ExclusiveMinimum(n) => json::exclusive_minimum(value, Num::of(n)),
        PredKind::ExclusiveMaximum(n) => json::exclusive_maximum(value, Num::of(n)),
        PredKind::Not(p) => !eval_pred(p, value, regexes),
        PredKind::AnyOf(ps) => ps.iter().any(|p| eval_pred(p, value, regexes)),
        PredKind::AllOf(ps) => ps.iter().all(|p| eval_pred(p, value, regexes)),
        PredKind::MinItems(n) => json::min_items(value, *n),
        PredKind::MaxItems(n) => json::max_items(value, *n),
        PredKind::Items(p) => value
            .as_array()
            .is_none_or(|a| a.iter().all(|v| eval_pred(p, v, regexes))),
        PredKind::Contains(p) => value
            .as_array()
            .is_none_or(|a| a.iter().any(|v| eval_pred(p, v, regexes))),
        PredKind::Properties(ps) => value.as_object().is_none_or(|o| {
            ps.iter()
                .all(|(k, p)| o.get(k).is_none_or(|v| eval_pred(p, v, regexes)))
        }),
        PredKind::Required(ks) => value
            .as_object()
            .is_none_or(|o| ks.iter().all(|k| o.contains_key(k))),
    }
}

pub use mcp_resolve_runtime::json::{compare_numbers, has_type, json_equal};

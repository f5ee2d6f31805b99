//! The sample points a column's regions are cut at: the object and array
//! literals the conditions compare with, and the numbers at and around
//! each bound (integers just past a bound, so `x > 3` splits at 3 and 4).

use std::cmp::Ordering;

use mcp_resolve_runtime::json::Num;
use serde_json::{Number, Value};

use crate::eval::json_equal;
use crate::ir::{Pred, PredKind};

/// Object or array literals the leaves compare with.
pub(super) fn literals(leaves: &[&Pred], kind: &str) -> Vec<Value> {
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

pub(super) fn cmp(a: &Number, b: &Number) -> Ordering {
    Num::of(a).compare(Num::of(b)).unwrap_or(Ordering::Equal)
}

/// Every threshold, and an integer and a non-integer in every gap.
pub(super) fn numbers(leaves: &[&Pred]) -> Vec<Number> {
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

pub(super) fn from_i128(i: i128) -> Option<Number> {
    if let Ok(x) = i64::try_from(i) {
        Some(x.into())
    } else if let Ok(x) = u64::try_from(i) {
        Some(x.into())
    } else {
        Number::from_f64(i as f64)
    }
}

pub(super) fn as_i128(n: &Number) -> Option<i128> {
    n.as_i64()
        .map(i128::from)
        .or_else(|| n.as_u64().map(i128::from))
}

pub(super) fn int_after(n: &Number) -> Vec<Number> {
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

pub(super) fn int_before(n: &Number) -> Vec<Number> {
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

//! Un-lowering: the IR back to an expression, for `fmt` and `convert` to
//! the `.rules` syntax. Every expression it writes is checked by lowering it
//! again ([`Lowerer`]), so the printed file means what the input meant.

use serde_json::{Map, Value};

use crate::ast::{Expr, ExprKind, Lit, RelOp};
use crate::ir::{ArgPath, Cond, Pred, PredKind};
use crate::lower::expr::Lowerer;
use crate::source::{FileId, Span, Spanned};

fn at() -> Span {
    Span::new(FileId(0), 0, 0)
}

fn mk(kind: ExprKind) -> Expr {
    Expr { kind, span: at() }
}

fn path_expr(path: &ArgPath) -> Expr {
    let mut segments = path.segments.iter();
    let first = segments.next().cloned().unwrap_or_default();
    let mut e = mk(ExprKind::Ident(first));
    for s in segments {
        e = mk(ExprKind::Select(Box::new(e), Spanned::new(s.clone(), at())));
    }
    e
}

/// A JSON value as a literal expression.
pub fn value_expr(v: &Value) -> Expr {
    match v {
        Value::Null => mk(ExprKind::Lit(Lit::Null)),
        Value::Bool(b) => mk(ExprKind::Lit(Lit::Bool(*b))),
        Value::Number(n) => {
            if let Some(u) = n.as_u64() {
                mk(ExprKind::Lit(Lit::Int(u)))
            } else if let Some(i) = n.as_i64() {
                mk(ExprKind::Neg(Box::new(mk(ExprKind::Lit(Lit::Int(
                    i.unsigned_abs(),
                ))))))
            } else {
                let f = n.as_f64().unwrap_or(0.0);
                if f.is_sign_negative() {
                    mk(ExprKind::Neg(Box::new(mk(ExprKind::Lit(Lit::Float(-f))))))
                } else {
                    mk(ExprKind::Lit(Lit::Float(f)))
                }
            }
        }
        Value::String(s) => mk(ExprKind::Lit(Lit::Str(s.clone()))),
        Value::Array(items) => mk(ExprKind::List(items.iter().map(value_expr).collect())),
        Value::Object(m) => mk(ExprKind::Map(
            m.iter()
                .map(|(k, v)| (mk(ExprKind::Lit(Lit::Str(k.clone()))), value_expr(v)))
                .collect(),
        )),
    }
}

/// A predicate as the keyword mapping the structured form would write.
pub fn matcher_json(p: &Pred) -> Value {
    let one = |k: &str, v: Value| Value::Object(Map::from_iter([(k.to_string(), v)]));
    match &p.kind {
        PredKind::Const(v) => one("const", v.clone()),
        PredKind::Enum(vs) => one("enum", Value::Array(vs.clone())),
        PredKind::Type(ts) if ts.len() == 1 => one("type", Value::String(ts[0].clone())),
        PredKind::Type(ts) => one(
            "type",
            Value::Array(ts.iter().cloned().map(Value::String).collect()),
        ),
        PredKind::Pattern(r) => one("pattern", Value::String(r.clone())),
        PredKind::MinLength(n) => one("minLength", Value::from(*n)),
        PredKind::MaxLength(n) => one("maxLength", Value::from(*n)),
        PredKind::Minimum(n) => one("minimum", Value::Number(n.clone())),
        PredKind::Maximum(n) => one("maximum", Value::Number(n.clone())),
        PredKind::ExclusiveMinimum(n) => one("exclusiveMinimum", Value::Number(n.clone())),
        PredKind::ExclusiveMaximum(n) => one("exclusiveMaximum", Value::Number(n.clone())),
        PredKind::Not(inner) => one("not", matcher_json(inner)),
        PredKind::AllOf(ps) if ps.is_empty() => Value::Object(Map::new()),
        PredKind::AnyOf(ps) => one("anyOf", Value::Array(ps.iter().map(matcher_json).collect())),
        PredKind::AllOf(ps) => one("allOf", Value::Array(ps.iter().map(matcher_json).collect())),
        PredKind::MinItems(n) => one("minItems", Value::from(*n)),
        PredKind::MaxItems(n) => one("maxItems", Value::from(*n)),
        PredKind::Items(p) => one("items", matcher_json(p)),
        PredKind::Contains(p) => one("contains", matcher_json(p)),
        PredKind::Properties(ps) => one(
            "properties",
            Value::Object(
                ps.iter()
                    .map(|(k, p)| (k.clone(), matcher_json(p)))
                    .collect(),
            ),
        ),
        PredKind::Required(ks) => one(
            "required",
            Value::Array(ks.iter().cloned().map(Value::String).collect()),
        ),
    }
}

/// The condition as an expression that lowers (against `schema`) to an IR
/// equal to `cond`: CEL sugar where some sugar does, `satisfies()` where
/// only a JSON Schema keyword says it.
pub fn cond_expr(cond: &Cond, schema: &Value) -> Expr {
    match cond {
        Cond::Const(b) => mk(ExprKind::Lit(Lit::Bool(*b))),
        Cond::And(cs) if cs.is_empty() => mk(ExprKind::Lit(Lit::Bool(true))),
        Cond::Or(cs) if cs.is_empty() => mk(ExprKind::Lit(Lit::Bool(false))),
        Cond::And(cs) if cs.len() == 1 => cond_expr(&cs[0], schema),
        Cond::Or(cs) if cs.len() == 1 => cond_expr(&cs[0], schema),
        Cond::And(cs) => mk(ExprKind::And(
            cs.iter().map(|c| cond_expr(c, schema)).collect(),
        )),
        Cond::Or(cs) => mk(ExprKind::Or(
            cs.iter().map(|c| cond_expr(c, schema)).collect(),
        )),
        Cond::Not(c) => mk(ExprKind::Not(Box::new(cond_expr(c, schema)))),
        Cond::Present(p) => call(None, "has", vec![path_expr(p)]),
        Cond::Test(p, pred) => {
            let target = Cond::Test(p.clone(), pred.clone());
            for candidate in sugar(p, pred) {
                let mut scratch = Vec::new();
                let lowered = Lowerer {
                    schema,
                    diags: &mut scratch,
                }
                .cond(&candidate);
                if lowered.as_ref() == Some(&target) {
                    return candidate;
                }
            }
            call(
                Some(path_expr(p)),
                "satisfies",
                vec![value_expr(&matcher_json(pred))],
            )
        }
    }
}

fn call(receiver: Option<Expr>, name: &str, args: Vec<Expr>) -> Expr {
    mk(ExprKind::Call {
        receiver: receiver.map(Box::new),
        name: Spanned::new(name.to_string(), at()),
        args,
    })
}

fn rel(lhs: Expr, op: RelOp, rhs: Expr) -> Expr {
    mk(ExprKind::Rel(Box::new(lhs), vec![(op, at(), rhs)]))
}

/// Candidate CEL spellings of `path` tested by `pred`, best first.
#[expect(
    clippy::too_many_lines,
    reason = "one arm per CEL spelling, in the order of preference they are tried"
)]
fn sugar(path: &ArgPath, pred: &Pred) -> Vec<Expr> {
    let a = || path_expr(path);
    // Strip a `type` guard: the lowering decides whether it comes back.
    let core: Vec<&Pred> = match &pred.kind {
        PredKind::AllOf(ps)
            if ps
                .first()
                .is_some_and(|p| matches!(p.kind, PredKind::Type(_))) =>
        {
            ps[1..].iter().collect()
        }
        PredKind::AllOf(ps) if ps.len() == 2 => ps.iter().collect(),
        _ => vec![pred],
    };
    let mut out = Vec::new();
    match core.as_slice() {
        [one] => match &one.kind {
            PredKind::Const(Value::Bool(true)) => out.push(a()),
            PredKind::Const(v) => out.push(rel(a(), RelOp::Eq, value_expr(v))),
            PredKind::Not(inner) => {
                if let PredKind::Const(v) = &inner.kind {
                    out.push(rel(a(), RelOp::Ne, value_expr(v)));
                }
                if let PredKind::AllOf(ps) = &inner.kind
                    && let [min, _] = ps.as_slice()
                    && let PredKind::MinLength(n) | PredKind::MinItems(n) = min.kind
                {
                    out.push(rel(
                        call(None, "size", vec![a()]),
                        RelOp::Ne,
                        value_expr(&Value::from(n)),
                    ));
                }
            }
            PredKind::Enum(vs) => {
                out.push(rel(a(), RelOp::In, value_expr(&Value::Array(vs.clone()))))
            }
            PredKind::Pattern(r) => {
                let plain = unescape(r.trim_start_matches('^').trim_end_matches('$'));
                let s = |v: &str| vec![value_expr(&Value::String(v.to_string()))];
                if r.starts_with('^') && !r.ends_with('$') {
                    out.push(call(Some(a()), "startsWith", s(&plain)));
                }
                if r.ends_with('$') && !r.starts_with('^') {
                    out.push(call(Some(a()), "endsWith", s(&plain)));
                }
                out.push(call(Some(a()), "contains", s(&plain)));
                out.push(call(Some(a()), "matches", s(r)));
            }
            PredKind::MinLength(n) => out.push(rel(
                call(None, "size", vec![a()]),
                RelOp::Ge,
                value_expr(&Value::from(*n)),
            )),
            PredKind::MaxLength(n) => out.push(rel(
                call(None, "size", vec![a()]),
                RelOp::Le,
                value_expr(&Value::from(*n)),
            )),
            PredKind::Minimum(n) => {
                out.push(rel(a(), RelOp::Ge, value_expr(&Value::Number(n.clone()))))
            }
            PredKind::Maximum(n) => {
                out.push(rel(a(), RelOp::Le, value_expr(&Value::Number(n.clone()))))
            }
            PredKind::ExclusiveMinimum(n) => {
                out.push(rel(a(), RelOp::Gt, value_expr(&Value::Number(n.clone()))))
            }
            PredKind::ExclusiveMaximum(n) => {
                out.push(rel(a(), RelOp::Lt, value_expr(&Value::Number(n.clone()))))
            }
            PredKind::Contains(inner) => {
                if let PredKind::Const(v) = &inner.kind {
                    out.push(rel(value_expr(v), RelOp::In, a()));
                }
            }
            PredKind::MinItems(n) => out.push(rel(
                call(None, "size", vec![a()]),
                RelOp::Ge,
                value_expr(&Value::from(*n)),
            )),
            PredKind::MaxItems(n) => out.push(rel(
                call(None, "size", vec![a()]),
                RelOp::Le,
                value_expr(&Value::from(*n)),
            )),
            PredKind::AnyOf(ps) if ps.is_empty() => {
                out.push(rel(
                    call(None, "size", vec![a()]),
                    RelOp::Lt,
                    value_expr(&Value::from(0)),
                ));
            }
            _ => {}
        },
        [min, max] => {
            if let (PredKind::MinLength(x), PredKind::MaxLength(y))
            | (PredKind::MinItems(x), PredKind::MaxItems(y)) = (&min.kind, &max.kind)
                && x == y
            {
                out.push(rel(
                    call(None, "size", vec![a()]),
                    RelOp::Eq,
                    value_expr(&Value::from(*x)),
                ));
            }
        }
        _ => {}
    }
    out
}

/// Undoes `regex::escape` (the result is checked by re-lowering).
fn unescape(r: &str) -> String {
    let mut out = String::with_capacity(r.len());
    let mut chars = r.chars();
    while let Some(c) = chars.next() {
        if c == '\\' {
            if let Some(n) = chars.next() {
                out.push(n);
            }
        } else {
            out.push(c);
        }
    }
    out
}

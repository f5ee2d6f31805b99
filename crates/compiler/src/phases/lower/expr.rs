//! Expressions to the IR, and the IR back to expressions (for `convert`).
//!
//! Each CEL atom becomes one JSON Schema keyword on one argument, the same
//! [`Cond::Test`] the structured form produces. Where CEL and JSON Schema
//! differ on values of another type (`a < 3` is false for a string in CEL
//! but holds vacuously under `exclusiveMaximum`), a `type` guard is added,
//! unless the argument's schema already pins its type.

use serde_json::{Map, Number, Value};

use crate::ast::{Expr, ExprKind, Lit, RelOp};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{ArgPath, Cond, Loc, Pred, PredKind};
use crate::lower::lower_pred;
use crate::parse::decode;
use crate::parse::yaml::{YNode, YValue};
use crate::schema::{schema_types, subschema as lookup_subschema};
use crate::source::{Span, Spanned};
use crate::suggest;

/// The functions and methods of the language.
pub const FUNCTIONS: &[&str] = &[
    "has",
    "size",
    "exists",
    "all",
    "startsWith",
    "endsWith",
    "contains",
    "matches",
    "satisfies",
];

/// Lowers expressions against one tool's inputSchema.
pub struct Lowerer<'a> {
    /// The tool's inputSchema.
    pub schema: &'a Value,
    /// Where problems go.
    pub diags: &'a mut Vec<Diagnostic>,
}

#[derive(Clone, Copy, PartialEq)]
enum Operand {
    String,
    Number,
    Array,
}

impl Operand {
    fn type_name(self) -> &'static str {
        match self {
            Operand::String => "string",
            Operand::Number => "number",
            Operand::Array => "array",
        }
    }

    fn holds(self, t: &str) -> bool {
        t == self.type_name() || (self == Operand::Number && t == "integer")
    }
}

impl Lowerer<'_> {
    fn err(&mut self, span: Span, message: impl Into<String>, help: Option<String>) {
        let mut d = Diagnostic::new(Code::InvalidExpression, message).at(span);
        d.help = help;
        self.diags.push(d);
    }

    /// Lowers a condition; `None` after reporting a problem.
    pub fn cond(&mut self, e: &Expr) -> Option<Cond> {
        match &e.kind {
            ExprKind::Or(parts) | ExprKind::And(parts) => {
                // A part in error (reported) stands in as `false`, so the
                // other parts are still checked.
                let out: Vec<Cond> = parts
                    .iter()
                    .map(|p| self.cond(p).unwrap_or(Cond::Const(false)))
                    .collect();
                Some(if matches!(e.kind, ExprKind::Or(_)) {
                    Cond::Or(out)
                } else {
                    Cond::And(out)
                })
            }
            ExprKind::Not(inner) => Some(Cond::Not(Box::new(self.cond(inner)?))),
            ExprKind::Lit(Lit::Bool(b)) => Some(Cond::Const(*b)),
            ExprKind::Ident(_) | ExprKind::Select(..) => {
                // A bare boolean argument: `options.force`.
                let path = self.path(e)?;
                let lit = Pred {
                    kind: PredKind::Const(Value::Bool(true)),
                    loc: Loc(e.span),
                };
                Some(Cond::Test(path, lit))
            }
            ExprKind::Call {
                receiver,
                name,
                args,
            } => self.call(e, receiver.as_deref(), name, args),
            ExprKind::Rel(lhs, rest) => {
                let [(op, op_span, rhs)] = rest.as_slice() else {
                    let span = rest.get(1).map_or(e.span, |r| r.1);
                    self.err(
                        span,
                        "comparisons do not chain",
                        Some("join them with `&&`: `a > 1 && a < 5`".into()),
                    );
                    return None;
                };
                self.relation(e.span, lhs, *op, *op_span, rhs)
            }
            ExprKind::Lit(_) | ExprKind::Neg(_) | ExprKind::List(_) | ExprKind::Map(_) => {
                self.err(
                    e.span,
                    format!("expected a condition, found {}", describe(e)),
                    Some("compare an argument with it, for example `action == \"read\"`".into()),
                );
                None
            }
        }
    }

    /// An argument path: an identifier and `.field` selections.
    fn path(&mut self, e: &Expr) -> Option<ArgPath> {
        let mut segments = Vec::new();
        let mut cur = e;
        loop {
            match &cur.kind {
                ExprKind::Ident(name) => {
                    segments.push(name.clone());
                    break;
                }
                ExprKind::Select(base, name) => {
                    segments.push(name.value.clone());
                    cur = base;
                }
                _ => {
                    self.err(
                        cur.span,
                        format!("expected an argument, found {}", describe(cur)),
                        None,
                    );
                    return None;
                }
            }
        }
        segments.reverse();
        Some(ArgPath {
            segments,
            loc: Loc(e.span),
        })
    }

    /// How an operator applies to the argument at `path`: with no guard
    /// when its schema admits only `want`'s type, else guarded by `type`.
    fn guarded(&self, path: &ArgPath, want: Operand, kinds: Vec<Pred>, span: Span) -> Pred {
        let types = lookup_subschema(self.schema, &path.segments).and_then(schema_types);
        let pinned = types
            .as_ref()
            .is_some_and(|ts| !ts.is_empty() && ts.iter().all(|t| want.holds(t)));
        let mut kinds = kinds;
        if pinned {
            if kinds.len() == 1 {
                return kinds.remove(0);
            }
            return Pred {
                kind: PredKind::AllOf(kinds),
                loc: Loc(span),
            };
        }
        let ty = want.type_name();
        let mut all = vec![Pred {
            kind: PredKind::Type(vec![ty.into()]),
            loc: Loc(span),
        }];
        all.extend(kinds);
        Pred {
            kind: PredKind::AllOf(all),
            loc: Loc(span),
        }
    }

    fn call(
        &mut self,
        e: &Expr,
        receiver: Option<&Expr>,
        name: &Spanned<String>,
        args: &[Expr],
    ) -> Option<Cond> {
        let n = name.value.as_str();
        match (n, receiver, args) {
            ("has", None, [arg]) => Some(Cond::Present(self.path(arg)?)),
            ("startsWith" | "endsWith" | "contains" | "matches", Some(r), [arg]) => {
                let path = self.path(r)?;
                let Some(Value::String(s)) = self.literal(arg) else {
                    self.err(arg.span, format!("`{n}` takes a string literal"), None);
                    return None;
                };
                let pattern = match n {
                    "startsWith" => format!("^{}", regex::escape(&s)),
                    "endsWith" => format!("{}$", regex::escape(&s)),
                    "contains" => regex::escape(&s),
                    _ => s,
                };
                let kind = Pred {
                    kind: PredKind::Pattern(pattern),
                    loc: Loc(arg.span),
                };
                Some(Cond::Test(
                    path.clone(),
                    self.guarded(&path, Operand::String, vec![kind], e.span),
                ))
            }
            ("satisfies", Some(r), [arg]) => {
                let path = self.path(r)?;
                let node = self.yaml(arg)?;
                let m = decode::schema_matcher(&node, e.span.file, self.diags)?;
                Some(Cond::Test(path, lower_pred(&m)))
            }
            ("exists" | "all", Some(r), [var, body]) => self.macro_call(e, r, name, var, body),
            ("size", _, _) => {
                self.err(
                    e.span,
                    "`size()` must be compared with an integer",
                    Some("for example `size(path) > 3`".into()),
                );
                None
            }
            _ if FUNCTIONS.contains(&n) => {
                let form = match n {
                    "has" => "`has(a.b)`",
                    "exists" => "`list.exists(x, x == \"a\")` (a variable and a condition on it)",
                    "all" => {
                        "`list.all(x, x in [\"a\", \"b\"])` (a variable and a condition on it)"
                    }
                    "satisfies" => "`a.satisfies({\"minimum\": 1})`",
                    _ => "`a.startsWith(\"x\")` (a method with one string argument)",
                };
                self.err(
                    e.span,
                    format!("wrong use of `{n}`"),
                    Some(format!("write {form}")),
                );
                None
            }
            _ => {
                let help =
                    suggest::did_you_mean(n, FUNCTIONS.iter().copied()).unwrap_or_else(|| {
                        format!("the functions are {}", suggest::backticked(FUNCTIONS, ", "))
                    });
                self.err(name.span, format!("unknown function `{n}`"), Some(help));
                None
            }
        }
    }

    fn relation(
        &mut self,
        span: Span,
        lhs: &Expr,
        op: RelOp,
        op_span: Span,
        rhs: &Expr,
    ) -> Option<Cond> {
        // `size(a) op n`, either way round.
        if let Some(arg) = size_arg(lhs) {
            return self.size(span, arg, op, rhs);
        }
        if let Some(arg) = size_arg(rhs)
            && op != RelOp::In
        {
            return self.size(span, arg, op.flipped(), lhs);
        }
        if op == RelOp::In && !is_path(lhs) && is_path(rhs) {
            return self.membership(span, lhs, rhs);
        }
        let (arg, op, lit) = if is_path(lhs) {
            (lhs, op, rhs)
        } else if is_path(rhs) && op != RelOp::In {
            (rhs, op.flipped(), lhs)
        } else {
            self.err(
                span,
                "a comparison needs an argument on one side and a literal on the other",
                Some("for example `action == \"read\"` or `size(path) > 3`".into()),
            );
            return None;
        };
        let path = self.path(arg)?;
        let value = self.literal(lit)?;
        let loc = Loc(lit.span);
        let pred = match op {
            RelOp::Eq => Pred {
                kind: PredKind::Const(value),
                loc,
            },
            RelOp::Ne => Pred {
                kind: PredKind::Not(Box::new(Pred {
                    kind: PredKind::Const(value),
                    loc,
                })),
                loc: Loc(span),
            },
            RelOp::In => {
                let Value::Array(items) = value else {
                    self.err(
                        lit.span,
                        "`in` needs a list literal",
                        Some("`action in [\"read\", \"list\"]`".into()),
                    );
                    return None;
                };
                Pred {
                    kind: PredKind::Enum(items),
                    loc,
                }
            }
            RelOp::Lt | RelOp::Le | RelOp::Gt | RelOp::Ge => {
                let Value::Number(n) = value else {
                    let help = if value.is_string() {
                        "ordering compares numbers; for strings use `startsWith`, `matches` or `in`"
                    } else {
                        "ordering compares numbers"
                    };
                    self.err(
                        lit.span,
                        format!("`{}` needs a number, found `{value}`", op.as_str()),
                        Some(help.into()),
                    );
                    return None;
                };
                let kind = match op {
                    RelOp::Lt => PredKind::ExclusiveMaximum(n),
                    RelOp::Le => PredKind::Maximum(n),
                    RelOp::Gt => PredKind::ExclusiveMinimum(n),
                    _ => PredKind::Minimum(n),
                };
                self.guarded(&path, Operand::Number, vec![Pred { kind, loc }], span)
            }
        };
        let _ = op_span;
        Some(Cond::Test(path, pred))
    }

    fn size(&mut self, span: Span, arg: &Expr, op: RelOp, lit: &Expr) -> Option<Cond> {
        let path = self.path(arg)?;
        let n = match self.literal(lit)? {
            Value::Number(n) if n.as_i64().is_some() || n.as_u64().is_some() => n
                .as_i64()
                .map(i128::from)
                .or(n.as_u64().map(i128::from))
                .unwrap_or(0),
            other => {
                self.err(
                    lit.span,
                    format!("`size()` is compared with an integer, found `{other}`"),
                    None,
                );
                return None;
            }
        };
        let loc = Loc(lit.span);
        let len = |k: fn(u64) -> PredKind, v: i128| Pred {
            kind: k(u64::try_from(v.max(0)).unwrap_or(u64::MAX)),
            loc,
        };
        let never = Pred {
            kind: PredKind::AnyOf(Vec::new()),
            loc,
        };
        let kinds = match op {
            RelOp::Ge => vec![len(PredKind::MinLength, n)],
            RelOp::Gt => vec![len(PredKind::MinLength, n + 1)],
            RelOp::Le if n < 0 => vec![never],
            RelOp::Le => vec![len(PredKind::MaxLength, n)],
            RelOp::Lt if n <= 0 => vec![never],
            RelOp::Lt => vec![len(PredKind::MaxLength, n - 1)],
            RelOp::Eq if n < 0 => vec![never],
            RelOp::Eq => vec![len(PredKind::MinLength, n), len(PredKind::MaxLength, n)],
            RelOp::Ne if n < 0 => vec![Pred {
                kind: PredKind::AllOf(Vec::new()),
                loc,
            }],
            RelOp::Ne => vec![Pred {
                kind: PredKind::Not(Box::new(Pred {
                    kind: PredKind::AllOf(vec![
                        len(PredKind::MinLength, n),
                        len(PredKind::MaxLength, n),
                    ]),
                    loc,
                })),
                loc,
            }],
            RelOp::In => {
                self.err(
                    span,
                    "`size()` cannot be used with `in`",
                    Some("compare it: `size(a) >= 1 && size(a) <= 3`".into()),
                );
                return None;
            }
        };
        // CEL's `size()` counts a string's characters and a list's items:
        // the keywords for the types the argument's schema allows.
        let types = lookup_subschema(self.schema, &path.segments).and_then(schema_types);
        let may = |o: Operand| {
            types
                .as_ref()
                .is_none_or(|ts| ts.iter().any(|t| o.holds(t)))
        };
        let items = |kinds: &[Pred]| -> Vec<Pred> { kinds.iter().map(length_to_items).collect() };
        let pred = match (may(Operand::String), may(Operand::Array)) {
            (false, true) => self.guarded(&path, Operand::Array, items(&kinds), span),
            (true, true) => Pred {
                kind: PredKind::AnyOf(vec![
                    self.guarded(&path, Operand::String, kinds.clone(), span),
                    self.guarded(&path, Operand::Array, items(&kinds), span),
                ]),
                loc: Loc(span),
            },
            _ => self.guarded(&path, Operand::String, kinds, span),
        };
        Some(Cond::Test(path, pred))
    }

    /// `"x" in list` (an item equals the literal) or `"k" in map` (the key
    /// is present), by the argument's type.
    fn membership(&mut self, span: Span, lit: &Expr, arg: &Expr) -> Option<Cond> {
        let path = self.path(arg)?;
        let value = self.literal(lit)?;
        let loc = Loc(lit.span);
        let types = lookup_subschema(self.schema, &path.segments).and_then(schema_types);
        let only_objects = types
            .as_ref()
            .is_some_and(|ts| !ts.is_empty() && ts.iter().all(|t| t == "object"));
        if only_objects {
            let Value::String(key) = value else {
                self.err(
                    lit.span,
                    format!(
                        "`{path}` is an object: `in` asks for a key, a string, found `{value}`"
                    ),
                    None,
                );
                return None;
            };
            let mut segments = path.segments.clone();
            segments.push(key);
            return Some(Cond::Present(ArgPath { segments, loc }));
        }
        let contains = Pred {
            kind: PredKind::Contains(Box::new(Pred {
                kind: PredKind::Const(value),
                loc,
            })),
            loc: Loc(span),
        };
        Some(Cond::Test(
            path.clone(),
            self.guarded(&path, Operand::Array, vec![contains], span),
        ))
    }

    /// `list.exists(x, cond)` and `list.all(x, cond)`: `cond` is over `x`
    /// (and its fields), lowered against the list's `items` schema into one
    /// item predicate.
    fn macro_call(
        &mut self,
        e: &Expr,
        list: &Expr,
        name: &Spanned<String>,
        var: &Expr,
        body: &Expr,
    ) -> Option<Cond> {
        let path = self.path(list)?;
        let ExprKind::Ident(var_name) = &var.kind else {
            self.err(
                var.span,
                format!("`{}` takes a variable name first", name.value),
                Some(format!(
                    "for example `{path}.{}(x, x == \"a\")`",
                    name.value
                )),
            );
            return None;
        };
        let items = lookup_subschema(self.schema, &path.segments)
            .and_then(|s| s.get("items"))
            .filter(|s| s.is_object() || s.is_boolean())
            .map(|s| crate::schema::deref(self.schema, s).clone())
            .unwrap_or(Value::Bool(true));
        let scope = serde_json::json!({
            "type": "object",
            "properties": { var_name.as_str(): items },
            "required": [var_name.as_str()],
        });
        let cond = Lowerer {
            schema: &scope,
            diags: self.diags,
        }
        .cond(body)?;
        let item = self.item_pred(&cond, var_name, body.span)?;
        let kind = if name.value == "exists" {
            PredKind::Contains(Box::new(item))
        } else {
            PredKind::Items(Box::new(item))
        };
        let pred = Pred {
            kind,
            loc: Loc(e.span),
        };
        Some(Cond::Test(
            path.clone(),
            self.guarded(&path, Operand::Array, vec![pred], e.span),
        ))
    }

    /// A condition over the macro variable `var` as one predicate on the
    /// item: `var.f` becomes a required property `f`.
    fn item_pred(&mut self, cond: &Cond, var: &str, span: Span) -> Option<Pred> {
        let loc = Loc(span);
        let mk = |kind| Pred { kind, loc };
        Some(match cond {
            Cond::Const(true) => mk(PredKind::AllOf(Vec::new())),
            Cond::Const(false) => mk(PredKind::AnyOf(Vec::new())),
            Cond::And(cs) => mk(PredKind::AllOf(
                cs.iter()
                    .map(|c| self.item_pred(c, var, span))
                    .collect::<Option<_>>()?,
            )),
            Cond::Or(cs) => mk(PredKind::AnyOf(
                cs.iter()
                    .map(|c| self.item_pred(c, var, span))
                    .collect::<Option<_>>()?,
            )),
            Cond::Not(c) => mk(PredKind::Not(Box::new(self.item_pred(c, var, span)?))),
            Cond::Present(p) | Cond::Test(p, _) => {
                let test = match cond {
                    Cond::Test(_, pred) => Some(pred.clone()),
                    _ => None,
                };
                let (first, fields) = p.segments.split_first()?;
                if first != var {
                    self.err(
                        p.loc.0,
                        format!("inside the macro, conditions are on `{var}`, found `{p}`"),
                        Some(format!("compare `{var}` or its fields with literals")),
                    );
                    return None;
                }
                // The field tests point at the field path, where a
                // diagnostic about the field belongs.
                let at = |kind| Pred { kind, loc: p.loc };
                let mut pred = test.unwrap_or_else(|| at(PredKind::AllOf(Vec::new())));
                for field in fields.iter().rev() {
                    pred = at(PredKind::AllOf(vec![
                        at(PredKind::Type(vec!["object".into()])),
                        at(PredKind::Required(vec![field.clone()])),
                        at(PredKind::Properties(vec![(field.clone(), pred)])),
                    ]));
                }
                pred
            }
        })
    }

    /// A literal's JSON value; `None` after reporting a non-literal.
    pub fn literal(&mut self, e: &Expr) -> Option<Value> {
        match &e.kind {
            ExprKind::Lit(l) => Some(match l {
                Lit::Null => Value::Null,
                Lit::Bool(b) => Value::Bool(*b),
                Lit::Int(n) => Value::Number(Number::from(*n)),
                Lit::Float(f) => Value::Number(Number::from_f64(*f)?),
                Lit::Str(s) => Value::String(s.clone()),
            }),
            ExprKind::Neg(inner) => match self.literal(inner)? {
                Value::Number(n) => {
                    if let Some(u) = n.as_u64() {
                        if u <= i64::MAX as u64 + 1 {
                            Some(Value::Number(Number::from(
                                (u as i128).wrapping_neg() as i64
                            )))
                        } else {
                            self.err(e.span, "integer out of range", None);
                            None
                        }
                    } else if let Some(i) = n.as_i64() {
                        Some(Value::Number(Number::from(i.unsigned_abs())))
                    } else {
                        Some(Value::Number(Number::from_f64(-n.as_f64()?)?))
                    }
                }
                _ => {
                    self.err(e.span, "`-` applies to numbers", None);
                    None
                }
            },
            ExprKind::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.literal(i)?);
                }
                Some(Value::Array(out))
            }
            ExprKind::Map(entries) => {
                let mut out = Map::new();
                for (k, v) in entries {
                    let Value::String(key) = self.literal(k)? else {
                        self.err(k.span, "map keys are strings", None);
                        return None;
                    };
                    out.insert(key, self.literal(v)?);
                }
                Some(Value::Object(out))
            }
            _ => {
                self.err(
                    e.span,
                    format!("expected a literal, found {}", describe(e)),
                    Some("compare an argument with a constant".into()),
                );
                None
            }
        }
    }

    /// A map literal as a span-carrying YAML-like node, for the matcher decoder.
    fn yaml(&mut self, e: &Expr) -> Option<YNode> {
        let value = match &e.kind {
            ExprKind::Map(entries) => {
                let mut out = Vec::with_capacity(entries.len());
                for (k, v) in entries {
                    let Value::String(key) = self.literal(k)? else {
                        self.err(k.span, "map keys are strings", None);
                        return None;
                    };
                    let knode = YNode {
                        value: YValue::String(key),
                        start: k.span.start,
                        end: k.span.end,
                    };
                    out.push((knode, self.yaml(v)?));
                }
                YValue::Map(out)
            }
            ExprKind::List(items) => {
                let mut out = Vec::with_capacity(items.len());
                for i in items {
                    out.push(self.yaml(i)?);
                }
                YValue::Seq(out)
            }
            _ => match self.literal(e)? {
                Value::Null => YValue::Null,
                Value::Bool(b) => YValue::Bool(b),
                Value::Number(n) => YValue::Number(n),
                Value::String(s) => YValue::String(s),
                _ => return None,
            },
        };
        Some(YNode {
            value,
            start: e.span.start,
            end: e.span.end,
        })
    }
}

/// A string-length keyword as the array-length keyword with the same bound.
fn length_to_items(p: &Pred) -> Pred {
    let kind = match &p.kind {
        PredKind::MinLength(n) => PredKind::MinItems(*n),
        PredKind::MaxLength(n) => PredKind::MaxItems(*n),
        PredKind::Not(inner) => PredKind::Not(Box::new(length_to_items(inner))),
        PredKind::AllOf(ps) => PredKind::AllOf(ps.iter().map(length_to_items).collect()),
        PredKind::AnyOf(ps) => PredKind::AnyOf(ps.iter().map(length_to_items).collect()),
        other => other.clone(),
    };
    Pred { kind, loc: p.loc }
}

fn is_path(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Ident(_) => true,
        ExprKind::Select(base, _) => is_path(base),
        _ => false,
    }
}

/// `size(x)` or `x.size()`: the `x`.
fn size_arg(e: &Expr) -> Option<&Expr> {
    match &e.kind {
        ExprKind::Call {
            receiver: None,
            name,
            args,
        } if name.value == "size" && args.len() == 1 => args.first(),
        ExprKind::Call {
            receiver: Some(r),
            name,
            args,
        } if name.value == "size" && args.is_empty() => Some(r),
        _ => None,
    }
}

fn describe(e: &Expr) -> &'static str {
    match &e.kind {
        ExprKind::Lit(Lit::Str(_)) => "a string",
        ExprKind::Lit(Lit::Null) => "`null`",
        ExprKind::Lit(Lit::Bool(_)) => "a boolean",
        ExprKind::Lit(_) | ExprKind::Neg(_) => "a number",
        ExprKind::List(_) => "a list",
        ExprKind::Map(_) => "a map",
        ExprKind::Call { .. } => "a call",
        ExprKind::Rel(..) => "a comparison",
        ExprKind::Not(_) | ExprKind::And(_) | ExprKind::Or(_) => "a condition",
        ExprKind::Ident(_) | ExprKind::Select(..) => "an argument",
    }
}

//! Conditions compiled to direct Rust: each argument looked up once, then
//! string compares, `matches!` over enums, prefix/suffix/substring checks for
//! literal patterns, numeric comparisons and regexes compiled once.
//!
//! The code is written as text: every string in it is a literal escaped by
//! [`proc_macro2::Literal`], every name is one this module makes up
//! (`arg_N`, `RE_N`, `v`, `a`), so what a rule says can only ever be data.
//! [`Code::write_if`] lays a condition out over lines the way
//! `rustfmt` lays out an `if`.

use proc_macro2::Literal;
use serde_json::{Number, Value};

use crate::ir::{ArgPath, Cond, Pred, PredKind};
use crate::schema::literal::{LiteralPattern, literal_pattern};

/// The widest line a condition is laid out to (rustfmt's default).
const WIDTH: usize = 100;

/// Compiled boolean code, or a constant folded away.
#[derive(Clone, Debug)]
pub(super) enum Code {
    Const(bool),
    /// A call, method call, macro or negation: safe as any operand.
    Atom(String),
    /// A test of the runtime's `json` module on `v`: `json::{0}(v, {1})`.
    /// On a whole argument it is the `json::arg` test of the same name,
    /// which takes the argument's `Option` itself.
    Test(&'static str, String),
    /// Two or more operands of `&&`.
    And(Vec<Code>),
    /// Two or more operands of `||`.
    Or(Vec<Code>),
}

impl Code {
    /// The code on one line.
    pub fn flat(&self) -> String {
        let mut out = String::new();
        self.write_flat(&mut out);
        out
    }

    fn write_flat(&self, out: &mut String) {
        match self {
            Code::Const(b) => out.push_str(if *b { "true" } else { "false" }),
            Code::Atom(text) => out.push_str(text),
            Code::Test(helper, arg) => {
                out.push_str("json::");
                out.push_str(helper);
                out.push_str("(v, ");
                out.push_str(arg);
                out.push(')');
            }
            Code::And(ops) | Code::Or(ops) => {
                let op = if matches!(self, Code::And(_)) {
                    " && "
                } else {
                    " || "
                };
                for (i, operand) in ops.iter().enumerate() {
                    if i > 0 {
                        out.push_str(op);
                    }
                    operand.write_operand_flat(out);
                }
            }
        }
    }

    /// As an operand of `&&` or `||`: a group in parentheses.
    fn write_operand_flat(&self, out: &mut String) {
        if matches!(self, Code::And(_) | Code::Or(_)) {
            out.push('(');
            self.write_flat(out);
            out.push(')');
        } else {
            self.write_flat(out);
        }
    }

    fn operand(&self) -> String {
        let mut out = String::new();
        self.write_operand_flat(&mut out);
        out
    }

    /// `if CONDITION {`, at `indent` spaces, with the opening brace on a
    /// line of its own when the condition takes several.
    pub fn write_if(&self, out: &mut String, indent: usize) {
        let flat = self.flat();
        pad(out, indent);
        out.push_str("if ");
        if indent + 3 + flat.len() + 2 <= WIDTH {
            out.push_str(&flat);
            out.push_str(" {\n");
            return;
        }
        self.write_broken(out, indent + 3, indent + 4);
        out.push('\n');
        pad(out, indent);
        out.push_str("{\n");
    }

    /// The code starting at column `column`, its operators each starting a
    /// line at `indent` when it does not fit on one.
    fn write_broken(&self, out: &mut String, column: usize, indent: usize) {
        let (ops, op) = match self {
            Code::And(ops) => (ops, "&& "),
            Code::Or(ops) => (ops, "|| "),
            other => return other.write_flat(out),
        };
        let mut column = column;
        for (i, operand) in ops.iter().enumerate() {
            if i > 0 {
                out.push('\n');
                pad(out, indent);
                out.push_str(op);
                column = indent + op.len();
            }
            let text = operand.operand();
            if column + text.len() <= WIDTH
                || matches!(operand, Code::Atom(_) | Code::Test(..) | Code::Const(_))
            {
                out.push_str(&text);
            } else {
                out.push('(');
                operand.write_broken(out, column + 1, indent + 4);
                out.push(')');
            }
        }
    }
}

fn pad(out: &mut String, indent: usize) {
    out.extend(std::iter::repeat_n(' ', indent));
}

/// A Rust string literal for `s`.
fn string(s: &str) -> String {
    Literal::string(s).to_string()
}

/// `Some("a" | "b")`, a pattern over an `Option<&str>`.
fn some_of(strings: &[&str]) -> String {
    let alternatives: Vec<String> = strings.iter().map(|s| string(s)).collect();
    format!("Some({})", alternatives.join(" | "))
}

/// The state of compiling one tool: argument locals and regexes.
pub(super) struct Matcher {
    /// Argument paths bound to locals `arg_0`, `arg_1`, …
    pub paths: Vec<Vec<String>>,
    /// Non-literal patterns bound to statics `RE_0`, `RE_1`, …
    pub regexes: Vec<String>,
}

impl Matcher {
    pub fn new() -> Self {
        Matcher {
            paths: Vec::new(),
            regexes: Vec::new(),
        }
    }

    fn local(&mut self, path: &ArgPath) -> String {
        let i = match self.paths.iter().position(|p| *p == path.segments) {
            Some(i) => i,
            None => {
                self.paths.push(path.segments.clone());
                self.paths.len() - 1
            }
        };
        format!("arg_{i}")
    }

    /// The lookup expression for local `i`, over `args: &Map<String, Value>`.
    pub fn lookup(&self, i: usize) -> String {
        let Some(segments) = self.paths.get(i) else {
            return "None".into();
        };
        let mut iter = segments.iter();
        let mut text = match iter.next() {
            Some(first) => format!("args.get({})", string(first)),
            None => "None".into(),
        };
        for seg in iter {
            text = format!("json::member({text}, {})", string(seg));
        }
        text
    }

    /// Compiles a condition. Locals and regexes registered for code that
    /// then folds to a constant are released, so none is left unused.
    pub fn cond(&mut self, cond: &Cond) -> Code {
        let mark = (self.paths.len(), self.regexes.len());
        let code = self.cond_inner(cond);
        self.release_if_const(&code, mark);
        code
    }

    fn release_if_const(&mut self, code: &Code, (paths, regexes): (usize, usize)) {
        if matches!(code, Code::Const(_)) {
            self.paths.truncate(paths);
            self.regexes.truncate(regexes);
        }
    }

    fn cond_inner(&mut self, cond: &Cond) -> Code {
        match cond {
            Cond::Const(b) => Code::Const(*b),
            Cond::And(cs) => {
                let parts = cs.iter().map(|c| self.cond(c)).collect();
                join(parts, true)
            }
            Cond::Or(cs) => {
                let parts = cs.iter().map(|c| self.cond(c)).collect();
                join(parts, false)
            }
            Cond::Not(inner) => match inner.as_ref() {
                Cond::Not(twice) => self.cond(twice),
                Cond::Present(path) => Code::Atom(format!("{}.is_none()", self.local(path))),
                other => negate(self.cond(other)),
            },
            Cond::Present(path) => Code::Atom(format!("{}.is_some()", self.local(path))),
            // Calls, not a `match` (or `matches!`) per test: each match is
            // blocks of its own for the compiler to check, and at thousands
            // of tools those were most of a build.
            Cond::Test(path, pred) if let Some(strings) = string_choices(pred) => {
                let l = self.local(path);
                let strings: Vec<String> = strings.iter().map(|s| string(s)).collect();
                Code::Atom(match strings.as_slice() {
                    [one] => format!("json::is_str({l}, {one})"),
                    many => format!("json::is_str_in({l}, &[{}])", many.join(", ")),
                })
            }
            Cond::Test(path, pred) => match self.pred(pred) {
                Code::Const(false) => Code::Const(false),
                Code::Const(true) => Code::Atom(format!("{}.is_some()", self.local(path))),
                Code::Test(helper, arg) => {
                    let l = self.local(path);
                    Code::Atom(format!("json::arg::{helper}({l}, {arg})"))
                }
                body => {
                    // A `match`, not a closure: one closure per test would be
                    // a type (and a function) of its own for the compiler.
                    let l = self.local(path);
                    Code::Atom(format!(
                        "match {l} {{ Some(v) => {}, None => false }}",
                        body.flat()
                    ))
                }
            },
        }
    }

    /// A predicate over `v: &Value`.
    fn pred(&mut self, pred: &Pred) -> Code {
        let mark = (self.paths.len(), self.regexes.len());
        let code = self.pred_inner(pred);
        self.release_if_const(&code, mark);
        code
    }

    fn pred_inner(&mut self, pred: &Pred) -> Code {
        match &pred.kind {
            PredKind::Const(c) => const_check(c),
            PredKind::Enum(values) => {
                let strings = distinct_strings(values.iter().filter_map(Value::as_str));
                let mut parts = Vec::new();
                if !strings.is_empty() {
                    parts.push(Code::Atom(format!(
                        "matches!(v.as_str(), {})",
                        some_of(&strings)
                    )));
                }
                parts.extend(values.iter().filter(|v| !v.is_string()).map(const_check));
                join(parts, false)
            }
            PredKind::Type(types) => {
                let parts = types.iter().map(|t| type_check(t)).collect();
                join(parts, false)
            }
            PredKind::Pattern(re) => match literal_pattern(re) {
                Some(lit) => lit.code(),
                None => {
                    let i = match self.regexes.iter().position(|r| r == re) {
                        Some(i) => i,
                        None => {
                            self.regexes.push(re.clone());
                            self.regexes.len() - 1
                        }
                    };
                    Code::Atom(format!("RE_{i}.matches(v)"))
                }
            },
            PredKind::MinLength(0) => Code::Const(true),
            PredKind::MinLength(n) => Code::Test("min_length", n.to_string()),
            PredKind::MaxLength(n) => Code::Test("max_length", n.to_string()),
            PredKind::Minimum(n) => bound("minimum", n),
            PredKind::Maximum(n) => bound("maximum", n),
            PredKind::ExclusiveMinimum(n) => bound("exclusive_minimum", n),
            PredKind::ExclusiveMaximum(n) => bound("exclusive_maximum", n),
            PredKind::Not(inner) => match &inner.kind {
                PredKind::Not(twice) => self.pred(twice),
                _ => negate(self.pred(inner)),
            },
            PredKind::AnyOf(ps) => {
                let parts = ps.iter().map(|p| self.pred(p)).collect();
                join(parts, false)
            }
            PredKind::AllOf(ps) => {
                let parts = ps.iter().map(|p| self.pred(p)).collect();
                join(parts, true)
            }
            PredKind::MinItems(0) => Code::Const(true),
            PredKind::MinItems(n) => Code::Test("min_items", n.to_string()),
            PredKind::MaxItems(n) => Code::Test("max_items", n.to_string()),
            PredKind::Items(inner) => match self.pred(inner) {
                Code::Const(true) => Code::Const(true),
                Code::Const(false) => {
                    Code::Atom("v.as_array().is_none_or(|a| a.is_empty())".into())
                }
                body => Code::Atom(format!(
                    "v.as_array().is_none_or(|a| a.iter().all(|v| {}))",
                    body.flat()
                )),
            },
            PredKind::Contains(inner) => match self.pred(inner) {
                Code::Const(false) => Code::Atom("!v.is_array()".into()),
                Code::Const(true) => {
                    Code::Atom("v.as_array().is_none_or(|a| !a.is_empty())".into())
                }
                body => Code::Atom(format!(
                    "v.as_array().is_none_or(|a| a.iter().any(|v| {}))",
                    body.flat()
                )),
            },
            PredKind::Properties(ps) => {
                let mut parts = Vec::new();
                for (key, p) in ps {
                    let key = string(key);
                    parts.push(match self.pred(p) {
                        Code::Const(true) => Code::Const(true),
                        Code::Const(false) => Code::Atom(format!("v.get({key}).is_none()")),
                        body => Code::Atom(format!("v.get({key}).is_none_or(|v| {})", body.flat())),
                    });
                }
                join(parts, true)
            }
            PredKind::Required(keys) if keys.is_empty() => Code::Const(true),
            PredKind::Required(keys) => {
                let keys: Vec<String> = keys.iter().map(|k| string(k)).collect();
                Code::Test("has_keys", format!("&[{}]", keys.join(", ")))
            }
        }
    }
}

/// The strings of a `const` or `enum` of strings only (in order, without
/// repeats): tested on an argument as one `matches!` over its text.
fn string_choices(pred: &Pred) -> Option<Vec<&str>> {
    let values: &[Value] = match &pred.kind {
        PredKind::Const(c) => std::slice::from_ref(c),
        PredKind::Enum(values) if !values.is_empty() => values,
        _ => return None,
    };
    let strings: Option<Vec<&str>> = values.iter().map(Value::as_str).collect();
    Some(distinct_strings(strings?))
}

/// The strings in order, each once.
fn distinct_strings<'a>(strings: impl IntoIterator<Item = &'a str>) -> Vec<&'a str> {
    let mut distinct: Vec<&str> = Vec::new();
    for s in strings {
        if !distinct.contains(&s) {
            distinct.push(s);
        }
    }
    distinct
}

/// `&&` (`and`) or `||` of the parts, folding constants.
fn join(parts: Vec<Code>, and: bool) -> Code {
    let mut kept: Vec<Code> = Vec::new();
    let mut seen: Vec<String> = Vec::new();
    for part in parts {
        match part {
            // `x && false` / `x || true`: the whole is that constant.
            Code::Const(b) if b != and => return Code::Const(b),
            Code::Const(_) => {}
            // Same operator: no parentheses needed.
            Code::And(ops) if and => push_distinct(&mut kept, &mut seen, ops),
            Code::Or(ops) if !and => push_distinct(&mut kept, &mut seen, ops),
            other => push_distinct(&mut kept, &mut seen, vec![other]),
        }
    }
    if !and {
        kept = factor(kept);
    }
    match kept.len() {
        0 => Code::Const(and),
        1 => kept.pop().unwrap_or(Code::Const(and)),
        _ if and => Code::And(kept),
        _ => Code::Or(kept),
    }
}

/// The operands of an `||`, each run of neighbours that begin with the same
/// conjuncts written with them once: `(p && a) || (p && b)` is
/// `p && (a || b)`. The tests are pure, so the truth is the same and each
/// test runs at most as often; and the compiler has less code to check —
/// about a tenth of a 10,000-tool build's memory, where rules list the
/// cases of one argument's value.
fn factor(operands: Vec<Code>) -> Vec<Code> {
    let mut out = Vec::with_capacity(operands.len());
    let mut runs = operands.into_iter().map(conjuncts).peekable();
    while let Some(first) = runs.next() {
        let head = first[0].flat();
        let mut run = vec![first];
        while let Some(next) = runs.next_if(|next| next[0].flat() == head) {
            run.push(next);
        }
        if run.len() == 1 {
            out.push(join(run.pop().unwrap_or_default(), true));
            continue;
        }
        let shared = (1..run.iter().map(Vec::len).min().unwrap_or(1))
            .take_while(|&i| run.iter().all(|c| c[i].flat() == run[0][i].flat()))
            .count()
            + 1;
        let mut parts: Vec<Code> = run[0][..shared].to_vec();
        let rests = run
            .into_iter()
            .map(|mut c| join(c.split_off(shared), true))
            .collect();
        parts.push(join(rests, false));
        out.push(join(parts, true));
    }
    out
}

/// The operands of an `&&`, or the code alone.
fn conjuncts(code: Code) -> Vec<Code> {
    match code {
        Code::And(ops) => ops,
        other => vec![other],
    }
}

/// Adds the operands not already there: `x || x` is `x` (and clippy's
/// `eq_op` would reject it).
fn push_distinct(kept: &mut Vec<Code>, seen: &mut Vec<String>, operands: Vec<Code>) {
    for operand in operands {
        let text = operand.flat();
        if !seen.contains(&text) {
            seen.push(text);
            kept.push(operand);
        }
    }
}

fn negate(code: Code) -> Code {
    match code {
        Code::Const(b) => Code::Const(!b),
        other => Code::Atom(format!("!{}", other.operand())),
    }
}

fn type_check(t: &str) -> Code {
    Code::Atom(match t {
        "null" => "v.is_null()".into(),
        "boolean" => "v.is_boolean()".into(),
        "string" => "v.is_string()".into(),
        "array" => "v.is_array()".into(),
        "object" => "v.is_object()".into(),
        "number" => "v.is_number()".into(),
        "integer" => "json::is_integer(v)".into(),
        _ => return Code::Const(false),
    })
}

fn const_check(c: &Value) -> Code {
    Code::Atom(match c {
        Value::Null => "v.is_null()".into(),
        Value::Bool(b) => format!("matches!(v, Value::Bool({b}))"),
        Value::String(s) => format!("matches!(v.as_str(), {})", some_of(&[s])),
        Value::Number(n) => return Code::Test("number_equals", num(n)),
        Value::Array(_) | Value::Object(_) => format!("{}.matches(v)", const_value(c)),
    })
}

/// A value as a `json::Const` expression (promoted to a `'static` constant).
fn const_value(c: &Value) -> String {
    match c {
        Value::Null => "json::Const::Null".into(),
        Value::Bool(b) => format!("json::Const::Bool({b})"),
        Value::Number(n) => format!("json::Const::Num({})", num(n)),
        Value::String(s) => format!("json::Const::Str({})", string(s)),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(const_value).collect();
            format!("json::Const::Array(&[{}])", items.join(", "))
        }
        Value::Object(map) => {
            let fields: Vec<String> = map
                .iter()
                .map(|(k, v)| format!("({}, {})", string(k), const_value(v)))
                .collect();
            format!("json::Const::Object(&[{}])", fields.join(", "))
        }
    }
}

fn bound(keyword: &'static str, n: &Number) -> Code {
    Code::Test(keyword, num(n))
}

/// A number as a `json::Num` expression, exactly.
pub(super) fn num(n: &Number) -> String {
    use mcp_resolve_runtime::json::Num;
    match Num::of(n) {
        Num::Int(i64::MIN) => "json::Num::Int(i64::MIN)".to_string(),
        Num::Int(i) if i < 0 => format!(
            "json::Num::Int(-{})",
            Literal::i64_unsuffixed(i.unsigned_abs() as i64)
        ),
        Num::Int(i) => format!("json::Num::Int({})", Literal::i64_unsuffixed(i)),
        Num::UInt(u) => format!("json::Num::UInt({})", Literal::u64_unsuffixed(u)),
        Num::Float(f) if f.is_sign_negative() => {
            format!("json::Num::Float(-{})", Literal::f64_unsuffixed(-f))
        }
        Num::Float(f) => format!("json::Num::Float({})", Literal::f64_unsuffixed(f)),
    }
}

impl LiteralPattern {
    /// The check over `v` (non-strings pass, as for `pattern`).
    fn code(&self) -> Code {
        let text = &self.text;
        let test = match (self.start, self.end) {
            (true, true) => "str_is",
            _ if text.is_empty() => return Code::Const(true),
            (true, false) => "str_starts_with",
            (false, true) => "str_ends_with",
            (false, false) => "str_contains",
        };
        Code::Test(test, string(text))
    }
}

#[cfg(test)]
mod tests {
    use super::{Code, join};

    fn atom(text: &str) -> Code {
        Code::Atom(text.to_string())
    }

    fn and(texts: &[&str]) -> Code {
        join(texts.iter().map(|t| atom(t)).collect(), true)
    }

    #[test]
    fn neighbours_that_begin_alike_share_their_beginning() {
        let or = |parts: Vec<Code>| join(parts, false).flat();
        assert_eq!(
            or(vec![and(&["p", "a"]), and(&["p", "b"])]),
            "p && (a || b)"
        );
        // The longest shared beginning, then what is left of each.
        assert_eq!(
            or(vec![and(&["p", "q", "a"]), and(&["p", "q", "b", "c"])]),
            "p && q && (a || (b && c))"
        );
        // Only neighbours: the order of the tests is kept.
        assert_eq!(
            or(vec![and(&["p", "a"]), and(&["r", "b"]), and(&["p", "c"])]),
            "(p && a) || (r && b) || (p && c)"
        );
        // Runs of their own, nested where the rest begins alike again.
        assert_eq!(
            or(vec![
                and(&["p", "a", "x"]),
                and(&["p", "a", "y"]),
                and(&["p", "b"]),
                and(&["r", "c"]),
                and(&["r", "d"]),
            ]),
            "(p && ((a && (x || y)) || b)) || (r && (c || d))"
        );
        // `p || (p && a)` is `p`.
        assert_eq!(or(vec![atom("p"), and(&["p", "a"])]), "p");
        assert_eq!(or(vec![and(&["p", "a"]), atom("p")]), "p");
        // Nothing shared: as it was.
        assert_eq!(or(vec![atom("a"), and(&["b", "c"])]), "a || (b && c)");
    }
}

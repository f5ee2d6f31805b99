//! A tool's variant conditions as one Python matching function: each
//! argument looked up once, then each variant's condition as an expression,
//! in order, returning the index of the first that holds.
//!
//! Every construct means in Python what it means in the Rust engines
//! (`mcp_resolve_runtime::json`): JSON Schema keywords hold vacuously on
//! values of other types, a boolean is never a number, equality is by value
//! (`1 == 1.0`, objects by key set), numbers compare as the Rust engines
//! compare them (integers exactly, anything else as doubles: the runtime's
//! `compare`, written inline where Python's own comparison gives the same
//! answer), lengths count code points, and patterns are translated from
//! their parsed form (`regex.rs`).

use std::fmt::Write as _;

use serde_json::{Number, Value};

use super::{comment_text, py_string, regex};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{ArgPath, Cond, Pred, PredKind, Tool};

/// A boolean expression, kept as a tree so that it is written with exactly
/// the parentheses Python's precedence needs.
#[derive(Clone, Debug, PartialEq)]
enum Expr {
    Const(bool),
    /// One comparison-level term (a call, a comparison, an `is` test).
    Atom(String),
    /// `lhs op rhs` with `op` one of `is`, `==`, `in` or their negations,
    /// so that a negation is written `is not`, `!=`, `not in`.
    Cmp(String, &'static str, String),
    And(Vec<Expr>),
    Or(Vec<Expr>),
    Not(Box<Expr>),
}

fn atom(text: impl Into<String>) -> Expr {
    Expr::Atom(text.into())
}

fn and(parts: Vec<Expr>) -> Expr {
    let mut flat = Vec::new();
    for p in parts {
        match p {
            Expr::Const(true) => {}
            Expr::Const(false) => return Expr::Const(false),
            Expr::And(inner) => flat.extend(inner),
            other => flat.push(other),
        }
    }
    // A value equals at most one constant: two different ones make the
    // conjunction false (and Python's type checkers call it an error).
    if contradicts(&flat, &["==", "is"]) {
        return Expr::Const(false);
    }
    match flat.len() {
        0 => Expr::Const(true),
        1 => flat.pop().unwrap_or(Expr::Const(true)),
        _ => Expr::And(flat),
    }
}

/// Whether two of `parts` compare the same name, with one of `ops`, to two
/// different constants. Every constant written on the right of `==` and
/// `is` is a distinct JSON value (or the absent marker) for distinct texts:
/// numbers are written as canonical integers, and a boolean is never equal
/// to a number since numbers are tested with `rt.is_number` first.
fn contradicts(parts: &[Expr], ops: &[&str]) -> bool {
    let mut seen: Vec<(&str, &str)> = Vec::new();
    for p in parts {
        if let Expr::Cmp(lhs, op, rhs) = p
            && ops.contains(op)
        {
            if seen.iter().any(|(l, r)| l == lhs && r != rhs) {
                return true;
            }
            seen.push((lhs, rhs));
        }
    }
    false
}

fn or(parts: Vec<Expr>) -> Expr {
    let mut flat = Vec::new();
    for p in parts {
        match p {
            Expr::Const(false) => {}
            Expr::Const(true) => return Expr::Const(true),
            Expr::Or(inner) => flat.extend(inner),
            other => flat.push(other),
        }
    }
    // The dual: a value differs from at least one of two constants.
    if contradicts(&flat, &["!=", "is not"]) {
        return Expr::Const(true);
    }
    match flat.len() {
        0 => Expr::Const(false),
        1 => flat.pop().unwrap_or(Expr::Const(false)),
        _ => Expr::Or(flat),
    }
}

fn cmp(lhs: impl Into<String>, op: &'static str, rhs: impl Into<String>) -> Expr {
    Expr::Cmp(lhs.into(), op, rhs.into())
}

fn not(e: Expr) -> Expr {
    match e {
        Expr::Const(b) => Expr::Const(!b),
        Expr::Cmp(lhs, op, rhs) => Expr::Cmp(
            lhs,
            match op {
                "is" => "is not",
                "is not" => "is",
                "==" => "!=",
                "!=" => "==",
                "in" => "not in",
                _ => "in",
            },
            rhs,
        ),
        Expr::Not(inner) => *inner,
        other => Expr::Not(Box::new(other)),
    }
}

impl Expr {
    /// Python source; `level` is the binding of the context (0: anywhere, 1:
    /// an operand of `or`, 2: of `and`, 3: of `not`).
    fn render(&self, level: u8) -> String {
        let (text, own) = match self {
            Expr::Const(b) => (if *b { "True" } else { "False" }.to_string(), 4),
            Expr::Atom(a) => (a.clone(), 4),
            Expr::Cmp(lhs, op, rhs) => (format!("{lhs} {op} {rhs}"), 4),
            Expr::Or(items) => (
                items
                    .iter()
                    .map(|i| i.render(1))
                    .collect::<Vec<_>>()
                    .join(" or "),
                1,
            ),
            Expr::And(items) => (
                items
                    .iter()
                    .map(|i| i.render(2))
                    .collect::<Vec<_>>()
                    .join(" and "),
                2,
            ),
            Expr::Not(inner) => (format!("not {}", inner.render(3)), 3),
        };
        // An operand binds at least as tightly as its context, or is grouped
        // (`and` inside `or` is grouped too: it reads more easily).
        if own < level || (own == 2 && level == 1) {
            format!("({text})")
        } else {
            text
        }
    }
}

/// A tool's matching function, before the module names what it uses: its
/// patterns and constants are numbered per tool (`_RE_\u{1}N\u{1}`,
/// `_CONST_\u{2}N\u{2}`), its own name is `\u{3}` and what it returns is
/// marked ([`RETURN_MARK`]), so that the module can number patterns and
/// constants once for every tool, write one function for tools whose
/// matching is the same, and hold a few tools' matching inline.
pub(super) struct Matcher {
    /// What the function tests, as comments: each variant's condition.
    pub comment: String,
    /// The function, from `def` on.
    pub function: String,
    /// The Python sources of the patterns it uses, by their number.
    pub regexes: Vec<(usize, String)>,
    /// The JSON texts of the constants it uses, by their number.
    pub constants: Vec<(usize, String)>,
}

pub(super) const REGEX_MARK: char = '\u{1}';
pub(super) const CONSTANT_MARK: char = '\u{2}';
pub(super) const NAME_MARK: char = '\u{3}';
/// Around the outcome index each `return` gives (`return \u{5}2\u{5}`):
/// the index itself in the matching function, the outcome where the module's
/// `resolve` holds the matching inline.
pub(super) const RETURN_MARK: char = '\u{5}';

pub(super) fn match_function(tool: &Tool) -> Result<Matcher, Vec<Diagnostic>> {
    let mut w = Writer {
        tool: &tool.name,
        variant: "",
        paths: Vec::new(),
        regexes: Vec::new(),
        constants: Vec::new(),
        used: Default::default(),
        errors: Vec::new(),
        depth: 0,
    };
    let mut checks = String::new();
    let mut tail = tool.variants.len();
    for (i, variant) in tool.variants.iter().enumerate() {
        w.variant = &variant.name;
        let expr = w.cond(&variant.when);
        match expr {
            Expr::Const(false) => {}
            Expr::Const(true) => {
                tail = i;
                break;
            }
            _ => {
                w.mark_used(&expr);
                let _ = writeln!(
                    checks,
                    "    if {}:\n        return {RETURN_MARK}{i}{RETURN_MARK}",
                    expr.render(0)
                );
            }
        }
    }
    if !w.errors.is_empty() {
        return Err(w.errors);
    }
    // Only what the checks kept (constant folding, or a variant after one
    // that always holds, can leave a lookup or a pattern unused).
    let regexes = w
        .regexes
        .iter()
        .enumerate()
        .filter(|(i, _)| w.used.contains(&format!("_RE_{REGEX_MARK}{i}{REGEX_MARK}")))
        .map(|(i, source)| (i, source.clone()))
        .collect();
    let constants = w
        .constants
        .iter()
        .enumerate()
        .filter(|(i, _)| {
            w.used
                .contains(&format!("_CONST_{CONSTANT_MARK}{i}{CONSTANT_MARK}"))
        })
        .map(|(i, text)| (i, text.clone()))
        .collect();
    let mut comment = String::new();
    let _ = writeln!(
        comment,
        "# Matches the (validated) arguments of tool `{}`.",
        comment_text(&tool.name)
    );
    for v in &tool.variants {
        let _ = writeln!(
            comment,
            "#\n# Variant `{}`: `{}`",
            comment_text(&v.name),
            comment_text(&v.when.to_string())
        );
    }
    let mut out = String::new();
    let used: Vec<usize> = (0..w.paths.len())
        .filter(|i| w.used.contains(&format!("arg_{i}")))
        .collect();
    let args = if used.is_empty() { "_args" } else { "args" };
    let _ = writeln!(out, "def _match_{NAME_MARK}({args}: rt.Args) -> int:");
    for i in used {
        // Each segment looked up in place: a member of an object, or
        // absent.
        let mut segments = w.paths[i].iter();
        match segments.next() {
            Some(first) => {
                let _ = writeln!(out, "    arg_{i} = args.get({}, _ABSENT)", py_string(first));
            }
            None => {
                let _ = writeln!(out, "    arg_{i} = args");
            }
        }
        for segment in segments {
            let _ = writeln!(
                out,
                "    arg_{i} = arg_{i}.get({}, _ABSENT) if isinstance(arg_{i}, dict) else _ABSENT",
                py_string(segment)
            );
        }
    }
    out.push_str(&checks);
    let _ = writeln!(out, "    return {RETURN_MARK}{tail}{RETURN_MARK}");
    Ok(Matcher {
        comment,
        function: out,
        regexes,
        constants,
    })
}

/// `text` with each `mark`-delimited number (`\u{1}3\u{1}`) replaced by
/// `names(number)`.
pub(super) fn substitute(text: &str, mark: char, names: impl Fn(usize) -> usize) -> String {
    let mut out = String::with_capacity(text.len());
    let mut parts = text.split(mark);
    if let Some(first) = parts.next() {
        out.push_str(first);
    }
    // Between marks alternately a number and text.
    while let (Some(number), Some(rest)) = (parts.next(), parts.next()) {
        let n: usize = number.parse().unwrap_or(usize::MAX);
        let _ = write!(out, "{}", names(n));
        out.push_str(rest);
    }
    out
}

struct Writer<'a> {
    tool: &'a str,
    variant: &'a str,
    /// The argument paths looked up, in first use order (`arg_N`).
    paths: Vec<Vec<String>>,
    /// Python sources of the patterns (`_RE_\u{1}N\u{1}`).
    regexes: Vec<String>,
    /// JSON texts of array and object constants (`_CONST_\u{2}N\u{2}`).
    constants: Vec<String>,
    /// The names the kept checks use.
    used: std::collections::HashSet<String>,
    errors: Vec<Diagnostic>,
    /// How deep in items and properties: names the bound variables.
    depth: usize,
}

impl Writer<'_> {
    /// Records the `arg_N`, `_RE_…` and `_CONST_…` names `expr` uses.
    fn mark_used(&mut self, expr: &Expr) {
        match expr {
            Expr::Const(_) => {}
            Expr::Atom(text) => {
                for name in names(text) {
                    self.used.insert(name.to_string());
                }
            }
            Expr::Cmp(lhs, _, rhs) => {
                for name in names(lhs).into_iter().chain(names(rhs)) {
                    self.used.insert(name.to_string());
                }
            }
            Expr::And(items) | Expr::Or(items) => items.iter().for_each(|i| self.mark_used(i)),
            Expr::Not(inner) => self.mark_used(inner),
        }
    }

    fn cond(&mut self, cond: &Cond) -> Expr {
        match cond {
            Cond::Const(b) => Expr::Const(*b),
            Cond::And(items) => {
                let parts = items.iter().map(|c| self.cond(c)).collect();
                and(parts)
            }
            Cond::Or(items) => {
                let parts = items.iter().map(|c| self.cond(c)).collect();
                or(parts)
            }
            Cond::Not(inner) => not(self.cond(inner)),
            Cond::Present(path) => cmp(self.arg(path), "is not", "_ABSENT"),
            Cond::Test(path, pred) => {
                let arg = self.arg(path);
                let test = self.pred(pred, &arg);
                // Tests that fail on an absent argument need no presence check.
                if fails_on_absent(pred) {
                    test
                } else {
                    and(vec![cmp(arg, "is not", "_ABSENT"), test])
                }
            }
        }
    }

    fn arg(&mut self, path: &ArgPath) -> String {
        let at = match self.paths.iter().position(|p| *p == path.segments) {
            Some(at) => at,
            None => {
                self.paths.push(path.segments.clone());
                self.paths.len() - 1
            }
        };
        format!("arg_{at}")
    }

    /// `pred` on the value `x` (a name), as a boolean expression.
    fn pred(&mut self, pred: &Pred, x: &str) -> Expr {
        match &pred.kind {
            PredKind::Const(value) => self.equals(value, x),
            PredKind::Enum(values) => {
                let parts = values.iter().map(|v| self.equals(v, x)).collect();
                or(parts)
            }
            PredKind::Type(types) => or(types.iter().map(|t| type_test(t, x)).collect()),
            PredKind::Pattern(pattern) => match regex::to_python(pattern) {
                Ok(source) => {
                    let at = match self.regexes.iter().position(|r| *r == source) {
                        Some(at) => at,
                        None => {
                            self.regexes.push(source);
                            self.regexes.len() - 1
                        }
                    };
                    or(vec![
                        atom(format!("not isinstance({x}, str)")),
                        cmp(
                            format!("_RE_{REGEX_MARK}{at}{REGEX_MARK}.search({x})"),
                            "is not",
                            "None",
                        ),
                    ])
                }
                Err(why) => {
                    self.refuse(
                        pred,
                        format!("the pattern `{pattern}` uses {}", why.construct),
                        why.help,
                    );
                    Expr::Const(false)
                }
            },
            PredKind::MinLength(n) => or(vec![
                atom(format!("not isinstance({x}, str)")),
                atom(format!("len({x}) >= {n}")),
            ]),
            PredKind::MaxLength(n) => or(vec![
                atom(format!("not isinstance({x}, str)")),
                atom(format!("len({x}) <= {n}")),
            ]),
            PredKind::Minimum(n) => compare(x, ">=", "minimum", n),
            PredKind::Maximum(n) => compare(x, "<=", "maximum", n),
            PredKind::ExclusiveMinimum(n) => compare(x, ">", "exclusive_minimum", n),
            PredKind::ExclusiveMaximum(n) => compare(x, "<", "exclusive_maximum", n),
            PredKind::Not(inner) => not(self.pred(inner, x)),
            PredKind::AnyOf(items) => {
                let parts = items.iter().map(|p| self.pred(p, x)).collect();
                or(parts)
            }
            PredKind::AllOf(items) => {
                let parts = items.iter().map(|p| self.pred(p, x)).collect();
                and(parts)
            }
            PredKind::MinItems(n) => or(vec![
                atom(format!("not isinstance({x}, list)")),
                atom(format!("len({x}) >= {n}")),
            ]),
            PredKind::MaxItems(n) => or(vec![
                atom(format!("not isinstance({x}, list)")),
                atom(format!("len({x}) <= {n}")),
            ]),
            PredKind::Items(inner) => {
                let (item, test) = self.bound(inner);
                or(vec![
                    atom(format!("not isinstance({x}, list)")),
                    atom(format!("all({} for {item} in {x})", test.render(0))),
                ])
            }
            PredKind::Contains(inner) => {
                let (item, test) = self.bound(inner);
                or(vec![
                    atom(format!("not isinstance({x}, list)")),
                    atom(format!("any({} for {item} in {x})", test.render(0))),
                ])
            }
            PredKind::Properties(properties) => {
                let mut parts = Vec::new();
                for (key, inner) in properties {
                    let (value, test) = self.bound(inner);
                    parts.push(atom(format!(
                        "rt.property_holds({x}, {}, lambda {value}: {})",
                        py_string(key),
                        test.render(0)
                    )));
                }
                if parts.is_empty() {
                    return Expr::Const(true);
                }
                or(vec![atom(format!("not isinstance({x}, dict)")), and(parts)])
            }
            PredKind::Required(keys) => {
                let parts: Vec<Expr> = keys.iter().map(|k| cmp(py_string(k), "in", x)).collect();
                if parts.is_empty() {
                    return Expr::Const(true);
                }
                or(vec![atom(format!("not isinstance({x}, dict)")), and(parts)])
            }
        }
    }

    /// A predicate on a value bound by a generator or a lambda: the name it
    /// binds, and the test.
    fn bound(&mut self, inner: &Pred) -> (String, Expr) {
        self.depth += 1;
        let name = format!("v{}", self.depth);
        let test = self.pred(inner, &name);
        self.depth -= 1;
        let mut probe = std::collections::HashSet::new();
        collect_names(&test, &mut probe);
        if probe.contains(name.as_str()) {
            (name, test)
        } else {
            (format!("_{name}"), test)
        }
    }

    /// JSON Schema equality of `x` with a constant.
    fn equals(&mut self, value: &Value, x: &str) -> Expr {
        match value {
            Value::Null => cmp(x, "is", "None"),
            Value::Bool(b) => cmp(x, "is", if *b { "True" } else { "False" }),
            // `==` between a string and any other JSON value is false.
            Value::String(s) => cmp(x, "==", py_string(s)),
            Value::Number(n) => match small_int(n) {
                // Exact for every JSON number in both languages; a boolean
                // is not a number.
                Some(i) => and(vec![
                    atom(format!("rt.is_number({x})")),
                    cmp(x, "==", i.to_string()),
                ]),
                None => atom(format!("rt.number_equals({x}, {})", number_literal(n))),
            },
            Value::Array(_) | Value::Object(_) => {
                let text = serde_json::to_string(value).unwrap_or_default();
                let at = match self.constants.iter().position(|c| *c == text) {
                    Some(at) => at,
                    None => {
                        self.constants.push(text);
                        self.constants.len() - 1
                    }
                };
                atom(format!(
                    "rt.json_equal({x}, _CONST_{CONSTANT_MARK}{at}{CONSTANT_MARK})"
                ))
            }
        }
    }

    fn refuse(&mut self, pred: &Pred, what: String, help: &str) {
        self.errors.push(
            Diagnostic::new(
                Code::NotPortable,
                format!(
                    "tool `{}`, variant `{}`: {what}, which Python cannot evaluate exactly as Rust does",
                    self.tool, self.variant
                ),
            )
            .at(pred.loc.0)
            .for_tool(self.tool)
            .for_variant(self.variant)
            .with_help(help),
        );
    }
}

/// A number comparison: Python's own operators for an integer bound a
/// double holds exactly (both languages then compare exactly), else the
/// runtime's comparison, which rounds as the Rust engines do.
fn compare(x: &str, op: &str, function: &str, n: &Number) -> Expr {
    match small_int(n) {
        Some(i) => or(vec![not(is_number(x)), atom(format!("{x} {op} {i}"))]),
        None => atom(format!("rt.{function}({x}, {})", number_literal(n))),
    }
}

/// JSON Schema's `number` test, inline (a boolean is not a number), in the
/// form type checkers narrow on.
fn is_number(x: &str) -> Expr {
    or(vec![
        cmp(format!("type({x})"), "is", "int"),
        cmp(format!("type({x})"), "is", "float"),
    ])
}

/// `n` when it is an integer of at most 2^53 in magnitude.
fn small_int(n: &Number) -> Option<i64> {
    n.as_i64()
        .filter(|i| i.unsigned_abs() <= 1 << 53)
        .filter(|_| !n.is_f64())
}

/// A number as a Python literal of the same value: an integer's digits, a
/// double's shortest round-trip form.
fn number_literal(n: &Number) -> String {
    match n.as_f64() {
        Some(f) if n.is_f64() => {
            let text = format!("{f:?}");
            // Rust writes `1e100` and `1e-7`; Python reads both.
            text
        }
        _ => n.to_string(),
    }
}

fn type_test(t: &str, x: &str) -> Expr {
    match t {
        "null" => cmp(x, "is", "None"),
        "boolean" => atom(format!("type({x}) is bool")),
        "string" => atom(format!("isinstance({x}, str)")),
        "number" => is_number(x),
        "integer" => atom(format!("rt.is_integer({x})")),
        "array" => atom(format!("isinstance({x}, list)")),
        "object" => atom(format!("isinstance({x}, dict)")),
        _ => Expr::Const(false),
    }
}

fn collect_names<'e>(expr: &'e Expr, out: &mut std::collections::HashSet<&'e str>) {
    match expr {
        Expr::Const(_) => {}
        Expr::Atom(text) => out.extend(names(text)),
        Expr::Cmp(lhs, _, rhs) => {
            out.extend(names(lhs));
            out.extend(names(rhs));
        }
        Expr::And(items) | Expr::Or(items) => items.iter().for_each(|i| collect_names(i, out)),
        Expr::Not(inner) => collect_names(inner, out),
    }
}

/// Every name `code` uses outside its string literals: the maximal runs of
/// ASCII letters, digits, `_` and the marks of numbered names.
fn names(code: &str) -> std::collections::HashSet<&str> {
    let mut found = std::collections::HashSet::new();
    let (mut in_string, mut escaped) = (false, false);
    let mut start: Option<usize> = None;
    for (at, c) in code.char_indices() {
        let quote = c == '"' && !escaped;
        let inside = in_string;
        escaped = in_string && c == '\\' && !escaped;
        if quote {
            in_string = !in_string;
        }
        let part = !inside
            && !quote
            && (c.is_ascii_alphanumeric() || c == '_' || c == REGEX_MARK || c == CONSTANT_MARK);
        match (part, start) {
            (true, None) => start = Some(at),
            (false, Some(from)) => {
                found.insert(&code[from..at]);
                start = None;
            }
            _ => {}
        }
    }
    if let Some(from) = start {
        found.insert(&code[from..]);
    }
    found
}

/// Whether `pred` is false on an absent argument, so that a test of it
/// needs no presence check: equality with a JSON value and type tests are.
fn fails_on_absent(pred: &Pred) -> bool {
    matches!(
        pred.kind,
        PredKind::Const(_) | PredKind::Enum(_) | PredKind::Type(_)
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_take_the_parentheses_precedence_needs() {
        let e = and(vec![
            or(vec![atom("a"), atom("b")]),
            not(and(vec![atom("c"), atom("d")])),
        ]);
        assert_eq!(e.render(0), "(a or b) and not (c and d)");
        let e = or(vec![and(vec![atom("a"), atom("b")]), not(atom("c"))]);
        assert_eq!(e.render(0), "(a and b) or not c");
        assert_eq!(not(not(atom("x"))).render(0), "x");
        assert_eq!(and(vec![Expr::Const(true), atom("x")]).render(0), "x");
        assert_eq!(or(vec![Expr::Const(true), atom("x")]), Expr::Const(true));
    }

    #[test]
    fn names_skip_strings() {
        let found = names("arg_0 == \"arg_\\\"1\" or x > 1");
        assert!(found.contains("arg_0") && found.contains("x"));
        assert!(!found.contains("arg_1") && !found.contains("1\""));
    }
}

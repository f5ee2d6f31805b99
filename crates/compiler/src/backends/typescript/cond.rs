//! A tool's variant conditions as one TypeScript matching function: each
//! argument looked up once (own properties only, so `__proto__` or
//! `constructor` is an argument like any other), then each variant's
//! condition as an expression, in order, returning the index of the first
//! that holds.
//!
//! Every construct means in TypeScript what it means in the Rust engines
//! (`mcp_resolve_runtime::json`): JSON Schema keywords hold vacuously on
//! values of other types, equality is by value (`1 == 1.0`, objects by key
//! set), lengths count code points, patterns are translated from their
//! parsed form (`regex.rs`). A number the rules compare with must be exact
//! in a double, and a pattern must have a JavaScript counterpart; otherwise
//! the function is not written and the error names the construct.

use std::fmt::Write as _;

use serde_json::{Number, Value};

use super::{comment_text, js_string, regex};
use crate::diagnostic::{Code, Diagnostic};
use crate::ir::{ArgPath, Cond, Pred, PredKind, Tool};

/// Whether a double holds `n` exactly (JavaScript reads it as that value).
pub fn exact_in_double(n: &Number) -> bool {
    if let Some(i) = n.as_i64() {
        // Exact when it survives the round trip (every |i| ≤ 2^53 does); the
        // cast back saturates, so 2^63 itself is out of range.
        let f = i as f64;
        (-9_223_372_036_854_775_808.0..9_223_372_036_854_775_808.0).contains(&f) && f as i64 == i
    } else if let Some(u) = n.as_u64() {
        let f = u as f64;
        f < 18_446_744_073_709_551_616.0 && f as u64 == u
    } else {
        true
    }
}

/// A resolvable tool's matching function, before it is given a number.
pub(super) struct Matcher {
    /// What the function matches: the tool, and each variant's condition.
    pub comment: String,
    /// The function and the patterns and constants it uses, with
    /// [`Matcher::NUMBER`] where its number goes. Tools whose conditions
    /// compile to the same code share one function.
    pub code: String,
}

impl Matcher {
    /// Stands for the function's number in [`Matcher::code`].
    pub const NUMBER: char = '\u{0}';

    /// The code, as function `match_{number}`.
    pub fn numbered(&self, number: usize) -> String {
        self.code.replace(Self::NUMBER, &number.to_string())
    }
}

/// The matching function of a resolvable tool, or the constructs it cannot
/// hold.
pub(super) fn match_function(tool: &Tool) -> Result<Matcher, Vec<Diagnostic>> {
    let mut w = Writer {
        tool: &tool.name,
        variant: "",
        paths: Vec::new(),
        regexes: Vec::new(),
        constants: Vec::new(),
        errors: Vec::new(),
        depth: 0,
    };
    let mut checks = String::new();
    let mut tail = tool.variants.len();
    for (i, variant) in tool.variants.iter().enumerate() {
        w.variant = &variant.name;
        let code = w.cond(&variant.when);
        match code.as_str() {
            "false" => {}
            "true" => {
                tail = i;
                break;
            }
            _ => {
                let _ = writeln!(checks, "  if ({code}) return {i};");
            }
        }
    }
    if !w.errors.is_empty() {
        return Err(w.errors);
    }
    let mut comment = String::new();
    let _ = writeln!(
        comment,
        "// Matches the (validated) arguments of tool `{}`.",
        comment_text(&tool.name)
    );
    for v in &tool.variants {
        let _ = writeln!(
            comment,
            "//\n// Variant `{}`: `{}`",
            comment_text(&v.name),
            comment_text(&v.when.to_string())
        );
    }
    // Only what the checks kept (constant folding, or a variant after one
    // that always holds, can leave a lookup or a pattern unused).
    let used_names = names(&checks);
    let mut out = String::new();
    for (i, source) in w.regexes.iter().enumerate() {
        if used_names.contains(format!("RE_\u{0}_{i}").as_str()) {
            let _ = writeln!(
                out,
                "const RE_\u{0}_{i} = new RegExp({}, \"u\");",
                js_string(source)
            );
        }
    }
    for (i, text) in w.constants.iter().enumerate() {
        if used_names.contains(format!("CONST_\u{0}_{i}").as_str()) {
            let _ = writeln!(
                out,
                "const CONST_\u{0}_{i}: unknown = JSON.parse({});",
                js_string(text)
            );
        }
    }
    let used: Vec<usize> = (0..w.paths.len())
        .filter(|i| used_names.contains(format!("arg_{i}").as_str()))
        .collect();
    let args = if used.is_empty() { "_args" } else { "args" };
    let _ = writeln!(out, "function match_\u{0}({args}: rt.Args): number {{");
    for i in used {
        let mut segments = w.paths[i].iter().map(|s| js_string(s));
        // The first member as `rt.OBJECT_PROTOTYPE` explains: a plain read
        // unless `Object.prototype` has a member by that name; deeper ones
        // with `rt.own`, since a member may be any value there.
        let mut lookup = match segments.next() {
            Some(key) => format!("(OP[{key}] === undefined ? args[{key}] : rt.own(args, {key}))"),
            None => "args".to_string(),
        };
        for key in segments {
            lookup = format!("rt.own({lookup}, {key})");
        }
        let _ = writeln!(out, "  const arg_{i} = {lookup};");
    }
    out.push_str(&checks);
    let _ = writeln!(out, "  return {tail};\n}}\n");
    Ok(Matcher { comment, code: out })
}

struct Writer<'a> {
    tool: &'a str,
    variant: &'a str,
    /// The argument paths looked up, in first use order (`arg_N`).
    paths: Vec<Vec<String>>,
    /// JavaScript sources of the patterns (`RE_<tool>_N`).
    regexes: Vec<String>,
    /// JSON texts of array and object constants (`CONST_<tool>_N`).
    constants: Vec<String>,
    errors: Vec<Diagnostic>,
    /// How deep in items and properties: names the bound variables.
    depth: usize,
}

impl Writer<'_> {
    fn cond(&mut self, cond: &Cond) -> String {
        match cond {
            Cond::Const(b) => b.to_string(),
            Cond::And(items) => {
                let parts: Vec<String> = items.iter().map(|c| self.cond(c)).collect();
                and(parts)
            }
            Cond::Or(items) => {
                let parts: Vec<String> = items.iter().map(|c| self.cond(c)).collect();
                or(parts)
            }
            Cond::Not(inner) => not(&self.cond(inner)),
            Cond::Present(path) => format!("{} !== undefined", self.arg(path)),
            Cond::Test(path, pred) => {
                let arg = self.arg(path);
                let test = self.pred(pred, &arg);
                // Tests that fail on `undefined` need no presence check.
                if fails_on_undefined(pred) {
                    test
                } else {
                    and(vec![format!("{arg} !== undefined"), test])
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

    /// `pred` on the value `x` (an identifier), as a boolean expression.
    fn pred(&mut self, pred: &Pred, x: &str) -> String {
        match &pred.kind {
            PredKind::Const(value) => self.equals(value, x, pred),
            PredKind::Enum(values) => {
                let parts: Vec<String> = values.iter().map(|v| self.equals(v, x, pred)).collect();
                or(parts)
            }
            PredKind::Type(types) => or(types.iter().map(|t| type_test(t, x)).collect()),
            PredKind::Pattern(pattern) => match regex::to_javascript(pattern) {
                Ok(source) => {
                    let at = match self.regexes.iter().position(|r| *r == source) {
                        Some(at) => at,
                        None => {
                            self.regexes.push(source);
                            self.regexes.len() - 1
                        }
                    };
                    format!("typeof {x} !== \"string\" || RE_\u{0}_{at}.test({x} as string)")
                }
                Err(why) => {
                    self.refuse(
                        pred,
                        format!("the pattern `{pattern}` uses {}", why.construct),
                        why.help,
                    );
                    "false".into()
                }
            },
            PredKind::MinLength(n) => {
                format!("typeof {x} !== \"string\" || rt.minLength({x} as string, {n})")
            }
            PredKind::MaxLength(n) => {
                format!("typeof {x} !== \"string\" || rt.maxLength({x} as string, {n})")
            }
            PredKind::Minimum(n) => self.compare(x, ">=", n, pred),
            PredKind::Maximum(n) => self.compare(x, "<=", n, pred),
            PredKind::ExclusiveMinimum(n) => self.compare(x, ">", n, pred),
            PredKind::ExclusiveMaximum(n) => self.compare(x, "<", n, pred),
            PredKind::Not(inner) => not(&self.pred(inner, x)),
            PredKind::AnyOf(items) => {
                let parts: Vec<String> = items.iter().map(|p| self.pred(p, x)).collect();
                or(parts)
            }
            PredKind::AllOf(items) => {
                let parts: Vec<String> = items.iter().map(|p| self.pred(p, x)).collect();
                and(parts)
            }
            PredKind::MinItems(n) => {
                format!("!Array.isArray({x}) || ({x} as unknown[]).length >= {n}")
            }
            PredKind::MaxItems(n) => {
                format!("!Array.isArray({x}) || ({x} as unknown[]).length <= {n}")
            }
            PredKind::Items(inner) => {
                let (item, test) = self.bound(inner);
                format!(
                    "!Array.isArray({x}) || ({x} as unknown[]).every(({item}: unknown) => {test})"
                )
            }
            PredKind::Contains(inner) => {
                let (item, test) = self.bound(inner);
                format!(
                    "!Array.isArray({x}) || ({x} as unknown[]).some(({item}: unknown) => {test})"
                )
            }
            PredKind::Properties(properties) => {
                let mut parts = Vec::new();
                for (key, inner) in properties {
                    let (value, test) = self.bound(inner);
                    parts.push(format!(
                        "rt.propertyHolds({x} as Record<string, unknown>, {}, ({value}: unknown) => {test})",
                        js_string(key)
                    ));
                }
                if parts.is_empty() {
                    return "true".into();
                }
                or(vec![format!("!rt.isObject({x})"), and(parts)])
            }
            PredKind::Required(keys) => {
                let parts: Vec<String> = keys
                    .iter()
                    .map(|k| format!("Object.hasOwn({x} as object, {})", js_string(k)))
                    .collect();
                if parts.is_empty() {
                    return "true".into();
                }
                or(vec![format!("!rt.isObject({x})"), and(parts)])
            }
        }
    }

    /// A predicate on a value bound by a closure: the name it binds, and the
    /// test.
    fn bound(&mut self, inner: &Pred) -> (String, String) {
        self.depth += 1;
        let name = format!("v{}", self.depth);
        let test = self.pred(inner, &name);
        self.depth -= 1;
        if mentions(&test, &name) {
            (name, test)
        } else {
            (format!("_{name}"), test)
        }
    }

    /// JSON Schema equality of `x` with a constant.
    fn equals(&mut self, value: &Value, x: &str, pred: &Pred) -> String {
        match value {
            Value::Null => format!("({x} as unknown) === null"),
            Value::Bool(b) => format!("({x} as unknown) === {b}"),
            Value::String(s) => format!("({x} as unknown) === {}", js_string(s)),
            Value::Number(n) => match self.number(n, pred) {
                Some(literal) => format!("({x} as unknown) === {literal}"),
                None => "false".into(),
            },
            Value::Array(_) | Value::Object(_) => {
                let mut inexact = None;
                super::walk_numbers(value, &mut |n| {
                    if inexact.is_none() && !exact_in_double(n) {
                        inexact = Some(n.clone());
                    }
                });
                if let Some(n) = inexact {
                    self.number(&n, pred);
                    return "false".into();
                }
                let text = serde_json::to_string(value).unwrap_or_default();
                let at = match self.constants.iter().position(|c| *c == text) {
                    Some(at) => at,
                    None => {
                        self.constants.push(text);
                        self.constants.len() - 1
                    }
                };
                format!("rt.jsonEqual({x}, CONST_\u{0}_{at})")
            }
        }
    }

    fn compare(&mut self, x: &str, op: &str, n: &Number, pred: &Pred) -> String {
        match self.number(n, pred) {
            Some(literal) => format!("typeof {x} !== \"number\" || ({x} as number) {op} {literal}"),
            None => "false".into(),
        }
    }

    /// A number as a JavaScript literal of the same value, or an error when
    /// no double holds it.
    fn number(&mut self, n: &Number, pred: &Pred) -> Option<String> {
        if !exact_in_double(n) {
            self.refuse(
                pred,
                format!("the number {n} is not exact in a double (JavaScript's only number)"),
                "compare with a number of at most 2^53 in magnitude, or one a double holds exactly",
            );
            return None;
        }
        Some(match n.as_f64() {
            Some(f) if n.is_f64() => {
                let text = format!("{f:?}");
                if f < 0.0 || text.starts_with('-') {
                    format!("({text})")
                } else {
                    text
                }
            }
            _ => {
                let text = n.to_string();
                if text.starts_with('-') {
                    format!("({text})")
                } else {
                    text
                }
            }
        })
    }

    fn refuse(&mut self, pred: &Pred, what: String, help: &str) {
        self.errors.push(
            Diagnostic::new(
                Code::NotPortable,
                format!(
                    "tool `{}`, variant `{}`: {what}, which TypeScript cannot evaluate exactly as Rust does",
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

fn type_test(t: &str, x: &str) -> String {
    match t {
        "null" => format!("({x} as unknown) === null"),
        "boolean" => format!("typeof {x} === \"boolean\""),
        "string" => format!("typeof {x} === \"string\""),
        "number" => format!("typeof {x} === \"number\""),
        "integer" => format!("Number.isInteger({x})"),
        "array" => format!("Array.isArray({x})"),
        "object" => format!("rt.isObject({x})"),
        _ => "false".into(),
    }
}

/// Whether `code` uses the name `name` (not as part of a longer name, nor
/// inside a string literal).
fn mentions(code: &str, name: &str) -> bool {
    names(code).contains(name)
}

/// Every name `code` uses outside its string literals: the maximal runs of
/// ASCII letters, digits, `_` and the NUL of the placeholders (`RE_\0{i}`),
/// read in one pass — so that asking for many names costs one walk.
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
        let part = !inside && !quote && (c.is_ascii_alphanumeric() || c == '_' || c == '\0');
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

/// Whether `pred` is false on `undefined` (an absent argument), so that a
/// test of it needs no presence check: equality with a JSON value and type
/// tests are.
fn fails_on_undefined(pred: &Pred) -> bool {
    matches!(
        pred.kind,
        PredKind::Const(_) | PredKind::Enum(_) | PredKind::Type(_)
    )
}

/// Operands joined by `&&` (`true` when there are none); an operand with a
/// top-level `||` in parentheses.
fn and(parts: Vec<String>) -> String {
    join(parts, " && ", "true", "false", |p| top_level(p).1)
}

/// Operands joined by `||` (`false` when there are none); an operand with a
/// top-level `&&` in parentheses (not needed, but read more easily).
fn or(parts: Vec<String>) -> String {
    join(parts, " || ", "false", "true", |p| top_level(p).0)
}

/// `parts` joined by `op`, whose identity (`true` for `&&`) drops out and
/// whose absorbing operand (`false` for `&&`) is the answer.
fn join(
    parts: Vec<String>,
    op: &str,
    identity: &str,
    absorbing: &str,
    grouped: impl Fn(&str) -> bool,
) -> String {
    let parts: Vec<String> = parts.into_iter().filter(|p| p != identity).collect();
    if parts.iter().any(|p| p == absorbing) {
        return absorbing.into();
    }
    match parts.len() {
        0 => identity.into(),
        1 => parts.into_iter().next().unwrap_or_default(),
        _ => parts
            .iter()
            .map(|p| {
                if grouped(p) {
                    format!("({p})")
                } else {
                    p.clone()
                }
            })
            .collect::<Vec<_>>()
            .join(op),
    }
}

/// The negation of `code`: in parentheses unless it is one term.
fn not(code: &str) -> String {
    match code {
        "true" => "false".into(),
        "false" => "true".into(),
        _ if top_level(code).2 => format!("!({code})"),
        _ => format!("!{code}"),
    }
}

/// Whether `code` has, outside parentheses and string literals, an `&&`,
/// an `||`, and any operator or space at all (it is then more than one
/// term).
fn top_level(code: &str) -> (bool, bool, bool) {
    let bytes = code.as_bytes();
    let (mut and, mut or, mut any) = (false, false, false);
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for (i, &b) in bytes.iter().enumerate() {
        if in_string {
            match (escaped, b) {
                (true, _) => escaped = false,
                (false, b'\\') => escaped = true,
                (false, b'"') => in_string = false,
                _ => {}
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'(' | b'[' => depth += 1,
            b')' | b']' => depth = depth.saturating_sub(1),
            _ if depth > 0 => {}
            b' ' | b'!' if i > 0 || b == b' ' => any = true,
            b'&' if bytes.get(i + 1) == Some(&b'&') => and = true,
            b'|' if bytes.get(i + 1) == Some(&b'|') => or = true,
            _ => {}
        }
    }
    (and, or, any || and || or)
}

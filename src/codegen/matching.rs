//! Conditions compiled to direct Rust: each argument looked up once, then
//! string compares, `matches!` over enums, prefix/suffix/substring checks for
//! literal patterns, numeric comparisons and regexes compiled once.

use proc_macro2::{Literal, TokenStream};
use quote::{format_ident, quote};
use regex_syntax::hir::{Hir, HirKind, Look};
use serde_json::{Number, Value};

use crate::ir::{ArgPath, Cond, Pred, PredKind};

/// Compiled boolean code, or a constant folded away.
#[derive(Clone, Debug)]
pub(super) enum Code {
    Const(bool),
    /// A call, method call, macro or negation: safe as any operand.
    Atom(TokenStream),
    And(TokenStream),
    Or(TokenStream),
}

impl Code {
    fn operand(self) -> TokenStream {
        match self {
            Code::Const(b) => quote!(#b),
            Code::Atom(ts) => ts,
            Code::And(ts) | Code::Or(ts) => quote!((#ts)),
        }
    }

    /// As a closure's body, which needs no parentheses.
    fn body(self) -> TokenStream {
        match self {
            Code::Const(b) => quote!(#b),
            Code::Atom(ts) | Code::And(ts) | Code::Or(ts) => ts,
        }
    }
}

/// The state of compiling one tool: argument locals and regexes.
pub(super) struct Matcher<'a> {
    rt: &'a TokenStream,
    /// Argument paths bound to locals `arg_0`, `arg_1`, …
    pub paths: Vec<Vec<String>>,
    /// Non-literal patterns bound to statics `RE_0`, `RE_1`, …
    pub regexes: Vec<String>,
}

impl<'a> Matcher<'a> {
    pub fn new(rt: &'a TokenStream) -> Self {
        Matcher {
            rt,
            paths: Vec::new(),
            regexes: Vec::new(),
        }
    }

    fn local(&mut self, path: &ArgPath) -> proc_macro2::Ident {
        let i = match self.paths.iter().position(|p| *p == path.segments) {
            Some(i) => i,
            None => {
                self.paths.push(path.segments.clone());
                self.paths.len() - 1
            }
        };
        format_ident!("arg_{}", i)
    }

    /// The lookup expression for local `i`, over `args: &Map<String, Value>`.
    pub fn lookup(&self, i: usize) -> TokenStream {
        let Some(segments) = self.paths.get(i) else {
            return quote!(::core::option::Option::None);
        };
        let mut iter = segments.iter();
        let mut ts = match iter.next() {
            Some(first) => quote!(args.get(#first)),
            None => quote!(::core::option::Option::None),
        };
        let rt = self.rt;
        for seg in iter {
            ts = quote!(#rt::json::member(#ts, #seg));
        }
        ts
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
                Cond::Present(path) => {
                    let l = self.local(path);
                    Code::Atom(quote!(#l.is_none()))
                }
                other => negate(self.cond(other)),
            },
            Cond::Present(path) => {
                let l = self.local(path);
                Code::Atom(quote!(#l.is_some()))
            }
            Cond::Test(path, pred) if let Some(strings) = string_choices(pred) => {
                let l = self.local(path);
                let rt = self.rt;
                Code::Atom(quote!(::core::matches!(
                    #rt::json::as_str(#l),
                    ::core::option::Option::Some(#(#strings)|*)
                )))
            }
            Cond::Test(path, pred) => match self.pred(pred) {
                Code::Const(false) => Code::Const(false),
                Code::Const(true) => {
                    let l = self.local(path);
                    Code::Atom(quote!(#l.is_some()))
                }
                Code::Atom(body) | Code::And(body) | Code::Or(body) => {
                    // A pattern, not a closure: one closure per test would be
                    // a type (and a function) of its own for the compiler.
                    let l = self.local(path);
                    Code::Atom(quote!(
                        ::core::matches!(#l, ::core::option::Option::Some(v) if #body)
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
        let rt = self.rt;
        match &pred.kind {
            PredKind::Const(c) => const_check(rt, c),
            PredKind::Enum(values) => {
                let strings = distinct_strings(values.iter().filter_map(Value::as_str));
                let mut parts = Vec::new();
                if !strings.is_empty() {
                    parts.push(Code::Atom(quote!(
                        ::core::matches!(v.as_str(), ::core::option::Option::Some(#(#strings)|*))
                    )));
                }
                parts.extend(
                    values
                        .iter()
                        .filter(|v| !v.is_string())
                        .map(|c| const_check(rt, c)),
                );
                join(parts, false)
            }
            PredKind::Type(types) => {
                let parts = types.iter().map(|t| type_check(rt, t)).collect();
                join(parts, false)
            }
            PredKind::Pattern(re) => match literal_pattern(re) {
                Some(lit) => lit.code(rt),
                None => {
                    let i = match self.regexes.iter().position(|r| r == re) {
                        Some(i) => i,
                        None => {
                            self.regexes.push(re.clone());
                            self.regexes.len() - 1
                        }
                    };
                    let name = format_ident!("RE_{}", i);
                    Code::Atom(quote!(#name.matches(v)))
                }
            },
            PredKind::MinLength(0) => Code::Const(true),
            PredKind::MinLength(n) => {
                let n = Literal::u64_unsuffixed(*n);
                Code::Atom(quote!(#rt::json::min_length(v, #n)))
            }
            PredKind::MaxLength(n) => {
                let n = Literal::u64_unsuffixed(*n);
                Code::Atom(quote!(#rt::json::max_length(v, #n)))
            }
            PredKind::Minimum(n) => bound(rt, "minimum", n),
            PredKind::Maximum(n) => bound(rt, "maximum", n),
            PredKind::ExclusiveMinimum(n) => bound(rt, "exclusive_minimum", n),
            PredKind::ExclusiveMaximum(n) => bound(rt, "exclusive_maximum", n),
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
            PredKind::MinItems(n) => {
                let n = Literal::u64_unsuffixed(*n);
                Code::Atom(quote!(#rt::json::min_items(v, #n)))
            }
            PredKind::MaxItems(n) => {
                let n = Literal::u64_unsuffixed(*n);
                Code::Atom(quote!(#rt::json::max_items(v, #n)))
            }
            PredKind::Items(inner) => match self.pred(inner) {
                Code::Const(true) => Code::Const(true),
                Code::Const(false) => Code::Atom(quote!(v.as_array().is_none_or(|a| a.is_empty()))),
                body => {
                    let body = body.body();
                    Code::Atom(quote!(v.as_array().is_none_or(|a| a.iter().all(|v| #body))))
                }
            },
            PredKind::Contains(inner) => match self.pred(inner) {
                Code::Const(false) => Code::Atom(quote!(!v.is_array())),
                Code::Const(true) => Code::Atom(quote!(v.as_array().is_none_or(|a| !a.is_empty()))),
                body => {
                    let body = body.body();
                    Code::Atom(quote!(v.as_array().is_none_or(|a| a.iter().any(|v| #body))))
                }
            },
            PredKind::Properties(ps) => {
                let mut parts = Vec::new();
                for (key, p) in ps {
                    parts.push(match self.pred(p) {
                        Code::Const(true) => Code::Const(true),
                        Code::Const(false) => Code::Atom(quote!(v.get(#key).is_none())),
                        body => {
                            let body = body.body();
                            Code::Atom(quote!(v.get(#key).is_none_or(|v| #body)))
                        }
                    });
                }
                join(parts, true)
            }
            PredKind::Required(keys) if keys.is_empty() => Code::Const(true),
            PredKind::Required(keys) => Code::Atom(quote!(#rt::json::has_keys(v, &[#(#keys),*]))),
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
    let mut kept = Vec::new();
    for part in parts {
        match part {
            // `x && false` / `x || true`: the whole is that constant.
            Code::Const(b) if b != and => return Code::Const(b),
            Code::Const(_) => {}
            // `x || x` is `x` (and clippy's `eq_op` would reject it).
            other if kept.iter().any(|k| same(k, &other)) => {}
            other => kept.push(other),
        }
    }
    match kept.len() {
        0 => Code::Const(and),
        1 => kept.pop().unwrap_or(Code::Const(and)),
        _ => {
            let operands: Vec<TokenStream> = kept
                .into_iter()
                .map(|c| match c {
                    // Same operator: no parentheses needed.
                    Code::And(ts) if and => ts,
                    Code::Or(ts) if !and => ts,
                    other => other.operand(),
                })
                .collect();
            if and {
                Code::And(quote!(#(#operands)&&*))
            } else {
                Code::Or(quote!(#(#operands)||*))
            }
        }
    }
}

fn same(a: &Code, b: &Code) -> bool {
    match (a, b) {
        (Code::Atom(x), Code::Atom(y))
        | (Code::And(x), Code::And(y))
        | (Code::Or(x), Code::Or(y)) => x.to_string() == y.to_string(),
        _ => false,
    }
}

fn negate(code: Code) -> Code {
    match code {
        Code::Const(b) => Code::Const(!b),
        other => {
            let ts = other.operand();
            Code::Atom(quote!(!#ts))
        }
    }
}

fn type_check(rt: &TokenStream, t: &str) -> Code {
    Code::Atom(match t {
        "null" => quote!(v.is_null()),
        "boolean" => quote!(v.is_boolean()),
        "string" => quote!(v.is_string()),
        "array" => quote!(v.is_array()),
        "object" => quote!(v.is_object()),
        "number" => quote!(v.is_number()),
        "integer" => quote!(#rt::json::is_integer(v)),
        _ => return Code::Const(false),
    })
}

fn const_check(rt: &TokenStream, c: &Value) -> Code {
    Code::Atom(match c {
        Value::Null => quote!(v.is_null()),
        Value::Bool(b) => quote!(::core::matches!(v, #rt::serde_json::Value::Bool(#b))),
        Value::String(s) => {
            quote!(::core::matches!(v.as_str(), ::core::option::Option::Some(#s)))
        }
        Value::Number(n) => {
            let n = num(rt, n);
            quote!(#rt::json::number_equals(v, #n))
        }
        Value::Array(_) | Value::Object(_) => {
            let c = const_value(rt, c);
            quote!(#c.matches(v))
        }
    })
}

/// A value as a `json::Const` expression (promoted to a `'static` constant).
fn const_value(rt: &TokenStream, c: &Value) -> TokenStream {
    match c {
        Value::Null => quote!(#rt::json::Const::Null),
        Value::Bool(b) => quote!(#rt::json::Const::Bool(#b)),
        Value::Number(n) => {
            let n = num(rt, n);
            quote!(#rt::json::Const::Num(#n))
        }
        Value::String(s) => quote!(#rt::json::Const::Str(#s)),
        Value::Array(items) => {
            let items = items.iter().map(|i| const_value(rt, i));
            quote!(#rt::json::Const::Array(&[#(#items),*]))
        }
        Value::Object(map) => {
            let fields = map.iter().map(|(k, v)| {
                let v = const_value(rt, v);
                quote!((#k, #v))
            });
            quote!(#rt::json::Const::Object(&[#(#fields),*]))
        }
    }
}

fn bound(rt: &TokenStream, keyword: &str, n: &Number) -> Code {
    let f = format_ident!("{}", keyword);
    let n = num(rt, n);
    Code::Atom(quote!(#rt::json::#f(v, #n)))
}

/// A number as a `json::Num` expression, exactly.
pub(super) fn num(rt: &TokenStream, n: &Number) -> TokenStream {
    use mcp_resolve_runtime::json::Num;
    match Num::of(n) {
        Num::Int(i64::MIN) => quote!(#rt::json::Num::Int(i64::MIN)),
        Num::Int(i) if i < 0 => {
            let lit = Literal::i64_unsuffixed(i.unsigned_abs() as i64);
            quote!(#rt::json::Num::Int(-#lit))
        }
        Num::Int(i) => {
            let lit = Literal::i64_unsuffixed(i);
            quote!(#rt::json::Num::Int(#lit))
        }
        Num::UInt(u) => {
            let lit = Literal::u64_unsuffixed(u);
            quote!(#rt::json::Num::UInt(#lit))
        }
        Num::Float(f) if f.is_sign_negative() => {
            let lit = Literal::f64_unsuffixed(-f);
            quote!(#rt::json::Num::Float(-#lit))
        }
        Num::Float(f) => {
            let lit = Literal::f64_unsuffixed(f);
            quote!(#rt::json::Num::Float(#lit))
        }
    }
}

/// A pattern that is a plain literal, optionally anchored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LiteralPattern {
    pub start: bool,
    pub text: String,
    pub end: bool,
}

impl LiteralPattern {
    /// The check over `v` (non-strings pass, as for `pattern`).
    fn code(&self, rt: &TokenStream) -> Code {
        let text = &self.text;
        let test = match (self.start, self.end) {
            (true, true) => quote!(str_is),
            _ if text.is_empty() => return Code::Const(true),
            (true, false) => quote!(str_starts_with),
            (false, true) => quote!(str_ends_with),
            (false, false) => quote!(str_contains),
        };
        Code::Atom(quote!(#rt::json::#test(v, #text)))
    }
}

/// Recognizes `text`, `^text`, `text$` and `^text$` (after parsing, so
/// escapes and classes of one character count as literal text).
pub(crate) fn literal_pattern(pattern: &str) -> Option<LiteralPattern> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .ok()?;
    let parts: Vec<&Hir> = match hir.kind() {
        HirKind::Concat(hs) => hs.iter().collect(),
        _ => vec![&hir],
    };
    let mut lit = LiteralPattern {
        start: false,
        text: String::new(),
        end: false,
    };
    let mut bytes = Vec::new();
    let last = parts.len().saturating_sub(1);
    for (i, part) in parts.iter().enumerate() {
        match part.kind() {
            HirKind::Look(Look::Start) if i == 0 => lit.start = true,
            HirKind::Look(Look::End) if i == last => lit.end = true,
            HirKind::Literal(l) if !lit.end => bytes.extend_from_slice(&l.0),
            HirKind::Empty => {}
            _ => return None,
        }
    }
    lit.text = String::from_utf8(bytes).ok()?;
    Some(lit)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(start: bool, text: &str, end: bool) -> Option<LiteralPattern> {
        Some(LiteralPattern {
            start,
            text: text.into(),
            end,
        })
    }

    #[test]
    fn literal_patterns_are_recognized_exactly() {
        assert_eq!(literal_pattern("^src/"), lit(true, "src/", false));
        assert_eq!(literal_pattern(r"\.rs$"), lit(false, ".rs", true));
        assert_eq!(literal_pattern(r"^a\.b$"), lit(true, "a.b", true));
        assert_eq!(literal_pattern("abc"), lit(false, "abc", false));
        assert_eq!(literal_pattern("^"), lit(true, "", false));
        assert_eq!(literal_pattern(""), lit(false, "", false));
        assert_eq!(literal_pattern("é"), lit(false, "é", false));
        assert_eq!(
            literal_pattern(&regex::escape("a*/\"{}")),
            lit(false, "a*/\"{}", false)
        );
        for not_literal in [
            "a.b", "^a|b", "(?i)abc", "a+", "^a$b", "a^", "(?m)^a", "[ab]",
        ] {
            assert_eq!(literal_pattern(not_literal), None, "{not_literal}");
        }
    }
}

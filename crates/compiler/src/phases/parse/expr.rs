//! The expression front end: text (a YAML `when:` string or a `.rules`
//! `when` clause) to an [`Expr`] with file spans, and back to canonical text.

// A parse fails once, with one diagnostic: its size does not matter.
#![allow(clippy::result_large_err)]

use std::fmt::{self, Write as _};

use pest::Parser as _;
use pest::iterators::Pair;

use super::grammar::{self, Grammar, OffsetMap, Rule};
use crate::ast::{Expr, ExprKind, Lit, RelOp};
use crate::diagnostic::{Code, Diagnostic};
use crate::source::{FileId, Span, Spanned};

/// `!`, `-` and `.field` may repeat this often in a row (they nest the tree).
pub const MAX_CHAIN: usize = 64;

/// Parses a whole expression. `map` turns offsets in `text` into offsets in
/// the file, so that errors point into a YAML string where it was written.
pub fn parse_expression(text: &str, file: FileId, map: OffsetMap<'_>) -> Result<Expr, Diagnostic> {
    grammar::set_limits();
    grammar::check_nesting(text, grammar::MAX_EXPR_NESTING, file, map)?;
    let mut pairs = Grammar::parse(Rule::expression, text)
        .map_err(|e| grammar::syntax_error(&e, text, file, map))?;
    let top = pairs
        .next()
        .and_then(|p| p.into_inner().next())
        .ok_or_else(|| {
            Diagnostic::new(Code::Syntax, "empty expression").at(Span::new(file, map(0), map(0)))
        })?;
    Builder { file, map }.expr(top)
}

/// Turns pest pairs into [`Expr`]; shared with the `.rules` front end.
pub struct Builder<'m> {
    /// The file.
    pub file: FileId,
    /// Offsets in the parsed text to offsets in the file.
    pub map: OffsetMap<'m>,
}

impl Builder<'_> {
    /// The file span of a pair.
    pub fn span(&self, pair: &Pair<'_, Rule>) -> Span {
        let s = pair.as_span();
        Span::new(self.file, (self.map)(s.start()), (self.map)(s.end()))
    }

    fn error(&self, pair: &Pair<'_, Rule>, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(Code::Syntax, message).at(self.span(pair))
    }

    /// Builds an `expr` pair.
    #[expect(
        clippy::too_many_lines,
        reason = "one arm per grammar rule of an expression, as the grammar lists them"
    )]
    pub fn expr(&self, pair: Pair<'_, Rule>) -> Result<Expr, Diagnostic> {
        let span = self.span(&pair);
        match pair.as_rule() {
            Rule::expr | Rule::and_expr => {
                let is_or = pair.as_rule() == Rule::expr;
                let mut parts = Vec::new();
                for p in pair.into_inner() {
                    if !matches!(p.as_rule(), Rule::or_op | Rule::and_op) {
                        parts.push(self.expr(p)?);
                    }
                }
                Ok(if parts.len() == 1 {
                    parts
                        .pop()
                        .ok_or_else(|| Diagnostic::new(Code::Syntax, "empty").at(span))?
                } else if is_or {
                    Expr {
                        kind: ExprKind::Or(parts),
                        span,
                    }
                } else {
                    Expr {
                        kind: ExprKind::And(parts),
                        span,
                    }
                })
            }
            Rule::relation => {
                let mut inner = pair.into_inner();
                let first = inner
                    .next()
                    .ok_or_else(|| Diagnostic::new(Code::Syntax, "empty relation").at(span))?;
                let lhs = self.expr(first)?;
                let mut rest = Vec::new();
                while let Some(op) = inner.next() {
                    let op_span = self.span(&op);
                    let op = match op.as_str() {
                        "==" => RelOp::Eq,
                        "!=" => RelOp::Ne,
                        "<" => RelOp::Lt,
                        "<=" => RelOp::Le,
                        ">" => RelOp::Gt,
                        ">=" => RelOp::Ge,
                        _ => RelOp::In,
                    };
                    let Some(rhs) = inner.next() else { break };
                    rest.push((op, op_span, self.expr(rhs)?));
                }
                Ok(if rest.is_empty() {
                    lhs
                } else {
                    Expr {
                        kind: ExprKind::Rel(Box::new(lhs), rest),
                        span,
                    }
                })
            }
            Rule::unary => {
                let mut ops = Vec::new();
                let mut operand = None;
                for p in pair.into_inner() {
                    match p.as_rule() {
                        Rule::not_op | Rule::neg_op => ops.push(p),
                        _ => operand = Some(p),
                    }
                }
                if ops.len() > MAX_CHAIN {
                    return Err(self.error(
                        &ops[MAX_CHAIN],
                        format!("more than {MAX_CHAIN} `!` or `-` in a row"),
                    ));
                }
                let operand = operand
                    .ok_or_else(|| Diagnostic::new(Code::Syntax, "missing operand").at(span))?;
                let mut e = self.expr(operand)?;
                for op in ops.iter().rev() {
                    let span = Span::new(self.file, self.span(op).start, e.span.end);
                    let kind = if op.as_rule() == Rule::not_op {
                        ExprKind::Not(Box::new(e))
                    } else {
                        ExprKind::Neg(Box::new(e))
                    };
                    e = Expr { kind, span };
                }
                Ok(e)
            }
            Rule::member => {
                let mut inner = pair.into_inner();
                let first = inner
                    .next()
                    .ok_or_else(|| Diagnostic::new(Code::Syntax, "empty member").at(span))?;
                let mut e = self.expr(first)?;
                for (n, suffix) in inner.enumerate() {
                    if n >= MAX_CHAIN {
                        return Err(
                            self.error(&suffix, format!("more than {MAX_CHAIN} `.` in a row"))
                        );
                    }
                    let mut parts = suffix.into_inner();
                    let name = match parts.next() {
                        Some(id) => self.ident(id)?,
                        None => return Err(Diagnostic::new(Code::Syntax, "missing name").at(span)),
                    };
                    // The suffix's own span can take in the blanks before an
                    // absent argument list; end at the name or the arguments.
                    let args = parts.next();
                    let end = args.as_ref().map_or(name.span.end, |a| self.span(a).end);
                    let whole = Span::new(self.file, e.span.start, end);
                    e = match args {
                        Some(args) => Expr {
                            kind: ExprKind::Call {
                                receiver: Some(Box::new(e)),
                                name,
                                args: self.list(args)?,
                            },
                            span: whole,
                        },
                        None => Expr {
                            kind: ExprKind::Select(Box::new(e), name),
                            span: whole,
                        },
                    };
                }
                Ok(e)
            }
            Rule::primary | Rule::paren => {
                let inner = pair
                    .into_inner()
                    .next()
                    .ok_or_else(|| Diagnostic::new(Code::Syntax, "empty expression").at(span))?;
                self.expr(inner)
            }
            Rule::global_call => {
                let mut inner = pair.into_inner();
                let (Some(name), Some(args)) = (inner.next(), inner.next()) else {
                    return Err(Diagnostic::new(Code::Syntax, "malformed call").at(span));
                };
                let name = Spanned::new(name.as_str().to_string(), self.span(&name));
                Ok(Expr {
                    kind: ExprKind::Call {
                        receiver: None,
                        name,
                        args: self.list(args)?,
                    },
                    span,
                })
            }
            Rule::ident => {
                let id = self.ident(pair)?;
                Ok(Expr {
                    kind: ExprKind::Ident(id.value),
                    span,
                })
            }
            Rule::list => Ok(Expr {
                kind: ExprKind::List(self.list(pair)?),
                span,
            }),
            Rule::map => {
                let mut entries = Vec::new();
                for entry in pair.into_inner() {
                    let mut kv = entry.into_inner();
                    let (Some(k), Some(v)) = (kv.next(), kv.next()) else {
                        return Err(Diagnostic::new(Code::Syntax, "malformed map entry").at(span));
                    };
                    entries.push((self.expr(k)?, self.expr(v)?));
                }
                Ok(Expr {
                    kind: ExprKind::Map(entries),
                    span,
                })
            }
            Rule::literal => {
                let inner = pair
                    .into_inner()
                    .next()
                    .ok_or_else(|| Diagnostic::new(Code::Syntax, "empty literal").at(span))?;
                Ok(Expr {
                    kind: ExprKind::Lit(self.literal(inner)?),
                    span,
                })
            }
            other => Err(Diagnostic::new(Code::Syntax, format!("unexpected {other:?}")).at(span)),
        }
    }

    fn list(&self, pair: Pair<'_, Rule>) -> Result<Vec<Expr>, Diagnostic> {
        pair.into_inner().map(|p| self.expr(p)).collect()
    }

    fn ident(&self, pair: Pair<'_, Rule>) -> Result<Spanned<String>, Diagnostic> {
        let span = self.span(&pair);
        let text = pair.as_str();
        let Some(quoted) = text.strip_prefix('`').and_then(|t| t.strip_suffix('`')) else {
            return Ok(Spanned::new(text.to_string(), span));
        };
        let offset = pair.as_span().start() + 1;
        let name = decode_escapes(quoted).map_err(|(at, len, message)| {
            let start = (self.map)(offset + at);
            Diagnostic::new(Code::Syntax, message.replace("a string", "a quoted name")).at(
                Span::new(self.file, start, (self.map)(offset + at + len).max(start)),
            )
        })?;
        Ok(Spanned::new(name, span))
    }

    fn literal(&self, pair: Pair<'_, Rule>) -> Result<Lit, Diagnostic> {
        let text = pair.as_str();
        match pair.as_rule() {
            Rule::null_lit => Ok(Lit::Null),
            Rule::bool_lit => Ok(Lit::Bool(text == "true")),
            Rule::float => text
                .parse::<f64>()
                .ok()
                .filter(|f| f.is_finite())
                .map(Lit::Float)
                .ok_or_else(|| self.error(&pair, format!("`{text}` is not a finite number"))),
            Rule::int => {
                if text.ends_with(['u', 'U']) {
                    return Err(self
                        .error(&pair, "unsigned literals (`1u`) are not supported")
                        .with_help("arguments are JSON numbers: write the number without `u`"));
                }
                let parsed = match text.strip_prefix("0x").or_else(|| text.strip_prefix("0X")) {
                    Some(hex) => u64::from_str_radix(hex, 16),
                    None => text.parse::<u64>(),
                };
                parsed
                    .map(Lit::Int)
                    .map_err(|_| self.error(&pair, format!("integer `{text}` is out of range")))
            }
            Rule::string => self.string(pair).map(Lit::Str),
            other => Err(self.error(&pair, format!("unexpected {other:?}"))),
        }
    }

    /// Decodes a `string` pair (CEL quoting and escapes).
    pub fn string(&self, pair: Pair<'_, Rule>) -> Result<String, Diagnostic> {
        let mut raw = false;
        let mut body = None;
        for p in pair.clone().into_inner() {
            match p.as_rule() {
                Rule::raw_prefix if p.as_str().contains(['b', 'B']) => {
                    return Err(self
                        .error(&p, "bytes literals (`b\"…\"`) are not supported")
                        .with_help("arguments are JSON values: use a string"));
                }
                Rule::raw_prefix => raw = true,
                Rule::bytes_prefix => {
                    return Err(self
                        .error(&p, "bytes literals (`b\"…\"`) are not supported")
                        .with_help("arguments are JSON values: use a string"));
                }
                Rule::raw_body | Rule::string_body => body = Some(p),
                _ => {}
            }
        }
        let Some(body) = body else {
            return Err(self.error(&pair, "malformed string"));
        };
        let text = body.as_str();
        let quote = if text.starts_with("\"\"\"") || text.starts_with("'''") {
            3
        } else {
            1
        };
        let inner = &text[quote..text.len().saturating_sub(quote).max(quote)];
        let offset = body.as_span().start() + quote;
        if raw {
            return Ok(inner.to_string());
        }
        decode_escapes(inner).map_err(|(at, len, message)| {
            let start = (self.map)(offset + at);
            Diagnostic::new(Code::Syntax, message).at(Span::new(
                self.file,
                start,
                (self.map)(offset + at + len).max(start),
            ))
        })
    }
}

/// Decodes CEL escapes; on error, the byte offset and length of the escape.
fn decode_escapes(s: &str) -> Result<String, (usize, usize, String)> {
    let mut out = String::with_capacity(s.len());
    let mut chars = s.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        if c != '\\' {
            out.push(c);
            continue;
        }
        let Some((_, e)) = chars.next() else {
            return Err((i, 1, "a string cannot end with `\\`".into()));
        };
        let simple = match e {
            'a' => Some('\u{7}'),
            'b' => Some('\u{8}'),
            'f' => Some('\u{c}'),
            'n' => Some('\n'),
            'r' => Some('\r'),
            't' => Some('\t'),
            'v' => Some('\u{b}'),
            '\\' | '\'' | '"' | '`' | '?' => Some(e),
            _ => None,
        };
        if let Some(ch) = simple {
            out.push(ch);
            continue;
        }
        let (digits, radix) = match e {
            'x' | 'X' => (2, 16),
            'u' => (4, 16),
            'U' => (8, 16),
            '0'..='3' => (2, 8),
            _ => {
                return Err((i, 1 + e.len_utf8(), format!("unknown escape `\\{e}`")));
            }
        };
        let mut value: u32 = if radix == 8 {
            e.to_digit(8).unwrap_or(0)
        } else {
            0
        };
        let mut len = 2;
        for _ in 0..digits {
            match chars.peek().and_then(|(_, d)| d.to_digit(radix)) {
                Some(d) => {
                    value = value * radix + d;
                    chars.next();
                    len += 1;
                }
                None => {
                    return Err((
                        i,
                        len,
                        format!("escape `{}` needs {digits} more digits", &s[i..i + len]),
                    ));
                }
            }
        }
        match char::from_u32(value) {
            Some(ch) => out.push(ch),
            None => {
                return Err((
                    i,
                    len,
                    format!("`{}` is not a Unicode scalar value", &s[i..i + len]),
                ));
            }
        }
    }
    Ok(out)
}

/// Writes a string literal canonically: double quotes, escapes for `"`, `\`
/// and control characters, `\u` for the separators, the byte-order mark and
/// U+FFFE/U+FFFF, everything else as is. The same text is a CEL and `.rules`
/// string, a JSON string and a YAML double-quoted scalar (which allows none
/// of the escaped characters raw).
pub fn write_string(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control()
                || matches!(
                    c,
                    '\u{2028}' | '\u{2029}' | '\u{feff}' | '\u{fffe}' | '\u{ffff}'
                ) =>
            {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A float literal that reads back as the same `f64` and as a float.
pub fn float_text(f: f64) -> String {
    let s = format!("{f:?}");
    if s.contains(['.', 'e', 'E']) {
        s
    } else {
        format!("{s}.0")
    }
}

/// An identifier as written: backticks unless it is a plain CEL identifier.
pub fn ident_text(name: &str) -> String {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !RESERVED.contains(&name);
    if plain {
        return name.to_string();
    }
    let mut out = String::with_capacity(name.len() + 2);
    out.push('`');
    for c in name.chars() {
        match c {
            '`' => out.push_str("\\`"),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c.is_control() => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('`');
    out
}

/// Words that are not identifiers in CEL.
pub const RESERVED: &[&str] = &[
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// Binding strength, loosest first; used to parenthesize minimally.
fn level(e: &Expr) -> u8 {
    match e.kind {
        ExprKind::Or(_) => 1,
        ExprKind::And(_) => 2,
        ExprKind::Rel(..) => 3,
        ExprKind::Not(_) | ExprKind::Neg(_) => 4,
        _ => 5,
    }
}

impl fmt::Display for Expr {
    /// The canonical text: single spaces around binary operators, minimal
    /// parentheses (but a nested `&&` in `&&` keeps them, as written).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut out = String::new();
        write_expr(&mut out, self);
        f.write_str(&out)
    }
}

fn write_child(out: &mut String, e: &Expr, min_level: u8) {
    if level(e) < min_level {
        out.push('(');
        write_expr(out, e);
        out.push(')');
    } else {
        write_expr(out, e);
    }
}

fn write_expr(out: &mut String, e: &Expr) {
    match &e.kind {
        ExprKind::Or(parts) | ExprKind::And(parts) => {
            let (op, min) = if matches!(e.kind, ExprKind::Or(_)) {
                (" || ", 2)
            } else {
                (" && ", 3)
            };
            for (i, p) in parts.iter().enumerate() {
                if i > 0 {
                    out.push_str(op);
                }
                write_child(out, p, min);
            }
        }
        ExprKind::Not(inner) => {
            out.push('!');
            let mixed = matches!(inner.kind, ExprKind::Neg(_));
            write_child(out, inner, if mixed { 5 } else { 4 });
        }
        ExprKind::Neg(inner) => {
            out.push('-');
            let mixed = matches!(inner.kind, ExprKind::Not(_));
            write_child(out, inner, if mixed { 5 } else { 4 });
        }
        ExprKind::Rel(lhs, rest) => {
            write_child(out, lhs, 4);
            for (op, _, rhs) in rest {
                out.push(' ');
                out.push_str(op.as_str());
                out.push(' ');
                write_child(out, rhs, 4);
            }
        }
        ExprKind::Ident(name) => out.push_str(&ident_text(name)),
        ExprKind::Select(base, name) => {
            write_child(out, base, 5);
            out.push('.');
            out.push_str(&ident_text(&name.value));
        }
        ExprKind::Call {
            receiver,
            name,
            args,
        } => {
            if let Some(r) = receiver {
                write_child(out, r, 5);
                out.push('.');
            }
            out.push_str(&name.value);
            write_list(out, '(', args, ')');
        }
        ExprKind::Lit(lit) => write_lit(out, lit),
        ExprKind::List(items) => {
            write_list(out, '[', items, ']');
        }
        ExprKind::Map(entries) => {
            out.push('{');
            for (i, (k, v)) in entries.iter().enumerate() {
                if i > 0 {
                    out.push_str(", ");
                }
                write_expr(out, k);
                out.push_str(": ");
                write_expr(out, v);
            }
            out.push('}');
        }
    }
}

fn write_list(out: &mut String, open: char, items: &[Expr], close: char) {
    out.push(open);
    for (i, a) in items.iter().enumerate() {
        if i > 0 {
            out.push_str(", ");
        }
        write_expr(out, a);
    }
    out.push(close);
}

fn write_lit(out: &mut String, lit: &Lit) {
    match lit {
        Lit::Null => out.push_str("null"),
        Lit::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Lit::Int(n) => {
            let _ = write!(out, "{n}");
        }
        Lit::Float(x) => out.push_str(&float_text(*x)),
        Lit::Str(s) => write_string(out, s),
    }
}

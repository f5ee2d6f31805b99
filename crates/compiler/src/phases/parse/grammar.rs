//! The pest grammars of `crates/compiler/grammar/` and what the two text front ends share:
//! turning a pest error into a diagnostic, and the nesting limit that keeps
//! the recursive-descent parser's stack bounded on hostile input.

// A parse fails once, with one diagnostic: its size does not matter.
#![allow(clippy::result_large_err)]

use std::num::NonZeroUsize;
use std::sync::Once;

use pest_derive::Parser;

use crate::diagnostic::{Code, Diagnostic};
use crate::source::{FileId, Span};

/// The parser generated from `crates/compiler/grammar/expr.pest` and `crates/compiler/grammar/rules.pest`.
#[derive(Parser)]
#[grammar = "../grammar/expr.pest"]
#[grammar = "../grammar/rules.pest"]
pub struct Grammar;

/// Brackets (`(`, `[`, `{`) may nest this deep in an expression. pest
/// descends recursively, several rules per level; this bound keeps a parse
/// well inside a 2 MiB thread stack, even unoptimized.
pub const MAX_EXPR_NESTING: usize = 32;

/// Brackets may nest this deep in a `.rules` file (inline JSON included).
pub const MAX_FILE_NESTING: usize = 64;

/// Bounds pest's work on any one input (it counts rule calls), once per
/// process. With [`MAX_NESTING`] and the file size limit this is never
/// reached by a real file; it turns pathological backtracking into an error.
pub fn set_limits() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| pest::set_call_limit(NonZeroUsize::new(200_000_000)));
}

/// Maps an offset in the parsed text to an offset in the file.
pub type OffsetMap<'a> = &'a dyn Fn(usize) -> usize;

/// Refuses text that nests brackets deeper than `max`, skipping string
/// literals (CEL and JSON quoting) and `//` comments.
pub fn check_nesting(
    text: &str,
    max: usize,
    file: FileId,
    map: OffsetMap<'_>,
) -> Result<(), Diagnostic> {
    let bytes = text.as_bytes();
    let mut depth = 0usize;
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'(' | b'[' | b'{' => {
                depth += 1;
                if depth > max {
                    return Err(Diagnostic::new(
                        Code::Syntax,
                        format!("brackets nest more than {max} deep"),
                    )
                    .at(Span::new(file, map(i), map(i + 1)))
                    .with_help("split the condition, or flatten the schema"));
                }
            }
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' | b'`' => {
                i = skip_quoted(bytes, i);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    Ok(())
}

/// The offset just past the quoted string (CEL or JSON quoting, or a
/// backticked name) that starts at `i`; at most to the end of its line
/// unless triple-quoted.
pub fn skip_quoted(bytes: &[u8], mut i: usize) -> usize {
    let q = bytes[i];
    let triple = q != b'`' && bytes.get(i + 1) == Some(&q) && bytes.get(i + 2) == Some(&q);
    let raw = i > 0 && matches!(bytes[i - 1], b'r' | b'R');
    i += if triple { 3 } else { 1 };
    while i < bytes.len() {
        if bytes[i] == b'\\' && !raw {
            i += 2;
            continue;
        }
        if bytes[i] == q
            && (!triple || (bytes.get(i + 1) == Some(&q) && bytes.get(i + 2) == Some(&q)))
        {
            return i + if triple { 3 } else { 1 };
        }
        if bytes[i] == b'\n' && !triple {
            break;
        }
        i += 1;
    }
    i.min(bytes.len())
}

/// A pest error as a `syntax` diagnostic at the right place in the file.
pub fn syntax_error(
    err: &pest::error::Error<Rule>,
    text: &str,
    file: FileId,
    map: OffsetMap<'_>,
) -> Diagnostic {
    use pest::error::{ErrorVariant, InputLocation};
    let pos = match err.location {
        InputLocation::Pos(p) => p,
        InputLocation::Span((s, _)) => s,
    };
    let found = token_at(text, pos);
    let span = Span::new(file, map(pos), map(pos + found.len().max(1)).max(map(pos)));
    let found_text = if found.is_empty() {
        "end of input".to_string()
    } else {
        format!("`{found}`")
    };
    match &err.variant {
        ErrorVariant::ParsingError { positives, .. } => {
            let mut expected: Vec<&str> = positives.iter().filter_map(|r| describe(*r)).collect();
            expected.sort_unstable();
            expected.dedup();
            let message = if expected.is_empty() {
                format!("unexpected {found_text}")
            } else {
                format!("expected {}, found {found_text}", one_of(&expected))
            };
            let mut d = Diagnostic::new(Code::Syntax, message).at(span);
            if found.starts_with(['"', '\''])
                && !found.ends_with(found.chars().next().unwrap_or('"'))
            {
                d = d.with_help("this string is not closed on its line");
            } else if found.is_empty()
                && let Some((at, open)) = unclosed(&text.as_bytes()[..pos.min(text.len())])
            {
                let close = match open {
                    b'[' => ']',
                    b'(' => ')',
                    _ => '}',
                };
                d = d
                    .with_related(
                        Span::new(file, map(at), map(at + 1)),
                        format!("this `{}` is not closed", open as char),
                    )
                    .with_help(format!("close it with `{close}`"));
            }
            d
        }
        ErrorVariant::CustomError { message } => {
            Diagnostic::new(Code::Syntax, message.clone()).at(span)
        }
    }
}

/// The offset and byte of the last bracket still open at the end of
/// `bytes` (strings and `//` comments skipped), if any.
fn unclosed(bytes: &[u8]) -> Option<(usize, u8)> {
    let mut open: Vec<(usize, u8)> = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'[' | b'(' | b'{' => open.push((i, bytes[i])),
            b']' | b')' | b'}' => {
                open.pop();
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'"' | b'\'' | b'`' => {
                i = skip_quoted(bytes, i);
                continue;
            }
            _ => {}
        }
        i += 1;
    }
    open.pop()
}

/// What the user sees for a rule that was expected.
fn describe(rule: Rule) -> Option<&'static str> {
    Some(match rule {
        Rule::expr | Rule::and_expr | Rule::relation | Rule::unary | Rule::member => {
            "an expression"
        }
        Rule::primary | Rule::paren | Rule::global_call => "an expression",
        Rule::literal | Rule::float | Rule::int | Rule::null_lit => "a literal",
        Rule::bool_lit => "`true` or `false`",
        Rule::string | Rule::string_body | Rule::raw_body => "a string",
        Rule::ident | Rule::plain_ident | Rule::quoted_ident => "an argument name",
        Rule::list => "`[`",
        Rule::map => "`{`",
        Rule::suffix => "`.`",
        Rule::call_args => "`(`",
        Rule::or_op => "`||`",
        Rule::and_op => "`&&`",
        Rule::relop => "an operator",
        Rule::not_op => "`!`",
        Rule::neg_op => "`-`",
        Rule::map_entry => "a map entry",
        Rule::EOI => "end of input",
        Rule::version_item | Rule::kw_version => "`version`",
        Rule::server_item | Rule::kw_server => "`server`",
        Rule::hint_item | Rule::kw_hint => "`hint`",
        Rule::tool_item | Rule::kw_tool => "`tool`",
        Rule::title | Rule::kw_title => "`title`",
        Rule::description | Rule::kw_description => "`description`",
        Rule::input_schema | Rule::kw_input_schema => "`inputSchema`",
        Rule::input_schema_file | Rule::kw_input_schema_file => "`inputSchemaFile`",
        Rule::annotations | Rule::kw_annotations => "`annotations`",
        Rule::scopes | Rule::kw_required_scopes => "`requiredScopes`",
        Rule::resolvable | Rule::kw_resolvable => "`resolvable`",
        Rule::variant | Rule::kw_variant => "`variant`",
        Rule::when_clause | Rule::kw_when => "`when`",
        Rule::variant_body | Rule::settings => "`{`",
        Rule::setting => "a hint setting (`name: true`)",
        Rule::name | Rule::bare_name => "a name",
        Rule::json_object => "a JSON object",
        Rule::json_value | Rule::json_array | Rule::json_word | Rule::json_number => "a JSON value",
        Rule::json_string | Rule::json_pair => "a JSON string",
        _ => return None,
    })
}

fn one_of(items: &[&str]) -> String {
    match items {
        [] => String::new(),
        [one] => (*one).to_string(),
        [init @ .., last] => format!("{} or {last}", init.join(", ")),
    }
}

/// The token starting at `pos`: a word, a string's first line, or one character.
pub fn token_at(text: &str, pos: usize) -> &str {
    let Some(rest) = text.get(pos..) else {
        return "";
    };
    let Some(first) = rest.chars().next() else {
        return "";
    };
    let end = if first.is_alphanumeric() || first == '_' {
        rest.find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len())
    } else if "&|=!<>".contains(first) {
        rest.find(|c: char| !"&|=!<>".contains(c))
            .unwrap_or(rest.len())
    } else if first == '"' || first == '\'' {
        rest.find(['\n', '\r']).unwrap_or(rest.len()).min(60)
    } else {
        first.len_utf8()
    };
    let mut end = end.min(rest.len());
    while !rest.is_char_boundary(end) {
        end -= 1;
    }
    &rest[..end]
}

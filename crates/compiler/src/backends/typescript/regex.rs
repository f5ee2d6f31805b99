//! A rules `pattern` (the `regex` crate's syntax and meaning) as a
//! JavaScript regular expression with the `u` flag that matches exactly the
//! same strings.
//!
//! The pattern is parsed with `regex-syntax`, as the `regex` crate parses
//! it, and the JavaScript is written from the parsed form (its HIR), not
//! from the text: there every class is an explicit set of code points (`\d`,
//! `\w`, `(?i)` and Unicode classes already expanded the `regex` crate's
//! way), so the two engines cannot read a class differently. What is left
//! to translate is structure (concatenation, alternation, repetition, which
//! both engines share) and the zero-width assertions. Only `is_match` is
//! ever asked, so which of several matches an engine prefers does not
//! matter: the two accept the same strings when their languages are equal.
//!
//! What JavaScript has no exact counterpart for is an error naming the
//! construct: Unicode word boundaries (JavaScript's `\b` is ASCII-only),
//! CRLF-mode line anchors, and byte classes beyond ASCII.

use regex_syntax::hir::{Class, Hir, HirKind, Look};

/// Why a pattern has no exact JavaScript counterpart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotPortable {
    /// The construct, as a rules author writes it.
    pub construct: &'static str,
    /// What to write instead.
    pub help: &'static str,
}

/// The JavaScript source of `pattern` (for `new RegExp(source, "u")`), or
/// why there is none. A pattern that does not parse is not this module's
/// concern: the compiler's checks refuse it first; it is reported as
/// not portable rather than translated.
pub fn to_javascript(pattern: &str) -> Result<String, NotPortable> {
    let hir = regex_syntax::ParserBuilder::new()
        .build()
        .parse(pattern)
        .map_err(|_| NotPortable {
            construct: "a pattern the regex crate does not parse",
            help: "fix the pattern (`mcp-resolve check` says what is wrong)",
        })?;
    let mut out = String::with_capacity(pattern.len() * 2);
    write(&hir, &mut out)?;
    Ok(out)
}

/// How a target language writes the pieces of a pattern whose structure
/// (concatenation, alternation, repetition, groups) [`write_hir`] writes the
/// same way for every backtracking engine.
pub(crate) trait Syntax {
    /// One literal code point.
    fn literal(&self, c: char, out: &mut String);
    /// A class of code point ranges (possibly none).
    fn class(&self, ranges: &[(char, char)], out: &mut String);
    /// A zero-width assertion, or why the language has none.
    fn look(&self, look: Look) -> Result<String, NotPortable>;
}

struct JavaScript;

impl Syntax for JavaScript {
    fn literal(&self, c: char, out: &mut String) {
        literal_char(c, false, out);
    }

    fn class(&self, ranges: &[(char, char)], out: &mut String) {
        out.push('[');
        for &(start, end) in ranges {
            range_chars(start, end, out);
        }
        out.push(']');
    }

    fn look(&self, look: Look) -> Result<String, NotPortable> {
        look_source(look).map(str::to_string)
    }
}

fn write(hir: &Hir, out: &mut String) -> Result<(), NotPortable> {
    write_hir(hir, &JavaScript, out)
}

/// Writes `hir` in `syntax`: the structure here, the pieces by `syntax`.
pub(crate) fn write_hir(
    hir: &Hir,
    syntax: &impl Syntax,
    out: &mut String,
) -> Result<(), NotPortable> {
    match hir.kind() {
        HirKind::Empty => out.push_str("(?:)"),
        HirKind::Literal(literal) => {
            let text = std::str::from_utf8(&literal.0).map_err(|_| non_ascii_bytes())?;
            text.chars().for_each(|c| syntax.literal(c, out));
        }
        HirKind::Class(Class::Unicode(class)) => {
            let ranges: Vec<(char, char)> = class
                .ranges()
                .iter()
                .map(|r| (r.start(), r.end()))
                .collect();
            syntax.class(&ranges, out);
        }
        HirKind::Class(Class::Bytes(class)) => {
            let mut ranges = Vec::new();
            for range in class.ranges() {
                if range.end() > 0x7F {
                    return Err(non_ascii_bytes());
                }
                ranges.push((char::from(range.start()), char::from(range.end())));
            }
            syntax.class(&ranges, out);
        }
        HirKind::Look(look) => out.push_str(&syntax.look(*look)?),
        HirKind::Repetition(rep) => {
            // One atom takes a quantifier as it is; anything else in a group.
            let atom = match rep.sub.kind() {
                HirKind::Class(_) | HirKind::Alternation(_) => true,
                HirKind::Literal(l) => {
                    std::str::from_utf8(&l.0).is_ok_and(|t| t.chars().count() == 1)
                }
                HirKind::Capture(c) => matches!(c.sub.kind(), HirKind::Alternation(_)),
                _ => false,
            };
            if !atom {
                out.push_str("(?:");
            }
            write_hir(&rep.sub, syntax, out)?;
            if !atom {
                out.push(')');
            }
            match (rep.min, rep.max) {
                (0, None) => out.push('*'),
                (1, None) => out.push('+'),
                (0, Some(1)) => out.push('?'),
                (min, None) => out.push_str(&format!("{{{min},}}")),
                (min, Some(max)) if min == max => out.push_str(&format!("{{{min}}}")),
                (min, Some(max)) => out.push_str(&format!("{{{min},{max}}}")),
            }
            if !rep.greedy {
                out.push('?');
            }
        }
        // Groups only group: nothing reads a capture.
        HirKind::Capture(capture) => write_hir(&capture.sub, syntax, out)?,
        HirKind::Concat(items) => {
            for item in items {
                write_hir(item, syntax, out)?;
            }
        }
        HirKind::Alternation(items) => {
            out.push_str("(?:");
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push('|');
                }
                write_hir(item, syntax, out)?;
            }
            out.push(')');
        }
    }
    Ok(())
}

/// A zero-width assertion: JavaScript's own where it means the same (`^`
/// and `$` without the `m` flag are the input's ends in both; `\b` is
/// ASCII in JavaScript without the `i` flag, which is never set), else a
/// lookaround that does.
fn look_source(look: Look) -> Result<&'static str, NotPortable> {
    Ok(match look {
        Look::Start => "^",
        Look::End => "$",
        // `(?m)`: after `\n` only (JavaScript's `m` also counts `\r`,
        // U+2028 and U+2029).
        Look::StartLF => "(?<![^\\n])",
        Look::EndLF => "(?![^\\n])",
        Look::WordAscii => "\\b",
        Look::WordAsciiNegate => "\\B",
        Look::WordStartAscii => "\\b(?=[0-9A-Z_a-z])",
        Look::WordEndAscii => "\\b(?<=[0-9A-Z_a-z])",
        Look::StartCRLF | Look::EndCRLF => {
            return Err(NotPortable {
                construct: "a CRLF-mode line anchor (`(?Rm)`)",
                help: "use `(?m)` (lines end at `\\n`) or match `\\r?\\n` explicitly",
            });
        }
        Look::WordUnicode | Look::WordUnicodeNegate => {
            return Err(NotPortable {
                construct: "a Unicode word boundary (`\\b` or `\\B`; JavaScript's are ASCII-only)",
                help: "write `(?-u:\\b)` for an ASCII word boundary, or match the separators explicitly",
            });
        }
        _ => {
            return Err(NotPortable {
                construct: "a Unicode or half word boundary (`\\<`, `\\>`, `\\b{start}`, `\\b{end}`, `\\b{start-half}`, `\\b{end-half}`)",
                help: "write `(?-u:\\b)` for an ASCII word boundary, or match the separators explicitly",
            });
        }
    })
}

fn non_ascii_bytes() -> NotPortable {
    NotPortable {
        construct: "a byte class or literal beyond ASCII (`(?-u:...)`)",
        help: "match characters, not bytes: drop the `-u` flag",
    }
}

/// One code point: printable ASCII as itself (a syntax character behind a
/// backslash, and `-` too inside a class), anything else as `\u{…}`, which
/// the `u` flag reads as that code point in and out of classes.
fn literal_char(c: char, in_class: bool, out: &mut String) {
    match c {
        '^' | '$' | '\\' | '.' | '*' | '+' | '?' | '(' | ')' | '[' | ']' | '{' | '}' | '|'
        | '/' => {
            out.push('\\');
            out.push(c);
        }
        '-' if in_class => out.push_str("\\-"),
        ' '..='~' => out.push(c),
        _ => out.push_str(&format!("\\u{{{:X}}}", u32::from(c))),
    }
}

fn range_chars(start: char, end: char, out: &mut String) {
    literal_char(start, true, out);
    if end != start {
        out.push('-');
        literal_char(end, true, out);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structure_and_classes_translate() {
        assert_eq!(to_javascript("^ab$").unwrap(), "^ab$");
        assert_eq!(to_javascript("a|b+").unwrap(), "(?:a|b+)");
        assert_eq!(to_javascript("[a-c]{2,3}?").unwrap(), "[a-c]{2,3}?");
        assert_eq!(to_javascript("(ab)*").unwrap(), "(?:ab)*");
        assert_eq!(to_javascript("(?-u:\\b)x").unwrap(), "\\bx");
        assert_eq!(
            to_javascript("a.b/c-d").unwrap(),
            "a[\\u{0}-\\u{9}\\u{B}-\\u{10FFFF}]b\\/c-d"
        );
        assert_eq!(to_javascript("[-x]").unwrap(), "[\\-x]");
        assert_eq!(to_javascript("").unwrap(), "(?:)");
        // `\d` is every Unicode decimal digit, as the regex crate reads it.
        assert!(to_javascript("\\d").unwrap().contains("\\u{660}-\\u{669}"));
    }

    #[test]
    fn constructs_javascript_reads_differently_are_refused() {
        for pattern in ["\\bword", "\\Bx", "(?Rm)^a", "\\<a", "\\b{end}"] {
            assert!(to_javascript(pattern).is_err(), "{pattern}");
        }
        assert!(to_javascript("(?-u:\\xFF)").is_err());
    }
}

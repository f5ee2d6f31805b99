//! A rules `pattern` (the `regex` crate's syntax and meaning) as a Python
//! `re` pattern that matches exactly the same strings with `search`.
//!
//! As for JavaScript (`typescript::regex`), the pattern is parsed with
//! `regex-syntax` and written from its HIR, where every class is an explicit
//! set of code points (`\d`, `\w`, `(?i)` and Unicode classes expanded the
//! `regex` crate's way): Python's own reading of a class never enters. The
//! zero-width assertions are written as lookarounds that mean what the
//! `regex` crate's do — `\A` and `\Z` for the input's ends (Python's `$`
//! also matches before a final newline), explicit classes for word
//! boundaries (Python's `\b` counts other characters as word characters),
//! and CRLF-mode line anchors spelt out. Only `is_match` is asked, so which
//! match an engine prefers does not matter.
//!
//! The one construct without a counterpart is a byte class or literal
//! beyond ASCII, which a `str` pattern cannot hold (and which the `regex`
//! crate refuses to compile for text anyway).

use regex_syntax::hir::{Class, Hir, HirKind, Look};

pub use crate::typescript::regex::NotPortable;
use crate::typescript::regex::{Syntax, write_hir};

/// The Python source of `pattern` (for `re.compile`), or why there is none.
pub fn to_python(pattern: &str) -> Result<String, NotPortable> {
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

fn write(hir: &Hir, out: &mut String) -> Result<(), NotPortable> {
    write_hir(hir, &Python, out)
}

struct Python;

impl Syntax for Python {
    fn literal(&self, c: char, out: &mut String) {
        literal_char(c, out);
    }

    fn class(&self, ranges: &[(char, char)], out: &mut String) {
        class_source(ranges, out);
    }

    fn look(&self, look: Look) -> Result<String, NotPortable> {
        look_source(look)
    }
}

/// A class of code point ranges; the empty class (which Python cannot
/// write as `[]`) as a lookahead that never holds.
fn class_source(ranges: &[(char, char)], out: &mut String) {
    if ranges.is_empty() {
        out.push_str("(?!)");
        return;
    }
    out.push('[');
    for &(start, end) in ranges {
        literal_char(start, out);
        if end != start {
            out.push('-');
            literal_char(end, out);
        }
    }
    out.push(']');
}

/// The `regex` crate's word characters: ASCII's, or Unicode's (`\w` as it
/// expands it).
fn word_class(unicode: bool) -> String {
    let mut out = String::new();
    if unicode {
        let hir = regex_syntax::parse(r"\w").unwrap_or_else(|_| Hir::empty());
        if let HirKind::Class(Class::Unicode(class)) = hir.kind() {
            let ranges: Vec<(char, char)> = class
                .ranges()
                .iter()
                .map(|r| (r.start(), r.end()))
                .collect();
            class_source(&ranges, &mut out);
            return out;
        }
    }
    out.push_str("[0-9A-Z_a-z]");
    out
}

/// A zero-width assertion, as lookarounds meaning what the `regex` crate's
/// assertion means.
fn look_source(look: Look) -> Result<String, NotPortable> {
    let w = |unicode| word_class(unicode);
    Ok(match look {
        Look::Start => "\\A".into(),
        Look::End => "\\Z".into(),
        // `(?m)`: at the ends, or after or before `\n`.
        Look::StartLF => "(?<![^\\n])".into(),
        Look::EndLF => "(?![^\\n])".into(),
        // `(?Rm)`: `\r`, `\n` and `\r\n` end lines; never between the two
        // characters of a `\r\n`.
        Look::StartCRLF => "(?<![^\\r\\n])(?!(?<=\\r)\\n)".into(),
        Look::EndCRLF => "(?![^\\r\\n])(?!(?<=\\r)\\n)".into(),
        Look::WordAscii | Look::WordUnicode => {
            let w = w(look == Look::WordUnicode);
            format!("(?:(?<={w})(?!{w})|(?<!{w})(?={w}))")
        }
        Look::WordAsciiNegate | Look::WordUnicodeNegate => {
            let w = w(look == Look::WordUnicodeNegate);
            format!("(?:(?<={w})(?={w})|(?<!{w})(?!{w}))")
        }
        Look::WordStartAscii | Look::WordStartUnicode => {
            let w = w(look == Look::WordStartUnicode);
            format!("(?<!{w})(?={w})")
        }
        Look::WordEndAscii | Look::WordEndUnicode => {
            let w = w(look == Look::WordEndUnicode);
            format!("(?<={w})(?!{w})")
        }
        Look::WordStartHalfAscii | Look::WordStartHalfUnicode => {
            format!("(?<!{})", w(look == Look::WordStartHalfUnicode))
        }
        Look::WordEndHalfAscii | Look::WordEndHalfUnicode => {
            format!("(?!{})", w(look == Look::WordEndHalfUnicode))
        }
    })
}

/// One code point: ASCII letters, digits and space as themselves, other
/// printable ASCII behind a backslash (which Python's `re` reads as that
/// character, in and out of classes), anything else as `\uXXXX` or
/// `\UXXXXXXXX`.
fn literal_char(c: char, out: &mut String) {
    match c {
        'a'..='z' | 'A'..='Z' | '0'..='9' | ' ' => out.push(c),
        '!'..='~' => {
            out.push('\\');
            out.push(c);
        }
        _ if u32::from(c) <= 0xFFFF => out.push_str(&format!("\\u{:04x}", u32::from(c))),
        _ => out.push_str(&format!("\\U{:08x}", u32::from(c))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structure_and_classes_translate() {
        assert_eq!(to_python("^ab$").unwrap(), "\\Aab\\Z");
        assert_eq!(to_python("a|b+").unwrap(), "(?:a|b+)");
        assert_eq!(to_python("[a-c]{2,3}?").unwrap(), "[a-c]{2,3}?");
        assert_eq!(to_python("(ab)*").unwrap(), "(?:ab)*");
        assert_eq!(
            to_python("a.b/c-d").unwrap(),
            "a[\\u0000-\\u0009\\u000b-\\U0010ffff]b\\/c\\-d"
        );
        assert_eq!(to_python("").unwrap(), "(?:)");
        assert_eq!(to_python("[^\\x00-\\x{10FFFF}]").unwrap(), "(?!)");
        assert!(to_python("\\d").unwrap().contains("\\u0660-\\u0669"));
        assert!(to_python("\\bword").unwrap().starts_with("(?:(?<=["));
    }

    #[test]
    fn byte_classes_beyond_ascii_are_refused() {
        assert!(to_python("(?-u:\\xFF)").is_err());
        assert!(to_python("(?-u:\\b)x").is_ok());
    }
}

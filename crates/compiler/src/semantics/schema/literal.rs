//! Patterns that are plain literals, optionally anchored (`^src/`,
//! `\.md$`): the code generator and the load-time matcher both test them
//! with string comparisons instead of a regex.

use regex_syntax::hir::{Hir, HirKind, Look};

/// A pattern that is a plain literal, optionally anchored.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LiteralPattern {
    pub start: bool,
    pub text: String,
    pub end: bool,
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

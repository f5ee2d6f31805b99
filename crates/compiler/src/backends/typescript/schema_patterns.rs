//! The `pattern`s of a tool's `inputSchema` (and its `patternProperties`
//! keys), which a generated TypeScript module hands to Ajv as they are
//! written: JavaScript `RegExp`s with the `u` flag, where the Rust
//! resolvers run them on `jsonschema`'s ECMA-262-like engine. The two agree
//! on a common core — literals, classes of literals and ranges, `\d` and
//! `\w` (ASCII in both), groups, alternation, greedy and lazy repetition, `^`
//! and `$` — and differ beyond it: `.` stops at `\r`, U+2028 and U+2029 only
//! in JavaScript, inline flags (`(?i)`) and named groups are Rust syntax,
//! `\s`, `\b`, `\p{…}` and escapes of other characters are read otherwise or
//! refused. A pattern outside the core is found here, so that `generate
//! --lang typescript` refuses it rather than writing a module whose
//! validation differs.

use regex_syntax::ast::{
    Ast, ClassPerlKind, ClassSet, ClassSetItem, GroupKind, Literal, LiteralKind, RepetitionKind,
    RepetitionRange, SpecialLiteralKind,
};
use serde_json::Value;

/// The largest bound of a counted repetition accepted.
const MAX_REPEAT: u32 = 1000;

/// The first pattern of `schema` outside the common core, and why.
pub fn first_not_portable(schema: &Value) -> Option<(String, &'static str)> {
    let Value::Object(map) = schema else {
        return None;
    };
    if let Some(Value::String(pattern)) = map.get("pattern")
        && let Some(why) = not_portable(pattern)
    {
        return Some((pattern.clone(), why));
    }
    if let Some(Value::Object(properties)) = map.get("patternProperties") {
        for key in properties.keys() {
            if let Some(why) = not_portable(key) {
                return Some((key.clone(), why));
            }
        }
    }
    subschemas(map).find_map(|(_, sub)| first_not_portable(sub))
}

/// The subschemas directly under a schema object, by the keywords of
/// 2020-12, 2019-09 and draft-07 that hold schemas (definitions included,
/// whether referenced or not), each with its JSON pointer from `map`
/// (`/properties/path`).
pub fn subschemas(map: &serde_json::Map<String, Value>) -> impl Iterator<Item = (String, &Value)> {
    const ONE: [&str; 11] = [
        "additionalProperties",
        "items",
        "additionalItems",
        "contains",
        "not",
        "if",
        "then",
        "else",
        "propertyNames",
        "unevaluatedProperties",
        "unevaluatedItems",
    ];
    const LIST: [&str; 5] = ["allOf", "anyOf", "oneOf", "prefixItems", "items"];
    // draft-07's `dependencies` maps a member to a schema or to a list of
    // names; a list is no schema and holds none.
    const MAP: [&str; 6] = [
        "properties",
        "patternProperties",
        "$defs",
        "definitions",
        "dependentSchemas",
        "dependencies",
    ];
    let one = ONE.iter().filter_map(|k| {
        map.get(*k)
            .filter(|v| !v.is_array())
            .map(|v| (format!("/{k}"), v))
    });
    let list = LIST
        .iter()
        .filter_map(|k| map.get(*k).and_then(Value::as_array).map(|l| (k, l)))
        .flat_map(|(k, l)| {
            l.iter()
                .enumerate()
                .map(move |(i, v)| (format!("/{k}/{i}"), v))
        });
    let members = MAP
        .iter()
        .filter_map(|k| map.get(*k).and_then(Value::as_object).map(|m| (k, m)))
        .flat_map(|(k, m)| {
            m.iter()
                .filter(|(_, v)| !v.is_array())
                .map(move |(name, v)| (format!("/{k}/{}", pointer_token(name)), v))
        });
    one.chain(list).chain(members)
}

/// `key` as a JSON pointer's reference token (RFC 6901).
pub fn pointer_token(key: &str) -> String {
    key.replace('~', "~0").replace('/', "~1")
}

/// Why `pattern` is outside the common core, or `None` when it is inside.
pub fn not_portable(pattern: &str) -> Option<&'static str> {
    match regex_syntax::ast::parse::Parser::new().parse(pattern) {
        Ok(ast) => in_core(&ast).err(),
        Err(_) => Some("a pattern the regex parser does not read"),
    }
}

fn in_core(ast: &Ast) -> Result<(), &'static str> {
    match ast {
        Ast::Empty(_) => Ok(()),
        Ast::Flags(_) => Err("inline flags (`(?i)`, …), which JavaScript does not read"),
        Ast::Literal(literal) => literal_in_core(literal, false),
        Ast::Dot(_) => Err("`.`, which stops at `\\r`, U+2028 and U+2029 in JavaScript only"),
        Ast::Assertion(assertion) => match assertion.kind {
            regex_syntax::ast::AssertionKind::StartLine
            | regex_syntax::ast::AssertionKind::EndLine => Ok(()),
            _ => Err("an assertion other than `^` and `$`"),
        },
        Ast::ClassUnicode(_) => Err("a Unicode class (`\\p{…}`)"),
        Ast::ClassPerl(class) => perl_in_core(&class.kind),
        Ast::ClassBracketed(class) => set_in_core(&class.kind),
        Ast::Repetition(repetition) => {
            if let RepetitionKind::Range(
                RepetitionRange::Exactly(n)
                | RepetitionRange::AtLeast(n)
                | RepetitionRange::Bounded(_, n),
            ) = repetition.op.kind
                && n > MAX_REPEAT
            {
                return Err("a counted repetition beyond 1000");
            }
            if matches!(*repetition.ast, Ast::Empty(_) | Ast::Assertion(_)) {
                return Err("a repetition of nothing or of an assertion");
            }
            in_core(&repetition.ast)
        }
        Ast::Group(group) => match &group.kind {
            GroupKind::CaptureIndex(_) => in_core(&group.ast),
            GroupKind::NonCapturing(flags) if flags.items.is_empty() => in_core(&group.ast),
            GroupKind::NonCapturing(_) => Err("a group with flags, which JavaScript does not read"),
            GroupKind::CaptureName { .. } => Err("a named group, spelt otherwise in JavaScript"),
        },
        Ast::Alternation(alternation) => alternation.asts.iter().try_for_each(in_core),
        Ast::Concat(concat) => concat.asts.iter().try_for_each(in_core),
    }
}

fn perl_in_core(kind: &ClassPerlKind) -> Result<(), &'static str> {
    match kind {
        ClassPerlKind::Digit | ClassPerlKind::Word => Ok(()),
        ClassPerlKind::Space => Err("`\\s`, whose set of spaces may differ"),
    }
}

fn literal_in_core(literal: &Literal, in_class: bool) -> Result<(), &'static str> {
    // What JavaScript's `u` mode lets a pattern escape: its syntax
    // characters and `/` (and `-` in a class).
    const SYNTAX: &str = "\\^$.|?*+()[]{}/";
    match &literal.kind {
        LiteralKind::Verbatim if !in_class && "]{}".contains(literal.c) => {
            Err("an unescaped `]`, `{` or `}`, which JavaScript's `u` mode refuses")
        }
        LiteralKind::Verbatim if in_class && "[]".contains(literal.c) => {
            Err("an unescaped `[` or `]` in a class, which JavaScript reads otherwise")
        }
        LiteralKind::Verbatim => Ok(()),
        LiteralKind::Meta | LiteralKind::Superfluous
            if SYNTAX.contains(literal.c) || (in_class && literal.c == '-') =>
        {
            Ok(())
        }
        LiteralKind::Special(
            SpecialLiteralKind::Tab
            | SpecialLiteralKind::LineFeed
            | SpecialLiteralKind::CarriageReturn
            | SpecialLiteralKind::FormFeed
            | SpecialLiteralKind::VerticalTab,
        ) => Ok(()),
        _ => Err("an escape JavaScript reads otherwise or refuses"),
    }
}

fn set_in_core(set: &ClassSet) -> Result<(), &'static str> {
    match set {
        ClassSet::Item(item) => item_in_core(item),
        ClassSet::BinaryOp(_) => Err("a class set operation (`&&`, `--`, `~~`)"),
    }
}

fn item_in_core(item: &ClassSetItem) -> Result<(), &'static str> {
    match item {
        ClassSetItem::Empty(_) => Ok(()),
        ClassSetItem::Literal(literal) => literal_in_core(literal, true),
        ClassSetItem::Range(range) => {
            literal_in_core(&range.start, true)?;
            literal_in_core(&range.end, true)
        }
        ClassSetItem::Ascii(_) => Err("a POSIX class (`[[:alpha:]]`)"),
        ClassSetItem::Unicode(_) => Err("a Unicode class (`\\p{…}`)"),
        ClassSetItem::Perl(class) => perl_in_core(&class.kind),
        ClassSetItem::Bracketed(_) => Err("a nested class"),
        ClassSetItem::Union(union) => union.items.iter().try_for_each(item_in_core),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_common_core_is_accepted() {
        for pattern in [
            "^/repos/[^/]+/[^/]+$",
            "\\.md$",
            "^[a-z0-9_-]+$",
            "^\\d{4}-\\d{2}$",
            "^(?:a|b)+?\\w*$",
            "é",
            "^$",
            "a\\/b",
            "[\\]\\-]",
        ] {
            assert_eq!(not_portable(pattern), None, "{pattern}");
        }
    }

    #[test]
    fn what_javascript_reads_otherwise_is_refused() {
        for pattern in [
            "^.$",
            "(?i)^read",
            "(?i:a)",
            "(?P<x>a)",
            "\\s",
            "\\bword",
            "\\pL",
            "[[:alpha:]]",
            "[a-z&&b]",
            "\\x41",
            "\\#",
            "a{1001}",
            "\\Aa",
            "a]",
            "[]a]",
            "(",
        ] {
            assert!(not_portable(pattern).is_some(), "{pattern}");
        }
    }

    #[test]
    fn patterns_are_found_anywhere_in_a_schema() {
        let schema = serde_json::json!({
            "type": "object",
            "properties": {"a": {"type": "array", "items": {"anyOf": [{"pattern": "^x$"}, {"pattern": "^.$"}]}}},
        });
        assert_eq!(
            first_not_portable(&schema).map(|(p, _)| p),
            Some("^.$".to_string())
        );
        let keys = serde_json::json!({"patternProperties": {"(?i)x": {}}});
        assert!(first_not_portable(&keys).is_some());
        assert!(first_not_portable(&serde_json::json!({"pattern": "^x$"})).is_none());
        // draft-07's `dependencies`: a schema is walked, a list of names is not.
        let dependencies = serde_json::json!({"dependencies": {
            "a": ["b"],
            "c": {"properties": {"d": {"pattern": "\\s"}}},
        }});
        assert_eq!(
            first_not_portable(&dependencies).map(|(p, _)| p),
            Some("\\s".to_string())
        );
    }

    #[test]
    fn subschemas_are_named_by_json_pointer() {
        let schema = serde_json::json!({
            "items": [{"type": "string"}],
            "not": {},
            "allOf": [{}, {"title": "second"}],
            "properties": {"a/b": {}, "c~d": {}},
            "dependencies": {"e": ["f"]},
        });
        let Value::Object(map) = &schema else {
            unreachable!()
        };
        let pointers: Vec<String> = subschemas(map).map(|(p, _)| p).collect();
        assert_eq!(
            pointers,
            [
                "/not",
                "/allOf/0",
                "/allOf/1",
                "/items/0",
                "/properties/a~1b",
                "/properties/c~0d"
            ]
        );
    }
}

//! The canonical YAML text of a rules file.

use serde_json::Value;

use super::{Comment, Out};
use crate::ast::{
    Conjunction, HintSetting, Matcher, RulesFile, SchemaSource, ToolDecl, ValueMatcher,
    VariantDecl, When,
};
use crate::parse::yaml::YValue;
use crate::source::Spanned;

const WIDTH: usize = 100;

pub(super) fn print(rules: &RulesFile, source: &str, comments: Vec<Comment>) -> String {
    let mut out = Out::new(source, comments, "#");
    if let Some(v) = &rules.version {
        out.line(0, &format!("version: {}", v.value), Some(v.span.start));
    }
    if let Some(s) = &rules.server {
        out.line(
            0,
            &format!(
                "server: {{ name: {}, version: {} }}",
                scalar(&s.name.value, true),
                scalar(&s.version.value, true)
            ),
            Some(s.span.start.min(s.name.span.start)),
        );
    }
    if !rules.hints.is_empty() {
        out.line(0, "hints:", None);
        for h in &rules.hints {
            out.line(
                2,
                &format!(
                    "{}: {{ worst: {}, default: {} }}",
                    scalar(&h.name.value, true),
                    h.worst,
                    h.default
                ),
                Some(h.name.span.start),
            );
        }
    }
    // An empty list must stay a list: `tools:` alone would be null.
    let header = if rules.tools.is_empty() {
        "tools: []"
    } else {
        "tools:"
    };
    out.line(0, header, None);
    for (i, t) in rules.tools.iter().enumerate() {
        if i > 0 {
            out.blank();
        }
        tool(&mut out, t);
    }
    out.finish()
}

/// A string as a YAML scalar: plain when it cannot be read as anything else,
/// else double-quoted.
pub fn scalar(s: &str, flow: bool) -> String {
    if plain_ok(s, flow) {
        s.to_string()
    } else {
        // The `.rules` string syntax is also a YAML double-quoted scalar
        // (and a JSON string): `\u` for every character YAML does not
        // allow as it is, which JSON quoting would leave raw.
        let mut out = String::with_capacity(s.len() + 2);
        crate::parse::expr::write_string(&mut out, s);
        out
    }
}

fn plain_ok(s: &str, flow: bool) -> bool {
    let Some(first) = s.chars().next() else {
        return false;
    };
    if "-?:,[]{}#&*!|>'\"%@`".contains(first)
        || s.starts_with(char::is_whitespace)
        || s.ends_with(char::is_whitespace)
        || s.chars()
            .any(|c| c.is_control() || matches!(c, '\u{2028}' | '\u{2029}' | '\u{feff}'))
        || (flow && s.contains([',', '[', ']', '{', '}']))
        || !s
            .chars()
            .all(|c| c.is_alphanumeric() || " _./-:@+;,=<>!?&'".contains(c))
        || s.contains(" #")
        || s.contains(": ")
        || s.ends_with(':')
    {
        return false;
    }
    // YAML 1.1's booleans stay quoted: this project reads them as strings
    // (YAML 1.2), but other YAML readers of the file may not.
    const YAML11_BOOLEANS: &[&str] = &["y", "n", "yes", "no", "on", "off"];
    if YAML11_BOOLEANS.iter().any(|b| s.eq_ignore_ascii_case(b)) {
        return false;
    }
    // Letters, `_` and `-` are a string unless they spell a null, a boolean
    // or a special float; skip the parser for the rest (most names).
    const SPECIAL: &[&str] = &["null", "true", "false", "inf", "infinity", "nan"];
    if s.chars()
        .all(|c| c.is_ascii_alphabetic() || c == '_' || c == '-')
        && s.starts_with(|c: char| c.is_ascii_alphabetic())
        && !SPECIAL.iter().any(|w| s.eq_ignore_ascii_case(w))
    {
        return true;
    }
    // Whatever is left, the YAML parser has the last word: it must read the
    // text back as this very string (not a number, boolean or null).
    let probe = if flow {
        format!("[{s}]")
    } else {
        s.to_string()
    };
    match crate::parse::yaml::parse(&probe) {
        Ok(node) => match node.value {
            YValue::String(back) if !flow => back == s,
            YValue::Seq(items) if flow => {
                matches!(items.as_slice(), [one] if one.value == YValue::String(s.to_string()))
            }
            _ => false,
        },
        Err(_) => false,
    }
}

/// Whether a value may be written in flow style: no mapping inside a mapping.
fn flat(v: &Value) -> bool {
    match v {
        Value::Object(m) => m.values().all(|x| match x {
            Value::Object(o) => o.is_empty(),
            Value::Array(a) => a.iter().all(|y| !y.is_object() && !y.is_array()),
            _ => true,
        }),
        Value::Array(a) => a.iter().all(|y| !y.is_object() && !y.is_array()),
        _ => true,
    }
}

fn json_scalar(v: &Value, flow: bool) -> String {
    match v {
        Value::String(s) => scalar(s, flow),
        other => other.to_string(),
    }
}

/// A JSON value in YAML flow style (`{ a: 1, b: [x, y] }`).
fn flow(v: &Value) -> String {
    match v {
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{}: {}", scalar(k, true), flow(x)))
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(flow).collect();
            format!("[{}]", items.join(", "))
        }
        other => json_scalar(other, true),
    }
}

/// `key: value` lines for a JSON value in block style, small containers in flow.
fn block(out: &mut Out<'_>, indent: usize, key: &str, v: &Value) {
    block_at(out, indent, key, v, None);
}

/// [`block`], its first line written for the code at `anchor` in the source
/// (the comments trailing that source line trail it).
fn block_at(out: &mut Out<'_>, indent: usize, key: &str, v: &Value, anchor: Option<usize>) {
    let fits = flat(v) && flow(v).len() + indent + key.len() + 2 <= WIDTH;
    match v {
        Value::Object(m) if !m.is_empty() && !fits => {
            out.line(indent, &format!("{key}:"), anchor);
            for (k, x) in m {
                block(out, indent + 2, &scalar(k, false), x);
            }
        }
        Value::Array(a) if !a.is_empty() && !fits => {
            out.line(indent, &format!("{key}:"), anchor);
            for x in a {
                match x {
                    Value::Object(m)
                        if !(m.is_empty() || flat(x) && flow(x).len() + indent + 4 <= WIDTH) =>
                    {
                        let mut first = true;
                        for (k, y) in m {
                            let lead = if first { "- " } else { "  " };
                            first = false;
                            let mut sub = Out::new("", Vec::new(), "#");
                            block(&mut sub, 0, &scalar(k, false), y);
                            for (i, l) in sub.finish().lines().enumerate() {
                                let p = if i == 0 { lead } else { "  " };
                                out.line(indent + 2, &format!("{p}{l}"), None);
                            }
                        }
                    }
                    _ => out.line(indent + 2, &format!("- {}", flow(x)), None),
                }
            }
        }
        _ => out.line(indent, &format!("{key}: {}", flow(v)), anchor),
    }
}

/// `annotations:` on one line if it fits, else one hint per line.
fn settings(
    out: &mut Out<'_>,
    indent: usize,
    items: &[HintSetting],
    title: Option<&Spanned<String>>,
) {
    let parts: Vec<String> = title
        .map(|t| format!("title: {}", scalar(&t.value, true)))
        .into_iter()
        .chain(
            items
                .iter()
                .map(|s| format!("{}: {}", scalar(&s.name.value, true), s.value.value)),
        )
        .collect();
    let anchor = items.first().map(|s| s.name.span.start);
    let one = format!("annotations: {{ {} }}", parts.join(", "));
    if parts.is_empty() || one.len() + indent <= WIDTH {
        let one = if parts.is_empty() {
            "annotations: {}".to_string()
        } else {
            one
        };
        out.line(indent, &one, anchor);
        return;
    }
    out.line(indent, "annotations:", anchor);
    let anchors = title
        .map(|t| t.span.start)
        .into_iter()
        .chain(items.iter().map(|s| s.name.span.start));
    for (p, at) in parts.iter().zip(anchors) {
        out.line(indent + 2, p, Some(at));
    }
}

fn scopes(items: &[Spanned<String>]) -> String {
    let parts: Vec<String> = items.iter().map(|s| scalar(&s.value, true)).collect();
    format!("[{}]", parts.join(", "))
}

fn tool(out: &mut Out<'_>, t: &ToolDecl) {
    out.line(
        2,
        &format!("- name: {}", scalar(&t.name.value, false)),
        Some(t.span.start),
    );
    if let Some(title) = &t.title {
        out.line(4, &format!("title: {}", scalar(title, false)), None);
    }
    if let Some(d) = &t.description {
        out.line(4, &format!("description: {}", scalar(d, false)), None);
    }
    match &t.input_schema {
        Some(SchemaSource::Inline(v)) => {
            if matches!(&v.value, Value::Object(m) if !m.is_empty()) {
                // A block mapping: its first key is on a later line than
                // `inputSchema:`, whose own trailing comment stays on it.
                out.key_line(4, "inputSchema:", v.span.start);
            } else {
                // Anchor comments above the schema to it.
                out.line(4, "inputSchema:", Some(v.span.start));
            }
            if let Value::Object(m) = &v.value {
                if m.is_empty() {
                    out.buf.truncate(out.buf.len() - 1);
                    out.buf.push_str(" {}\n");
                }
                for (i, (k, x)) in m.iter().enumerate() {
                    // The first key is where the block starts in the source.
                    let anchor = (i == 0).then_some(v.span.start);
                    block_at(out, 6, &scalar(k, false), x, anchor);
                }
            } else {
                out.buf.truncate(out.buf.len() - 1);
                out.buf.push(' ');
                out.buf.push_str(&flow(&v.value));
                out.buf.push('\n');
            }
        }
        Some(SchemaSource::File { path, .. }) => {
            out.line(
                4,
                &format!("inputSchemaFile: {}", scalar(&path.value, false)),
                Some(path.span.start),
            );
        }
        None => {}
    }
    if let Some(o) = &t.output_schema {
        out.comments_before(4, o.span.start);
        block(out, 4, "outputSchema", &o.value);
    }
    if let Some(a) = &t.annotations {
        settings(out, 4, a, t.annotations_title.as_ref());
    }
    if let Some(s) = &t.required_scopes {
        let anchor = s.first().map(|s| s.span.start);
        out.line(4, &format!("requiredScopes: {}", scopes(s)), anchor);
    }
    for (key, member) in [
        ("icons", &t.icons),
        ("execution", &t.execution),
        ("_meta", &t.meta),
        ("trust", &t.trust),
    ] {
        if let Some(m) = member {
            out.comments_before(4, m.span.start);
            block(out, 4, key, &m.value);
        }
    }
    match &t.variants {
        Some(vs) if vs.is_empty() => out.line(4, "variants: []", None),
        Some(vs) => {
            out.line(4, "variants:", None);
            for v in vs {
                variant(out, v);
            }
        }
        None => {}
    }
}

fn variant(out: &mut Out<'_>, v: &VariantDecl) {
    out.line(
        6,
        &format!("- name: {}", scalar(&v.name.value, false)),
        Some(v.span.start),
    );
    match &v.when {
        When::Always(_) | When::Invalid(_) => {}
        When::Expr(e) => {
            let text = e.to_string().replace('\'', "''");
            out.line(8, &format!("when: '{text}'"), Some(e.span.start));
        }
        When::Structured(cs) => match cs.as_slice() {
            [one] => conjunction(out, 8, "when:", one),
            many => {
                out.line(8, "when:", Some(many.first().map_or(0, |c| c.span.start)));
                for c in many {
                    conjunction(out, 10, "-", c);
                }
            }
        },
    }
    if !v.annotations.is_empty() {
        settings(out, 8, &v.annotations, None);
    }
    if let Some(s) = &v.required_scopes {
        let anchor = s.first().map(|s| s.span.start);
        out.line(8, &format!("requiredScopes: {}", scopes(s)), anchor);
    }
}

/// One mapping of a structured `when`, after `lead` (`when:` or `-`): in
/// flow style if it fits, else one argument per line.
fn conjunction(out: &mut Out<'_>, indent: usize, lead: &str, c: &Conjunction) {
    if c.entries.is_empty() {
        out.line(indent, &format!("{lead} {{}}"), Some(c.span.start));
        return;
    }
    let parts: Vec<(String, usize)> = c
        .entries
        .iter()
        .map(|(path, m)| {
            (
                format!("{}: {}", scalar(&path.value, true), matcher(m)),
                path.span.start,
            )
        })
        .collect();
    let one = format!(
        "{lead} {{ {} }}",
        parts
            .iter()
            .map(|(p, _)| p.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    );
    if one.len() + indent <= WIDTH {
        out.line(indent, &one, Some(c.span.start));
    } else if lead == "-" {
        for (i, (p, at)) in parts.iter().enumerate() {
            let text = if i == 0 {
                format!("- {p}")
            } else {
                format!("  {p}")
            };
            out.line(indent, &text, Some(*at));
        }
    } else {
        out.line(indent, lead, Some(c.span.start));
        for (p, at) in &parts {
            out.line(indent + 2, p, Some(*at));
        }
    }
}

fn matcher(m: &Matcher) -> String {
    match m {
        Matcher::Absent(a) => format!("{{ absent: {} }}", a.value),
        Matcher::Value(v) => top_value(v),
    }
}

/// A matcher directly under an argument path: shorthand allowed.
fn top_value(v: &ValueMatcher) -> String {
    match v {
        ValueMatcher::Const(c) if !c.value.is_object() && !c.value.is_array() => {
            json_scalar(&c.value, true)
        }
        ValueMatcher::Enum(e) if e.value.iter().all(|x| !x.is_object() && !x.is_array()) => {
            flow(&Value::Array(e.value.clone()))
        }
        other => keywords(other),
    }
}

/// A matcher as a keyword mapping (`{ pattern: "^x" }`).
fn keywords(v: &ValueMatcher) -> String {
    match v {
        ValueMatcher::AllOf(parts, _) if parts.is_empty() => "{}".into(),
        ValueMatcher::AllOf(parts, _) => {
            // Distinct single keywords merge into one mapping (read back as
            // the same `allOf`); anything else keeps `allOf`.
            let singles: Vec<(&str, String)> = parts.iter().filter_map(single).collect();
            let mut keys: Vec<&str> = singles.iter().map(|(k, _)| *k).collect();
            keys.sort_unstable();
            keys.dedup();
            if singles.len() == parts.len() && keys.len() == parts.len() && parts.len() > 1 {
                let items: Vec<String> = singles.iter().map(|(k, v)| format!("{k}: {v}")).collect();
                format!("{{ {} }}", items.join(", "))
            } else {
                let items: Vec<String> = parts.iter().map(keywords).collect();
                format!("{{ allOf: [{}] }}", items.join(", "))
            }
        }
        other => match single(other) {
            Some((k, v)) => format!("{{ {k}: {v} }}"),
            None => "{}".into(),
        },
    }
}

/// A matcher that is one keyword: its name and value text.
fn single(v: &ValueMatcher) -> Option<(&'static str, String)> {
    let num = |n: &serde_json::Number| n.to_string();
    Some(match v {
        ValueMatcher::Const(c) => ("const", flow(&c.value)),
        ValueMatcher::Enum(e) => ("enum", flow(&Value::Array(e.value.clone()))),
        ValueMatcher::Type(t) if t.value.len() == 1 => ("type", scalar(&t.value[0], true)),
        ValueMatcher::Type(t) => (
            "type",
            flow(&Value::Array(
                t.value.iter().cloned().map(Value::String).collect(),
            )),
        ),
        ValueMatcher::Pattern(p) => ("pattern", scalar(&p.value, true)),
        ValueMatcher::MinLength(n) => ("minLength", n.value.to_string()),
        ValueMatcher::MaxLength(n) => ("maxLength", n.value.to_string()),
        ValueMatcher::Minimum(n) => ("minimum", num(&n.value)),
        ValueMatcher::Maximum(n) => ("maximum", num(&n.value)),
        ValueMatcher::ExclusiveMinimum(n) => ("exclusiveMinimum", num(&n.value)),
        ValueMatcher::ExclusiveMaximum(n) => ("exclusiveMaximum", num(&n.value)),
        ValueMatcher::Not(inner, _) => ("not", keywords(inner)),
        ValueMatcher::MinItems(n) => ("minItems", n.value.to_string()),
        ValueMatcher::MaxItems(n) => ("maxItems", n.value.to_string()),
        ValueMatcher::Items(inner, _) => ("items", keywords(inner)),
        ValueMatcher::Contains(inner, _) => ("contains", keywords(inner)),
        ValueMatcher::Properties(ps, _) => (
            "properties",
            format!(
                "{{ {} }}",
                ps.iter()
                    .map(|(k, m)| format!("{}: {}", scalar(&k.value, true), keywords(m)))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        ),
        ValueMatcher::Required(r) => (
            "required",
            flow(&Value::Array(
                r.value.iter().cloned().map(Value::String).collect(),
            )),
        ),
        ValueMatcher::AnyOf(parts, _) => (
            "anyOf",
            format!(
                "[{}]",
                parts.iter().map(keywords).collect::<Vec<_>>().join(", ")
            ),
        ),
        ValueMatcher::AllOf(..) => return None,
    })
}

//! The canonical `.rules` text of a rules file.

use serde_json::Value;

use super::unlower::cond_expr;
use super::{Comment, Out, inline_len};
use crate::ast::{HintSetting, RulesFile, SchemaSource, ToolDecl, VariantDecl, When};
use crate::lower::lower_when;
use crate::parse::expr::write_string;

const WIDTH: usize = 80;

pub(super) fn print(rules: &RulesFile, source: &str, comments: Vec<Comment>) -> String {
    let mut out = Out::new(source, comments, "//");
    if let Some(v) = &rules.version {
        out.line(0, &format!("version {}", v.value), Some(v.span.start));
    }
    if let Some(s) = &rules.server {
        out.line(
            0,
            &format!(
                "server {} version {}",
                name(&s.name.value),
                name(&s.version.value)
            ),
            Some(s.span.start.min(s.name.span.start)),
        );
    }
    if !rules.hints.is_empty() {
        out.blank();
    }
    for h in &rules.hints {
        out.line(
            0,
            &format!(
                "hint {} {{ worst: {}, default: {} }}",
                name(&h.name.value),
                h.worst,
                h.default
            ),
            Some(h.name.span.start),
        );
    }
    for t in &rules.tools {
        out.blank();
        tool(&mut out, t);
    }
    out.finish()
}

/// A name: bare when the grammar's `bare_name` reads it back, else a string.
fn name(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.'))
    {
        s.to_string()
    } else {
        string(s)
    }
}

fn string(s: &str) -> String {
    let mut out = String::new();
    write_string(&mut out, s);
    out
}

fn settings(items: &[HintSetting], title: Option<&str>) -> String {
    let parts: Vec<String> = title
        .map(|t| format!("title: {}", string(t)))
        .into_iter()
        .chain(
            items
                .iter()
                .map(|s| format!("{}: {}", name(&s.name.value), s.value.value)),
        )
        .collect();
    if parts.is_empty() {
        "{}".into()
    } else {
        format!("{{ {} }}", parts.join(", "))
    }
}

fn scopes(items: &[crate::source::Spanned<String>]) -> String {
    let parts: Vec<String> = items.iter().map(|s| string(&s.value)).collect();
    format!("[{}]", parts.join(", "))
}

fn tool(out: &mut Out<'_>, t: &ToolDecl) {
    out.line(
        0,
        &format!("tool {} {{", name(&t.name.value)),
        Some(t.span.start),
    );
    if let Some(title) = &t.title {
        out.line(2, &format!("title {}", string(title)), None);
    }
    if let Some(d) = &t.description {
        out.line(2, &format!("description {}", string(d)), None);
    }
    let schema = match &t.input_schema {
        Some(SchemaSource::Inline(v)) => {
            json_member(out, "inputSchema", v);
            Some(&v.value)
        }
        Some(SchemaSource::File { path, schema }) => {
            out.line(
                2,
                &format!("inputSchemaFile {}", string(&path.value)),
                Some(path.span.start),
            );
            schema.as_ref()
        }
        None => None,
    };
    if let Some(o) = &t.output_schema {
        json_member(out, "outputSchema", o);
    }
    if let Some(a) = &t.annotations {
        let anchor = a.first().map(|s| s.name.span.start);
        let title = t.annotations_title.as_ref().map(|t| t.value.as_str());
        out.line(2, &format!("annotations {}", settings(a, title)), anchor);
    }
    if let Some(s) = &t.required_scopes {
        let anchor = s.first().map(|s| s.span.start);
        out.line(2, &format!("requiredScopes {}", scopes(s)), anchor);
    }
    for (key, member) in [
        ("icons", &t.icons),
        ("execution", &t.execution),
        ("_meta", &t.meta),
        ("trust", &t.trust),
    ] {
        if let Some(m) = member {
            json_member(out, key, m);
        }
    }
    match &t.variants {
        Some(vs) if vs.is_empty() => out.line(2, "resolvable", None),
        Some(vs) => {
            let empty = Value::Object(Default::default());
            for v in vs {
                out.blank();
                variant(out, v, schema.unwrap_or(&empty));
            }
        }
        None => {}
    }
    out.line(0, "}", None);
}

fn variant(out: &mut Out<'_>, v: &VariantDecl, schema: &Value) {
    let when = match &v.when {
        When::Always(_) => String::new(),
        When::Expr(e) => format!(" when {e}"),
        When::Structured(_) | When::Invalid(_) => {
            let mut scratch = Vec::new();
            let cond = lower_when(&v.when, schema, &mut scratch);
            format!(" when {}", cond_expr(&cond, schema))
        }
    };
    let head = format!("variant {}{when}", name(&v.name.value));
    if v.annotations.is_empty() && v.required_scopes.is_none() {
        out.line(2, &head, Some(v.span.start));
        return;
    }
    out.line(2, &format!("{head} {{"), Some(v.span.start));
    if !v.annotations.is_empty() {
        let anchor = v.annotations.first().map(|s| s.name.span.start);
        out.line(
            4,
            &format!("annotations {}", settings(&v.annotations, None)),
            anchor,
        );
    }
    if let Some(s) = &v.required_scopes {
        let anchor = s.first().map(|s| s.span.start);
        out.line(4, &format!("requiredScopes {}", scopes(s)), anchor);
    }
    out.line(2, "}", None);
}

/// Pretty JSON: containers that fit stay on one line.
/// `key {…}` (or `key […]`) with the JSON laid out under it.
/// JSON holds no comment: those written inside the value (YAML allows
/// them there) are written outside it — the ones before where the value's
/// span ends above the member, the others after its last line (a YAML
/// mapping's span may end where it begins, so most follow it).
fn json_member(out: &mut Out<'_>, key: &str, value: &crate::source::Spanned<Value>) {
    let mut lines = Vec::new();
    json_lines(&value.value, &mut lines, 0);
    out.comments_before(2, value.span.end.max(value.span.start));
    let last = lines.len().saturating_sub(1);
    for (i, l) in lines.iter().enumerate() {
        let text = if i == 0 {
            format!("{key} {l}")
        } else {
            l.clone()
        };
        let anchor = (i == last).then_some(value.span.end);
        out.line(2, &text, anchor);
    }
    if lines.is_empty() {
        out.line(2, key, Some(value.span.end));
    }
}

fn json_lines(v: &Value, lines: &mut Vec<String>, indent: usize) {
    let text = json_text(v, indent);
    lines.extend(text.lines().map(str::to_string));
}

fn json_text(v: &Value, indent: usize) -> String {
    if let Some(n) = inline_len(v)
        && n + indent <= WIDTH
    {
        return json_inline(v);
    }
    let pad = " ".repeat(indent + 2);
    let close = " ".repeat(indent);
    match v {
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{pad}{}: {}", string(k), json_text(x, indent + 2)))
                .collect();
            format!("{{\n{}\n{close}}}", items.join(",\n"))
        }
        Value::Array(a) => {
            let items: Vec<String> = a
                .iter()
                .map(|x| format!("{pad}{}", json_text(x, indent + 2)))
                .collect();
            format!("[\n{}\n{close}]", items.join(",\n"))
        }
        other => json_scalar(other),
    }
}

/// A JSON scalar; strings escape every control character (JSON itself
/// would leave DEL and the C1 controls raw, invisible in a rules file).
fn json_scalar(v: &Value) -> String {
    match v {
        Value::String(s) => string(s),
        other => other.to_string(),
    }
}

fn json_inline(v: &Value) -> String {
    match v {
        Value::Object(m) if m.is_empty() => "{}".into(),
        Value::Array(a) if a.is_empty() => "[]".into(),
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, x)| format!("{}: {}", string(k), json_inline(x)))
                .collect();
            format!("{{ {} }}", items.join(", "))
        }
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(json_inline).collect();
            format!("[{}]", items.join(", "))
        }
        other => json_scalar(other),
    }
}

//! Hover: what the compiler knows of the name under the cursor — a tool's
//! decision table as `explain` writes it, a variant's resolved annotations,
//! scopes and reachability, a `when` argument's schema.

use lsp_types::{Hover, HoverContents, MarkupContent, MarkupKind, Position};
use mcp_resolve::explain::{Reachability, explain};
use mcp_resolve::ir::{ArgPath, Cond, Server, Tool};
use mcp_resolve::source::Span;
use serde_json::Value;

/// The byte offset of protocol position `position` (UTF-16 column) in
/// `text`, clamped to the text.
pub(crate) fn offset(text: &str, position: Position) -> usize {
    let mut start = 0;
    for _ in 0..position.line {
        match text[start..].find('\n') {
            Some(i) => start += i + 1,
            None => return text.len(),
        }
    }
    let mut units = 0;
    for (i, c) in text[start..].char_indices() {
        if units >= position.character as usize || c == '\n' {
            return start + i;
        }
        units += c.len_utf16();
    }
    text.len()
}

fn inside(span: Span, at: usize) -> bool {
    span.start <= at && at <= span.end && span.start < span.end
}

/// The hover at byte `at` of the document (file 0 of `project`).
pub(crate) fn hover(project: &mcp_resolve::Project, at: usize) -> Option<Hover> {
    let (document, _) = project.sources.files().next()?;
    for server in &project.servers {
        for tool in &server.tools {
            if tool.name_loc.0.file == document && inside(tool.name_loc.0, at) {
                return markdown(tool_table(project, server, tool)?);
            }
            for variant in &tool.variants {
                if variant.loc.0.file == document && inside(variant.loc.0, at) {
                    return markdown(variant_facts(project, server, tool, &variant.name)?);
                }
                if let Some(path) = argument_at(&variant.when, document, at) {
                    return markdown(argument_schema(tool, path));
                }
            }
        }
    }
    None
}

fn markdown(value: String) -> Option<Hover> {
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value,
        }),
        range: None,
    })
}

/// `explain`'s table of one tool.
fn tool_table(project: &mcp_resolve::Project, server: &Server, tool: &Tool) -> Option<String> {
    let explanation = explain(project, server).only_tool(&tool.name).ok()?;
    let text = explanation.to_markdown();
    // The tool's section, without the server's summary above it.
    Some(match text.find("\n## ") {
        Some(i) => text[i + 1..].to_string(),
        None => text,
    })
}

/// A variant: its condition, its resolved annotations (every hint, after
/// inheritance), its scopes, and whether calls reach it.
fn variant_facts(
    project: &mcp_resolve::Project,
    server: &Server,
    tool: &Tool,
    name: &str,
) -> Option<String> {
    let explanation = explain(project, server).only_tool(&tool.name).ok()?;
    let view = explanation.tools.first()?;
    let row = view.rows.iter().find(|r| r.name == name)?;
    let mut out = format!(
        "**variant `{name}`** of `{}`\n\nwhen {}\n\n| hint | resolved |\n|---|---|\n",
        tool.name,
        row.when.to_markdown()
    );
    for (hint, cell) in explanation.hints.iter().zip(&row.annotations) {
        out.push_str(&format!("| `{hint}` | `{}` |\n", cell.value));
    }
    out.push_str(&format!(
        "\nscopes: {}\n\n",
        if row.scopes.is_empty() {
            "none".to_string()
        } else {
            row.scopes
                .iter()
                .map(|s| format!("`{s}`"))
                .collect::<Vec<_>>()
                .join(", ")
        }
    ));
    out.push_str(&match &row.reach {
        Reachability::Yes => match example_call(server, tool, name) {
            Some(call) => format!(
                "reachable; for example\n\n```json\n{}\n```",
                serde_json::to_string_pretty(&call).unwrap_or_default()
            ),
            None => "reachable: some call resolves here".to_string(),
        },
        Reachability::Shadowed { by, example } => {
            let mut text = format!(
                "**unreachable**: every call it matches resolves to {}",
                by.iter()
                    .map(|v| format!("`{v}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            );
            if let Some(example) = example {
                text.push_str(&format!("; for example\n\n```json\n{example}\n```"));
            }
            text
        }
        Reachability::Never => "**unreachable**: its condition holds for no valid call".into(),
        Reachability::Undecided(why) => format!("reachability undecided: {why}"),
    });
    Some(out)
}

/// The most candidate calls tried for an example.
const EXAMPLE_BUDGET: usize = 500;

/// A call that resolves to variant `name`, checked with the compiler's own
/// resolver: the smallest valid call, with the values the schema names set
/// one or two at a time (`None` when none of those reaches it).
fn example_call(server: &Server, tool: &Tool, name: &str) -> Option<Value> {
    let resolver = mcp_resolve::Resolver::new(server).ok()?;
    let base = mcp_resolve::facts::minimal_value(&tool.input_schema)?;
    let named = crate::complete::named_values(&tool.input_schema);
    let singles: Vec<(&str, &Value)> = named
        .iter()
        .flat_map(|(path, values)| values.iter().map(move |v| (path.as_str(), v)))
        .collect();
    let mut candidates = vec![base.clone()];
    for (i, (path, value)) in singles.iter().enumerate() {
        let one = with(&base, path, value);
        for (other, other_value) in singles.iter().skip(i + 1) {
            if other != path {
                candidates.push(with(&one, other, other_value));
            }
        }
        candidates.insert(1, one);
    }
    candidates.into_iter().take(EXAMPLE_BUDGET).find(|call| {
        resolver
            .resolve(&tool.name, call)
            .is_ok_and(|r| r.variant.as_deref() == Some(name))
    })
}

/// `base` with `value` at dotted `path` (objects made on the way).
fn with(base: &Value, path: &str, value: &Value) -> Value {
    let mut out = base.clone();
    let mut at = &mut out;
    let segments: Vec<&str> = path.split('.').collect();
    for (i, segment) in segments.iter().enumerate() {
        if !at.is_object() {
            *at = Value::Object(Default::default());
        }
        let Value::Object(map) = at else {
            return out;
        };
        if i + 1 == segments.len() {
            map.insert((*segment).to_string(), value.clone());
            return out;
        }
        at = map
            .entry((*segment).to_string())
            .or_insert_with(|| Value::Object(Default::default()));
    }
    out
}

/// The argument path written at `at` in a condition.
fn argument_at(cond: &Cond, document: mcp_resolve::source::FileId, at: usize) -> Option<&ArgPath> {
    match cond {
        Cond::Present(path) | Cond::Test(path, _) => {
            (path.loc.0.file == document && inside(path.loc.0, at)).then_some(path)
        }
        Cond::And(items) | Cond::Or(items) => {
            items.iter().find_map(|c| argument_at(c, document, at))
        }
        Cond::Not(inner) => argument_at(inner, document, at),
        _ => None,
    }
}

/// The schema of argument `path` in the tool's `inputSchema`.
fn argument_schema(tool: &Tool, path: &ArgPath) -> String {
    let mut schema = &tool.input_schema;
    for segment in &path.segments {
        schema = schema
            .get("properties")
            .and_then(|p| p.get(segment))
            .unwrap_or(&Value::Null);
    }
    let required = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|r| {
            path.segments.len() == 1 && r.contains(&Value::from(path.segments[0].as_str()))
        });
    format!(
        "argument `{path}` of `{}`{}\n\n```json\n{}\n```",
        tool.name,
        if required { " (required)" } else { "" },
        serde_json::to_string_pretty(schema).unwrap_or_default()
    )
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn positions_become_offsets() {
        let text = "ab\né😀x\n";
        assert_eq!(offset(text, Position::new(0, 1)), 1);
        assert_eq!(offset(text, Position::new(1, 3)), text.find('x').unwrap());
        assert_eq!(offset(text, Position::new(1, 99)), text.len() - 1);
        assert_eq!(offset(text, Position::new(9, 0)), text.len());
    }

    #[test]
    fn a_variant_a_tool_and_an_argument_hover() {
        let text = include_str!("../../../rules/file-server.yaml");
        let project = mcp_resolve::load_str("file-server.yaml", text);
        let show = |needle: &str, skip: usize| {
            let at = text.find(needle).unwrap() + skip;
            match hover(&project, at).map(|h| h.contents) {
                Some(HoverContents::Markup(m)) => m.value,
                other => panic!("{other:?}"),
            }
        };
        let variant = show("name: overwrite", 7);
        assert!(variant.contains("**variant `overwrite`**"), "{variant}");
        // An example call the resolver sends to it.
        assert!(
            variant.contains("\"action\": \"replace\"")
                || variant.contains("\"action\": \"delete\""),
            "{variant}"
        );
        assert!(
            variant.contains("| `destructiveHint` | `true` |"),
            "{variant}"
        );
        assert!(variant.contains("`files:write`"), "{variant}");
        let tool = show("name: manage_files", 7);
        assert!(
            tool.contains("manage_files") && tool.contains("overwrite"),
            "{tool}"
        );
        let argument = show("when: { action: read }", 9);
        assert!(argument.contains("argument `action`"), "{argument}");
        assert!(argument.contains("\"enum\""), "{argument}");
        assert!(hover(&project, 0).is_none());
    }
}

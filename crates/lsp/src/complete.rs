//! Completion: what a rules file can name where the cursor is — a tool's
//! argument names (nested ones dotted) and, after an argument in a `when`,
//! its enum values; hint names in `annotations`. The vocabulary comes from
//! the last text that compiled, so completing inside a half-typed line still
//! knows the file's tools.

use std::collections::BTreeMap;

use lsp_types::{CompletionItem, CompletionItemKind};
use serde_json::Value;

/// One argument a tool's `inputSchema` declares.
#[derive(Clone, Debug, PartialEq)]
struct Argument {
    path: String,
    kind: String,
    values: Vec<Value>,
}

/// What a document's rules name.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Vocabulary {
    tools: BTreeMap<String, Vec<Argument>>,
    pub(crate) hints: Vec<String>,
    /// Each tool's variants, in order (what a policy's `variant:` names).
    pub(crate) variants: BTreeMap<String, Vec<String>>,
    /// Every scope a tool or variant requires.
    pub(crate) scopes: Vec<String>,
}

impl Vocabulary {
    /// The names `project` declares (`None` when nothing compiled: the
    /// previous vocabulary stays).
    pub(crate) fn of(project: &mcp_resolve::Project) -> Option<Vocabulary> {
        let server = project.servers.first()?;
        let tools = server
            .tools
            .iter()
            .map(|tool| {
                let mut arguments = Vec::new();
                walk(&tool.input_schema, "", 0, &mut arguments);
                (tool.name.clone(), arguments)
            })
            .collect();
        let hints = server
            .hints
            .defs()
            .iter()
            .map(|d| d.name.to_string())
            .collect();
        let variants = server
            .tools
            .iter()
            .map(|tool| {
                let names = tool.variants.iter().map(|v| v.name.clone()).collect();
                (tool.name.clone(), names)
            })
            .collect();
        let scopes: std::collections::BTreeSet<String> = server
            .tools
            .iter()
            .flat_map(|tool| {
                let variants = tool.variants.iter().flat_map(|v| v.scopes());
                tool.required_scopes.iter().cloned().chain(variants)
            })
            .collect();
        Some(Vocabulary {
            tools,
            hints,
            variants,
            scopes: scopes.into_iter().collect(),
        })
    }

    /// The items at byte `at` of `text`.
    pub(crate) fn items(&self, text: &str, at: usize) -> Vec<CompletionItem> {
        let at = at.min(text.len());
        let before = &text[..at];
        let line = before.rsplit('\n').next().unwrap_or(before);
        let Some(tool) = self.enclosing_tool(before) else {
            return self.hint_items();
        };
        let arguments = &self.tools[tool];
        // After `ARG:`, `ARG ==` or `ARG in [`: that argument's values.
        if let Some(argument) = argument_before(line)
            && let Some(found) = arguments.iter().find(|a| a.path == argument)
            && !found.values.is_empty()
        {
            return found
                .values
                .iter()
                .map(|v| CompletionItem {
                    label: v.as_str().map_or_else(|| v.to_string(), str::to_string),
                    kind: Some(CompletionItemKind::ENUM_MEMBER),
                    detail: Some(format!("a value of `{argument}`")),
                    ..CompletionItem::default()
                })
                .collect();
        }
        if line.contains("annotations") {
            return self.hint_items();
        }
        arguments
            .iter()
            .map(|a| CompletionItem {
                label: a.path.clone(),
                kind: Some(CompletionItemKind::FIELD),
                detail: Some(format!("{} argument of `{tool}`", a.kind)),
                ..CompletionItem::default()
            })
            .collect()
    }

    fn hint_items(&self) -> Vec<CompletionItem> {
        self.hints
            .iter()
            .map(|h| CompletionItem {
                label: h.clone(),
                kind: Some(CompletionItemKind::PROPERTY),
                detail: Some("hint".into()),
                ..CompletionItem::default()
            })
            .collect()
    }

    /// The tool declared last before the cursor (`name: TOOL` in YAML,
    /// `tool TOOL` in `.rules`).
    fn enclosing_tool(&self, before: &str) -> Option<&str> {
        self.tools
            .keys()
            .filter_map(|name| {
                let yaml = before.rfind(&format!("name: {name}\n"));
                let yaml_quoted = before.rfind(&format!("name: \"{name}\""));
                let rules = before.rfind(&format!("tool {name} "));
                [yaml, yaml_quoted, rules]
                    .into_iter()
                    .flatten()
                    .max()
                    .map(|at| (at, name.as_str()))
            })
            .max()
            .map(|(_, name)| name)
    }
}

/// Each argument of `schema` (dotted path) with the values its schema
/// names (enum, const, both booleans).
pub(crate) fn named_values(schema: &Value) -> Vec<(String, Vec<Value>)> {
    let mut arguments = Vec::new();
    walk(schema, "", 0, &mut arguments);
    arguments
        .into_iter()
        .filter(|a| !a.values.is_empty())
        .map(|a| (a.path, a.values))
        .collect()
}

/// The schema's arguments, nested ones dotted (`options.force`).
fn walk(schema: &Value, prefix: &str, depth: usize, out: &mut Vec<Argument>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (name, property) in properties {
        let path = format!("{prefix}{name}");
        let kind = property.get("type").map_or_else(
            || "any".to_string(),
            |t| t.as_str().map_or_else(|| t.to_string(), str::to_string),
        );
        let mut values: Vec<Value> = property
            .get("enum")
            .and_then(Value::as_array)
            .cloned()
            .unwrap_or_default();
        if let Some(constant) = property.get("const") {
            values.push(constant.clone());
        }
        if kind == "boolean" {
            values = vec![Value::Bool(true), Value::Bool(false)];
        }
        out.push(Argument {
            path: path.clone(),
            kind,
            values,
        });
        if depth < 4 {
            walk(property, &format!("{path}."), depth + 1, out);
        }
    }
}

/// The argument a line names just before the cursor: `ARG: `, `ARG == `,
/// `ARG in [… `, `{ ARG: `.
fn argument_before(line: &str) -> Option<String> {
    let trimmed =
        line.trim_end_matches(|c: char| c.is_alphanumeric() || c == '"' || c == '_' || c == '-');
    let trimmed = trimmed.trim_end();
    let trimmed = trimmed
        .strip_suffix(':')
        .or_else(|| trimmed.strip_suffix("=="))
        .or_else(|| trimmed.strip_suffix("!="))
        .or_else(|| {
            let open = trimmed.rfind('[')?;
            trimmed[..open].trim_end().strip_suffix("in")
        })
        .or_else(|| trimmed.strip_suffix(','))?
        .trim_end();
    let word: String = trimmed
        .chars()
        .rev()
        .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.' || *c == '-')
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
        .collect();
    (!word.is_empty()).then_some(word)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn arguments_values_and_hints_where_they_belong() {
        let text = include_str!("../../../rules/file-server.yaml");
        let project = mcp_resolve::load_str("file-server.yaml", text);
        let vocabulary = Vocabulary::of(&project).unwrap();
        let labels = |at: usize| -> Vec<String> {
            vocabulary
                .items(text, at)
                .into_iter()
                .map(|i| i.label)
                .collect()
        };
        // In `when: { action: read }`, after `action: `: the enum.
        let at = text.find("when: { action: read }").unwrap() + "when: { action: ".len();
        assert_eq!(labels(at), ["read", "append", "replace", "delete"]);
        // After `when: { `: the arguments.
        let at = text.find("when: { action: read }").unwrap() + "when: { ".len();
        let arguments = labels(at);
        assert!(
            arguments.contains(&"path".to_string()) && arguments.contains(&"action".to_string()),
            "{arguments:?}"
        );
        // In a variant's annotations: hint names.
        let at = text.find("annotations: { readOnlyHint: true").unwrap() + "annotations: { ".len();
        let hints = labels(at);
        assert!(
            hints.contains(&"readOnlyHint".to_string())
                && hints.contains(&"agencyHint".to_string()),
            "{hints:?}"
        );
    }

    #[test]
    fn the_argument_before_the_cursor() {
        assert_eq!(
            argument_before("  when: { action: ").as_deref(),
            Some("action")
        );
        assert_eq!(
            argument_before("  when: { action: re").as_deref(),
            Some("action")
        );
        assert_eq!(
            argument_before("when 'options.force == ").as_deref(),
            Some("options.force")
        );
        assert_eq!(
            argument_before("when: 'action in [\"a\", ").as_deref(),
            Some("action")
        );
        assert_eq!(argument_before("  when: { ").as_deref(), None);
    }
}

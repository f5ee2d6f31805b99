//! `mcp-resolve import`: a rules file from the tools a server lists.
//!
//! Every tool is written as published — name, title, description, schemas,
//! annotations (with their `title`), icons, execution, `_meta` — so `check`
//! passes right away and the signature lists exactly what the server lists.
//! A tool with a discriminating argument (a string enum called `method`,
//! `action`, `operation`, `mode`, …) gets one variant per value, each with
//! the tool's own (safe) annotations and a comment that suggests what its
//! verb usually means; the author turns the suggestions into overrides.

use std::fmt::Write as _;

use serde_json::{Map, Value};

use crate::format::{FormatError, Syntax, format_file};
use mcp_resolve_runtime::Dialect;

/// The members of MCP's `Tool` a rules file carries.
const TOOL_MEMBERS: &[&str] = &[
    "name",
    "title",
    "description",
    "inputSchema",
    "outputSchema",
    "annotations",
    "icons",
    "execution",
    "_meta",
];

/// Argument names that usually select what a call does, most telling first.
const DISCRIMINATORS: &[&str] = &[
    "method",
    "action",
    "operation",
    "op",
    "mode",
    "command",
    "verb",
    "kind",
    "type",
];

/// Why tools could not be imported.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum ImportError {
    /// The input holds no list of tools.
    #[error("{0}")]
    NotToolsList(String),
    /// A tool is not an object with a string `name` and an object `inputSchema`.
    #[error("tool {index}: {message}")]
    BadTool {
        /// Its place in the list.
        index: usize,
        /// What is wrong.
        message: String,
    },
    /// The written rules do not pass `check`: a listed tool breaks MCP's
    /// rules (an `inputSchema` without `type: object`, an invalid schema, …).
    #[error(
        "the listed tools do not pass `check`, so nothing was written (lines below are those of the rules file it would have written):\n{0}"
    )]
    Check(String),
}

/// What an import wrote, beyond the rules text.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Imported {
    /// The rules file, in the syntax asked for.
    pub text: String,
    /// Members of a listed tool that are not part of MCP's `Tool`, left out.
    pub dropped: Vec<String>,
    /// How many tools got variants from a discriminating argument.
    pub with_variants: usize,
}

/// The tools of a `tools/list` result (`{"tools": […]}`), of a JSON-RPC
/// response carrying one, or of a bare array of tools.
pub fn tools_of(document: &Value) -> Result<&[Value], ImportError> {
    let result = document.get("result").unwrap_or(document);
    match result {
        Value::Array(tools) => Ok(tools),
        other => other
            .get("tools")
            .and_then(Value::as_array)
            .map(Vec::as_slice)
            .ok_or_else(|| {
                ImportError::NotToolsList(
                    "expected a tools/list result (`{\"tools\": [...]}`), a JSON-RPC response holding one, or an array of tools".into(),
                )
            }),
    }
}

/// Writes rules for `tools` of server `name`@`version` in `syntax`.
pub fn import(
    tools: &[Value],
    name: &str,
    version: &str,
    source: &str,
    syntax: Syntax,
) -> Result<Imported, ImportError> {
    let mut yaml = String::new();
    let mut imported = Imported::default();
    let _ = writeln!(
        yaml,
        "# Imported by `mcp-resolve import` from {}: every tool as the server lists it.",
        one_line(source)
    );
    yaml.push_str("version: 1\n");
    let server = serde_json::json!({ "name": name, "version": version });
    let _ = writeln!(yaml, "server: {server}");
    yaml.push_str(if tools.is_empty() {
        "tools: []\n"
    } else {
        "tools:\n"
    });
    for (index, tool) in tools.iter().enumerate() {
        write_tool(&mut yaml, &mut imported, index, tool)?;
    }
    let path = match syntax {
        Syntax::Yaml => "imported.yaml",
        Syntax::Rules => "imported.rules",
    };
    let project = crate::load_str("imported.yaml", &yaml);
    if project.has_errors() {
        let rendered =
            crate::diagnostic::render_human(&project.sources, &project.diagnostics, false);
        return Err(ImportError::Check(rendered));
    }
    imported.text =
        format_file(std::path::Path::new("imported.yaml"), &yaml, syntax).map_err(|e| match e {
            FormatError::Invalid(m) | FormatError::Internal(m) => {
                ImportError::Check(format!("{path}: {m}"))
            }
        })?;
    Ok(imported)
}

/// Writes the rules of one listed tool (`index` in the list) into `yaml`:
/// its members as the server lists them, a suggestion from its name, and a
/// variant per value of the argument that discriminates its calls.
fn write_tool(
    yaml: &mut String,
    imported: &mut Imported,
    index: usize,
    tool: &Value,
) -> Result<(), ImportError> {
    let Some(tool) = tool.as_object() else {
        return Err(ImportError::BadTool {
            index,
            message: "not an object".into(),
        });
    };
    let Some(tool_name) = tool.get("name").and_then(Value::as_str) else {
        return Err(ImportError::BadTool {
            index,
            message: "no string `name`".into(),
        });
    };
    if !tool.get("inputSchema").is_some_and(Value::is_object) {
        return Err(ImportError::BadTool {
            index,
            message: format!("`{tool_name}` has no object `inputSchema`"),
        });
    }
    // A resolvable marker is the dialect's, not the tool's.
    let tool = Dialect::unmark(tool);
    for key in tool.keys() {
        if !TOOL_MEMBERS.contains(&key.as_str()) {
            imported.dropped.push(format!("{tool_name}.{key}"));
        }
    }
    let discriminated = if safest(tool.get("annotations")) {
        None
    } else {
        discriminator(&tool["inputSchema"])
    };
    // A tool whose calls are all alike: what its name's verb usually
    // means, as a comment over it (a suggestion, never an annotation of
    // its own).
    if discriminated.is_none()
        && let Some(hint) = name_suggestion(tool_name, tool.get("annotations"))
    {
        let _ = writeln!(yaml, "  # {}: {hint}", one_line(tool_name));
    }
    let _ = writeln!(yaml, "  - name: {}", json(&Value::String(tool_name.into())));
    for key in &TOOL_MEMBERS[1..] {
        let value = match (*key, tool.get(*key)) {
            // The static set is what the server publishes: MCP's defaults
            // when it publishes none.
            ("annotations", None) => Some(Value::Object(Map::new())),
            (_, value) => value.cloned(),
        };
        if let Some(value) = value {
            let _ = writeln!(yaml, "    {key}: {}", json(&value));
        }
    }
    write_variants(yaml, imported, discriminated);
    Ok(())
}
/// One variant per value of the discriminating `argument`, each with its
/// suggestion as a comment.
fn write_variants(
    yaml: &mut String,
    imported: &mut Imported,
    discriminated: Option<(String, Vec<String>)>,
) {
    if let Some((argument, values)) = discriminated {
        imported.with_variants += 1;
        let _ = writeln!(
            yaml,
            "    # One variant per `{argument}`; each keeps the tool's annotations (safe)."
        );
        yaml.push_str("    # Override the hints each call really has, as suggested.\n");
        yaml.push_str("    variants:\n");
        for value in values {
            if let Some(hint) = suggestion(&value) {
                let _ = writeln!(yaml, "      # {}: {hint}", one_line(&value));
            }
            let when = serde_json::json!({ argument.clone(): value });
            let _ = writeln!(
                yaml,
                "      - name: {}\n        when: {}",
                json(&Value::String(value.clone())),
                json(&when)
            );
        }
    }
}

/// JSON text, which YAML reads as flow style; `fmt` makes it canonical.
fn json(value: &Value) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

fn one_line(s: &str) -> String {
    s.replace(['\n', '\r'], " ")
}

/// Whether `annotations` are already the safest set (read-only and
/// closed-world): no variant could say less about a call, so none is written.
fn safest(annotations: Option<&Value>) -> bool {
    let hint = |name: &str| {
        annotations
            .and_then(|a| a.get(name))
            .and_then(Value::as_bool)
    };
    hint("readOnlyHint") == Some(true) && hint("openWorldHint") == Some(false)
}

/// The argument that selects what a call does: a top-level string enum of
/// two or more values, named like one (`method`, `action`, …), else the
/// first required one.
fn discriminator(schema: &Value) -> Option<(String, Vec<String>)> {
    let props = schema.get("properties")?.as_object()?;
    let string_enum = |name: &str| -> Option<Vec<String>> {
        let values = props.get(name)?.get("enum")?.as_array()?;
        let strings: Vec<String> = values
            .iter()
            .map(|v| v.as_str().map(str::to_string))
            .collect::<Option<_>>()?;
        let unique: std::collections::BTreeSet<&String> = strings.iter().collect();
        let usable = strings.iter().all(|s| !s.is_empty());
        (usable && unique.len() >= 2 && unique.len() == strings.len()).then_some(strings)
    };
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    DISCRIMINATORS
        .iter()
        .copied()
        .chain(required.iter().copied())
        .find_map(|name| string_enum(name).map(|values| (name.to_string(), values)))
}

/// What a tool's name says it does (its first word: `get_file`,
/// `list-issues`, `searchRepos`), as a suggestion for a tool that is not
/// already as safe as that: nothing for a read-only tool named like a read.
fn name_suggestion(name: &str, annotations: Option<&Value>) -> Option<&'static str> {
    let first: String = name
        .chars()
        .take_while(|c| c.is_ascii_alphanumeric() && !c.is_ascii_uppercase())
        .collect();
    let hint = suggestion(if first.is_empty() { name } else { &first })?;
    let read_only = annotations
        .and_then(|a| a.get("readOnlyHint"))
        .and_then(Value::as_bool)
        == Some(true);
    (!(read_only && hint.starts_with("reads?"))).then_some(hint)
}

/// What a verb usually means, as a hint override to consider.
fn suggestion(value: &str) -> Option<&'static str> {
    let verb = value
        .split(|c: char| !c.is_ascii_alphanumeric())
        .next()
        .unwrap_or(value)
        .to_ascii_lowercase();
    const READ: &[&str] = &[
        "get", "list", "read", "search", "find", "show", "view", "fetch", "query", "describe",
        "count", "stat", "status", "check", "inspect", "download", "export",
    ];
    const ADD: &[&str] = &[
        "create",
        "add",
        "append",
        "insert",
        "post",
        "new",
        "upload",
        "comment",
        "open",
        "approve",
        "reject",
        "request",
        "submit",
        "send",
        "reply",
        "react",
        "assign",
        "invite",
        "fork",
        "star",
        "subscribe",
        "follow",
    ];
    const CHANGE: &[&str] = &["update", "edit", "set", "patch", "rename", "move", "merge"];
    const DESTROY: &[&str] = &[
        "delete",
        "remove",
        "replace",
        "overwrite",
        "drop",
        "clear",
        "purge",
        "destroy",
        "truncate",
        "reset",
        "close",
        "lock",
        "archive",
    ];
    if READ.contains(&verb.as_str()) {
        Some("reads? consider `annotations: { readOnlyHint: true }`")
    } else if ADD.contains(&verb.as_str()) {
        Some("adds? consider `annotations: { readOnlyHint: false, destructiveHint: false }`")
    } else if CHANGE.contains(&verb.as_str()) {
        Some("changes in place? keep `destructiveHint: true` unless nothing is lost")
    } else if DESTROY.contains(&verb.as_str()) {
        Some("destroys or replaces: keep `destructiveHint: true`")
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_discriminator_is_a_named_string_enum_or_the_first_required_one() {
        let s = json!({"type": "object", "properties": {
            "x": {"type": "string", "enum": ["a", "b"]},
            "action": {"type": "string", "enum": ["get", "delete"]}}});
        assert_eq!(discriminator(&s).unwrap().0, "action");
        let s = json!({"type": "object", "required": ["x"], "properties": {
            "x": {"type": "string", "enum": ["a", "b"]}}});
        assert_eq!(discriminator(&s).unwrap().0, "x");
        let s = json!({"type": "object", "properties": {
            "action": {"type": "string", "enum": ["only"]}}});
        assert!(discriminator(&s).is_none());
    }

    #[test]
    fn verbs_suggest_hints() {
        assert!(
            suggestion("list_issues")
                .unwrap()
                .contains("readOnlyHint: true")
        );
        assert!(
            suggestion("delete")
                .unwrap()
                .contains("destructiveHint: true")
        );
        assert!(
            suggestion("create")
                .unwrap()
                .contains("destructiveHint: false")
        );
        assert!(suggestion("frobnicate").is_none());
    }

    /// A tool is suggested what its name's verb usually means, as a comment
    /// over it and never as an annotation; not a read to a tool the server
    /// already lists as read-only. Every value of a review's `event` gets one.
    #[test]
    fn tool_names_suggest_hints_as_comments() {
        let tools = [
            json!({"name": "get_file_contents", "inputSchema": {"type": "object"}}),
            json!({"name": "list_issues", "inputSchema": {"type": "object"},
                   "annotations": {"readOnlyHint": true}}),
            json!({"name": "searchRepositories", "inputSchema": {"type": "object"}}),
            json!({"name": "create_pull_request_review", "inputSchema": {"type": "object",
                   "properties": {"event": {"type": "string",
                                            "enum": ["APPROVE", "REQUEST_CHANGES", "COMMENT"]}},
                   "required": ["event"]}}),
        ];
        let imported = import(&tools, "s", "1", "test", Syntax::Yaml).unwrap();
        let text = &imported.text;
        for line in [
            "  # get_file_contents: reads? consider `annotations: { readOnlyHint: true }`\n  - name: get_file_contents",
            "  # searchRepositories: reads?",
            "      # APPROVE: adds?",
            "      # REQUEST_CHANGES: adds?",
            "      # COMMENT: adds?",
        ] {
            assert!(text.contains(line), "{line}\n{text}");
        }
        assert!(!text.contains("# list_issues"), "{text}");
        // Suggestions stay comments: the published (empty) annotations hold.
        let project = crate::load_str("imported.yaml", text);
        let tool = &project.servers[0].tools[0];
        assert_eq!(tool.written_annotations.as_deref().map(<[_]>::len), Some(0));
    }
}

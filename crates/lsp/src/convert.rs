//! The compiler's findings as the protocol's: byte spans as UTF-16
//! positions, codes, severities, related locations, help.

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, DiagnosticRelatedInformation, DiagnosticSeverity, Location,
    NumberOrString, Position, Range, TextEdit, Uri, WorkspaceEdit,
};
use mcp_resolve::diagnostic::{Diagnostic, Severity};
use mcp_resolve::source::{SourceFile, Span};

/// The path the compiler is given for the document at `uri` (its syntax
/// follows the extension); `None` for a document that is not a rules file.
pub(crate) fn rules_path(uri: &Uri) -> Option<String> {
    let text = uri.as_str();
    let path = file_path(uri)
        .unwrap_or_else(|| text.rsplit(['/', ':']).next().unwrap_or(text).to_string());
    let lower = path.to_ascii_lowercase();
    [".yaml", ".yml", ".rules"]
        .iter()
        .any(|ext| lower.ends_with(ext))
        .then_some(path)
}

/// The local path a `file:` URI names (`None` for another scheme).
pub(crate) fn file_path(uri: &Uri) -> Option<String> {
    uri.as_str().strip_prefix("file://").map(decode)
}

/// Whether a file's name is a rules file's (`.yaml`, `.yml`, `.rules`).
pub(crate) fn is_rules_path(path: &std::path::Path) -> bool {
    let name = path.to_string_lossy().to_ascii_lowercase();
    [".yaml", ".yml", ".rules"]
        .iter()
        .any(|ext| name.ends_with(ext))
}

/// Whether the document is a rules file: `.rules`, or YAML with a
/// top-level `tools:` or `server:` (other YAML — a policy, a CI workflow —
/// is not this server's to check).
pub(crate) fn is_rules(path: &str, text: &str) -> bool {
    path.to_ascii_lowercase().ends_with(".rules")
        || text
            .lines()
            .any(|line| line.starts_with("tools:") || line.starts_with("server:"))
}

/// `%XX` escapes decoded (what is not valid UTF-8 stays as written).
fn decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = text
                .get(i + 1..i + 3)
                .and_then(|hex| u8::from_str_radix(hex, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

/// A file's path as a `file:` URI.
pub(crate) fn file_uri(path: &std::path::Path) -> Option<Uri> {
    let absolute = std::path::absolute(path).ok()?;
    let mut text = String::from("file://");
    for byte in absolute.to_string_lossy().bytes() {
        if byte.is_ascii_alphanumeric() || b"/-._~".contains(&byte) {
            text.push(byte as char);
        } else {
            text.push_str(&format!("%{byte:02X}"));
        }
    }
    text.parse().ok()
}

/// The protocol position of byte `offset` of `file` (0-based line, UTF-16
/// column).
pub(crate) fn position(file: &SourceFile, offset: usize) -> Position {
    let offset = offset.min(file.text.len());
    let (line, _) = file.line_col(offset);
    let start = file.offset_of(line, 1);
    let column = file
        .text
        .get(start..offset)
        .map_or(0, |s| s.encode_utf16().count());
    Position::new((line - 1) as u32, column as u32)
}

/// The position just past the end of `text`.
pub(crate) fn end_of(text: &str) -> Position {
    let line = text.matches('\n').count();
    let start = text.rfind('\n').map_or(0, |i| i + 1);
    Position::new(line as u32, text[start..].encode_utf16().count() as u32)
}

fn range(file: &SourceFile, span: Span) -> Range {
    Range::new(position(file, span.start), position(file, span.end))
}

/// The document's diagnostics: `project`'s, in the protocol's terms. A
/// finding in another file (a schema file) is shown at the top of the
/// document, with the place as related information; one in another rules
/// file of the same server (`others`) is shown where it touches the
/// document (a related place in it: the first definition of a tool defined
/// again there), and left to that file otherwise.
pub(crate) fn diagnostics(
    project: &mcp_resolve::Project,
    uri: &Uri,
    others: &[std::path::PathBuf],
) -> Vec<lsp_types::Diagnostic> {
    let document = project.sources.files().next().map(|(id, _)| id);
    let elsewhere = |span: Option<Span>| {
        span.and_then(|s| project.sources.get(s.file))
            .is_some_and(|file| others.contains(&file.path))
    };
    let location = |span: Span| -> Option<Location> {
        let file = project.sources.get(span.file)?;
        let uri = if Some(span.file) == document {
            uri.clone()
        } else {
            file_uri(&file.path)?
        };
        Some(Location::new(uri, range(file, span)))
    };
    let in_document = |span: Span| Some(span.file) == document;
    project
        .diagnostics
        .iter()
        .filter(|d| !elsewhere(d.span) || d.related.iter().any(|l| in_document(l.span)))
        .map(|d| {
            let mut related: Vec<DiagnosticRelatedInformation> = d
                .related
                .iter()
                .filter_map(|label| {
                    Some(DiagnosticRelatedInformation {
                        location: location(label.span)?,
                        message: label.message.clone(),
                    })
                })
                .collect();
            let at = match d.span {
                Some(span) if Some(span.file) == document => location(span).map(|l| l.range),
                // Another file's finding: shown at its place in this one.
                Some(span) if elsewhere(Some(span)) => {
                    if let Some(place) = location(span) {
                        related.insert(
                            0,
                            DiagnosticRelatedInformation {
                                location: place,
                                message: d.label.clone().unwrap_or_else(|| "here".into()),
                            },
                        );
                    }
                    d.related
                        .iter()
                        .find(|l| in_document(l.span))
                        .and_then(|l| location(l.span))
                        .map(|l| l.range)
                }
                Some(span) => {
                    if let Some(place) = location(span) {
                        related.insert(
                            0,
                            DiagnosticRelatedInformation {
                                location: place,
                                message: d.label.clone().unwrap_or_else(|| "here".into()),
                            },
                        );
                    }
                    None
                }
                None => None,
            };
            convert(d, at.unwrap_or_default(), related)
        })
        .collect()
}

/// The quick fixes of the document's findings that touch `range`: each
/// finding's own fix (the check that found it knows it), as an edit of the
/// document.
pub(crate) fn fixes(project: &mcp_resolve::Project, uri: &Uri, range: Range) -> Vec<CodeAction> {
    let Some((document, file)) = project.sources.files().next() else {
        return Vec::new();
    };
    let touches = |r: Range| r.start <= range.end && range.start <= r.end;
    let mut seen = Vec::new();
    project
        .diagnostics
        .iter()
        .filter_map(|d| {
            let at = d
                .span
                .filter(|s| s.file == document)
                .map(|s| self::range(file, s))?;
            let (title, span, replacement) = match &d.fix {
                Some(fix) => (fix.message.clone(), fix.span, fix.replacement.clone()),
                // An unreachable variant: its whole entry removed.
                // A non-exhaustive tool: a variant for its example call,
                // after its last one (the static annotations until the
                // author writes its own).
                None if d.code.as_str() == "non-exhaustive" => {
                    let tool = project
                        .servers
                        .iter()
                        .flat_map(|s| &s.tools)
                        .find(|t| Some(&t.name) == d.tool.as_ref())?;
                    let last = tool.variants.last()?;
                    let (_, end) = variant_block(&file.text, last.loc.0.start)?;
                    let entry =
                        variant_entry(&file.text, last.loc.0.start, tool, d.example.as_ref()?)?;
                    (
                        "add a variant for the call that matches none".to_string(),
                        mcp_resolve::source::Span::new(document, end, end),
                        entry,
                    )
                }
                None if d.code.as_str() == "unreachable-variant" => {
                    let (from, to) = variant_block(&file.text, d.span?.start)?;
                    let name = d.variant.clone().unwrap_or_default();
                    (
                        format!("remove the unreachable variant `{name}`"),
                        mcp_resolve::source::Span::new(document, from, to),
                        String::new(),
                    )
                }
                None => return None,
            };
            if span.file != document || !(touches(at) || touches(self::range(file, span))) {
                return None;
            }
            // One action per edit, however many findings it resolves.
            let edit = TextEdit::new(self::range(file, span), replacement);
            if seen.contains(&edit) {
                return None;
            }
            seen.push(edit.clone());
            Some(CodeAction {
                title,
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![convert(d, at, Vec::new())]),
                edit: Some(WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), vec![edit])])),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            })
        })
        .collect()
}

/// A new variant for `example` (a call's arguments), written like the
/// variant whose name is at `like` (its indentation, its syntax): each
/// scalar argument as an equality, nested ones by dotted path.
fn variant_entry(
    text: &str,
    like: usize,
    tool: &mcp_resolve::ir::Tool,
    example: &serde_json::Value,
) -> Option<String> {
    let line_start = text[..like].rfind('\n').map_or(0, |i| i + 1);
    let first = text[line_start..].lines().next()?;
    let indent = &first[..first.len() - first.trim_start().len()];
    let mut pairs = Vec::new();
    flatten(example, "", &mut pairs);
    let mut name = "uncovered".to_string();
    let mut n = 1;
    while tool.variants.iter().any(|v| v.name == name) {
        n += 1;
        name = format!("uncovered{n}");
    }
    if first.trim_start().starts_with("variant ") {
        let condition = if pairs.is_empty() {
            "true".to_string()
        } else {
            pairs
                .iter()
                .map(|(path, value)| format!("{path} == {value}"))
                .collect::<Vec<_>>()
                .join(" && ")
        };
        return Some(format!("{indent}variant {name} when {condition} {{ }}\n"));
    }
    let when = pairs
        .iter()
        .map(|(path, value)| format!("{path}: {value}"))
        .collect::<Vec<_>>()
        .join(", ");
    Some(format!(
        "{indent}- name: {name}\n{indent}  when: {{ {when} }}\n"
    ))
}

/// The scalar members of `value`, by dotted path, as JSON text.
fn flatten(value: &serde_json::Value, prefix: &str, out: &mut Vec<(String, String)>) {
    if let serde_json::Value::Object(members) = value {
        for (key, member) in members {
            let path = if prefix.is_empty() {
                key.clone()
            } else {
                format!("{prefix}.{key}")
            };
            match member {
                serde_json::Value::Object(_) => flatten(member, &path, out),
                serde_json::Value::Array(_) => {}
                scalar => out.push((path, scalar.to_string())),
            }
        }
    }
}

/// The bytes of the variant entry whose name is written at `start`: whole
/// lines, from the entry's first to the line before the next entry or the
/// end of the block (YAML: lines indented deeper than the entry's `-`;
/// `.rules`: through the brace that closes `variant … {`).
fn variant_block(text: &str, start: usize) -> Option<(usize, usize)> {
    let line_start = text[..start].rfind('\n').map_or(0, |i| i + 1);
    let first = text[line_start..].lines().next()?;
    let indent = first.len() - first.trim_start().len();
    let next_line = |from: usize| text[from..].find('\n').map_or(text.len(), |i| from + i + 1);
    if first.trim_start().starts_with("variant ") {
        // `.rules`: through the matching closing brace.
        let open = start + text[start..].find('{')?;
        let mut depth = 0usize;
        for (i, c) in text[open..].char_indices() {
            match c {
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        return Some((line_start, next_line(open + i)));
                    }
                }
                _ => {}
            }
        }
        return None;
    }
    // YAML: the `- name: …` line, then every line indented deeper.
    let mut end = next_line(line_start);
    while end < text.len() {
        let this = text[end..].lines().next().unwrap_or("");
        let own = this.len() - this.trim_start().len();
        if !this.trim().is_empty() && own <= indent {
            break;
        }
        end = next_line(end);
    }
    Some((line_start, end))
}

fn convert(
    d: &Diagnostic,
    range: Range,
    related: Vec<DiagnosticRelatedInformation>,
) -> lsp_types::Diagnostic {
    let mut message = d.message.clone();
    if let Some(label) = &d.label {
        message.push_str(&format!(" ({label})"));
    }
    if let Some(help) = &d.help {
        message.push_str(&format!("\nhelp: {help}"));
    }
    lsp_types::Diagnostic {
        range,
        severity: Some(match d.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
            Severity::Info => DiagnosticSeverity::INFORMATION,
        }),
        code: Some(NumberOrString::String(d.code.as_str().into())),
        source: Some("mcp-resolve".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        data: Some(serde_json::json!({"tool": d.tool, "variant": d.variant})),
        ..lsp_types::Diagnostic::default()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn rules_files_are_known_by_their_extension() {
        let uri = |s: &str| s.parse::<Uri>().unwrap();
        assert_eq!(
            rules_path(&uri("file:///home/a%20b/x.rules")).as_deref(),
            Some("/home/a b/x.rules")
        );
        assert_eq!(
            rules_path(&uri("untitled:Untitled-1.yaml")).as_deref(),
            Some("Untitled-1.yaml")
        );
        assert!(rules_path(&uri("file:///a/readme.md")).is_none());
        // YAML that is not a rules file is left alone.
        assert!(is_rules(
            "x.yaml",
            "version: 1\nserver: { name: s }\ntools: []\n"
        ));
        assert!(!is_rules(
            "policy.yaml",
            "version: 1\ndefault: allow\nrules: []\n"
        ));
        assert!(is_rules("x.rules", ""));
    }

    #[test]
    fn typos_are_fixed_by_the_closest_name() {
        let text = include_str!("../../../rules/file-server.yaml")
            .replacen("when: { action: read }", "when: { actoin: read }", 1)
            .replacen(
                "annotations: { destructiveHint: false }",
                "annotations: { destructivHint: false }",
                1,
            );
        let project = mcp_resolve::load_str("file-server.yaml", &text);
        let uri: Uri = "file:///r/file-server.yaml".parse().unwrap();
        let everywhere = Range::new(Position::new(0, 0), Position::new(9999, 0));
        let titles: Vec<String> = fixes(&project, &uri, everywhere)
            .into_iter()
            .map(|a| a.title)
            .collect();
        assert!(
            titles.contains(&"replace with `action`".to_string()),
            "{titles:?}"
        );
        assert!(
            titles.contains(&"replace with `destructiveHint`".to_string()),
            "{titles:?}"
        );
        // Applied, the file checks clean again.
        let mut fixed = text.clone();
        for action in fixes(&project, &uri, everywhere).into_iter().rev() {
            let edits = &action.edit.unwrap().changes.unwrap()[&uri];
            let (_, file) = project.sources.files().next().unwrap();
            let start = file.offset_of(
                edits[0].range.start.line as usize + 1,
                edits[0].range.start.character as usize + 1,
            );
            let end = file.offset_of(
                edits[0].range.end.line as usize + 1,
                edits[0].range.end.character as usize + 1,
            );
            fixed.replace_range(start..end, &edits[0].new_text);
        }
        let again = mcp_resolve::load_str("file-server.yaml", &fixed);
        assert!(
            again
                .diagnostics
                .iter()
                .all(|d| d.severity != mcp_resolve::diagnostic::Severity::Error),
            "{fixed}"
        );
    }

    #[test]
    fn an_unreachable_variant_is_removed_whole_in_either_syntax() {
        let yaml = include_str!("../../../rules/file-server.yaml").replacen(
            "    variants:\n",
            "    variants:\n      - name: early\n        when: { action: read }\n        annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true }\n        requiredScopes: [files:read]\n",
            1,
        );
        let project = mcp_resolve::load_str("file-server.yaml", &yaml);
        let uri: Uri = "file:///r/file-server.yaml".parse().unwrap();
        let everywhere = Range::new(Position::new(0, 0), Position::new(9999, 0));
        let actions = fixes(&project, &uri, everywhere);
        let titles: Vec<&String> = actions.iter().map(|a| &a.title).collect();
        let removal = actions
            .iter()
            .find(|a| a.title == "remove the unreachable variant `read`")
            .unwrap_or_else(|| panic!("{titles:?}"));
        let edit = &removal.edit.as_ref().unwrap().changes.as_ref().unwrap()[&uri][0];
        let (_, file) = project.sources.files().next().unwrap();
        let start = file.offset_of(edit.range.start.line as usize + 1, 1);
        let end = file.offset_of(edit.range.end.line as usize + 1, 1);
        let mut fixed = yaml.clone();
        fixed.replace_range(start..end, "");
        assert!(!fixed.contains("- name: read\n"), "{fixed}");
        assert!(
            fixed.contains("- name: early") && fixed.contains("- name: append"),
            "{fixed}"
        );
        let again = mcp_resolve::load_str("file-server.yaml", &fixed);
        assert!(
            !again
                .diagnostics
                .iter()
                .any(|d| d.code.as_str() == "unreachable-variant"),
            "{fixed}"
        );
        // `.rules`: through the closing brace.
        let rules = "tool t {\n  variant a when x == 1 {\n    annotations { readOnlyHint: true }\n  }\n  variant b when x == 2 { }\n}\n";
        let at = rules.find("a when").unwrap();
        let (from, to) = variant_block(rules, at).unwrap();
        assert_eq!(
            &rules[from..to],
            "  variant a when x == 1 {\n    annotations { readOnlyHint: true }\n  }\n"
        );
    }

    #[test]
    fn a_call_that_matches_no_variant_gets_a_variant_of_its_own() {
        // `append` removed: a call with `action: append` matches none.
        let original = include_str!("../../../rules/file-server.yaml");
        let at = original.find("      - name: append").unwrap();
        let end = original.find("      - name: overwrite").unwrap();
        let text = format!("{}{}", &original[..at], &original[end..]);
        let project = mcp_resolve::load_str("file-server.yaml", &text);
        let uri: Uri = "file:///r/file-server.yaml".parse().unwrap();
        let everywhere = Range::new(Position::new(0, 0), Position::new(9999, 0));
        let actions = fixes(&project, &uri, everywhere);
        let add = actions
            .iter()
            .find(|a| a.title == "add a variant for the call that matches none")
            .unwrap_or_else(|| {
                panic!("{:?}", actions.iter().map(|a| &a.title).collect::<Vec<_>>())
            });
        let edit = &add.edit.as_ref().unwrap().changes.as_ref().unwrap()[&uri][0];
        assert!(
            edit.new_text
                .starts_with("      - name: uncovered\n        when: { "),
            "{}",
            edit.new_text
        );
        let (_, file) = project.sources.files().next().unwrap();
        let offset = file.offset_of(edit.range.start.line as usize + 1, 1);
        let mut fixed = text.clone();
        fixed.insert_str(offset, &edit.new_text);
        // The example call now resolves to the new variant.
        let again = mcp_resolve::load_str("file-server.yaml", &fixed);
        let example = project
            .diagnostics
            .iter()
            .find_map(|d| d.example.clone())
            .unwrap();
        let server = &again.servers[0];
        let resolver = mcp_resolve::Resolver::new(server).unwrap();
        let resolution = resolver.resolve("manage_files", &example).unwrap();
        assert_eq!(resolution.variant.as_deref(), Some("uncovered"), "{fixed}");
        // In `.rules`: a `variant … when … { }` block after the last one.
        let rules = include_str!("../../../tests/fixtures/lsp/non-exhaustive.rules");
        let project = mcp_resolve::load_str("t.rules", rules);
        let uri: Uri = "file:///r/t.rules".parse().unwrap();
        let actions = fixes(&project, &uri, everywhere);
        let edit = &actions[0].edit.as_ref().unwrap().changes.as_ref().unwrap()[&uri][0];
        assert_eq!(edit.new_text, "  variant uncovered when a == \"y\" { }\n");
        let (_, file) = project.sources.files().next().unwrap();
        let mut fixed = rules.to_string();
        fixed.insert_str(
            file.offset_of(edit.range.start.line as usize + 1, 1),
            &edit.new_text,
        );
        let again = mcp_resolve::load_str("t.rules", &fixed);
        assert!(
            !again
                .diagnostics
                .iter()
                .any(|d| d.code.as_str() == "non-exhaustive"),
            "{fixed}"
        );
    }

    #[test]
    fn positions_count_utf16_units() {
        let project = mcp_resolve::load_str("x.yaml", "a: é😀b\n");
        let (_, file) = project.sources.files().next().unwrap();
        // `b` is after `é` (1 unit) and `😀` (2 units), from column 3.
        let offset = file.text.find('b').unwrap();
        assert_eq!(position(file, offset), Position::new(0, 6));
        assert_eq!(position(file, file.text.len()), Position::new(1, 0));
    }
}

//! Completion in the proxy's YAML policies (`proxy --policy FILE.yaml`):
//! the names a policy's `when` can hold, taken from the rules files nearby —
//! tools, their variants in `variant:` (those of the rule's `tool:` when it
//! names some), scopes, hints — and the keys and decisions the policy
//! schema allows (the policy crate's schema is their one home).
//!
//! The rules a policy is written against are not named in it (the proxy is
//! given both), so they are looked for where an author keeps them: the
//! rules files open in the editor, those in the policy's directory, and
//! those at the workspace's roots and in their `rules/` directories.

use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use lsp_types::{CompletionItem, CompletionItemKind};
use serde_json::Value;

use crate::complete::Vocabulary;

/// The largest rules file read from disk for a policy's names.
const MOST_BYTES: u64 = 8 * 1024 * 1024;

/// Whether a YAML document that is not a rules file is a policy: a
/// top-level `default:` or `rules:`.
pub(crate) fn is_policy(path: &str, text: &str) -> bool {
    let lower = path.to_ascii_lowercase();
    (lower.ends_with(".yaml") || lower.ends_with(".yml"))
        && text
            .lines()
            .any(|line| line.starts_with("default:") || line.starts_with("rules:"))
}

/// What the rules near a policy name, merged.
#[derive(Default)]
pub(crate) struct Names {
    /// Each tool's variants (tools of several files merged).
    variants: BTreeMap<String, BTreeSet<String>>,
    scopes: BTreeSet<String>,
    hints: BTreeSet<String>,
}

impl Names {
    pub(crate) fn add(&mut self, vocabulary: &Vocabulary) {
        for (tool, variants) in &vocabulary.variants {
            let known = self.variants.entry(tool.clone()).or_default();
            known.extend(variants.iter().cloned());
        }
        self.scopes.extend(vocabulary.scopes.iter().cloned());
        self.hints.extend(vocabulary.hints.iter().cloned());
    }
}

/// The vocabularies of rules files on disk, by path, read again when a
/// file's modification time changes.
#[derive(Default)]
pub(crate) struct OnDisk {
    read: RefCell<HashMap<PathBuf, (SystemTime, Option<Vocabulary>)>>,
}

impl OnDisk {
    /// The rules files of `directories` (not descending), each file once,
    /// in path order, with their vocabularies.
    pub(crate) fn vocabularies(&self, directories: &[PathBuf]) -> Vec<(PathBuf, Vocabulary)> {
        let mut paths = BTreeSet::new();
        for directory in directories {
            let Ok(entries) = std::fs::read_dir(directory) else {
                continue;
            };
            paths.extend(
                entries
                    .filter_map(Result::ok)
                    .map(|e| e.path())
                    .filter(|p| crate::convert::is_rules_path(p)),
            );
        }
        paths
            .into_iter()
            .filter_map(|path| {
                let vocabulary = self.vocabulary(&path)?;
                Some((path, vocabulary))
            })
            .collect()
    }

    fn vocabulary(&self, path: &Path) -> Option<Vocabulary> {
        let metadata = std::fs::metadata(path).ok()?;
        let modified = metadata.modified().ok()?;
        let mut read = self.read.borrow_mut();
        if let Some((at, vocabulary)) = read.get(path)
            && *at == modified
        {
            return vocabulary.clone();
        }
        let vocabulary = (metadata.is_file() && metadata.len() <= MOST_BYTES)
            .then(|| std::fs::read_to_string(path).ok())
            .flatten()
            .filter(|text| crate::convert::is_rules(&path.to_string_lossy(), text))
            .and_then(|text| {
                let options = mcp_resolve::LoadOptions::default();
                let project =
                    mcp_resolve::load_str_with(&path.to_string_lossy(), &text, false, &options);
                Vocabulary::of(&project)
            });
        read.insert(path.to_path_buf(), (modified, vocabulary.clone()));
        vocabulary
    }
}

/// Where a policy's rules are looked for: its directory, then each root
/// and its `rules/` directory.
pub(crate) fn directories(policy: &Path, roots: &[PathBuf]) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = policy.parent().map(Path::to_path_buf).into_iter().collect();
    for root in roots {
        out.push(root.clone());
        out.push(root.join("rules"));
    }
    out.dedup();
    out
}

/// The value of which key the cursor is in, and what the rule it is in
/// says of its tools.
struct Place<'t> {
    key: &'t str,
    tools: Vec<&'t str>,
}

/// The items at byte `at` of the policy `text`.
pub(crate) fn items(names: &Names, text: &str, at: usize) -> Vec<CompletionItem> {
    let at = at.min(text.len());
    let schema: Value =
        serde_json::from_str(&mcp_resolve_policy::policy_schema()).unwrap_or_default();
    let when_keys = &schema["properties"]["rules"]["items"]["properties"]["when"]["properties"];
    let decisions: Vec<&str> = schema["$defs"]["decision"]["enum"]
        .as_array()
        .map(|values| values.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let Some(place) = place(text, at) else {
        return Vec::new();
    };
    let item = |label: &str, kind, detail: String| CompletionItem {
        label: label.to_string(),
        kind: Some(kind),
        detail: Some(detail),
        ..CompletionItem::default()
    };
    match place.key {
        "default" | "decision" => decisions
            .iter()
            .map(|d| item(d, CompletionItemKind::ENUM_MEMBER, "decision".into()))
            .collect(),
        "tool" => names
            .variants
            .keys()
            .map(|t| item(t, CompletionItemKind::VALUE, "tool".into()))
            .collect(),
        "variant" => {
            // Each variant once, saying which tools have it.
            let mut found: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
            for (tool, variants) in &names.variants {
                if place.tools.is_empty() || place.tools.contains(&tool.as_str()) {
                    for variant in variants {
                        found.entry(variant).or_default().push(tool);
                    }
                }
            }
            found
                .into_iter()
                .map(|(variant, tools)| {
                    let tools = tools.iter().map(|t| format!("`{t}`")).collect::<Vec<_>>();
                    let detail = format!("variant of {}", tools.join(", "));
                    item(variant, CompletionItemKind::ENUM_MEMBER, detail)
                })
                .collect()
        }
        "scopes" => names
            .scopes
            .iter()
            .map(|s| item(s, CompletionItemKind::VALUE, "scope".into()))
            .collect(),
        "when" => {
            let keys = when_keys.as_object().into_iter().flatten();
            let mut seen = BTreeSet::new();
            let mut out: Vec<CompletionItem> = keys
                .filter(|(key, _)| seen.insert(key.to_string()))
                .map(|(key, schema)| {
                    let detail = schema["description"].as_str().unwrap_or("hint").to_string();
                    item(key, CompletionItemKind::PROPERTY, detail)
                })
                .collect();
            // Hints the rules declare beyond the schema's.
            out.extend(
                names
                    .hints
                    .iter()
                    .filter(|h| seen.insert(h.to_string()))
                    .map(|h| item(h, CompletionItemKind::PROPERTY, "hint".into())),
            );
            out
        }
        _ => Vec::new(),
    }
}

/// The key whose value the cursor is in (`when` for a key of a `when`
/// mapping), and the tools the enclosing rule names.
fn place(text: &str, at: usize) -> Option<Place<'_>> {
    let before = &text[..at];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    let line = &before[line_start..];
    let rule_start = rule_start(text, line_start);
    let line_end = text[at..].find('\n').map_or(text.len(), |i| at + i);
    let tools = tools_of(&text[rule_start..line_end]);
    // In a flow mapping or on a `key: value` line: the last key before the
    // cursor whose value has not ended.
    if let Some(key) = value_key(line) {
        return Some(Place { key, tools });
    }
    // A key of `when`: inside `when: {` or on a line under `when:`.
    let opened = line.rfind('{');
    if opened.is_some_and(|o| line[..o].trim_end().ends_with("when:")) {
        return Some(Place { key: "when", tools });
    }
    // A block sequence item or a key under a block key: the key of the
    // nearest line above that is less indented.
    let indent = line.len() - line.trim_start().len();
    let item = line.trim_start().starts_with('-');
    for above in text[..line_start].lines().rev() {
        let trimmed = above.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let depth = above.len() - trimmed.len();
        if depth < indent || (item && depth <= indent && !trimmed.starts_with('-')) {
            let key = trimmed.trim_start_matches("- ").strip_suffix(':')?.trim();
            return match key {
                "when" => Some(Place { key: "when", tools }),
                "tool" | "variant" | "scopes" if item => Some(Place { key, tools }),
                _ => None,
            };
        }
    }
    None
}

/// Where the rule around byte `line_start` begins: its `- ` line.
fn rule_start(text: &str, line_start: usize) -> usize {
    let mut start = line_start;
    loop {
        let line = &text[start..];
        let trimmed = line.trim_start();
        // A rule's item: `- name:`, `- when:`, `- decision:`.
        if ["- name:", "- when:", "- decision:"]
            .iter()
            .any(|k| trimmed.starts_with(k))
            || start == 0
        {
            return start;
        }
        start = text[..start - 1].rfind('\n').map_or(0, |i| i + 1);
    }
}

/// The tools a rule's text names in its `tool:` (one or a list).
fn tools_of(rule: &str) -> Vec<&str> {
    let Some(at) = rule.find("tool:") else {
        return Vec::new();
    };
    let value = rule[at + "tool:".len()..].trim_start();
    let value = match value.strip_prefix('[') {
        Some(list) => &list[..list.find(']').unwrap_or(list.len())],
        None => {
            let end = value.find([',', '}', '\n']).unwrap_or(value.len());
            &value[..end]
        }
    };
    value
        .split(',')
        .map(|t| t.trim().trim_matches(['"', '\'']))
        .filter(|t| !t.is_empty())
        .collect()
}

/// The key of a `key: value` whose value the end of `line` is in:
/// `variant: [dry-run, pre` gives `variant`; `when: { tool: a, ` none.
fn value_key(line: &str) -> Option<&str> {
    // A key's colon is followed by a space or ends the line (`files:read`
    // is a value).
    let colon = line
        .rmatch_indices(':')
        .map(|(i, _)| i)
        .find(|&i| line[i + 1..].chars().next().is_none_or(char::is_whitespace))?;
    let value = &line[colon + 1..];
    // The value has ended (a `,` outside a list, a closed list or mapping).
    let open_list = value.rfind('[');
    let closed_list = value.rfind(']');
    let in_list = open_list.is_some() && closed_list < open_list;
    if value.contains(['{', '}']) || (value.contains(',') && !in_list) || closed_list > open_list {
        return None;
    }
    let key = line[..colon]
        .rsplit(|c: char| c.is_whitespace() || c == '{' || c == ',' || c == '-')
        .next()?;
    ["default", "decision", "tool", "variant", "scopes"]
        .contains(&key)
        .then_some(key)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn names() -> Names {
        let mut names = Names::default();
        for file in [
            include_str!("../../../rules/file-server.yaml"),
            include_str!("../../../rules/github-api.yaml"),
        ] {
            let project = mcp_resolve::load_str("x.yaml", file);
            names.add(&Vocabulary::of(&project).unwrap());
        }
        names
    }

    fn labels(text: &str) -> Vec<String> {
        let at = text.find('|').unwrap();
        let text = text.replacen('|', "", 1);
        items(&names(), &text, at)
            .into_iter()
            .map(|i| i.label)
            .collect()
    }

    #[test]
    fn variants_of_the_rules_tool_or_of_every_tool() {
        let text = "version: 1\ndefault: ask\nrules:\n  - name: a\n    when: { tool: manage_files, variant: [read, | ] }\n    decision: allow\n";
        assert_eq!(labels(text), ["append", "overwrite", "read"]);
        // No tool named: every tool's, each variant once.
        let every = labels("rules:\n  - when: { variant: |\n");
        assert!(every.contains(&"read".to_string()), "{every:?}");
        assert!(every.len() > 4, "{every:?}");
        // A block list under `variant:`, the tool on a line above.
        let block = "rules:\n  - name: b\n    when:\n      tool: manage_files\n      variant:\n        - |\n";
        assert_eq!(labels(block), ["append", "overwrite", "read"]);
    }

    #[test]
    fn keys_decisions_tools_and_scopes() {
        let keys = labels("rules:\n  - when: { |\n");
        for key in ["tool", "variant", "scopes", "readOnlyHint", "agencyHint"] {
            assert!(keys.contains(&key.to_string()), "{key} in {keys:?}");
        }
        let keys = labels("rules:\n  - when:\n      |\n");
        assert!(keys.contains(&"variant".to_string()), "{keys:?}");
        assert_eq!(labels("default: |\n"), ["allow", "deny", "ask"]);
        assert_eq!(
            labels("rules:\n  - when: {}\n    decision: a|\n"),
            ["allow", "deny", "ask"]
        );
        assert!(labels("rules:\n  - when: { tool: |").contains(&"manage_files".to_string()));
        let scopes = labels("rules:\n  - when: { scopes: [|] }\n");
        assert!(!scopes.is_empty(), "{scopes:?}");
        // Outside any value: nothing.
        assert!(labels("rules:\n  - name: |\n").is_empty());
    }

    #[test]
    fn policies_are_told_from_rules_and_other_yaml() {
        assert!(is_policy("p.yaml", "version: 1\ndefault: allow\n"));
        assert!(!is_policy("p.rules", "default: allow\n"));
        assert!(!is_policy("ci.yml", "on: push\njobs: {}\n"));
    }
}

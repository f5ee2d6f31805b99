//! A pinned signature (`--pin`) held to one session's listings and calls:
//! a tool the server lists is withheld from the host when the signature
//! does not allow it, or when the server changed it since it first listed
//! it (in this session, or behind any instance sharing a store); a call to
//! a withheld or unpinned tool is refused with why.

use std::collections::HashMap;

use mcp_resolve_host::Signature;
use serde_json::{Map, Value};

/// Each tool as a server behind any instance first listed it, by name; or
/// why the shared store could not say (then every tool is withheld: fail
/// closed).
pub type Baselines = Result<HashMap<String, Value>, String>;

/// What the pin found in the server's listings of one session.
#[derive(Debug, Default)]
pub struct PinState {
    /// Each tool as the server first listed it.
    baseline: HashMap<String, Value>,
    /// Tools withheld from the host, and why.
    withheld: HashMap<String, String>,
}

impl PinState {
    /// Why `tool` is withheld from the host, if it is.
    pub fn withheld(&self, tool: &str) -> Option<&str> {
        self.withheld.get(tool).map(String::as_str)
    }
}

/// Checks a `tools/list` result against `pin`: `raw` is the server's,
/// `result` the one the host would see (the rules' annotations and markers
/// applied). A tool that is not pinned, that the pinned signature disagrees
/// with, or that changed since the server first listed it is removed from
/// `result` and remembered as withheld, with why (a line for the log each,
/// in `notes`). A tool that passes again is no longer withheld.
///
/// `shared`: with several instances, each tool as the server behind any
/// instance first listed it — or why the store could not say, and every
/// tool is withheld.
pub fn check_listing(
    pin: &Signature,
    state: &mut PinState,
    raw: &Value,
    result: &mut Value,
    shared: Option<&Baselines>,
    notes: &mut Vec<String>,
) {
    let raw_tools: HashMap<&str, &Value> = raw
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| Some((t.get("name")?.as_str()?, t)))
        .collect();
    let Some(Value::Array(tools)) = result.get_mut("tools") else {
        return;
    };
    tools.retain(|tool| {
        let Some(name) = tool.get("name").and_then(Value::as_str) else {
            return false;
        };
        let mut why = Vec::new();
        if let Some(raw) = raw_tools.get(name) {
            compare_with_first(state, shared, name, raw, &mut why);
        }
        if let Err(violations) = pin.verify_tools_list(&Value::Array(vec![tool.clone()])) {
            why.extend(violations.0.iter().map(|v| v.message.clone()));
        }
        if why.is_empty() {
            state.withheld.remove(name);
            true
        } else {
            let why = why.join("; ");
            notes.push(format!("`{name}` is withheld from the host: {why}"));
            state.withheld.insert(name.to_string(), why);
            false
        }
    });
}

/// Compares a tool as the server lists it now with its first listing
/// (the shared one first, then this session's), remembering it when it is
/// the first; what differs goes to `why`.
fn compare_with_first(
    state: &mut PinState,
    shared: Option<&Baselines>,
    name: &str,
    raw: &Value,
    why: &mut Vec<String>,
) {
    let first = match shared {
        Some(Ok(first)) => first.get(name).or_else(|| state.baseline.get(name)),
        Some(Err(unchecked)) => {
            why.push(format!(
                "it cannot be checked against the first listing the instances share: {unchecked}"
            ));
            state.baseline.get(name)
        }
        None => state.baseline.get(name),
    };
    match first {
        None => {
            state.baseline.insert(name.to_string(), raw.clone());
        }
        Some(first) if first != raw => {
            why.push(format!(
                "the server changed it since it first listed it ({})",
                changed_members(first, raw)
            ));
        }
        Some(_) => {
            state
                .baseline
                .entry(name.to_string())
                .or_insert_with(|| raw.clone());
        }
    }
}

/// Why a call to `tool` is refused under `pin`, if it is.
pub fn unpinned(pin: &Signature, state: &PinState, tool: &str) -> Option<String> {
    if let Some(why) = state.withheld.get(tool) {
        return Some(format!("`{tool}` is withheld: {why}"));
    }
    pin.tool(tool)
        .is_none()
        .then(|| format!("`{tool}` is not in the pinned signature"))
}

/// The members of two tool objects that differ, named.
fn changed_members(first: &Value, now: &Value) -> String {
    let empty = Map::new();
    let (a, b) = (
        first.as_object().unwrap_or(&empty),
        now.as_object().unwrap_or(&empty),
    );
    let mut names: Vec<&str> = a
        .keys()
        .chain(b.keys())
        .map(String::as_str)
        .filter(|k| a.get(*k) != b.get(*k))
        .collect();
    names.sort_unstable();
    names.dedup();
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::rules::{ProxyRules, Rewrite};
    use mcp_resolve_runtime::Dialect;
    use serde_json::json;

    const RULES: &str = r"version: 1
server: { name: pinned, version: 0.1.0 }
tools:
  - name: read
    description: Reads a file.
    inputSchema: { type: object, properties: { path: { type: string } } }
    annotations: { readOnlyHint: true }
  - name: write
    description: Writes a file.
    inputSchema: { type: object, properties: { path: { type: string } } }
    annotations: { readOnlyHint: false, destructiveHint: true }
";

    /// The rules, and their signature as the host pinned it.
    fn pinned() -> (ProxyRules, Signature) {
        let project = mcp_resolve::load_str("pinned.yaml", RULES);
        let server = project.servers.into_iter().next().unwrap();
        let signature =
            Signature::from_value(mcp_resolve::emit::signature::signature(&server)).unwrap();
        (
            ProxyRules::new(server, Dialect::Extension).unwrap(),
            signature,
        )
    }

    fn tool(name: &str, description: &str) -> Value {
        json!({"name": name, "description": description,
               "inputSchema": {"type": "object", "properties": {"path": {"type": "string"}}}})
    }

    /// The names the host sees of the server's `tools`, and the notes.
    fn listing(
        rules: &ProxyRules,
        pin: &Signature,
        state: &mut PinState,
        tools: &[Value],
        shared: Option<&Baselines>,
    ) -> (Vec<String>, Vec<String>) {
        let raw = json!({"tools": tools});
        let mut result = raw.clone();
        rules.rewrite(&Rewrite::Tools { marked: true }, &mut result);
        let mut notes = Vec::new();
        check_listing(pin, state, &raw, &mut result, shared, &mut notes);
        let names = result["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        (names, notes)
    }

    #[test]
    fn pinned_tools_pass_and_a_tool_changed_since_its_first_listing_is_withheld_until_it_is_back() {
        let (rules, pin) = pinned();
        let mut state = PinState::default();
        let first = [
            tool("read", "Reads a file."),
            tool("write", "Writes a file."),
        ];
        let (names, notes) = listing(&rules, &pin, &mut state, &first, None);
        assert_eq!(names, ["read", "write"]);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(unpinned(&pin, &state, "read"), None);

        // The server now lists `read` otherwise: the signature would not
        // allow it either, and the change is named.
        let changed = [
            tool("read", "Reads any file."),
            tool("write", "Writes a file."),
        ];
        let (names, notes) = listing(&rules, &pin, &mut state, &changed, None);
        assert_eq!(names, ["write"]);
        assert_eq!(notes.len(), 1, "{notes:?}");
        assert!(
            notes[0].starts_with("`read` is withheld from the host: the server changed it since it first listed it (`description`)"),
            "{notes:?}"
        );
        let why = unpinned(&pin, &state, "read").unwrap();
        assert!(
            why.starts_with("`read` is withheld: the server changed it"),
            "{why}"
        );
        assert!(state.withheld("read").is_some());

        // Listed as it first was: it passes again, and calls to it too.
        let (names, notes) = listing(&rules, &pin, &mut state, &first, None);
        assert_eq!(names, ["read", "write"]);
        assert!(notes.is_empty(), "{notes:?}");
        assert_eq!(unpinned(&pin, &state, "read"), None);
        assert_eq!(state.withheld("read"), None);
    }

    #[test]
    fn a_tool_the_signature_does_not_have_is_withheld_and_calls_to_it_refused() {
        let (rules, pin) = pinned();
        let mut state = PinState::default();
        let tools = [tool("read", "Reads a file."), tool("erase", "Erases.")];
        let (names, notes) = listing(&rules, &pin, &mut state, &tools, None);
        assert_eq!(names, ["read"]);
        assert_eq!(
            notes,
            [
                "`erase` is withheld from the host: tools/list offers a tool the signature does not have"
            ]
        );
        assert!(
            unpinned(&pin, &state, "erase")
                .unwrap()
                .starts_with("`erase` is withheld: ")
        );
        // Never listed, and not pinned either.
        assert_eq!(
            unpinned(&pin, &state, "format").as_deref(),
            Some("`format` is not in the pinned signature")
        );
        // A tool without a name is dropped without a note.
        let (names, notes) = listing(
            &rules,
            &pin,
            &mut state,
            &[json!({"description": "?"})],
            None,
        );
        assert!(names.is_empty() && notes.is_empty(), "{names:?} {notes:?}");
    }

    #[test]
    fn the_shared_first_listing_wins_and_a_store_that_cannot_say_withholds_every_tool() {
        let (rules, pin) = pinned();
        let tools = [
            tool("read", "Reads a file."),
            tool("write", "Writes a file."),
        ];

        // Another instance's server first listed `write` otherwise.
        let mut first = HashMap::new();
        first.insert("write".to_string(), tool("write", "Writes."));
        let mut state = PinState::default();
        let (names, notes) = listing(&rules, &pin, &mut state, &tools, Some(&Ok(first)));
        assert_eq!(names, ["read"]);
        assert!(
            notes[0].contains("changed it since it first listed it (`description`)"),
            "{notes:?}"
        );

        // Fail closed: the store could not say.
        let mut state = PinState::default();
        let unknown: Baselines = Err("the store did not answer".into());
        let (names, notes) = listing(&rules, &pin, &mut state, &tools, Some(&unknown));
        assert!(names.is_empty(), "{names:?}");
        assert_eq!(notes.len(), 2);
        assert!(
            notes.iter().all(|n| n.contains(
                "it cannot be checked against the first listing the instances share: the store did not answer"
            )),
            "{notes:?}"
        );
    }
}

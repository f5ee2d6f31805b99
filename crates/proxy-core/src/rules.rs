//! What the proxy adds to a server's messages, as pure functions of the
//! rules and the messages: the capabilities it advertises, the tools it
//! marks and annotates, and the requests it answers itself (the dialect's
//! resolve method and `signature`).

use std::collections::HashMap;

use mcp_resolve_host::matcher::{Matcher, Outcome};
use mcp_resolve_protocol::declares_extension;
use mcp_resolve_runtime::serve::serve_resolve;
use mcp_resolve_runtime::{Dialect, EXTENSION_ID, RpcError, VARIANT_EXTENSION_ID};
use serde_json::{Map, Value, json};

use mcp_resolve::emit::signature::signature;
use mcp_resolve::ir::Server;
use mcp_resolve::resolve::ResolverError;

use crate::quick::{QuickCall, QuickSchema};
use crate::raw::Members;

mod listed;

pub use mcp_resolve_protocol::SIGNATURE_METHOD;

/// How a response to a forwarded request is changed on its way back.
#[derive(Clone, Debug, PartialEq)]
pub enum Rewrite {
    /// Passed through as the server wrote it.
    None,
    /// `initialize` or `server/discover`: the capabilities gain the proxy's.
    Capabilities,
    /// `tools/list`: annotations and markers from the rules; `marked` says
    /// whether the client may see the resolvable marker.
    Tools {
        /// The client declared the extension (or the dialect has no client
        /// capability).
        marked: bool,
    },
}

/// The rules a proxy serves, compiled once: resolution by the runtime's
/// [`Matcher`] (answers precomputed as text).
pub struct ProxyRules {
    server: Server,
    matcher: Matcher,
    dialect: Dialect,
    /// The rules' `tools/list` entry of each tool, in the dialect.
    entries: HashMap<String, listed::Entry>,
    /// The signature document, with `resultType`, as JSON text.
    signature: String,
    /// Each tool's `inputSchema` as the check on a call's text reads it
    /// (`None`: a schema only the validator decides).
    quick: HashMap<String, Option<QuickSchema>>,
    /// Each tool's scope sets, any one of which lets a token call it: its
    /// static `requiredScopes`, then each variant's.
    scopes: HashMap<String, Vec<Vec<String>>>,
    /// Rules were given: without them the proxy resolves nothing, owns no
    /// method and advertises nothing, and the server's tools pass through.
    given: bool,
}

/// Keeps, of an entry's annotations, the hints the rules write for the tool:
/// a hint they do not name stays as the server lists it (a default the
/// rules only imply is not theirs to list; `readOnlyHint: true` alone must
/// not add `destructiveHint: true`). Annotations the rules derive (none
/// written) are the bound they state for every hint, and stay whole.
fn named_hints_only(entry: &mut Map<String, Value>, tool: &mcp_resolve::ir::Tool, server: &Server) {
    let (Some(written), Some(Value::Object(annotations))) =
        (&tool.written_annotations, entry.get_mut("annotations"))
    else {
        return;
    };
    let named: Vec<&str> = written
        .iter()
        .filter_map(|setting| server.hints.get(setting.hint).map(|def| def.name.as_ref()))
        .collect();
    annotations.retain(|hint, _| hint == "title" || named.contains(&hint.as_str()));
}

impl ProxyRules {
    /// Compiles `server`'s rules for `dialect`.
    pub fn new(server: Server, dialect: Dialect) -> Result<Self, ResolverError> {
        let matcher = mcp_resolve::matcher::compile(&server, dialect)?;
        let entries = server
            .tools
            .iter()
            .filter_map(
                |tool| match tool.to_model(&server.hints).list_entry(dialect) {
                    Value::Object(mut entry) => {
                        named_hints_only(&mut entry, tool, &server);
                        Some((tool.name.clone(), listed::Entry::new(entry)))
                    }
                    _ => None,
                },
            )
            .collect();
        let mut signature = signature(&server);
        if let Value::Object(map) = &mut signature {
            map.insert("resultType".into(), json!("complete"));
        }
        let signature = signature.to_string();
        let quick = crate::quick::schemas(
            server
                .tools
                .iter()
                .map(|tool| (tool.name.as_str(), &tool.input_schema)),
        );
        let scopes = server
            .tools
            .iter()
            .map(|tool| {
                let sets = std::iter::once(tool.required_scopes.clone())
                    .chain(tool.variants.iter().map(|v| v.scopes()))
                    .collect();
                (tool.name.clone(), sets)
            })
            .collect();
        Ok(ProxyRules {
            server,
            matcher,
            dialect,
            entries,
            signature,
            quick,
            scopes,
            given: true,
        })
    }

    /// No rules: a server with no tools described, whose own tools, answers
    /// and methods (its `tools/resolve`, if it has one) pass through; the
    /// guard, authorization, telemetry and the listener still work.
    pub fn none(dialect: Dialect) -> Result<Self, ResolverError> {
        let empty = Server {
            name: String::new(),
            version: String::new(),
            hints: Default::default(),
            tools: Vec::new(),
            files: Vec::new(),
        };
        let matcher = mcp_resolve::matcher::compile(&empty, dialect)?;
        Ok(ProxyRules {
            server: empty,
            matcher,
            dialect,
            entries: HashMap::new(),
            signature: String::new(),
            quick: HashMap::new(),
            scopes: HashMap::new(),
            given: false,
        })
    }

    /// Whether rules were given (see [`ProxyRules::none`]).
    pub fn given(&self) -> bool {
        self.given
    }

    /// Whether the proxy answers requests of `method` itself: the
    /// dialect's resolve method and `signature`, when rules were given.
    pub fn owns(&self, method: &str) -> bool {
        self.given && (method == self.method() || method == SIGNATURE_METHOD)
    }

    /// The JSON-RPC screen of a host's messages: in the extension dialect,
    /// with rules, a resolve request is refused (-32021) unless the host
    /// declares the extension; otherwise only the envelope is checked.
    pub fn screen(&self) -> mcp_resolve_protocol::Screen {
        if self.given {
            mcp_resolve_runtime::serve::screen(self.dialect)
        } else {
            mcp_resolve_protocol::Screen::default()
        }
    }

    /// The rules' server.
    pub fn server(&self) -> &Server {
        &self.server
    }

    /// The compiled rules.
    pub fn matcher(&self) -> &Matcher {
        &self.matcher
    }

    /// Whether the rules' `inputSchema` surely accepts `call`'s arguments,
    /// read on their text (a tool the rules do not describe has none to
    /// fail); `false` when it does not, or when only the validator can
    /// tell. The proxy's guard (`Guard::accepts`) on the text, where it can.
    pub fn accepts_text(&self, call: &QuickCall<'_>) -> bool {
        match self.quick.get(call.name.as_ref()) {
            None => true,
            Some(None) => false,
            Some(Some(schema)) => call.accepted_by(schema),
        }
    }

    /// What a server's real `tools/list` (`listed`, its tools) and the
    /// rules disagree on, as lines for stderr: rules tools the server lacks,
    /// server tools the rules do not describe (passed through, not
    /// resolvable), and schemas that differ.
    pub fn compare(&self, listed: &[Value]) -> Vec<String> {
        let server = self.server();
        let mut notes = Vec::new();
        let by_name: HashMap<&str, &Value> = listed
            .iter()
            .filter_map(|t| Some((t.get("name")?.as_str()?, t)))
            .collect();
        for tool in &server.tools {
            match by_name.get(tool.name.as_str()) {
                None => notes.push(format!(
                    "the rules describe `{}`, which the server does not list",
                    tool.name
                )),
                Some(listed) => {
                    if listed.get("inputSchema") != Some(&tool.input_schema) {
                        notes.push(format!(
                            "`{}`: the server's inputSchema differs from the rules' (resolve validates against the rules')",
                            tool.name
                        ));
                    }
                }
            }
        }
        for name in by_name.keys() {
            if server.tool(name).is_none() {
                notes.push(format!(
                    "the server lists `{name}`, which the rules do not describe: passed through, not resolvable"
                ));
            }
        }
        notes.sort();
        notes
    }

    /// The scope sets of tool `name`, any one of which lets a token call
    /// it: its static `requiredScopes`, then each variant's; `None` when
    /// the rules do not describe it.
    pub fn scope_sets(&self, name: &str) -> Option<&[Vec<String>]> {
        self.scopes.get(name).map(Vec::as_slice)
    }

    /// Whether the rules describe tool `name`.
    pub fn describes(&self, name: &str) -> bool {
        self.entries.contains_key(name)
    }

    /// Whether a server's `initialize` result (`result`) declares that it
    /// resolves calls itself in the rules' dialect: the extension, or the
    /// dialect's `experimental` method.
    pub fn server_resolves(&self, result: &Value) -> bool {
        let capabilities = result.get("capabilities");
        match self.dialect {
            Dialect::Extension => capabilities
                .and_then(|c| c.get("extensions"))
                .and_then(|e| e.get(EXTENSION_ID))
                .is_some(),
            _ => capabilities
                .and_then(|c| c.get("experimental"))
                .and_then(|e| e.get(self.method()))
                .is_some(),
        }
    }

    /// The method that resolves a call in this dialect.
    pub fn method(&self) -> &'static str {
        self.dialect.method()
    }

    /// The dialect served.
    pub fn dialect(&self) -> Dialect {
        self.dialect
    }

    /// Adds what the proxy serves to a `capabilities` object: as the rmcp
    /// wiring does (docs/serving.md), the extension (or the dialect's
    /// experimental capability), `signature` and the companion variant
    /// extension.
    pub fn advertise(&self, capabilities: &mut Map<String, Value>) {
        if !self.given {
            return;
        }
        if let Some(extensions) = object_at(capabilities, "extensions") {
            if self.dialect == Dialect::Extension {
                extensions.insert(EXTENSION_ID.into(), json!({}));
            }
            extensions.insert(VARIANT_EXTENSION_ID.into(), json!({}));
        }
        if let Some(experimental) = object_at(capabilities, "experimental") {
            if self.dialect != Dialect::Extension {
                experimental.insert(self.method().into(), json!({}));
            }
            experimental.insert(SIGNATURE_METHOD.into(), json!({}));
        }
    }

    /// Applies `rewrite` to a response's `result`.
    pub fn rewrite(&self, rewrite: &Rewrite, result: &mut Value) {
        let Value::Object(result) = result else {
            return;
        };
        match rewrite {
            Rewrite::None => {}
            Rewrite::Capabilities => {
                if let Some(capabilities) = object_at(result, "capabilities") {
                    self.advertise(capabilities);
                }
            }
            Rewrite::Tools { marked } => {
                if let Some(Value::Array(tools)) = result.get_mut("tools") {
                    for tool in tools {
                        self.annotate(tool, *marked);
                    }
                }
            }
        }
    }

    /// One listed tool given as JSON text (`tool`), annotated as
    /// [`ProxyRules::rewrite`] annotates it, its other members left exactly
    /// as written; `None` when the rules do not describe it.
    #[cfg(test)]
    pub fn annotate_text(&self, tool: &str, marked: bool) -> Option<String> {
        let members = Members::of(tool)?;
        let name = crate::raw::string_of(members.get("name")?)?;
        let listed = members.get("annotations").and_then(Members::of);
        let mut edits = Vec::new();
        self.annotate_members(tool, &name, &members, listed.as_ref(), marked, &mut edits)
            .then(|| crate::raw::splice_all(tool, &edits))?
    }

    /// What `annotate_text` gives, as edits of the tool's text (`tool`,
    /// whose members are `members`, its `annotations` parsed as `listed`
    /// when they are an object), added to `edits`: each a slice of `tool`
    /// and what replaces it — a member's value, or an empty slice before
    /// the closing brace where a member is added — in the order they
    /// stand. Every byte not edited stays as the server wrote it. `false`
    /// (and nothing added) when the rules do not describe the tool.
    pub fn annotate_members<'t>(
        &self,
        tool: &'t str,
        name: &str,
        members: &Members<'t>,
        listed: Option<&Members<'_>>,
        marked: bool,
        edits: &mut Vec<(&'t str, String)>,
    ) -> bool {
        self.entries
            .get(name)
            .is_some_and(|entry| entry.edits(tool, members, listed, marked, edits))
    }

    /// One listed tool: the rules' annotations over the server's (hints the
    /// rules do not name, and `title`, stay as the server wrote them), and
    /// the dialect's resolvable marker when the rules give it variants.
    fn annotate(&self, tool: &mut Value, marked: bool) {
        let Value::Object(tool) = tool else {
            return;
        };
        let Some(entry) = tool
            .get("name")
            .and_then(Value::as_str)
            .and_then(|name| self.entries.get(name))
            .map(|entry| &entry.map)
        else {
            return;
        };
        if let Some(Value::Object(annotations)) = entry.get("annotations")
            && let Some(listed) = object_at(tool, "annotations")
        {
            for (hint, value) in annotations {
                listed.insert(hint.clone(), value.clone());
            }
        }
        if !marked {
            return;
        }
        for (key, value) in entry {
            match key.as_str() {
                "name" | "title" | "description" | "inputSchema" | "outputSchema"
                | "annotations" | "icons" => {}
                "_meta" => {
                    if let Value::Object(meta) = value
                        && let Some(listed) = object_at(tool, "_meta")
                    {
                        for (k, v) in meta {
                            listed.insert(k.clone(), v.clone());
                        }
                    }
                }
                _ => {
                    tool.insert(key.clone(), value.clone());
                }
            }
        }
    }

    /// Whether the resolvable marker may be listed to this client.
    pub fn may_mark(&self, params: Option<&Value>, session: Option<&Value>) -> bool {
        self.dialect != Dialect::Extension || declares_extension(params, session, EXTENSION_ID)
    }

    /// The answer to a request the proxy owns, or `None` when the request
    /// is the server's.
    pub fn answer(
        &self,
        method: &str,
        params: Option<&Value>,
        session: Option<&Value>,
    ) -> Option<Answer<'_>> {
        if method == SIGNATURE_METHOD {
            return Some(Answer::Signature(&self.signature));
        }
        if method != self.method() {
            return None;
        }
        let declares = |id: &str| declares_extension(params, session, id);
        let served = serve_resolve(self.dialect, params, declares, |name, arguments| {
            self.matcher.resolve(name, arguments)
        });
        Some(match served {
            Ok(served) => Answer::Resolved {
                outcome: served.resolved,
                variant_meta: served.variant_meta,
            },
            Err(error) => Answer::Refused(error),
        })
    }
}

/// The proxy's answer to a request it owns.
#[derive(Debug)]
pub enum Answer<'r> {
    /// `signature`: the document, with `resultType`, as JSON text.
    Signature(&'r str),
    /// The resolve method, resolved: its outcome (the result text, and
    /// the resolution an audit line records).
    Resolved {
        /// What the call resolves to.
        outcome: &'r Outcome,
        /// Whether the client declared the companion variant extension
        /// (the result's `_meta` names the variant).
        variant_meta: bool,
    },
    /// The request is refused with this error.
    Refused(RpcError),
}

impl Answer<'_> {
    /// The `result` as JSON text, or the error.
    pub fn reply(&self) -> Result<&str, &RpcError> {
        match self {
            Answer::Signature(text) => Ok(text),
            Answer::Resolved {
                outcome,
                variant_meta,
                ..
            } => Ok(outcome.result_json(*variant_meta)),
            Answer::Refused(error) => Err(error),
        }
    }
}

/// The object at `map[key]`, made one if it is absent or not an object
/// (`None` never happens; it keeps the function free of a panic path).
fn object_at<'m>(map: &'m mut Map<String, Value>, key: &str) -> Option<&'m mut Map<String, Value>> {
    map.entry(key.to_string())
        .and_modify(|v| {
            if !v.is_object() {
                *v = Value::Object(Map::new());
            }
        })
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rules(dialect: Dialect) -> ProxyRules {
        let project = mcp_resolve::load_str(
            "github-api.yaml",
            include_str!("../../../rules/github-api.yaml"),
        );
        ProxyRules::new(project.servers.into_iter().next().unwrap(), dialect).unwrap()
    }

    /// Tools as servers list them: with and without annotations, with a
    /// `_meta`, annotations that are not an object, unknown tools, members
    /// in odd orders and spacing.
    fn listings(rules: &ProxyRules) -> Vec<String> {
        let mut out = Vec::new();
        for name in rules.matcher().tool_names() {
            out.push(format!(
                r#"{{"name":"{name}","inputSchema":{{"type":"object"}}}}"#
            ));
            out.push(format!(
                r#"{{ "inputSchema" : {{"type":"object","properties":{{"a":{{"type":"number","maximum":1.50}}}}}},
                    "annotations": {{"title":"T","readOnlyHint":true,"x-own":1}}, "name": "{name}",
                    "_meta": {{"other": [1, 2]}} }}"#
            ));
            out.push(format!(
                r#"{{"name":"{name}","annotations":[1],"_meta":7}}"#
            ));
            // Escapes, a hint written twice, a value that is no hint's.
            out.push(format!(
                r#"{{"name":"{name}","annotations":{{ "title" : "TA\/", "readOnlyHint":false,
                    "x-own" : [1, 2], "readOnlyHint" : true }}}}"#
            ));
        }
        out.push(r#"{"name":"not-described","annotations":{"readOnlyHint":false}}"#.into());
        out
    }

    #[test]
    fn a_tool_annotated_as_text_is_the_tool_annotated_as_a_tree() {
        for dialect in [Dialect::Extension, Dialect::Sep1862, Dialect::Annotations] {
            let rules = rules(dialect);
            for tool in listings(&rules) {
                for marked in [false, true] {
                    let mut tree = json!({"tools": [mcp_resolve_protocol::json::from_str::<Value>(&tool).unwrap()]});
                    rules.rewrite(&Rewrite::Tools { marked }, &mut tree);
                    let expected = &tree["tools"][0];
                    let as_text = rules.annotate_text(&tool, marked);
                    match as_text {
                        Some(text) => {
                            let got: Value = mcp_resolve_protocol::json::from_str(&text).unwrap();
                            assert_eq!(&got, expected, "{dialect:?} {marked} {tool}");
                            // Member order too, as a parsed object keeps it.
                            let keys = |v: &Value| -> Vec<String> {
                                v.as_object().unwrap().keys().cloned().collect()
                            };
                            assert_eq!(keys(&got), keys(expected), "{tool}");
                        }
                        None => assert_eq!(
                            expected,
                            &mcp_resolve_protocol::json::from_str::<Value>(&tool).unwrap(),
                            "{tool}"
                        ),
                    }
                }
            }
        }
    }

    /// The rules' annotations replace only the hints they write: a server
    /// that lists a read-only tool as the rules do is not made to list it
    /// as destructive (MCP's default for a hint neither names). Derived
    /// annotations (none written) are the rules' bound for every hint.
    #[test]
    fn only_the_hints_the_rules_write_replace_the_servers() {
        let project = mcp_resolve::load_str(
            "s.yaml",
            "version: 1\nserver: { name: s, version: '1' }\ntools:\n  \
             - name: fetch\n    inputSchema: { type: object }\n    \
               annotations: { readOnlyHint: true, openWorldHint: false }\n  \
             - name: edit\n    inputSchema: { type: object, properties: { mode: { enum: [a, b] } } }\n    \
               variants:\n      \
                 - { name: a, when: { mode: a }, annotations: { readOnlyHint: true } }\n      \
                 - { name: b, when: { mode: b }, annotations: { readOnlyHint: false, destructiveHint: true } }\n",
        );
        assert!(!project.has_errors(), "{:?}", project.diagnostics);
        let server = project.servers.into_iter().next().unwrap();
        for dialect in Dialect::ALL {
            let rules = ProxyRules::new(server.clone(), dialect).unwrap();
            let listed = r#"{"name":"fetch","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true,"openWorldHint":false}}"#;
            let text = rules.annotate_text(listed, true).unwrap();
            let got: Value = mcp_resolve_protocol::json::from_str(&text).unwrap();
            assert_eq!(
                got["annotations"],
                json!({"readOnlyHint": true, "openWorldHint": false}),
                "{dialect:?}"
            );
            // A server that lists less gets the rules' written hints only.
            let bare = r#"{"name":"fetch","inputSchema":{"type":"object"}}"#;
            let text = rules.annotate_text(bare, false).unwrap();
            let got: Value = mcp_resolve_protocol::json::from_str(&text).unwrap();
            assert_eq!(
                got["annotations"],
                json!({"readOnlyHint": true, "openWorldHint": false}),
                "{dialect:?}"
            );
            // Derived static annotations are the bound over every hint.
            let listed = r#"{"name":"edit","inputSchema":{"type":"object"},"annotations":{"readOnlyHint":true}}"#;
            let text = rules.annotate_text(listed, false).unwrap();
            let got: Value = mcp_resolve_protocol::json::from_str(&text).unwrap();
            assert_eq!(
                got["annotations"]["readOnlyHint"],
                json!(false),
                "{dialect:?}"
            );
            assert_eq!(
                got["annotations"]["destructiveHint"],
                json!(true),
                "{dialect:?}"
            );
        }
    }
}

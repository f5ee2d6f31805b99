//! The simple policy form (`mcp-resolve proxy --policy FILE.yaml`): ordered
//! rules over a call's *resolved* annotations, its variant, its tool and its
//! required scopes, each with a decision. The proxy decides with its Cedar
//! translation ([`crate::cedar::translate`]); [`Policy::decide`] is the
//! first-match reference that translation is held to.
//!
//! ```yaml
//! version: 1
//! default: ask                  # allow | deny | ask
//! rules:
//!   - name: reads
//!     when: { readOnlyHint: true }
//!     decision: allow
//!   - name: no-destructive-writes
//!     when: { readOnlyHint: false, destructiveHint: true }
//!     decision: deny
//!   - name: dry-runs
//!     when: { tool: edit_file, variant: [dry-run, preview] }
//!     decision: allow
//! ```
//!
//! `when` keys: any hint name (the call's resolved value must equal the
//! boolean), `tool` and `variant` (a name or a list of names, one of which
//! must be the call's), `scopes` (scopes that must all be among the call's
//! required scopes), `principal` and `client` (the `sub` or the `client_id`
//! of the bearer token the call came with under `--auth-issuer`, one of
//! these names; a call without a token matches neither). Every key must hold; an empty `when` matches every
//! call. The first rule that matches decides; `default` decides the rest.
//! A call that matched no variant has no variant name: `variant` never
//! matches it.

use crate::{Call, Decision};
use mcp_resolve::diagnostic::{Code, Diagnostic};
use mcp_resolve::source::{FileId, Span};
use mcp_resolve::suggest::did_you_mean;
use mcp_resolve::yaml::{self, YNode, YValue};

/// One rule of a policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Rule {
    /// Its name, quoted in errors and audit lines.
    pub name: String,
    /// Hints and the values they must have.
    pub hints: Vec<(String, bool)>,
    /// Tools, one of which the call's must be (`None`: any).
    pub tools: Option<Vec<String>>,
    /// Variants, one of which the call's must be (`None`: any).
    pub variants: Option<Vec<String>>,
    /// Token subjects (`sub`), one of which the call's must be.
    pub principals: Option<Vec<String>>,
    /// Token clients (`client_id`), one of which the call's must be.
    pub clients: Option<Vec<String>>,
    /// Scopes the call must all require.
    pub scopes: Vec<String>,
    /// What happens to a call it matches.
    pub decision: Decision,
}

/// A parsed policy.
#[derive(Clone, Debug, PartialEq)]
pub struct Policy {
    /// The decision when no rule matches.
    pub default: Decision,
    /// The rules, in order.
    pub rules: Vec<Rule>,
}

/// A policy's answer: the decision and the rule that made it (`None`: the
/// default).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Verdict<'p> {
    /// What happens.
    pub decision: Decision,
    /// The deciding rule's name.
    pub rule: Option<&'p str>,
}

impl Policy {
    /// [`Policy::parse`] for the rules of `server`: its hints (the built-in
    /// ones and those it declares) are the ones a rule may name.
    pub fn for_server(
        text: &str,
        file: FileId,
        server: &mcp_resolve::ir::Server,
    ) -> Result<Policy, Vec<Diagnostic>> {
        let hints: Vec<&str> = server.hints.names().collect();
        Policy::parse(text, file, &hints)
    }

    /// The verdict on `call`: the first rule whose every condition holds,
    /// else the default.
    pub fn decide(&self, call: &Call<'_>) -> Verdict<'_> {
        self.rules.iter().find(|rule| rule.matches(call)).map_or(
            Verdict {
                decision: self.default,
                rule: None,
            },
            |rule| Verdict {
                decision: rule.decision,
                rule: Some(&rule.name),
            },
        )
    }

    /// Parses a policy file; `hints` are the hint names `when` may use
    /// besides `tool`, `variant` and `scopes` (the four core hints and the
    /// rules' declared ones). Every problem is reported, at its place.
    pub fn parse(text: &str, file: FileId, hints: &[&str]) -> Result<Policy, Vec<Diagnostic>> {
        let root = match yaml::parse(text) {
            Ok(root) => root,
            Err(e) => {
                let offset = e.offset.unwrap_or(0);
                return Err(vec![
                    Diagnostic::new(Code::Syntax, e.message).at(Span::new(file, offset, offset)),
                ]);
            }
        };
        let mut parser = Parser {
            file,
            hints,
            diagnostics: Vec::new(),
        };
        let policy = parser.policy(&root);
        match policy {
            Some(policy) if parser.diagnostics.is_empty() => Ok(policy),
            _ => Err(parser.diagnostics),
        }
    }
}

impl Rule {
    fn matches(&self, call: &Call<'_>) -> bool {
        self.hints
            .iter()
            .all(|(hint, value)| call.annotations.get(hint).unwrap_or(false) == *value)
            && self
                .tools
                .as_ref()
                .is_none_or(|tools| tools.iter().any(|t| t == call.tool))
            && self.variants.as_ref().is_none_or(|variants| {
                call.variant
                    .is_some_and(|v| variants.iter().any(|name| name == v))
            })
            && self.scopes.iter().all(|scope| call.scopes.contains(scope))
            && named(
                &self.principals,
                call.principal.and_then(|p| p.sub.as_deref()),
            )
            && named(
                &self.clients,
                call.principal.and_then(|p| p.client_id.as_deref()),
            )
    }
}

/// Whether `name` is one of `names` (`None`: no condition).
fn named(names: &Option<Vec<String>>, name: Option<&str>) -> bool {
    names
        .as_ref()
        .is_none_or(|names| name.is_some_and(|n| names.iter().any(|m| m == n)))
}

/// The JSON Schema of the policy format (`mcp-resolve schema --policy`),
/// for editors. Hint names are open (a rules file may declare hints); the
/// proxy checks them against the rules it serves.
pub fn policy_schema() -> String {
    let decision = serde_json::json!({"enum": ["allow", "deny", "ask"]});
    let names = serde_json::json!({
        "oneOf": [
            {"type": "string"},
            {"type": "array", "items": {"type": "string"}, "minItems": 1}
        ]
    });
    let schema = serde_json::json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "mcp-resolve proxy policy",
        "description": "Ordered rules over a tools/call's resolved annotations, variant, tool and scopes (docs/gateway.md).",
        "type": "object",
        "required": ["version", "default"],
        "additionalProperties": false,
        "properties": {
            "version": {"const": 1},
            "default": {"description": "The decision when no rule matches.", "$ref": "#/$defs/decision"},
            "rules": {
                "description": "In order: the first rule whose every `when` key holds decides.",
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["decision"],
                    "additionalProperties": false,
                    "properties": {
                        "name": {"type": "string", "minLength": 1},
                        "decision": {"$ref": "#/$defs/decision"},
                        "when": {
                            "type": "object",
                            "properties": {
                                "tool": {"description": "The call's tool is this one, or one of these.", "$ref": "#/$defs/names"},
                                "variant": {"description": "The call matched this variant, or one of these.", "$ref": "#/$defs/names"},
                                "scopes": {"description": "The call requires every one of these scopes.", "$ref": "#/$defs/names"},
                                "principal": {"description": "The call's bearer token's subject (`sub`) is this one, or one of these (`--auth-issuer`).", "$ref": "#/$defs/names"},
                                "client": {"description": "The call's bearer token's client (`client_id`) is this one, or one of these (`--auth-issuer`).", "$ref": "#/$defs/names"},
                                "readOnlyHint": {"type": "boolean"},
                                "destructiveHint": {"type": "boolean"},
                                "idempotentHint": {"type": "boolean"},
                                "openWorldHint": {"type": "boolean"},
                                "agencyHint": {"type": "boolean"}
                            },
                            "additionalProperties": {"type": "boolean", "description": "A hint the rules declare: the call's resolved value."}
                        }
                    }
                }
            }
        },
        "$defs": {"decision": decision, "names": names}
    });
    let mut text = serde_json::to_string_pretty(&schema).unwrap_or_default();
    text.push('\n');
    text
}

const TOP_KEYS: [&str; 3] = ["version", "default", "rules"];
const RULE_KEYS: [&str; 3] = ["name", "when", "decision"];
const WHEN_KEYS: [&str; 5] = ["tool", "variant", "scopes", "principal", "client"];
const DECISIONS: &str = "`allow`, `deny` or `ask`";

struct Parser<'h> {
    file: FileId,
    hints: &'h [&'h str],
    diagnostics: Vec<Diagnostic>,
}

impl Parser<'_> {
    fn span(&self, node: &YNode) -> Span {
        Span::new(self.file, node.start, node.end)
    }

    fn error(&mut self, code: Code, node: &YNode, message: impl Into<String>) {
        let span = self.span(node);
        self.diagnostics
            .push(Diagnostic::new(code, message).at(span));
    }

    /// The entries of a mapping, with unknown keys reported.
    fn mapping<'n>(
        &mut self,
        node: &'n YNode,
        what: &str,
        keys: &[&str],
        open: bool,
    ) -> Option<&'n [(YNode, YNode)]> {
        let YValue::Map(entries) = &node.value else {
            self.error(
                Code::InvalidValue,
                node,
                format!("{what} is a mapping, not {}", node.value.kind()),
            );
            return None;
        };
        if !open {
            for (key, _) in entries {
                let name = key.key_string();
                if !keys.contains(&name.as_str()) {
                    let span = self.span(key);
                    self.diagnostics.push(
                        Diagnostic::new(
                            Code::UnknownField,
                            format!("unknown key `{name}` in {what}"),
                        )
                        .at(span)
                        .with_help(
                            did_you_mean(&name, keys.iter().copied()).unwrap_or_else(|| {
                                format!(
                                    "{what} has {}",
                                    mcp_resolve::suggest::backticked(keys, ", ")
                                )
                            }),
                        ),
                    );
                }
            }
        }
        Some(entries)
    }

    fn decision(&mut self, node: &YNode) -> Option<Decision> {
        let decision = match &node.value {
            YValue::String(s) => Decision::parse(s),
            _ => None,
        };
        if decision.is_none() {
            let written = node.key_string();
            let help = did_you_mean(&written, ["allow", "deny", "ask"]);
            let span = self.span(node);
            self.diagnostics.push(
                Diagnostic::new(
                    Code::InvalidValue,
                    format!("a decision is {DECISIONS}, not `{written}`"),
                )
                .at(span)
                .with_help_opt(help),
            );
        }
        decision
    }

    fn policy(&mut self, root: &YNode) -> Option<Policy> {
        let entries = self.mapping(root, "a policy", &TOP_KEYS, false)?;
        let get = |name: &str| entries.iter().find(|(k, _)| k.key_string() == name);
        match get("version") {
            Some((_, v)) if v.value == YValue::Number(1.into()) => {}
            Some((_, v)) => {
                self.error(Code::InvalidValue, v, "this policy format is `version: 1`");
            }
            None => self.error(Code::MissingField, root, "a policy needs `version: 1`"),
        }
        let default = match get("default") {
            Some((_, v)) => self.decision(v),
            None => {
                self.error(
                    Code::MissingField,
                    root,
                    format!(
                        "a policy needs `default:` ({DECISIONS}), the decision when no rule matches"
                    ),
                );
                None
            }
        };
        let mut rules = Vec::new();
        match get("rules").map(|(_, v)| v) {
            None => {}
            Some(YNode {
                value: YValue::Seq(items),
                ..
            }) => {
                for item in items {
                    if let Some(rule) = self.rule(item, rules.len()) {
                        if rules.iter().any(|r: &Rule| r.name == rule.name) {
                            self.error(
                                Code::InvalidValue,
                                item,
                                format!("two rules are named `{}`", rule.name),
                            );
                        }
                        rules.push(rule);
                    }
                }
            }
            Some(other) => self.error(
                Code::InvalidValue,
                other,
                format!("`rules` is a sequence, not {}", other.value.kind()),
            ),
        }
        Some(Policy {
            default: default?,
            rules,
        })
    }

    fn rule(&mut self, node: &YNode, index: usize) -> Option<Rule> {
        let entries = self.mapping(node, "a rule", &RULE_KEYS, false)?;
        let get = |name: &str| entries.iter().find(|(k, _)| k.key_string() == name);
        let name = match get("name").map(|(_, v)| v) {
            Some(YNode {
                value: YValue::String(name),
                ..
            }) if !name.trim().is_empty() => name.clone(),
            Some(other) => {
                self.error(
                    Code::InvalidValue,
                    other,
                    "a rule's `name` is a non-empty string",
                );
                String::new()
            }
            None => format!("rules[{index}]"),
        };
        let decision = match get("decision") {
            Some((_, v)) => self.decision(v),
            None => {
                self.error(
                    Code::MissingField,
                    node,
                    format!("a rule needs `decision:` ({DECISIONS})"),
                );
                None
            }
        };
        let mut rule = Rule {
            name,
            hints: Vec::new(),
            tools: None,
            variants: None,
            principals: None,
            clients: None,
            scopes: Vec::new(),
            decision: Decision::Deny,
        };
        // `when` is checked even when the decision is wrong: every mistake
        // is reported at once.
        if let Some((_, when)) = get("when") {
            self.when(when, &mut rule);
        }
        rule.decision = decision?;
        Some(rule)
    }

    fn when(&mut self, node: &YNode, rule: &mut Rule) {
        let Some(entries) = self.mapping(node, "`when`", &WHEN_KEYS, true) else {
            return;
        };
        for (key, value) in entries {
            let name = key.key_string();
            match name.as_str() {
                "tool" => rule.tools = self.names(value, "`tool`"),
                "variant" => rule.variants = self.names(value, "`variant`"),
                "scopes" => rule.scopes = self.names(value, "`scopes`").unwrap_or_default(),
                "principal" => rule.principals = self.names(value, "`principal`"),
                "client" => rule.clients = self.names(value, "`client`"),
                hint if self.hints.contains(&hint) => match value.value {
                    YValue::Bool(b) => rule.hints.push((name.clone(), b)),
                    _ => self.error(
                        Code::InvalidValue,
                        value,
                        format!("`{hint}` is `true` or `false`, not {}", value.value.kind()),
                    ),
                },
                _ => {
                    let candidates: Vec<&str> =
                        WHEN_KEYS.iter().chain(self.hints.iter()).copied().collect();
                    let help =
                        did_you_mean(&name, candidates.iter().copied()).unwrap_or_else(|| {
                            format!(
                                "`when` takes `tool`, `variant`, `scopes`, `principal`, `client` and hints: {}",
                                mcp_resolve::suggest::backticked(self.hints, ", ")
                            )
                        });
                    let span = self.span(key);
                    self.diagnostics.push(
                        Diagnostic::new(
                            Code::UnknownField,
                            format!("unknown key `{name}` in `when`"),
                        )
                        .at(span)
                        .with_help(help),
                    );
                }
            }
        }
    }

    /// A name or a list of names.
    fn names(&mut self, node: &YNode, what: &str) -> Option<Vec<String>> {
        let names = match &node.value {
            YValue::String(s) => vec![s.clone()],
            YValue::Seq(items) => items
                .iter()
                .filter_map(|item| match &item.value {
                    YValue::String(s) => Some(s.clone()),
                    other => {
                        self.error(
                            Code::InvalidValue,
                            item,
                            format!("{what} lists names (strings), not {}", other.kind()),
                        );
                        None
                    }
                })
                .collect(),
            other => {
                self.error(
                    Code::InvalidValue,
                    node,
                    format!("{what} is a name or a list of names, not {}", other.kind()),
                );
                return None;
            }
        };
        if names.is_empty() {
            self.error(
                Code::InvalidValue,
                node,
                format!("{what} lists no name: it could never match"),
            );
        }
        Some(names)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use mcp_resolve_runtime::Annotations;

    const HINTS: [&str; 4] = [
        "readOnlyHint",
        "destructiveHint",
        "idempotentHint",
        "openWorldHint",
    ];

    fn parse(text: &str) -> Result<Policy, Vec<String>> {
        Policy::parse(text, FileId(0), &HINTS).map_err(|ds| {
            ds.iter()
                .map(|d| format!("{}: {}", d.code, d.message))
                .collect()
        })
    }

    fn annotations(read_only: bool, destructive: bool) -> Annotations {
        Annotations {
            read_only,
            destructive,
            ..Annotations::defaults()
        }
    }

    const EXAMPLE: &str = "version: 1
default: ask
rules:
  - name: reads
    when: { readOnlyHint: true }
    decision: allow
  - name: no-destructive-writes
    when: { readOnlyHint: false, destructiveHint: true }
    decision: deny
  - name: dry-runs
    when: { tool: edit_file, variant: [dry-run, preview] }
    decision: allow
  - name: admin
    when: { scopes: [admin] }
    decision: deny
";

    #[test]
    fn the_first_matching_rule_decides() {
        let policy = parse(EXAMPLE).unwrap();
        let read = annotations(true, false);
        let write = annotations(false, false);
        let destroy = annotations(false, true);
        let call = |tool, variant, a, scopes| Call {
            tool,
            variant,
            annotations: a,
            scopes,
            principal: None,
            arguments: None,
            described: true,
            session: None,
        };
        let none: &[String] = &[];
        let admin = ["admin".to_string(), "x".to_string()];
        let verdict = policy.decide(&call("read_file", Some("read"), &read, none));
        assert_eq!(
            (verdict.decision, verdict.rule),
            (Decision::Allow, Some("reads"))
        );
        let verdict = policy.decide(&call("delete", None, &destroy, none));
        assert_eq!(
            (verdict.decision, verdict.rule),
            (Decision::Deny, Some("no-destructive-writes"))
        );
        let verdict = policy.decide(&call("edit_file", Some("preview"), &write, none));
        assert_eq!(verdict.rule, Some("dry-runs"));
        // No variant: `variant` never matches.
        let verdict = policy.decide(&call("edit_file", None, &write, none));
        assert_eq!((verdict.decision, verdict.rule), (Decision::Ask, None));
        let verdict = policy.decide(&call("x", None, &write, &admin));
        assert_eq!(verdict.rule, Some("admin"));
    }

    #[test]
    fn principal_and_client_name_the_token_a_call_came_with() {
        let policy = parse(
            "version: 1
default: allow
rules:
  - name: interns-read-only
    when: { principal: [intern1, intern2], readOnlyHint: false }
    decision: deny
  - name: ci-asks
    when: { client: ci-bot }
    decision: ask
",
        )
        .unwrap();
        let write = annotations(false, false);
        let token = |sub: &str, client: &str| crate::Principal {
            sub: Some(sub.into()),
            client_id: Some(client.into()),
            scopes: Default::default(),
        };
        let none: &[String] = &[];
        let decide = |principal: Option<&crate::Principal>| {
            policy
                .decide(&Call {
                    tool: "t",
                    variant: None,
                    annotations: &write,
                    scopes: none,
                    principal,
                    arguments: None,
                    described: true,
                    session: None,
                })
                .rule
        };
        assert_eq!(
            decide(Some(&token("intern2", "host"))),
            Some("interns-read-only")
        );
        assert_eq!(decide(Some(&token("alice", "ci-bot"))), Some("ci-asks"));
        assert_eq!(decide(Some(&token("alice", "host"))), None);
        // A call without a token matches neither.
        assert_eq!(decide(None), None);
        // Misspelled: an unknown key.
        let error = parse(
            "version: 1\ndefault: allow\nrules:\n  - when: { principle: x }\n    decision: deny\n",
        )
        .unwrap_err();
        assert!(error[0].contains("unknown key `principle`"), "{error:?}");
    }

    #[test]
    fn the_documented_policies_decide_as_they_say() {
        let read = annotations(true, false);
        let destroy = annotations(false, true);
        let add = Annotations {
            open_world: false,
            ..annotations(false, false)
        };
        let open_add = annotations(false, false);
        let decide = |text: &str, a: &Annotations| {
            parse(text)
                .unwrap()
                .decide(&Call {
                    tool: "t",
                    variant: None,
                    annotations: a,
                    scopes: &[],
                    principal: None,
                    arguments: None,
                    described: true,
                    session: None,
                })
                .decision
        };
        let read_only = include_str!("../../../docs/policies/read-only.yaml");
        assert_eq!(decide(read_only, &read), Decision::Allow);
        assert_eq!(decide(read_only, &add), Decision::Deny);
        let ask = include_str!("../../../docs/policies/ask-destructive.yaml");
        assert_eq!(decide(ask, &read), Decision::Allow);
        assert_eq!(decide(ask, &destroy), Decision::Ask);
        assert_eq!(decide(ask, &add), Decision::Allow);
        let open = include_str!("../../../docs/policies/no-open-world-writes.yaml");
        assert_eq!(decide(open, &read), Decision::Allow);
        assert_eq!(decide(open, &open_add), Decision::Deny);
        assert_eq!(decide(open, &add), Decision::Ask);
    }

    #[test]
    fn the_documented_policies_follow_the_schema() {
        let schema: serde_json::Value = serde_json::from_str(&policy_schema()).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        for text in [
            EXAMPLE,
            include_str!("../../../docs/policies/read-only.yaml"),
            include_str!("../../../docs/policies/ask-destructive.yaml"),
            include_str!("../../../docs/policies/no-open-world-writes.yaml"),
        ] {
            let document = yaml::parse(text).unwrap().to_json();
            assert!(validator.is_valid(&document), "{text}");
        }
        for wrong in [
            serde_json::json!({"version": 1}),
            serde_json::json!({"version": 2, "default": "allow"}),
            serde_json::json!({"version": 1, "default": "maybe"}),
            serde_json::json!({"version": 1, "default": "allow", "rules": [{"decision": "allow", "when": {"tool": []}}]}),
            serde_json::json!({"version": 1, "default": "allow", "rules": [{"decision": "allow", "when": {"readOnlyHint": "yes"}}]}),
        ] {
            assert!(!validator.is_valid(&wrong), "{wrong}");
        }
    }

    #[test]
    fn mistakes_are_reported_at_their_place_with_suggestions() {
        let errors = parse(
            "version: 2
default: maybe
rules:
  - name: r
    when: { readOnlyHnt: true, tool: [] }
    decison: allow
",
        )
        .unwrap_err();
        let text = errors.join("\n");
        for expected in [
            "invalid-value: this policy format is `version: 1`",
            "invalid-value: a decision is `allow`, `deny` or `ask`, not `maybe`",
            "unknown-field: unknown key `readOnlyHnt` in `when`",
            "invalid-value: `tool` lists no name",
            "unknown-field: unknown key `decison` in a rule",
            "missing-field: a rule needs `decision:`",
        ] {
            assert!(text.contains(expected), "{expected} missing from:\n{text}");
        }
        let diagnostics = Policy::parse(
            "version: 1\ndefault: allow\nrules:\n  - decision: alow\n",
            FileId(0),
            &HINTS,
        )
        .unwrap_err();
        assert_eq!(
            diagnostics[0].help.as_deref(),
            Some("did you mean `allow`?")
        );
        assert!(parse("- a\n").is_err());
        assert!(parse("version: 1\n").unwrap_err()[0].contains("needs `default:`"));
        assert!(parse(": : :").is_err());
    }
}

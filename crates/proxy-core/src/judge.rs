//! The guard's judgement of a `tools/call`: its arguments validated
//! against the rules' `inputSchema`, its variant, resolved annotations and
//! scopes put to the policy; and what a refusal says. Pure functions of the
//! rules, the policy, what the server listed and who is calling; the proxy
//! crate's guard holds the settings and writes the audit.

use std::collections::{BTreeSet, HashMap};

use mcp_resolve_policy::cedar::Engine;
use mcp_resolve_policy::{Call, Decision, Principal, SessionFacts};
use mcp_resolve_runtime::{Annotations, RpcError};
use serde_json::{Map, Value, json};

use crate::rules::ProxyRules;

/// The JSON-RPC error code of a call the policy refuses (the
/// implementation-defined server-error range of JSON-RPC 2.0).
pub const POLICY_REFUSED: i64 = -32001;

/// What the guard found out about a `tools/call`.
#[derive(Clone, Debug)]
pub struct Judged {
    /// The tool called.
    pub tool: String,
    /// The variant the call resolved to (`None`: the static annotations).
    pub variant: Option<String>,
    /// The annotations judged.
    pub annotations: Annotations,
    /// The scopes the call requires.
    pub scopes: Vec<String>,
    /// The policy's decision.
    pub decision: Decision,
    /// The determining policies, joined (`None`: the policy's default).
    pub rule: Option<String>,
    /// The determining policies.
    pub policies: Vec<String>,
    /// Why the user is asked (`@ask`), or why the engine refused.
    pub reason: Option<String>,
    /// Whether the rules describe the tool (otherwise its listed static
    /// annotations were judged).
    pub described: bool,
    /// Why the user is asked when it is not the policy: the tool's signed
    /// declaration changed materially (`--trust`).
    pub regate: Option<String>,
    /// Who the call's bearer token speaks for (`--auth-issuer`).
    pub principal: Option<Principal>,
}

/// Whether the arguments of the call `params` to `tool` pass the rules'
/// `inputSchema` (a tool the rules do not describe has none to fail):
/// what [`judge`] would not refuse them for.
pub fn accepts(rules: &ProxyRules, tool: &str, params: Option<&Value>) -> bool {
    let empty = Value::Object(Map::new());
    let arguments = params.and_then(|p| p.get("arguments")).unwrap_or(&empty);
    rules.matcher().accepts(tool, arguments).unwrap_or(true)
}

/// Judges a `tools/call`: `Err` (`-32602`) when the rules describe the
/// tool and its `inputSchema` refuses the arguments; the decision
/// otherwise. A tool the rules do not describe is judged on the static
/// annotations the server listed for it (MCP's defaults when it was not
/// listed or listed none).
pub fn judge(
    policy: Option<&Engine>,
    rules: &ProxyRules,
    listed: &HashMap<String, Annotations>,
    params: Option<&Value>,
    principal: Option<&Principal>,
    session: Option<&SessionFacts>,
) -> Result<Judged, RpcError> {
    let Some(Value::String(tool)) = params.and_then(|p| p.get("name")) else {
        return Err(RpcError::invalid_params(
            "params.name must be a string (the tool name)",
        ));
    };
    let empty = Value::Object(Map::new());
    let arguments = params.and_then(|p| p.get("arguments")).unwrap_or(&empty);
    let (variant, annotations, scopes, described) = match rules.matcher().outcome(tool, arguments) {
        Some(outcome) => {
            let resolution = outcome?.resolution();
            (
                resolution.variant.clone(),
                resolution.annotations.clone(),
                resolution.required_scopes.clone(),
                true,
            )
        }
        None => (
            None,
            listed
                .get(tool)
                .cloned()
                .unwrap_or_else(Annotations::defaults),
            Vec::new(),
            false,
        ),
    };
    let (decision, policies, reason) = match policy {
        None => (Decision::Allow, Vec::new(), None),
        Some(policy) => {
            let outcome = policy.decide(&Call {
                tool,
                arguments: Some(arguments),
                variant: variant.as_deref(),
                annotations: &annotations,
                scopes: &scopes,
                described,
                principal,
                session,
            });
            (outcome.decision, outcome.policies, outcome.reason)
        }
    };
    let rule = (!policies.is_empty()).then(|| policies.join(", "));
    Ok(Judged {
        tool: tool.clone(),
        variant,
        annotations,
        scopes,
        decision,
        rule,
        policies,
        reason,
        described,
        regate: None,
        principal: principal.cloned(),
    })
}

impl Judged {
    /// What the call is, for messages: `` `tool` (variant `v`) ``.
    pub fn describe(&self) -> String {
        match &self.variant {
            Some(variant) => format!("`{}` (variant `{variant}`)", self.tool),
            None => format!("`{}`", self.tool),
        }
    }

    /// Who decided, for messages.
    pub fn by(&self) -> String {
        if self.regate.is_some() {
            return "mcp-resolve proxy --trust".into();
        }
        match self.policies.as_slice() {
            [] => match &self.reason {
                Some(why) if self.decision == Decision::Deny => format!("the policy: {why}"),
                _ => "the policy's default".into(),
            },
            [one] => format!("policy rule `{one}`"),
            many => format!("policy rules `{}`", many.join("`, `")),
        }
    }

    /// The error a refused call gets; `why` says how it was refused.
    pub fn refusal(&self, why: &str) -> RpcError {
        RpcError::new(
            POLICY_REFUSED,
            format!("{} {why} ({})", self.describe(), self.by()),
            Some(json!({
                "tool": self.tool,
                "variant": self.variant,
                "annotations": self.annotations.complete_json(),
                "requiredScopes": self.scopes,
                "decision": self.decision.as_str(),
                "rule": self.rule,
                "policies": self.policies,
            })),
        )
    }
}

/// A call or a resolution whose bearer token lacks scopes its resolution
/// needs (`--auth-issuer`): the transport answers it with `403` and an
/// `insufficient_scope` challenge instead of passing it on.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StepUp {
    /// What was asked: `"call"` (`tools/call`) or `"resolve"` (the rules'
    /// resolution method), the audit record's `event`.
    pub event: &'static str,
    /// The tool.
    pub tool: String,
    /// The variant the arguments resolve to (`None`: the static scopes).
    pub variant: Option<String>,
    /// The scopes the token lacks.
    pub missing: BTreeSet<String>,
}

/// The step-up of the request `method` with `params` from a host whose
/// token grants `granted`: `Some` when it is a `tools/call` or the rules'
/// resolution method of a tool the rules describe, its arguments resolve,
/// and the resolution needs scopes beyond `granted`. `None` lets the
/// request go on: the rules do not describe the tool, or its arguments are
/// for the session to refuse.
pub fn step_up(
    rules: &ProxyRules,
    granted: &BTreeSet<String>,
    method: &str,
    params: Option<&Value>,
) -> Option<StepUp> {
    let event = match method {
        "tools/call" => "call",
        m if m == rules.method() => "resolve",
        _ => return None,
    };
    let params = params?;
    let tool = params.get("name")?.as_str()?;
    let empty = Value::Object(Map::new());
    let arguments = params.get("arguments").unwrap_or(&empty);
    let outcome = rules.matcher().outcome(tool, arguments)?.ok()?;
    let resolution = outcome.resolution();
    let missing: BTreeSet<String> = resolution
        .required_scopes
        .iter()
        .filter(|scope| !granted.contains(*scope))
        .cloned()
        .collect();
    (!missing.is_empty()).then(|| StepUp {
        event,
        tool: tool.to_string(),
        variant: resolution.variant.clone(),
        missing,
    })
}

/// Whether a token granting `granted` is shown tool `name` in a listing
/// (`--list-by-scope`): a tool the rules do not describe always is; one
/// they describe when the token can call it under its static scopes or
/// under one of its variants' scopes.
pub fn listed_to(rules: &ProxyRules, name: &str, granted: &BTreeSet<String>) -> bool {
    rules.scope_sets(name).is_none_or(|sets| {
        sets.iter()
            .any(|set| set.iter().all(|s| granted.contains(s)))
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use mcp_resolve_policy::cedar::Source;
    use mcp_resolve_runtime::Dialect;

    fn rules() -> ProxyRules {
        let project = mcp_resolve::load_str(
            "file-server.yaml",
            include_str!("../../../rules/file-server.yaml"),
        );
        ProxyRules::new(
            project.servers.into_iter().next().unwrap(),
            Dialect::Extension,
        )
        .unwrap()
    }

    fn call(tool: &str, arguments: Value) -> Value {
        json!({"name": tool, "arguments": arguments})
    }

    fn repo_rules() -> ProxyRules {
        let project = mcp_resolve::load_str(
            "repo-contents.rules",
            include_str!("../../../rules/repo-contents.rules"),
        );
        ProxyRules::new(
            project.servers.into_iter().next().unwrap(),
            Dialect::Extension,
        )
        .unwrap()
    }

    fn scopes(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| (*s).to_string()).collect()
    }

    #[test]
    fn a_call_needing_scopes_the_token_lacks_steps_up() {
        let rules = repo_rules();
        let private = call(
            "get_repo_contents",
            json!({"owner": "o", "repo": "r", "visibility": "private"}),
        );
        let up = step_up(&rules, &scopes(&[]), "tools/call", Some(&private)).unwrap();
        assert_eq!(up.event, "call");
        assert_eq!(up.tool, "get_repo_contents");
        assert_eq!(up.variant.as_deref(), Some("private"));
        assert_eq!(up.missing, scopes(&["repo"]));
        // The resolution method is held to the same scopes.
        let resolve = step_up(&rules, &scopes(&["read"]), rules.method(), Some(&private)).unwrap();
        assert_eq!(resolve.event, "resolve");
        assert_eq!(resolve.missing, scopes(&["repo"]));
    }

    #[test]
    fn what_the_token_covers_or_the_rules_do_not_resolve_goes_on() {
        let rules = repo_rules();
        let private = call(
            "get_repo_contents",
            json!({"owner": "o", "repo": "r", "visibility": "private"}),
        );
        let public = call(
            "get_repo_contents",
            json!({"owner": "o", "repo": "r", "visibility": "public"}),
        );
        assert_eq!(
            step_up(&rules, &scopes(&["repo"]), "tools/call", Some(&private)),
            None
        );
        assert_eq!(
            step_up(&rules, &scopes(&[]), "tools/call", Some(&public)),
            None
        );
        // Arguments the schema refuses are the session's to refuse.
        let invalid = call("get_repo_contents", json!({"owner": "o"}));
        assert_eq!(
            step_up(&rules, &scopes(&[]), "tools/call", Some(&invalid)),
            None
        );
        // A tool the rules do not describe, another method, no params.
        let other = call("other", json!({}));
        assert_eq!(
            step_up(&rules, &scopes(&[]), "tools/call", Some(&other)),
            None
        );
        assert_eq!(
            step_up(&rules, &scopes(&[]), "tools/list", Some(&private)),
            None
        );
        assert_eq!(step_up(&rules, &scopes(&[]), "tools/call", None), None);
        assert_eq!(
            step_up(
                &rules,
                &scopes(&[]),
                "tools/call",
                Some(&json!({"name": 7}))
            ),
            None
        );
    }

    #[test]
    fn a_call_is_resolved_then_put_to_the_policy() {
        let rules = rules();
        let policy = Engine::load(
            rules.server(),
            &[Source {
                file: mcp_resolve::source::FileId(0),
                name: "p.cedar",
                text: r#"@id("no-delete")
forbid(principal, action, resource) when { context.resolution has variant && context.resolution.variant == "overwrite" };
permit(principal, action, resource);"#,
            }],
            None,
        )
        .unwrap();
        let listed = HashMap::new();
        let read = call("manage_files", json!({"path": "a", "action": "read"}));
        let judged = judge(Some(&policy), &rules, &listed, Some(&read), None, None).unwrap();
        assert_eq!(judged.variant.as_deref(), Some("read"));
        assert_eq!(judged.decision, Decision::Allow);
        assert!(judged.described);
        let delete = call("manage_files", json!({"path": "a", "action": "delete"}));
        let judged = judge(Some(&policy), &rules, &listed, Some(&delete), None, None).unwrap();
        assert_eq!(judged.variant.as_deref(), Some("overwrite"));
        assert_eq!(judged.decision, Decision::Deny);
        let refusal = judged.refusal("is refused");
        assert_eq!(refusal.code, POLICY_REFUSED);
        assert_eq!(
            refusal.message,
            "`manage_files` (variant `overwrite`) is refused (policy rule `no-delete`)"
        );
        // Without a policy every call is allowed, by the default.
        let judged = judge(None, &rules, &listed, Some(&delete), None, None).unwrap();
        assert_eq!(judged.decision, Decision::Allow);
        assert_eq!(judged.by(), "the policy's default");
    }

    #[test]
    fn bad_params_and_tools_the_rules_do_not_describe() {
        let rules = rules();
        let listed = HashMap::from([("other".to_string(), Annotations::defaults())]);
        // Arguments the inputSchema refuses: -32602, before any policy.
        let invalid = call("manage_files", json!({"path": "a"}));
        assert!(!accepts(&rules, "manage_files", Some(&invalid)));
        let error = judge(None, &rules, &listed, Some(&invalid), None, None).unwrap_err();
        assert_eq!(error.code, -32602);
        // No tool name.
        let error = judge(None, &rules, &listed, Some(&json!({})), None, None).unwrap_err();
        assert_eq!(
            error.message,
            "params.name must be a string (the tool name)"
        );
        // A tool the rules do not describe: its listed annotations, judged.
        let other = call("other", json!({"anything": [1, 2]}));
        assert!(accepts(&rules, "other", Some(&other)));
        let judged = judge(None, &rules, &listed, Some(&other), None, None).unwrap();
        assert!(!judged.described);
        assert_eq!(judged.variant, None);
        assert_eq!(judged.describe(), "`other`");
    }
}

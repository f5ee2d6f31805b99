//! The YAML policy form, translated to Cedar.
//!
//! YAML rules are ordered (the first that matches decides); Cedar policies
//! are not (any forbid wins, else any permit). Rule `i` becomes one policy
//! whose condition is its own `when` and the negation of every earlier
//! rule's: exactly one policy applies to any call, so Cedar's answer is the
//! first match's. `allow` is a `permit`, `ask` a `permit` with `@ask`, and
//! `deny` a `forbid`; the default is one more policy (marked
//! `@yaml_default`) that applies when no rule does — none for `deny`, which
//! is Cedar's own default.

use super::schema::quoted;
use crate::Decision;
use crate::yaml::{Policy, Rule};

/// A record attribute access: `.name` for an identifier, `["name"]`
/// otherwise.
fn attribute(base: &str, name: &str) -> String {
    let identifier = name.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !super::schema::RESERVED.contains(&name);
    if identifier {
        format!("{base}.{name}")
    } else {
        format!("{base}[{}]", quoted(name))
    }
}

fn set(names: &[String]) -> String {
    let items: Vec<String> = names.iter().map(|n| quoted(n)).collect();
    format!("[{}]", items.join(", "))
}

/// The Cedar condition of a rule's `when` (`true` for an empty one).
fn condition(namespace: &str, rule: &Rule) -> String {
    let mut parts = Vec::new();
    for (hint, value) in &rule.hints {
        parts.push(format!(
            "{} == {value}",
            attribute("context.resolution", hint)
        ));
    }
    if let Some(tools) = &rule.tools {
        let actions: Vec<String> = tools
            .iter()
            .map(|t| format!("{namespace}::Action::{}", quoted(t)))
            .collect();
        parts.push(format!("action in [{}]", actions.join(", ")));
    }
    if let Some(variants) = &rule.variants {
        parts.push(format!(
            "(context.resolution has variant && {}.contains(context.resolution.variant))",
            set(variants)
        ));
    }
    if !rule.scopes.is_empty() {
        parts.push(format!(
            "context.resolution.requiredScopes.containsAll({})",
            set(&rule.scopes)
        ));
    }
    if let Some(principals) = &rule.principals {
        let users: Vec<String> = principals
            .iter()
            .map(|p| format!("{namespace}::User::{}", quoted(p)))
            .collect();
        parts.push(format!("principal in [{}]", users.join(", ")));
    }
    if let Some(clients) = &rule.clients {
        parts.push(format!(
            "(context.session has tokenClient && {}.contains(context.session.tokenClient))",
            set(clients)
        ));
    }
    if parts.is_empty() {
        "true".into()
    } else {
        parts.join(" && ")
    }
}

/// The Cedar text of a YAML policy for a server whose namespace is
/// `namespace`.
pub fn to_cedar(policy: &Policy, namespace: &str) -> String {
    let mut out = String::from(
        "// Translated from a YAML policy by mcp-resolve: the first rule that\n// matches decides, so each policy excludes the rules before it.\n\n",
    );
    let mut earlier: Vec<String> = Vec::new();
    let guard = |own: Option<&str>, earlier: &[String]| -> String {
        let mut parts: Vec<String> = own.into_iter().map(|c| format!("({c})")).collect();
        parts.extend(earlier.iter().map(|c| format!("!({c})")));
        if parts.is_empty() {
            "true".into()
        } else {
            parts.join("\n    && ")
        }
    };
    for rule in &policy.rules {
        let own = condition(namespace, rule);
        out.push_str(&format!("@id({})\n", quoted(&rule.name)));
        out.push_str(&effect(
            rule.decision,
            &format!("the rule `{}` asks", rule.name),
        ));
        out.push_str(&format!(
            "(principal, action, resource)\nwhen {{\n    {}\n}};\n\n",
            guard(Some(&own), &earlier)
        ));
        earlier.push(own);
    }
    if policy.default != Decision::Deny {
        out.push_str("@id(\"default\")\n@yaml_default\n");
        out.push_str(&effect(policy.default, "the policy's default asks"));
        out.push_str(&format!(
            "(principal, action, resource)\nwhen {{\n    {}\n}};\n",
            guard(None, &earlier)
        ));
    }
    out
}

fn effect(decision: Decision, why: &str) -> String {
    match decision {
        Decision::Allow => "permit".into(),
        Decision::Deny => "forbid".into(),
        Decision::Ask => format!("@ask({})\npermit", quoted(why)),
    }
}

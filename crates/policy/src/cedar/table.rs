//! Decision tables: a server's variants are finite, so a policy set's
//! decision can be read variant by variant (`mcp-resolve policy explain`),
//! and two sets compared (`policy diff`).
//!
//! A policy that reads only the action and `context.resolution` has one
//! value per row, computed by Cedar. A policy that reads the arguments
//! (`context.input`), the principal or the session (`context.session`) may
//! go either way; a row whose decision such a policy could change says
//! "depends on …", naming the policy and what it reads, never a verdict it
//! cannot prove.

use std::collections::{BTreeSet, HashMap};

use cedar_policy::PolicyId;
use serde_json::Value;

use super::Engine;
use crate::{Call, Decision};
use mcp_resolve::hints::HintTableExt;

/// What a policy's value on a call can depend on besides the action and
/// the resolution.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Factor {
    /// `context.input`.
    Arguments,
    /// `principal`.
    Principal,
    /// `context.session`.
    Session,
}

impl Factor {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Factor::Arguments => "arguments",
            Factor::Principal => "principal",
            Factor::Session => "session",
        }
    }
}

/// What a row's calls come to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Cell {
    /// The same decision for every call of the row.
    Decided {
        /// The decision.
        decision: Decision,
        /// The policies that make it (empty: no policy permits, or a YAML
        /// policy's default).
        policies: Vec<String>,
    },
    /// Different calls of the row can be decided differently.
    Depends {
        /// The decisions its calls can get.
        possible: BTreeSet<Decision>,
        /// What they depend on.
        on: BTreeSet<Factor>,
        /// The policies that make the difference, each with what it reads
        /// (`no-tmp reads context.input.path`).
        because: Vec<String>,
        /// Calls of the row, each with the decision Cedar gives it (for a
        /// caller without a token): found by trying the values the
        /// policies and the schema name; empty when none was found to
        /// differ.
        examples: Vec<(Decision, Value)>,
    },
}

impl Cell {
    /// The cell as a table shows it.
    pub fn describe(&self) -> String {
        match self {
            Cell::Decided { decision, policies } if policies.is_empty() => match decision {
                Decision::Deny => "deny (no policy permits)".into(),
                d => format!("{d} (default)"),
            },
            Cell::Decided { decision, policies } => {
                format!("{decision} ({})", policies.join(", "))
            }
            Cell::Depends {
                possible,
                on,
                because,
                examples,
            } => {
                let possible: Vec<&str> = possible.iter().map(|d| d.as_str()).collect();
                let on: Vec<&str> = on.iter().map(|f| f.as_str()).collect();
                let mut text = format!(
                    "depends on {}: {} ({})",
                    on.join(" and "),
                    possible.join(" or "),
                    because.join("; ")
                );
                if !examples.is_empty() {
                    let calls: Vec<String> = examples
                        .iter()
                        .map(|(d, args)| format!("{args} is {}", past(*d)))
                        .collect();
                    text.push_str(&format!("; e.g. {}", calls.join(", ")));
                }
                text
            }
        }
    }
}

/// A decision as what happened to a call.
fn past(decision: Decision) -> &'static str {
    match decision {
        Decision::Allow => "allowed",
        Decision::Deny => "denied",
        Decision::Ask => "asked about",
    }
}

/// One row: a tool's variant, or its calls that match none.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    /// The tool.
    pub tool: String,
    /// The variant (`None`: calls that match no variant, or a static tool).
    pub variant: Option<String>,
    /// Whether the tool has variants (else the row is its static resolution).
    pub resolvable: bool,
    /// What its calls come to.
    pub cell: Cell,
}

/// What a policy reads besides the action and the resolution, and the
/// argument paths it reads.
pub(crate) fn reads(policy: &cedar_policy::Policy) -> (BTreeSet<Factor>, BTreeSet<String>) {
    let mut factors = BTreeSet::new();
    let mut paths = BTreeSet::new();
    if !matches!(
        policy.principal_constraint(),
        cedar_policy::PrincipalConstraint::Any
    ) {
        factors.insert(Factor::Principal);
    }
    if let Ok(est) = policy.to_json()
        && let Some(conditions) = est.get("conditions")
    {
        walk(conditions, &mut factors, &mut paths);
    }
    (factors, paths)
}

fn is_context(v: &Value) -> bool {
    v.get("Var").and_then(Value::as_str) == Some("context")
}

fn walk(v: &Value, factors: &mut BTreeSet<Factor>, paths: &mut BTreeSet<String>) {
    match v {
        Value::Object(map) => {
            if map.get("Var").and_then(Value::as_str) == Some("principal") {
                factors.insert(Factor::Principal);
            }
            if is_context(v) {
                // `context` whole: anything.
                factors.insert(Factor::Arguments);
                factors.insert(Factor::Session);
                return;
            }
            for op in [".", "has"] {
                if let Some(access) = map.get(op) {
                    let left = access.get("left").unwrap_or(&Value::Null);
                    let attr = access.get("attr").and_then(Value::as_str).unwrap_or("");
                    if is_context(left) {
                        match attr {
                            "resolution" => {}
                            "input" => {
                                factors.insert(Factor::Arguments);
                                paths.insert("context.input".into());
                            }
                            "session" => {
                                factors.insert(Factor::Session);
                            }
                            _ => {
                                factors.insert(Factor::Arguments);
                                factors.insert(Factor::Session);
                            }
                        }
                        return;
                    }
                    if let Some(inner) = left.get(".")
                        && is_context(inner.get("left").unwrap_or(&Value::Null))
                        && inner.get("attr").and_then(Value::as_str) == Some("input")
                    {
                        factors.insert(Factor::Arguments);
                        paths.insert(format!("context.input.{attr}"));
                        return;
                    }
                }
            }
            for child in map.values() {
                walk(child, factors, paths);
            }
        }
        Value::Array(items) => {
            for item in items {
                walk(item, factors, paths);
            }
        }
        _ => {}
    }
}

/// The decision table of `engine`'s policies over its server's variants.
pub fn table(engine: &Engine, server: &mcp_resolve::ir::Server) -> Vec<Row> {
    let exhaustive = mcp_resolve::facts::exhaustive(server);
    let reads: HashMap<PolicyId, (BTreeSet<Factor>, BTreeSet<String>)> = engine
        .policy_set()
        .policies()
        .map(|p| (p.id().clone(), reads(p)))
        .collect();
    let matcher =
        mcp_resolve::matcher::compile(server, mcp_resolve_runtime::Dialect::Extension).ok();
    let mut rows = Vec::new();
    for (tool, &exhaustive) in server.tools.iter().zip(&exhaustive) {
        let mut cases: Vec<(Option<&str>, mcp_resolve_runtime::Annotations, Vec<String>)> = tool
            .variants
            .iter()
            .map(|v| {
                (
                    Some(v.name.as_str()),
                    server.hints.to_annotations(&v.annotations),
                    v.required_scopes.iter().map(|(s, _)| s.clone()).collect(),
                )
            })
            .collect();
        if !exhaustive {
            cases.push((
                None,
                server.hints.to_annotations(&tool.annotations),
                tool.required_scopes.clone(),
            ));
        }
        for (variant, annotations, scopes) in cases {
            let call = Call {
                tool: &tool.name,
                arguments: None,
                variant,
                annotations: &annotations,
                scopes: &scopes,
                described: true,
                principal: None,
                session: None,
            };
            let mut cell = cell(engine, &call, &reads);
            if let Cell::Depends { on, examples, .. } = &mut cell
                && on.contains(&Factor::Arguments)
            {
                *examples = example_calls(engine, &matcher, tool, variant, &reads);
            }
            rows.push(Row {
                tool: tool.name.clone(),
                variant: variant.map(str::to_string),
                resolvable: tool.resolvable,
                cell,
            });
        }
    }
    rows
}

/// What a row's calls come to: Cedar's partial evaluation of each policy
/// with the resolution known and the principal, arguments and session
/// unknown; the policies it cannot decide make the row depend on them.
fn cell(
    engine: &Engine,
    call: &Call<'_>,
    reads: &HashMap<PolicyId, (BTreeSet<Factor>, BTreeSet<String>)>,
) -> Cell {
    let known = match engine.known(call) {
        Ok(known) => known,
        Err(why) => {
            return Cell::Depends {
                possible: [Decision::Allow, Decision::Deny, Decision::Ask]
                    .into_iter()
                    .collect(),
                on: BTreeSet::new(),
                because: vec![format!("the policies cannot be evaluated on it: {why}")],
                examples: Vec::new(),
            };
        }
    };
    let named = |ids: &[PolicyId]| -> Vec<&super::Named> {
        ids.iter().filter_map(|id| engine.named(id)).collect()
    };
    let forbids = named(&known.forbids);
    let permits = named(&known.permits);
    let residual = named(&known.residual);
    let names = |list: &[&super::Named]| -> Vec<String> {
        list.iter()
            .filter(|n| !n.default)
            .map(|n| n.name.clone())
            .collect()
    };
    if !forbids.is_empty() {
        return Cell::Decided {
            decision: Decision::Deny,
            policies: names(&forbids),
        };
    }
    let unknown_forbids = residual.iter().any(|n| n.forbid);
    let known_ask = permits.iter().any(|n| n.ask.is_some());
    let known_allow = permits.iter().any(|n| n.ask.is_none());
    let unknown_ask = residual.iter().any(|n| !n.forbid && n.ask.is_some());
    let unknown_allow = residual.iter().any(|n| !n.forbid && n.ask.is_none());
    let mut possible = BTreeSet::new();
    if unknown_forbids || permits.is_empty() {
        possible.insert(Decision::Deny);
    }
    if known_ask || unknown_ask {
        possible.insert(Decision::Ask);
    }
    if !known_ask && (known_allow || unknown_allow) {
        possible.insert(Decision::Allow);
    }
    if possible.len() == 1 {
        let decision = possible.into_iter().next().unwrap_or(Decision::Deny);
        return Cell::Decided {
            decision,
            policies: names(&permits),
        };
    }
    let mut on = BTreeSet::new();
    let because = known
        .residual
        .iter()
        .filter_map(|id| {
            let n = engine.named(id)?;
            let (factors, paths) = reads.get(id).cloned().unwrap_or_default();
            on.extend(factors.iter().copied());
            let mut what: Vec<String> = paths.into_iter().collect();
            if what.len() > 1 {
                what.retain(|p| p != "context.input");
            }
            what.extend(
                factors
                    .iter()
                    .filter(|f| **f != Factor::Arguments)
                    .map(|f| f.as_str().to_string()),
            );
            if what.is_empty() {
                what.push("what the call brings".into());
            }
            Some(format!("`{}` reads {}", n.name, what.join(", ")))
        })
        .collect();
    Cell::Depends {
        possible,
        on,
        because,
        examples: Vec::new(),
    }
}

/// The values a policy compares an argument with: `path == literal`, and
/// `path like "pattern"` (its wildcards as `x`), by argument path.
fn literals(v: &Value, out: &mut Vec<(Vec<String>, Value)>) {
    match v {
        Value::Object(map) => {
            if let Some(op) = map.get("==") {
                let (left, right) = (op.get("left"), op.get("right"));
                for (a, b) in [(left, right), (right, left)] {
                    if let (Some(path), Some(Value::Object(lit))) = (a.and_then(input_path), b)
                        && let Some(value) = lit.get("Value")
                        && !value.is_object()
                    {
                        out.push((path, value.clone()));
                    }
                }
            }
            if let Some(op) = map.get("like")
                && let Some(path) = op.get("left").and_then(input_path)
                && let Some(Value::Array(parts)) = op.get("pattern")
            {
                let text: String = parts
                    .iter()
                    .map(|p| match p {
                        Value::Object(l) => l
                            .get("Literal")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string(),
                        _ => "x".to_string(),
                    })
                    .collect();
                out.push((path, Value::String(text)));
            }
            for child in map.values() {
                literals(child, out);
            }
        }
        Value::Array(items) => items.iter().for_each(|i| literals(i, out)),
        _ => {}
    }
}

/// `context.input.a.b` as `["a", "b"]`.
fn input_path(v: &Value) -> Option<Vec<String>> {
    let access = v.get(".")?;
    let attr = access.get("attr")?.as_str()?.to_string();
    let left = access.get("left")?;
    if left
        .get(".")
        .and_then(|l| l.get("left"))
        .is_some_and(is_context)
        && left
            .get(".")
            .and_then(|l| l.get("attr"))
            .and_then(Value::as_str)
            == Some("input")
    {
        return Some(vec![attr]);
    }
    let mut path = input_path(left)?;
    path.push(attr);
    Some(path)
}

/// The values the schema names for its top-level properties: enums,
/// constants, and both booleans.
fn schema_values(schema: &Value, out: &mut Vec<(Vec<String>, Value)>) {
    let Some(Value::Object(properties)) = schema.get("properties") else {
        return;
    };
    for (name, property) in properties {
        let path = vec![name.clone()];
        if let Some(Value::Array(values)) = property.get("enum") {
            out.extend(values.iter().map(|v| (path.clone(), v.clone())));
        }
        if let Some(value) = property.get("const") {
            out.push((path.clone(), value.clone()));
        }
        if property.get("type").and_then(Value::as_str) == Some("boolean") {
            out.push((path.clone(), Value::Bool(true)));
            out.push((path, Value::Bool(false)));
        }
    }
}

fn with(base: &Value, path: &[String], value: &Value) -> Value {
    let mut out = base.clone();
    let mut at = &mut out;
    for (i, key) in path.iter().enumerate() {
        let Value::Object(map) = at else {
            return base.clone();
        };
        if i + 1 == path.len() {
            map.insert(key.clone(), value.clone());
            break;
        }
        at = map
            .entry(key.clone())
            .or_insert_with(|| Value::Object(Default::default()));
    }
    out
}

/// How many calls a row's example search tries at the most.
const EXAMPLE_BUDGET: usize = 400;

/// Calls of a row that Cedar decides differently, one per decision (for a
/// caller without a token): built from a small valid call and the values
/// the policies and the schema name, one or two at a time, each checked by
/// the rules' validator and matcher to be a call of the row.
fn example_calls(
    engine: &Engine,
    matcher: &Option<mcp_resolve_host::matcher::Matcher>,
    tool: &mcp_resolve::ir::Tool,
    variant: Option<&str>,
    reads: &HashMap<PolicyId, (BTreeSet<Factor>, BTreeSet<String>)>,
) -> Vec<(Decision, Value)> {
    let Some(matcher) = matcher else {
        return Vec::new();
    };
    let Some(base) = mcp_resolve::facts::minimal_value(&tool.input_schema) else {
        return Vec::new();
    };
    let mut values = Vec::new();
    for policy in engine.slice(&tool.name).policies() {
        if reads
            .get(policy.id())
            .is_some_and(|(f, _)| f.contains(&Factor::Arguments))
            && let Ok(est) = policy.to_json()
            && let Some(conditions) = est.get("conditions")
        {
            literals(conditions, &mut values);
        }
    }
    schema_values(&tool.input_schema, &mut values);
    values.dedup();
    let mut candidates = vec![base.clone()];
    for (i, (path, value)) in values.iter().enumerate() {
        let one = with(&base, path, value);
        for (other, other_value) in values.iter().skip(i + 1) {
            if other != path {
                candidates.push(with(&one, other, other_value));
            }
        }
        candidates.push(one);
    }
    let mut found: Vec<(Decision, Value)> = Vec::new();
    for arguments in candidates.iter().take(EXAMPLE_BUDGET) {
        let Some(Ok(outcome)) = matcher.outcome(&tool.name, arguments) else {
            continue;
        };
        let resolution = outcome.resolution();
        if resolution.variant.as_deref() != variant {
            continue;
        }
        let call = Call {
            tool: &tool.name,
            arguments: Some(arguments),
            variant,
            annotations: &resolution.annotations,
            scopes: &resolution.required_scopes,
            described: true,
            principal: None,
            session: None,
        };
        let decision = engine.decide(&call).decision;
        if !found.iter().any(|(d, _)| *d == decision) {
            found.push((decision, arguments.clone()));
        }
    }
    if found.len() < 2 {
        return Vec::new();
    }
    found.sort_by_key(|(d, _)| *d);
    found
}

/// The rows whose cells differ between `old` and `new`, as (row of old,
/// cell of new).
pub fn diff(old: &[Row], new: &[Row]) -> Vec<(Row, Cell)> {
    old.iter()
        .zip(new)
        .filter(|(a, b)| decision_of(&a.cell) != decision_of(&b.cell))
        .map(|(a, b)| (a.clone(), b.cell.clone()))
        .collect()
}

/// What a cell decides, ignoring which policies say it.
fn decision_of(cell: &Cell) -> (BTreeSet<Decision>, bool) {
    match cell {
        Cell::Decided { decision, .. } => ([*decision].into_iter().collect(), false),
        Cell::Depends { possible, .. } => (possible.clone(), true),
    }
}

/// The variant column of a row.
pub fn variant_label(row: &Row) -> String {
    match &row.variant {
        Some(v) => v.clone(),
        None if row.resolvable => "(no variant matches)".into(),
        None => "(static)".into(),
    }
}

/// A table as text (`format = "text"`) or Markdown (`"markdown"`).
pub fn render(rows: &[Row], markdown: bool) -> String {
    let mut out = String::new();
    if markdown {
        out.push_str("| tool | variant | decision |\n|---|---|---|\n");
        for row in rows {
            out.push_str(&format!(
                "| `{}` | {} | {} |\n",
                row.tool,
                row.variant
                    .as_ref()
                    .map_or_else(|| variant_label(row), |v| format!("`{v}`")),
                row.cell.describe().replace('|', "\\|")
            ));
        }
        return out;
    }
    let tool_width = rows.iter().map(|r| r.tool.len()).max().unwrap_or(4).max(4);
    let variant_width = rows
        .iter()
        .map(|r| variant_label(r).len())
        .max()
        .unwrap_or(7)
        .max(7);
    out.push_str(&format!(
        "{:tool_width$}  {:variant_width$}  decision\n",
        "tool", "variant"
    ));
    for row in rows {
        out.push_str(&format!(
            "{:tool_width$}  {:variant_width$}  {}\n",
            row.tool,
            variant_label(row),
            row.cell.describe()
        ));
    }
    out
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

/// A table as an HTML section (for `explain`'s page), or a page of its own.
pub fn render_html_section(rows: &[Row]) -> String {
    let mut out = String::from(
        "<section id=\"policy\">\n<h2>Policy decisions</h2>\n<table>\n<thead><tr><th>tool</th><th>variant</th><th>decision</th></tr></thead>\n<tbody>\n",
    );
    for row in rows {
        let class = match &row.cell {
            Cell::Decided { decision, .. } => decision.as_str(),
            Cell::Depends { .. } => "depends",
        };
        out.push_str(&format!(
            "<tr class=\"{class}\"><td><code>{}</code></td><td>{}</td><td>{}</td></tr>\n",
            escape(&row.tool),
            escape(&variant_label(row)),
            escape(&row.cell.describe())
        ));
    }
    out.push_str("</tbody>\n</table>\n</section>\n");
    out
}

/// A table as a standalone HTML page.
pub fn render_html(rows: &[Row]) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head><meta charset=\"utf-8\"><title>Policy decisions</title>\n<style>body{{font-family:sans-serif}}td,th{{padding:.2em .6em;text-align:left}}tr.deny td:last-child{{color:#b00}}tr.ask td:last-child{{color:#a60}}tr.allow td:last-child{{color:#070}}tr.depends td:last-child{{color:#555}}</style></head>\n<body>\n{}</body>\n</html>\n",
        render_html_section(rows)
    )
}

/// What `policy diff` prints: one line per variant whose decision changes.
pub fn render_diff(changes: &[(Row, Cell)], markdown: bool) -> String {
    if changes.is_empty() {
        return "no variant's decision changes\n".into();
    }
    let mut out = String::new();
    if markdown {
        out.push_str("| tool | variant | before | after |\n|---|---|---|---|\n");
    }
    for (row, after) in changes {
        if markdown {
            out.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                row.tool,
                variant_label(row),
                row.cell.describe().replace('|', "\\|"),
                after.describe().replace('|', "\\|")
            ));
        } else {
            out.push_str(&format!(
                "{} {}: {} -> {}\n",
                row.tool,
                variant_label(row),
                row.cell.describe(),
                after.describe()
            ));
        }
    }
    out
}

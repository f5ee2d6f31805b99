//! `mcp-resolve explain`: the reviewer's view of a server.
//!
//! For each tool: its static annotations, then its variants in match order
//! as a decision table (the condition in plain words, a yes/no per hint,
//! scopes, whether the pattern analysis found the variant reachable), and
//! what happens to calls no variant matches, with the analysis's example
//! calls. A summary counts, over the whole server, how many outcomes are
//! read-only, destructive, and so on. Rendered as text, Markdown or one
//! self-contained HTML page.
//!
//! Nothing here is claimed without the analysis having shown it: a variant
//! is "reachable" or "unreachable" only when the analysis decided it, and
//! "undecided" otherwise (SPEC's soundness rule).

use serde_json::Value;

use crate::analysis::{Coverage, Reach, ToolAnalysis};
use crate::hints::{HintSet, HintTable, READ_ONLY};
use crate::ir::{Cond, Pred, PredKind, Server, Tool};
use crate::markup::{html, md_cell, md_code};
use crate::project::Project;

/// The explanation of one server (or of some of its tools).
#[derive(Clone, Debug, PartialEq)]
pub struct Explanation {
    /// The server's name.
    pub server: String,
    /// The server's version.
    pub version: String,
    /// The hint names, in the table's column order.
    pub hints: Vec<String>,
    /// Each tool explained, in the rules' order.
    pub tools: Vec<ToolView>,
}

/// One tool.
#[derive(Clone, Debug, PartialEq)]
pub struct ToolView {
    /// The tool's name.
    pub name: String,
    /// Its title, if any.
    pub title: Option<String>,
    /// Its static annotations (what a client that does not resolve sees),
    /// one cell per hint.
    pub static_set: Vec<Cell>,
    /// Scopes every call needs.
    pub scopes: Vec<String>,
    /// The variants, in match order.
    pub rows: Vec<Row>,
    /// What happens to calls that match no variant.
    pub fallthrough: Fallthrough,
}

/// One hint's value in a set.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Cell {
    /// The value.
    pub value: bool,
    /// Whether it is the hint's most conservative value.
    pub worst: bool,
    /// Whether it means anything here (`destructiveHint` and
    /// `idempotentHint` mean nothing in a read-only set).
    pub meaningful: bool,
}

/// One variant.
#[derive(Clone, Debug, PartialEq)]
pub struct Row {
    /// Its name.
    pub name: String,
    /// Its condition, in words.
    pub when: Words,
    /// Its resolved annotations, one cell per hint.
    pub annotations: Vec<Cell>,
    /// The scopes its calls need.
    pub scopes: Vec<String>,
    /// Whether some call resolves to it.
    pub reach: Reachability,
}

/// Whether a variant is reachable, as far as the analysis decided.
#[derive(Clone, Debug, PartialEq)]
pub enum Reachability {
    /// Some call resolves to it.
    Yes,
    /// Every call it matches goes to an earlier variant.
    Shadowed {
        /// Those earlier variants' names.
        by: Vec<String>,
        /// A call it matches that goes to an earlier variant.
        example: Option<Value>,
    },
    /// Its condition holds for no valid call.
    Never,
    /// The analysis could not decide (a limit, or it did not run).
    Undecided(String),
}

/// Calls that match no variant.
#[derive(Clone, Debug, PartialEq)]
pub enum Fallthrough {
    /// The tool has no variants: every call gets the static annotations.
    Always,
    /// Proven: every valid call matches some variant.
    None,
    /// Some valid calls match no variant and get the static annotations;
    /// this is one.
    Some(Value),
    /// The analysis could not decide.
    Undecided(String),
}

/// The tool `--tool` named is not in the server.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("no tool `{name}` in server `{server}`{}", .suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
pub struct UnknownTool {
    /// The name asked for.
    pub name: String,
    /// The server.
    pub server: String,
    /// The closest tool name, if one is close.
    pub suggestion: Option<String>,
}

/// Explains `server`, one of `project`'s servers, with the pattern
/// analysis's findings from loading it.
pub fn explain(project: &Project, server: &Server) -> Explanation {
    let analyses = project
        .servers
        .iter()
        .position(|s| std::ptr::eq(s, server))
        .and_then(|i| project.analyses.get(i));
    let table = &server.hints;
    Explanation {
        server: server.name.clone(),
        version: server.version.clone(),
        hints: table.defs().iter().map(|d| d.name.to_string()).collect(),
        tools: server
            .tools
            .iter()
            .enumerate()
            .map(|(i, tool)| {
                let analysis = analyses.and_then(|a| a.get(i)).and_then(Option::as_ref);
                tool_view(table, tool, analysis)
            })
            .collect(),
    }
}

fn cells(table: &HintTable, set: &HintSet) -> Vec<Cell> {
    let read_only = set.get(READ_ONLY);
    table
        .defs()
        .iter()
        .enumerate()
        .map(|(i, d)| Cell {
            value: set.get(i),
            worst: set.get(i) == d.worst,
            meaningful: d.is_meaningful(read_only),
        })
        .collect()
}

fn tool_view(table: &HintTable, tool: &Tool, analysis: Option<&ToolAnalysis>) -> ToolView {
    let not_analysed = "the pattern analysis did not run".to_string();
    let names: Vec<&str> = tool.variants.iter().map(|v| v.name.as_str()).collect();
    let rows = tool
        .variants
        .iter()
        .enumerate()
        .map(|(i, v)| Row {
            name: v.name.clone(),
            when: cond_words(&v.when),
            annotations: cells(table, &v.annotations),
            scopes: v.scopes(),
            reach: match analysis {
                Some(ToolAnalysis::Done { reach, .. }) => match reach.get(i) {
                    Some(Reach::Reachable) => Reachability::Yes,
                    Some(Reach::Unreachable {
                        covered_by,
                        example,
                    }) => Reachability::Shadowed {
                        by: covered_by
                            .iter()
                            .filter_map(|&j| names.get(j).map(|n| n.to_string()))
                            .collect(),
                        example: example.as_ref().map(|(call, _)| call.clone()),
                    },
                    Some(Reach::Empty) => Reachability::Never,
                    None => Reachability::Undecided(not_analysed.clone()),
                },
                Some(ToolAnalysis::Inconclusive(why)) => Reachability::Undecided(why.clone()),
                None => Reachability::Undecided(not_analysed.clone()),
            },
        })
        .collect();
    let fallthrough = if tool.variants.is_empty() {
        Fallthrough::Always
    } else {
        match analysis {
            Some(ToolAnalysis::Done {
                coverage: Coverage::Exhaustive,
                ..
            }) => Fallthrough::None,
            Some(ToolAnalysis::Done {
                coverage: Coverage::Missing(example),
                ..
            }) => Fallthrough::Some(example.clone()),
            Some(ToolAnalysis::Inconclusive(why)) => Fallthrough::Undecided(why.clone()),
            None => Fallthrough::Undecided(not_analysed),
        }
    };
    ToolView {
        name: tool.name.clone(),
        title: tool.title.clone(),
        static_set: cells(table, &tool.annotations),
        scopes: tool.required_scopes.clone(),
        rows,
        fallthrough,
    }
}

/// Words with code spans (argument names, values, patterns, example calls):
/// kept apart from the prose so each format marks them up its own way and
/// no character of a rules file can be taken for markup.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Words(Vec<(bool, String)>);

impl Words {
    fn text(mut self, t: impl Into<String>) -> Words {
        self.0.push((false, t.into()));
        self
    }

    fn code(mut self, c: impl Into<String>) -> Words {
        self.0.push((true, c.into()));
        self
    }

    fn then(mut self, other: Words) -> Words {
        self.0.extend(other.0);
        self
    }

    fn join(parts: Vec<Words>, separator: &str) -> Words {
        let mut out = Words::default();
        for (i, part) in parts.into_iter().enumerate() {
            if i > 0 {
                out = out.text(separator);
            }
            out = out.then(part);
        }
        out
    }

    /// Plain text, code in backticks.
    pub fn to_plain(&self) -> String {
        self.0
            .iter()
            .map(|(code, t)| if *code { format!("`{t}`") } else { t.clone() })
            .collect()
    }

    /// A Markdown table cell.
    pub fn to_markdown(&self) -> String {
        self.0
            .iter()
            .map(|(code, t)| if *code { md_code(t) } else { md_cell(t) })
            .collect()
    }

    /// HTML text.
    pub fn to_html(&self) -> String {
        self.0
            .iter()
            .map(|(code, t)| {
                if *code {
                    format!("<code>{}</code>", html(t))
                } else {
                    html(t)
                }
            })
            .collect()
    }
}

pub(super) fn json(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

pub(super) fn w(t: &str) -> Words {
    Words::default().text(t)
}

/// A condition in plain words.
pub fn cond_words(c: &Cond) -> Words {
    match c {
        Cond::Const(true) => w("always"),
        Cond::Const(false) => w("never"),
        Cond::And(cs) if cs.is_empty() => w("always"),
        Cond::Or(cs) if cs.is_empty() => w("never"),
        Cond::And(cs) | Cond::Or(cs) => {
            let and = matches!(c, Cond::And(_));
            let parts: Vec<Words> = cs
                .iter()
                .map(|c| match c {
                    Cond::And(inner) | Cond::Or(inner) if inner.len() > 1 => {
                        w("(").then(cond_words(c)).text(")")
                    }
                    _ => cond_words(c),
                })
                .collect();
            Words::join(parts, if and { " and " } else { " or " })
        }
        Cond::Not(inner) => match inner.as_ref() {
            Cond::Present(p) => Words::default().code(p.to_string()).text(" is absent"),
            other => w("not (").then(cond_words(other)).text(")"),
        },
        Cond::Present(p) => Words::default().code(p.to_string()).text(" is present"),
        Cond::Test(p, pred) => Words::default()
            .code(p.to_string())
            .text(" ")
            .then(pred_words(pred)),
    }
}

fn values(vs: &[Value]) -> Words {
    Words::join(
        vs.iter().map(|v| Words::default().code(json(v))).collect(),
        ", ",
    )
}

fn pred_words(p: &Pred) -> Words {
    match &p.kind {
        PredKind::Const(v) => w("is ").code(json(v)),
        PredKind::Enum(vs) if vs.len() == 1 => w("is ").then(values(vs)),
        PredKind::Enum(vs) if vs.is_empty() => w("matches nothing"),
        PredKind::Enum(vs) => w("is one of ").then(values(vs)),
        PredKind::Type(ts) => {
            let article = |t: &String| match t.as_str() {
                "integer" | "object" | "array" => format!("an {t}"),
                "null" => "null".to_string(),
                _ => format!("a {t}"),
            };
            w(&format!(
                "is {}",
                ts.iter().map(article).collect::<Vec<_>>().join(" or ")
            ))
        }
        PredKind::Pattern(r) => w("matches the pattern ").code(r.clone()),
        PredKind::MinLength(n) => w(&format!("is at least {n} characters long")),
        PredKind::MaxLength(n) => w(&format!("is at most {n} characters long")),
        PredKind::Minimum(n) => w(&format!("is at least {n}")),
        PredKind::Maximum(n) => w(&format!("is at most {n}")),
        PredKind::ExclusiveMinimum(n) => w(&format!("is greater than {n}")),
        PredKind::ExclusiveMaximum(n) => w(&format!("is less than {n}")),
        PredKind::Not(inner) => match &inner.kind {
            PredKind::Const(v) => w("is not ").code(json(v)),
            PredKind::Enum(vs) if vs.len() == 1 => w("is not ").then(values(vs)),
            PredKind::Enum(vs) => w("is none of ").then(values(vs)),
            PredKind::Pattern(r) => w("does not match the pattern ").code(r.clone()),
            _ => w("is not such that it ").then(pred_words(inner)),
        },
        PredKind::AnyOf(ps) if ps.is_empty() => w("matches nothing"),
        PredKind::AllOf(ps) if ps.is_empty() => w("is any value"),
        PredKind::AnyOf(ps) if ps.len() == 1 => pred_words(&ps[0]),
        PredKind::AnyOf(ps) => w("(")
            .then(Words::join(ps.iter().map(pred_words).collect(), " or "))
            .text(")"),
        PredKind::AllOf(ps) => Words::join(ps.iter().map(pred_words).collect(), " and "),
        PredKind::MinItems(n) => w(&format!("has at least {n} items")),
        PredKind::MaxItems(n) => w(&format!("has at most {n} items")),
        PredKind::Items(inner) => w("has only items that ").then(pred_words(inner)),
        PredKind::Contains(inner) => w("has an item that ").then(pred_words(inner)),
        PredKind::Properties(ps) => Words::join(
            ps.iter()
                .map(|(k, p)| {
                    w("has ")
                        .code(k.clone())
                        .text(" absent or ")
                        .code(k.clone())
                        .text(" ")
                        .then(pred_words(p))
                })
                .collect(),
            " and ",
        ),
        PredKind::Required(ks) => w("has ").then(Words::join(
            ks.iter()
                .map(|k| Words::default().code(k.clone()))
                .collect(),
            ", ",
        )),
    }
}

/// Counts over the whole server, for the summary.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Summary {
    /// Tools.
    pub tools: usize,
    /// Tools with variants.
    pub resolvable: usize,
    /// Variants.
    pub variants: usize,
    /// Variants the analysis showed no call reaches.
    pub unreachable: usize,
    /// Tools some calls of which match no variant (proven, with an example).
    pub falling_through: usize,
    /// Tools or variants the analysis could not decide.
    pub undecided: usize,
    /// Per hint: reachable (or undecided) variants with the hint `true`
    /// where it means something.
    pub variants_with: Vec<usize>,
    /// Per hint: static sets with the hint `true` where it means something.
    pub static_with: Vec<usize>,
}

impl Summary {
    /// The counts in one sentence.
    pub fn counts(&self) -> String {
        format!(
            "{} ({} with variants), {} ({} unreachable); {} with calls that match no variant; {} undecided",
            plural(self.tools, "tool"),
            self.resolvable,
            plural(self.variants, "variant"),
            self.unreachable,
            plural(self.falling_through, "tool"),
            self.undecided
        )
    }
}

/// `1 tool`, `2 tools`.
fn plural(n: usize, one: &str) -> String {
    if n == 1 {
        format!("1 {one}")
    } else {
        format!("{n} {one}s")
    }
}

impl Explanation {
    /// Keeps only the tool named `name`.
    pub fn only_tool(mut self, name: &str) -> Result<Explanation, UnknownTool> {
        match self.tools.iter().position(|t| t.name == name) {
            Some(i) => {
                let tool = self.tools.swap_remove(i);
                self.tools = vec![tool];
                Ok(self)
            }
            None => Err(UnknownTool {
                name: name.to_string(),
                server: self.server.clone(),
                suggestion: crate::suggest::closest(
                    name,
                    self.tools.iter().map(|t| t.name.as_str()),
                )
                .map(str::to_string),
            }),
        }
    }

    /// The counts of the summary.
    pub fn summary(&self) -> Summary {
        let mut s = Summary {
            variants_with: vec![0; self.hints.len()],
            static_with: vec![0; self.hints.len()],
            ..Summary::default()
        };
        for tool in &self.tools {
            s.tools += 1;
            if !tool.rows.is_empty() {
                s.resolvable += 1;
            }
            match tool.fallthrough {
                Fallthrough::Some(_) => s.falling_through += 1,
                Fallthrough::Undecided(_) => s.undecided += 1,
                Fallthrough::None | Fallthrough::Always => {}
            }
            for (i, c) in tool.static_set.iter().enumerate() {
                s.static_with[i] += usize::from(c.value && c.meaningful);
            }
            for row in &tool.rows {
                s.variants += 1;
                match row.reach {
                    Reachability::Shadowed { .. } | Reachability::Never => {
                        s.unreachable += 1;
                        continue;
                    }
                    Reachability::Undecided(_) => s.undecided += 1,
                    Reachability::Yes => {}
                }
                for (i, c) in row.annotations.iter().enumerate() {
                    s.variants_with[i] += usize::from(c.value && c.meaningful);
                }
            }
        }
        s
    }
}

mod render;

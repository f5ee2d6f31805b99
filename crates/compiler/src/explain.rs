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

use std::fmt::Write as _;

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

fn json(v: &Value) -> String {
    serde_json::to_string(v).unwrap_or_default()
}

fn w(t: &str) -> Words {
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

    /// Plain text for a terminal.
    pub fn to_text(&self) -> String {
        let mut out = format!("server {} {}\n", self.server, self.version);
        for tool in &self.tools {
            out.push('\n');
            let _ = write!(out, "tool {}", tool.name);
            if let Some(title) = &tool.title {
                let _ = write!(out, " ({title})");
            }
            out.push('\n');
            let _ = writeln!(
                out,
                "  static annotations: {}",
                self.set_words(&tool.static_set)
            );
            if !tool.scopes.is_empty() {
                let _ = writeln!(out, "  scopes: {}", tool.scopes.join(", "));
            }
            if tool.rows.is_empty() {
                out.push_str("  no variants: every call gets the static annotations\n");
                continue;
            }
            out.push_str("  variants, first match wins:\n");
            for (i, row) in tool.rows.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "  {}. {}  when {}",
                    i + 1,
                    row.name,
                    row.when.to_plain()
                );
                let _ = writeln!(out, "     {}", self.set_words(&row.annotations));
                if !row.scopes.is_empty() {
                    let _ = writeln!(out, "     scopes: {}", row.scopes.join(", "));
                }
                let _ = writeln!(
                    out,
                    "     reachable: {}",
                    reach_words(&row.reach).to_plain()
                );
            }
            let _ = writeln!(
                out,
                "  otherwise: the static annotations; {}",
                fallthrough_words(&tool.fallthrough).to_plain()
            );
        }
        let _ = write!(out, "\n{}", self.summary_words());
        out
    }

    fn set_words(&self, cells: &[Cell]) -> String {
        self.hints
            .iter()
            .zip(cells)
            .map(|(name, c)| format!("{name} {}", cell_word(c)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    fn summary_words(&self) -> String {
        let s = self.summary();
        let mut out = format!("summary: {}\n", s.counts());
        for (i, name) in self.hints.iter().enumerate() {
            let _ = writeln!(
                out,
                "  {name}: true for {} of {} reachable variants, {} of {} static sets",
                s.variants_with[i],
                s.variants - s.unreachable,
                s.static_with[i],
                s.tools
            );
        }
        out
    }

    /// GitHub-flavoured Markdown: a heading and a decision table per tool.
    pub fn to_markdown(&self) -> String {
        let mut out = format!("# {} {}\n\n", md_cell(&self.server), md_cell(&self.version));
        let s = self.summary();
        let _ = writeln!(out, "{}.\n", md_cell(&s.counts()));
        out.push_str(
            "| hint | true in reachable variants | true in static sets |\n|---|---:|---:|\n",
        );
        for (i, name) in self.hints.iter().enumerate() {
            let _ = writeln!(
                out,
                "| `{name}` | {} of {} | {} of {} |",
                s.variants_with[i],
                s.variants - s.unreachable,
                s.static_with[i],
                s.tools
            );
        }
        for tool in &self.tools {
            let _ = write!(out, "\n## {}", md_code(&tool.name));
            if let Some(title) = &tool.title {
                let _ = write!(out, " — {}", md_cell(title));
            }
            out.push_str("\n\n");
            let header: String = self.hints.iter().map(|h| format!(" `{h}` |")).collect();
            let rule: String = self.hints.iter().map(|_| "---|").collect();
            let _ = writeln!(out, "| # | variant | when |{header} scopes | reachable |");
            let _ = writeln!(out, "|---|---|---|{rule}---|---|");
            for (i, row) in tool.rows.iter().enumerate() {
                let cells: String = row
                    .annotations
                    .iter()
                    .map(|c| format!(" {} |", cell_word(c)))
                    .collect();
                let _ = writeln!(
                    out,
                    "| {} | {} | {} |{cells} {} | {} |",
                    i + 1,
                    md_code(&row.name),
                    row.when.to_markdown(),
                    scopes_markdown(&row.scopes),
                    reach_words(&row.reach).to_markdown()
                );
            }
            let cells: String = tool
                .static_set
                .iter()
                .map(|c| format!(" {} |", cell_word(c)))
                .collect();
            let _ = writeln!(
                out,
                "| | *static* | {} |{cells} {} | |",
                otherwise_words(&tool.fallthrough).to_markdown(),
                scopes_markdown(&tool.scopes)
            );
        }
        out
    }

    /// One self-contained HTML page: no script, no external asset; readable
    /// on a phone (the tables scroll sideways inside the page).
    pub fn to_html(&self) -> String {
        let s = self.summary();
        let title = format!("{} {}", self.server, self.version);
        let mut out = String::new();
        let _ = write!(
            out,
            "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
             <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
             <title>{} — mcp-resolve explain</title>\n<style>\n{CSS}</style>\n</head>\n<body>\n",
            html(&title)
        );
        let _ = writeln!(out, "<header><h1>{}</h1>", html(&title));
        let _ = writeln!(
            out,
            "<p class=\"counts\">{}</p></header>",
            html(&s.counts())
        );
        out.push_str("<section id=\"summary\"><h2>Summary</h2><div class=\"scroll\"><table class=\"summary\">\n<thead><tr><th>hint</th><th>true in reachable variants</th><th>true in static sets</th></tr></thead>\n<tbody>\n");
        for (i, name) in self.hints.iter().enumerate() {
            let _ = writeln!(
                out,
                "<tr><th scope=\"row\"><code>{}</code></th><td>{} of {}</td><td>{} of {}</td></tr>",
                html(name),
                s.variants_with[i],
                s.variants - s.unreachable,
                s.static_with[i],
                s.tools
            );
        }
        out.push_str("</tbody></table></div></section>\n");
        if self.tools.len() > 1 {
            out.push_str("<nav><h2>Tools</h2><ul>\n");
            for tool in &self.tools {
                let _ = writeln!(
                    out,
                    "<li><a href=\"#tool-{}\"><code>{}</code></a></li>",
                    anchor(&tool.name),
                    html(&tool.name)
                );
            }
            out.push_str("</ul></nav>\n");
        }
        for tool in &self.tools {
            self.tool_html(&mut out, tool);
        }
        out.push_str(
            "<footer>Generated by <code>mcp-resolve explain</code>.</footer>\n</body>\n</html>\n",
        );
        out
    }

    fn tool_html(&self, out: &mut String, tool: &ToolView) {
        let _ = write!(
            out,
            "<section class=\"tool\" id=\"tool-{}\">\n<h2><code>{}</code>",
            anchor(&tool.name),
            html(&tool.name)
        );
        if let Some(title) = &tool.title {
            let _ = write!(out, " <span class=\"title\">{}</span>", html(title));
        }
        out.push_str("</h2>\n<p class=\"static\">Static annotations (what clients that do not resolve see):</p>\n<ul class=\"hints\">");
        for (name, c) in self.hints.iter().zip(&tool.static_set) {
            let _ = write!(
                out,
                "<li class=\"{}\"><code>{}</code> {}</li>",
                cell_class(c),
                html(name),
                cell_word(c)
            );
        }
        out.push_str("</ul>\n");
        if !tool.scopes.is_empty() {
            let _ = writeln!(
                out,
                "<p>Scopes every call needs: {}</p>",
                scopes_html(&tool.scopes)
            );
        }
        out.push_str("<div class=\"scroll\"><table class=\"decision\">\n<thead><tr><th>#</th><th>variant</th><th>when</th>");
        for name in &self.hints {
            let _ = write!(
                out,
                "<th><code>{}</code></th>",
                html(name.strip_suffix("Hint").unwrap_or(name))
            );
        }
        out.push_str("<th>scopes</th><th>reachable</th></tr></thead>\n<tbody>\n");
        for (i, row) in tool.rows.iter().enumerate() {
            let _ = write!(
                out,
                "<tr><td>{}</td><th scope=\"row\"><code>{}</code></th><td class=\"when\">{}</td>",
                i + 1,
                html(&row.name),
                row.when.to_html()
            );
            for c in &row.annotations {
                let _ = write!(out, "<td class=\"{}\">{}</td>", cell_class(c), cell_word(c));
            }
            let reach_class = match row.reach {
                Reachability::Yes => "reach-yes",
                Reachability::Undecided(_) => "reach-undecided",
                _ => "reach-no",
            };
            let _ = writeln!(
                out,
                "<td>{}</td><td class=\"{reach_class}\">{}</td></tr>",
                scopes_html(&row.scopes),
                reach_words(&row.reach).to_html()
            );
        }
        let _ = write!(
            out,
            "<tr class=\"otherwise\"><td></td><th scope=\"row\"><em>static</em></th><td class=\"when\">{}</td>",
            otherwise_words(&tool.fallthrough).to_html()
        );
        for c in &tool.static_set {
            let _ = write!(out, "<td class=\"{}\">{}</td>", cell_class(c), cell_word(c));
        }
        let _ = writeln!(
            out,
            "<td>{}</td><td></td></tr>\n</tbody></table></div>\n</section>",
            scopes_html(&tool.scopes)
        );
    }
}

/// `yes`, `no`, or `n/a` for a hint that means nothing in its set.
fn cell_word(c: &Cell) -> &'static str {
    match (c.meaningful, c.value) {
        (false, _) => "n/a",
        (true, true) => "yes",
        (true, false) => "no",
    }
}

fn cell_class(c: &Cell) -> &'static str {
    match (c.meaningful, c.worst) {
        (false, _) => "na",
        (true, true) => "worst",
        (true, false) => "relaxed",
    }
}

fn reach_words(r: &Reachability) -> Words {
    match r {
        Reachability::Yes => w("yes"),
        Reachability::Shadowed { by, example } => {
            let mut words = w("no: its calls go to ").then(Words::join(
                by.iter()
                    .map(|b| Words::default().code(b.clone()))
                    .collect(),
                ", ",
            ));
            if let Some(e) = example {
                words = words.text(", e.g. ").code(json(e));
            }
            words
        }
        Reachability::Never => w("no: no valid call matches it"),
        Reachability::Undecided(why) => w(&format!("undecided ({why})")),
    }
}

fn fallthrough_words(f: &Fallthrough) -> Words {
    match f {
        Fallthrough::Always => w("every call (no variants)"),
        Fallthrough::None => w("no call gets here (every valid call matches a variant, proven)"),
        Fallthrough::Some(e) => w("calls that match no variant get here, e.g. ").code(json(e)),
        Fallthrough::Undecided(why) => w(&format!("undecided whether any call gets here ({why})")),
    }
}

/// The `when` cell of the static row.
fn otherwise_words(f: &Fallthrough) -> Words {
    match f {
        Fallthrough::Always => w("every call (no variants)"),
        Fallthrough::None => w("no call (proven: every valid call matches a variant)"),
        Fallthrough::Some(e) => w("calls that match no variant, e.g. ").code(json(e)),
        Fallthrough::Undecided(why) => w(&format!("undecided ({why})")),
    }
}

fn scopes_markdown(scopes: &[String]) -> String {
    scopes
        .iter()
        .map(|s| md_code(s))
        .collect::<Vec<_>>()
        .join(", ")
}

fn scopes_html(scopes: &[String]) -> String {
    scopes
        .iter()
        .map(|s| format!("<code>{}</code>", html(s)))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A fragment identifier for a tool name: characters outside
/// `[A-Za-z0-9_.-]` as `~XX` bytes, so distinct names stay distinct.
fn anchor(name: &str) -> String {
    let mut out = String::new();
    for b in name.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "~{b:02X}");
        }
    }
    out
}

/// The page's style: system fonts, light and dark, tables that scroll
/// sideways on a narrow screen instead of widening the page.
const CSS: &str = r#":root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #59636e; --line: #d1d9e0; --head: #f6f8fa; --worst: #fff1e5; --worst-fg: #953800; --relaxed: #dafbe1; --relaxed-fg: #116329; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d; --head: #151b23; --worst: #3d1f00; --worst-fg: #ffa657; --relaxed: #0f2d1a; --relaxed-fg: #7ee787; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 90rem; padding: 1rem; font: 16px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; color: var(--fg); background: var(--bg); }
h1 { font-size: 1.5rem; margin: 0 0 .25rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin: 2rem 0 .5rem; overflow-wrap: anywhere; }
.title { color: var(--muted); font-weight: normal; }
.counts, .static, footer { color: var(--muted); }
code { font: .9em ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
h1 code, h2 code, td.when code, td.reach-no code, p code { overflow-wrap: anywhere; }
th code { white-space: nowrap; }
.scroll { overflow-x: auto; -webkit-overflow-scrolling: touch; }
table { border-collapse: collapse; }
table.decision { min-width: 100%; }
th, td { border: 1px solid var(--line); padding: .35rem .5rem; text-align: left; vertical-align: top; }
thead th { background: var(--head); }
table.decision thead th { white-space: nowrap; }
td.when { min-width: 12rem; }
td.worst, li.worst { background: var(--worst); color: var(--worst-fg); }
td.relaxed, li.relaxed { background: var(--relaxed); color: var(--relaxed-fg); }
td.na, li.na { color: var(--muted); }
td.reach-no { color: var(--worst-fg); }
tr.otherwise { background: var(--head); }
ul.hints { display: flex; flex-wrap: wrap; gap: .5rem; list-style: none; padding: 0; }
ul.hints li { border: 1px solid var(--line); border-radius: 1rem; padding: 0 .6rem; }
nav ul { columns: 14rem; }
footer { margin-top: 2rem; font-size: .875rem; }
"#;

//! The renderers of an [`Explanation`]: plain text, Markdown, and one
//! self-contained HTML page; every word of a rules file goes through
//! [`Words`], so no character of it can be taken for markup.

use std::fmt::Write as _;

use super::{Cell, Explanation, Fallthrough, Reachability, ToolView, Words, json, w};
use crate::markup::{html, md_cell, md_code};

impl Explanation {
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

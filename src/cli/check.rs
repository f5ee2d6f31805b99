//! `check`: diagnostics in four formats.

use std::path::PathBuf;

use mcp_resolve::diagnostic::{self, Severity};

use super::{FAILURE, Format, OK, color_for, load, out, pretty_json};

pub(crate) fn run(paths: &[PathBuf], format: Format, deny_warnings: bool) -> u8 {
    let project = match load(paths) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let diags = &project.diagnostics;
    let text = match format {
        Format::Human => {
            diagnostic::render_human(&project.sources, diags, color_for(&std::io::stdout()))
        }
        Format::Json => pretty_json(&diagnostic::to_json(&project.sources, diags)),
        Format::Github => diagnostic::render_github(&project.sources, diags),
        Format::Sarif => pretty_json(&diagnostic::to_sarif(&project.sources, diags)),
    };
    out(&text);
    // A clean run on a terminal says so, in one line (as ruff does); a pipe
    // or a file gets nothing to parse around.
    if matches!(format, Format::Human)
        && diags.is_empty()
        && std::io::IsTerminal::is_terminal(&std::io::stdout())
    {
        let tools: usize = project.servers.iter().map(|s| s.tools.len()).sum();
        let plural = |n: usize, one: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {one}s")
            }
        };
        out(&format!(
            "checked {}, {}: no problems found\n",
            plural(project.servers.len(), "server"),
            plural(tools, "tool")
        ));
    }
    let failing = diags.iter().any(|d| {
        d.severity == Severity::Error || (deny_warnings && d.severity == Severity::Warning)
    });
    super::left_to_exit(project);
    if failing { FAILURE } else { OK }
}

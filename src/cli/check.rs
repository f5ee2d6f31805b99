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
    // A clean run says so, in one line on standard error (as ruff says "All
    // checks passed!"), so that a pipe or a file still gets nothing to parse
    // around; the machine formats carry their own summary.
    if matches!(format, Format::Human) && diags.is_empty() {
        let tools: usize = project.servers.iter().map(|s| s.tools.len()).sum();
        let plural = |n: usize, one: &str| {
            if n == 1 {
                format!("1 {one}")
            } else {
                format!("{n} {one}s")
            }
        };
        super::progress::finish();
        eprintln!(
            "checked {}, {}: no problems found",
            plural(project.servers.len(), "server"),
            plural(tools, "tool")
        );
    }
    let failing = diags.iter().any(|d| {
        d.severity == Severity::Error || (deny_warnings && d.severity == Severity::Warning)
    });
    super::left_to_exit(project);
    if failing { FAILURE } else { OK }
}

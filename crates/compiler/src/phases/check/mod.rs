//! Checks over the IR, one file per concern. Each adds diagnostics; none fails.

mod arguments;
mod bound;
mod names;
mod patterns;
mod schema;

use crate::diagnostic::Diagnostic;
use crate::ir::Server;

/// Runs every check on a server, on `jobs` threads (0: every core).
pub fn check_server(server: &Server, jobs: usize, diags: &mut Vec<Diagnostic>) {
    names::check(server, diags);
    // Each tool's checks are independent: run them on the machine's cores,
    // then report in the order a loop would (check by check, tool by tool).
    let per_tool = crate::par::map(
        &server.tools,
        crate::par::threads(jobs),
        Some(crate::par::WORK_STACK),
        |_, tool| {
            let mut found: [Vec<Diagnostic>; 4] = Default::default();
            let validator = schema::check_tool(tool, &mut found[0]);
            arguments::check_tool(tool, validator.as_ref(), &mut found[1]);
            bound::check_tool(server, tool, &mut found[2]);
            patterns::check_tool(tool, &mut found[3]);
            found
        },
    );
    let mut per_tool: Vec<[Vec<Diagnostic>; 4]> = per_tool
        .into_iter()
        // A panic is a bug: raise it here, as the loop would have.
        .map(|result| result.unwrap_or_else(|panic| std::panic::resume_unwind(panic)))
        .collect();
    for check in 0..4 {
        for found in &mut per_tool {
            diags.append(&mut found[check]);
        }
    }
}

//! Checks over the IR, one file per concern. Each adds diagnostics; none fails.

mod arguments;
mod bound;
mod names;
mod patterns;
mod schema;

use crate::diagnostic::Diagnostic;
use crate::ir::Server;

/// Runs every check on a server.
pub fn check_server(server: &Server, diags: &mut Vec<Diagnostic>) {
    names::check(server, diags);
    let validators = schema::check(server, diags);
    arguments::check(server, &validators, diags);
    bound::check(server, diags);
    patterns::check(server, diags);
}

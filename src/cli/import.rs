//! `import`: a rules file from the tools a server lists.

use std::path::Path;

use mcp_resolve::format::Syntax;
use mcp_resolve::import::{import, tools_of};
use serde_json::Value;

use super::{FAILURE, OK, USAGE, write_output};

pub(crate) fn run(
    input: &Path,
    output: &Path,
    name: Option<String>,
    version: &str,
    force: bool,
) -> u8 {
    if output.exists() && !force {
        eprintln!(
            "error: `{}` exists; give `--force` to overwrite it",
            output.display()
        );
        return USAGE;
    }
    let text = match mcp_resolve::project::read_limited(input) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read `{}`: {e}", input.display());
            return USAGE;
        }
    };
    let document: Value = match serde_json::from_str(&text) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: `{}` is not JSON: {e}", input.display());
            return USAGE;
        }
    };
    let tools = match tools_of(&document) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: `{}`: {e}", input.display());
            return USAGE;
        }
    };
    let name = name.unwrap_or_else(|| {
        output
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "server".into())
    });
    let source = input.display().to_string();
    let imported = match import(tools, &name, version, &source, Syntax::of(output)) {
        Ok(i) => i,
        Err(e) => {
            eprintln!("error: {e}");
            return FAILURE;
        }
    };
    for dropped in &imported.dropped {
        eprintln!("warning: `{dropped}` is not a member of MCP's Tool; left out");
    }
    let code = write_output(Some(output), &imported.text);
    if code == OK {
        eprintln!(
            "imported {} tools ({} with variants) into {}",
            tools.len(),
            imported.with_variants,
            output.display()
        );
    }
    code
}

//! `import`: a rules file from the tools a server lists.

use std::path::Path;

use super::{FAILURE, OK, USAGE, read_json, write_output};
use mcp_resolve::format::Syntax;
use mcp_resolve::import::{import, tools_of};

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
    let document = match read_json(input) {
        Ok(d) => d,
        Err(code) => return code,
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

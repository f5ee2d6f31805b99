//! `resolve`: one call, answered by the library resolver.

use std::io::Write;
use std::path::{Path, PathBuf};

use mcp_resolve::Resolver;
use mcp_resolve::ir::Server;
use mcp_resolve_runtime::{Dialect, RpcError};
use serde_json::Value;

use super::{FAILURE, OK, USAGE, out, pretty_json, with_server};

pub(crate) fn run(
    paths: &[PathBuf],
    tool: &str,
    args: &str,
    dialect: Dialect,
    explain: bool,
) -> u8 {
    with_server(paths, |_, server| {
        resolve_one(server, tool, args, dialect, explain)
    })
}

fn resolve_one(server: &Server, tool: &str, args: &str, dialect: Dialect, explain: bool) -> u8 {
    let resolver = match Resolver::new(server) {
        Ok(r) => r,
        Err(e) => {
            eprintln!("error: {e}");
            return FAILURE;
        }
    };
    let text = match read_args(args) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: {e}");
            return USAGE;
        }
    };
    // Arguments that are not JSON are the command line's mistake, not a
    // resolution's: a usage error. JSON nested deeper than the reader
    // follows is refused as a resolution refuses arguments that nest too
    // deeply (`-32602`).
    let arguments: Result<Value, RpcError> = match serde_json::from_str(&text) {
        Ok(arguments) => Ok(arguments),
        Err(e) if e.to_string().starts_with("recursion limit exceeded") => Err(
            RpcError::invalid_params(format!("arguments nest too deeply to read: {e}")),
        ),
        Err(e) => {
            eprintln!("error: --args is not valid JSON: {e}");
            return USAGE;
        }
    };
    let result = arguments.and_then(|arguments| {
        if explain {
            explain_steps(&resolver, tool, &arguments);
        }
        resolver.resolve_result(tool, &arguments, dialect)
    });
    let (value, code) = match result {
        Ok(v) => (v, OK),
        Err(e) => {
            let names = server.tools.iter().map(|t| t.name.as_str());
            if !server.tools.iter().any(|t| t.name == tool)
                && let Some(near) = mcp_resolve::suggest::closest(tool, names)
            {
                eprintln!("help: no tool `{tool}`; did you mean `{near}`?");
            }
            (e.to_json(), FAILURE)
        }
    };
    out(&pretty_json(&value));
    code
}

/// `--args`: inline JSON, `-` for standard input, `@FILE` for a file.
fn read_args(args: &str) -> Result<String, String> {
    if args == "-" {
        let mut text = String::new();
        std::io::Read::read_to_string(&mut std::io::stdin().lock(), &mut text)
            .map_err(|e| format!("cannot read arguments from standard input: {e}"))?;
        Ok(text)
    } else if let Some(path) = args.strip_prefix('@') {
        mcp_resolve::project::read_within(Path::new(path), super::load_options().max_file_bytes)
            .map_err(|e| format!("cannot read `{path}`: {e}"))
    } else {
        Ok(args.to_string())
    }
}

fn explain_steps(resolver: &Resolver<'_>, tool: &str, arguments: &Value) {
    let Ok(steps) = resolver.explain(tool, arguments) else {
        return;
    };
    let mut err = std::io::stderr().lock();
    for step in &steps {
        let verdict = if step.matched {
            "matches"
        } else {
            "does not match"
        };
        let _ = writeln!(
            err,
            "variant `{}` {verdict}: {}",
            step.variant, step.condition
        );
    }
    if !steps.iter().any(|s| s.matched) {
        let _ = writeln!(err, "no variant matches: the static annotations apply");
    }
}

/// `mcp-resolve resolve`.
pub(crate) fn main(args: &super::args::ResolveArgs) -> u8 {
    run(
        &args.paths,
        &args.tool,
        &args.args,
        args.dialect,
        args.explain,
    )
}

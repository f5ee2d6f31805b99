//! `mcp-resolve policy`: the Cedar schema of a server's rules, and policies
//! checked, explained variant by variant and compared against it; and the
//! loading of `proxy --policy` (Cedar files, a directory of them, or the
//! YAML form, translated).

use std::path::{Path, PathBuf};

use mcp_resolve::diagnostic;
use mcp_resolve::source::SourceMap;
use mcp_resolve_policy::cedar::{Engine, Source, table, translate};

use super::args::{ExplainFormat, PolicyCommand};
use super::{FAILURE, OK, USAGE, color_for, out, read_input, with_server, write_output};

/// The policy files a path names: itself, or a directory's `.cedar` files
/// in name order.
fn policy_files(path: &Path) -> Result<Vec<PathBuf>, u8> {
    if !path.is_dir() {
        return Ok(vec![path.to_path_buf()]);
    }
    let entries = std::fs::read_dir(path).map_err(|e| {
        eprintln!("error: cannot read `{}`: {e}", path.display());
        USAGE
    })?;
    let mut files: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "cedar") && p.is_file())
        .collect();
    files.sort();
    if files.is_empty() {
        eprintln!("error: `{}` holds no `.cedar` file", path.display());
        return Err(USAGE);
    }
    Ok(files)
}

/// Whether a policy path is Cedar (a `.cedar` file or a directory) rather
/// than the YAML form.
fn is_cedar(path: &Path) -> bool {
    path.is_dir() || path.extension().is_some_and(|x| x == "cedar")
}

/// Prints diagnostics; the exit code for them.
fn report(sources: &SourceMap, diagnostics: &[mcp_resolve::diagnostic::Diagnostic]) -> u8 {
    eprint!(
        "{}",
        diagnostic::render_human(sources, diagnostics, color_for(&std::io::stderr()))
    );
    FAILURE
}

/// A YAML policy read and checked against `server`'s hints; its
/// diagnostics printed otherwise.
fn yaml_policy(
    path: &Path,
    server: &mcp_resolve::ir::Server,
) -> Result<mcp_resolve_policy::Policy, u8> {
    let text = read_input(path)?;
    let mut sources = SourceMap::new();
    let file = sources.add(path, text.clone());
    mcp_resolve_policy::Policy::for_server(&text, file, server)
        .map_err(|diagnostics| report(&sources, &diagnostics))
}

/// The engine of a policy path for `server`: Cedar files parsed and
/// validated against the server's schema, or a YAML policy checked and
/// translated. Diagnostics are printed; `Err` is the exit code.
pub(crate) fn load_engine(
    path: &Path,
    server: &mcp_resolve::ir::Server,
    principal: Option<&str>,
) -> Result<Engine, u8> {
    if !is_cedar(path) {
        let policy = yaml_policy(path, server)?;
        return Engine::from_yaml(server, &policy, principal).map_err(|e| {
            eprintln!("error: {e}");
            FAILURE
        });
    }
    let mut sources = SourceMap::new();
    let files = policy_files(path)?;
    let mut texts = Vec::new();
    for file in &files {
        let text = read_input(file)?;
        let id = sources.add(file, text.clone());
        texts.push((id, file.display().to_string(), text));
    }
    let list: Vec<Source<'_>> = texts
        .iter()
        .map(|(file, name, text)| Source {
            file: *file,
            name,
            text,
        })
        .collect();
    Engine::load(server, &list, principal).map_err(|diagnostics| report(&sources, &diagnostics))
}

pub(crate) fn main(command: PolicyCommand) -> u8 {
    match command {
        PolicyCommand::Schema { paths, output } => {
            with_server(
                &paths,
                |_, server| match mcp_resolve_policy::cedar::ServerSchema::of(server) {
                    Ok(schema) => {
                        for (tool, why) in &schema.untyped {
                            eprintln!(
                                "warning: `{tool}`'s arguments cannot be typed in Cedar ({why}): its action's context has no `input`"
                            );
                        }
                        write_output(output.as_deref(), &schema.text)
                    }
                    Err(e) => {
                        eprintln!("error: {e}");
                        FAILURE
                    }
                },
            )
        }
        PolicyCommand::Check {
            policy,
            paths,
            principal,
        } => with_server(&paths, |_, server| {
            match load_engine(&policy, server, principal.as_deref()) {
                Ok(engine) => {
                    let count = engine.policies().len();
                    eprintln!(
                        "ok: {count} polic{} valid against the schema of `{}` ({} actions)",
                        if count == 1 { "y" } else { "ies" },
                        server.name,
                        engine.schema().tools.len()
                    );
                    OK
                }
                Err(code) => code,
            }
        }),
        PolicyCommand::Translate { policy, paths } => {
            with_server(&paths, |_, server| match yaml_policy(&policy, server) {
                Ok(p) => {
                    let namespace = mcp_resolve_policy::cedar::namespace_of(&server.name);
                    out(&translate::to_cedar(&p, &namespace));
                    OK
                }
                Err(code) => code,
            })
        }
        PolicyCommand::Explain {
            policy,
            paths,
            format,
            output,
        } => with_server(&paths, |_, server| {
            let engine = match load_engine(&policy, server, None) {
                Ok(engine) => engine,
                Err(code) => return code,
            };
            let rows = table::table(&engine, server);
            let text = match format {
                ExplainFormat::Text => table::render(&rows, false),
                ExplainFormat::Markdown => table::render(&rows, true),
                ExplainFormat::Html => table::render_html(&rows),
            };
            write_output(output.as_deref(), &text)
        }),
        PolicyCommand::Diff {
            old,
            new,
            paths,
            format,
        } => with_server(&paths, |_, server| {
            let (old_engine, new_engine) = match (
                load_engine(&old, server, None),
                load_engine(&new, server, None),
            ) {
                (Ok(a), Ok(b)) => (a, b),
                (Err(code), _) | (_, Err(code)) => return code,
            };
            let before = table::table(&old_engine, server);
            let after = table::table(&new_engine, server);
            let changes = table::diff(&before, &after);
            let markdown = matches!(format, ExplainFormat::Markdown);
            out(&table::render_diff(&changes, markdown));
            OK
        }),
    }
}

/// The policy's decision table for `explain --policy`, in `format`.
pub(crate) fn decision_section(
    policy: &Path,
    server: &mcp_resolve::ir::Server,
    tool: Option<&str>,
    format: ExplainFormat,
) -> Result<String, u8> {
    let engine = load_engine(policy, server, None)?;
    let mut rows = table::table(&engine, server);
    if let Some(tool) = tool {
        rows.retain(|r| r.tool == tool);
    }
    Ok(match format {
        ExplainFormat::Text => format!(
            "\nPolicy decisions ({}):\n{}",
            policy.display(),
            table::render(&rows, false)
        ),
        ExplainFormat::Markdown => format!(
            "\n## Policy decisions\n\n`{}`\n\n{}",
            policy.display(),
            table::render(&rows, true)
        ),
        ExplainFormat::Html => table::render_html_section(&rows),
    })
}

/// Adds the section to an `explain` output: before the HTML page's footer,
/// else at the end.
pub(crate) fn append_section(text: &mut String, section: &str, format: ExplainFormat) {
    match (format, text.rfind("<footer>")) {
        (ExplainFormat::Html, Some(at)) => text.insert_str(at, section),
        _ => text.push_str(section),
    }
}

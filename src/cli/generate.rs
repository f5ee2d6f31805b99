//! `generate`: the Rust resolver, through the same [`Builder`] as build.rs,
//! or the TypeScript or Python one.

use std::path::{Path, PathBuf};

use mcp_resolve::Builder;
use mcp_resolve::diagnostic;

use super::args::LangArg;
use super::{FAILURE, color_for, with_server, write_output_parts};

pub(crate) fn run(
    paths: &[PathBuf],
    output: Option<&Path>,
    lang: LangArg,
    runtime_path: Option<String>,
) -> u8 {
    with_server(paths, |project, server| {
        let tools = server.tools.len();
        super::progress::stage(format!(
            "generating the {} resolver of {tools} tool{}",
            match lang {
                LangArg::Rust => "Rust",
                LangArg::Typescript => "TypeScript",
                LangArg::Python => "Python",
            },
            if tools == 1 { "" } else { "s" }
        ));
        match lang {
            LangArg::Rust => {
                let mut builder = Builder::new().cargo_instructions(false);
                if let Some(path) = runtime_path {
                    builder = builder.runtime_path(path);
                }
                match builder.generate_project_parts(project) {
                    Ok(code) => write_output_parts(output, &code),
                    Err(e) => {
                        super::progress::finish();
                        eprintln!("error: {e}");
                        FAILURE
                    }
                }
            }
            LangArg::Typescript => {
                let mut options = mcp_resolve::typescript::Options {
                    sources: sources(project),
                    ..Default::default()
                };
                if let Some(module) = runtime_path {
                    options.runtime_module = module;
                }
                emit(
                    project,
                    output,
                    mcp_resolve::typescript::generate(server, &options),
                )
            }
            LangArg::Python => {
                let mut options = mcp_resolve::python::Options {
                    sources: sources(project),
                    ..Default::default()
                };
                if let Some(module) = runtime_path {
                    options.runtime_module = module;
                }
                emit(
                    project,
                    output,
                    mcp_resolve::python::generate(server, &options),
                )
            }
        }
    })
}

fn sources(project: &mcp_resolve::project::Project) -> Vec<String> {
    project
        .inputs
        .iter()
        .map(|p| mcp_resolve::builder::display_source(p))
        .collect()
}

/// Writes a generated module, or renders why there is none.
fn emit(
    project: &mcp_resolve::project::Project,
    output: Option<&Path>,
    generated: Result<String, Vec<diagnostic::Diagnostic>>,
) -> u8 {
    match generated {
        Ok(code) => write_output_parts(output, &[code]),
        Err(mut errors) => {
            super::progress::finish();
            diagnostic::sort(&mut errors);
            eprint!(
                "{}",
                diagnostic::render_human(&project.sources, &errors, color_for(&std::io::stderr()))
            );
            FAILURE
        }
    }
}

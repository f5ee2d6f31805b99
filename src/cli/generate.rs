//! `generate`: the Rust resolver, through the same [`Builder`] as build.rs.

use std::path::{Path, PathBuf};

use mcp_resolve::Builder;

use super::{FAILURE, with_server, write_output_parts};

pub(crate) fn run(paths: &[PathBuf], output: Option<&Path>, runtime_path: String) -> u8 {
    with_server(paths, |project, server| {
        let tools = server.tools.len();
        super::progress::stage(format!(
            "generating the resolver of {tools} tool{}",
            if tools == 1 { "" } else { "s" }
        ));
        let builder = Builder::new()
            .runtime_path(runtime_path)
            .cargo_instructions(false);
        match builder.generate_project_parts(project) {
            Ok(code) => write_output_parts(output, &code),
            Err(e) => {
                super::progress::finish();
                eprintln!("error: {e}");
                FAILURE
            }
        }
    })
}

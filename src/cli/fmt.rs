//! `fmt` and `convert`: canonical printing of rules files.

use std::path::{Path, PathBuf};

use mcp_resolve::format::{FormatError, Syntax, format_file_with};

use super::{FAILURE, OK, SyntaxArg, USAGE, out, read_input, write_output};

pub(crate) fn run(paths: &[PathBuf], check: bool, write: bool) -> u8 {
    let files = match mcp_resolve::project::expand_paths(paths) {
        Ok(f) => f,
        Err(e) => {
            eprintln!("error: {e}");
            return USAGE;
        }
    };
    if !check && !write && files.len() != 1 {
        eprintln!(
            "error: `fmt` prints one file; give `--check` or `--write` to work on {} files",
            files.len()
        );
        return USAGE;
    }
    let mut status = OK;
    for path in &files {
        let text = match read_input(path) {
            Ok(t) => t,
            Err(code) => {
                status = code;
                continue;
            }
        };
        let formatted =
            match format_file_with(path, &text, Syntax::of(path), &super::load_options()) {
                Ok(f) => f,
                Err(e) => {
                    report_format_error(path, &e, "formatted");
                    status = status.max(FAILURE);
                    continue;
                }
            };
        if check {
            if formatted != text {
                eprintln!("not canonical: {}", path.display());
                status = status.max(FAILURE);
            }
        } else if write {
            if formatted != text {
                let code = write_output(Some(path), &formatted);
                if code != OK {
                    status = code;
                }
            }
        } else {
            out(&formatted);
        }
    }
    status
}

/// `done`: what was not done to the file (`formatted`, `converted`).
fn report_format_error(path: &Path, e: &FormatError, done: &str) {
    match e {
        FormatError::Invalid(rendered) => {
            eprint!("{rendered}");
            eprintln!("error: `{}` has errors; it was not {done}", path.display());
        }
        FormatError::Internal(message) => {
            eprintln!(
                "error: internal error: `{}` was not {done}: {message}",
                path.display()
            );
        }
    }
}

pub(crate) fn convert(
    input: &Path,
    output: Option<&Path>,
    to: Option<SyntaxArg>,
    force: bool,
) -> u8 {
    let target = match (to, output) {
        (Some(SyntaxArg::Yaml), _) => Syntax::Yaml,
        (Some(SyntaxArg::Rules), _) => Syntax::Rules,
        (None, Some(out)) => Syntax::of(out),
        (None, None) => match Syntax::of(input) {
            Syntax::Yaml => Syntax::Rules,
            Syntax::Rules => Syntax::Yaml,
        },
    };
    if let Some(out) = output {
        if out.exists() && !force {
            eprintln!(
                "error: `{}` exists; give `--force` to replace it",
                out.display()
            );
            return USAGE;
        }
        if std::fs::canonicalize(out).ok() == std::fs::canonicalize(input).ok() && out.exists() {
            eprintln!("error: the output is the input; use `fmt --write` to format in place");
            return USAGE;
        }
    }
    let text = match read_input(input) {
        Ok(t) => t,
        Err(code) => return code,
    };
    match format_file_with(input, &text, target, &super::load_options()) {
        Ok(out) => write_output(output, &out),
        Err(e) => {
            report_format_error(input, &e, "converted");
            FAILURE
        }
    }
}

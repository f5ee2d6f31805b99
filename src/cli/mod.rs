//! Command-line interface: a thin wrapper over the library, one file per
//! subcommand; this file holds the argument grammar, the exit codes and the
//! helpers every subcommand shares.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use mcp_resolve::diagnostic::{self, Severity};
use mcp_resolve::ir::Server;
use mcp_resolve::{LoadOptions, Project};
use serde_json::Value;

mod args;
mod check;
mod diff;
mod explain;
mod fmt;
mod generate;
#[cfg(feature = "proxy")]
mod import;
mod keys;
mod manifest;
#[cfg(feature = "policy")]
mod policy;
mod progress;
#[cfg(feature = "proxy")]
mod proxy;
mod resolve;
mod signature;

use self::args::*;

/// This process's `--color`.
static COLOR: std::sync::OnceLock<ColorWhen> = std::sync::OnceLock::new();

/// The limits the command line set, for every load of this process.
static LOAD_OPTIONS: std::sync::OnceLock<LoadOptions> = std::sync::OnceLock::new();

/// The largest JSON document (a signature, a `tools/list` answer, a key)
/// read without `--max-file-bytes`: a server's signature is about eight
/// times the size of its rules (10,000 tools × 8 variants: about 90 MB).
const DOCUMENT_BYTES: usize = 512 * 1024 * 1024;

/// The document limit this process's command line set.
static DOCUMENT_LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

impl LimitArgs {
    /// The limit on JSON documents: `--max-file-bytes`, else 512 MiB.
    pub(crate) fn document_limit(&self) -> usize {
        self.max_file_bytes.map_or(DOCUMENT_BYTES, size)
    }

    pub(crate) fn options(&self) -> LoadOptions {
        let mut analysis = mcp_resolve::AnalysisLimits::default();
        if let Some(n) = self.analysis_regions {
            analysis.max_regions = size(n);
        }
        if let Some(n) = self.analysis_rows {
            analysis.max_rows = size(n);
        }
        if let Some(n) = self.analysis_string_states {
            analysis.max_string_states = size(n);
        }
        if let Some(n) = self.analysis_steps {
            analysis.budget = n;
        }
        if let Some(n) = self.analysis_work {
            analysis.run_budget = n;
        }
        let options = LoadOptions::default()
            .with_analysis(analysis)
            .with_jobs(self.jobs.map_or(0, size))
            .with_progress(progress::load_stage);
        match self.max_file_bytes {
            Some(n) => options.with_max_file_bytes(size(n)),
            None => options,
        }
    }
}

/// Success.
pub(crate) const OK: u8 = 0;
/// Findings at error severity, a widening diff, a resolve error.
pub(crate) const FAILURE: u8 = 1;
/// Usage or I/O error.
pub(crate) const USAGE: u8 = 2;

/// Runs the command line; returns the process exit code.
pub fn main() -> ExitCode {
    progress::start();
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { USAGE } else { OK });
        }
    };
    let _ = LOAD_OPTIONS.set(cli.limits.options());
    let _ = DOCUMENT_LIMIT.set(cli.limits.document_limit());
    let _ = COLOR.set(cli.color);
    let code = run(cli.command);
    progress::finish();
    ExitCode::from(code)
}

/// Runs one command; returns the process exit code.
fn run(command: Command) -> u8 {
    match command {
        Command::Check {
            paths,
            format,
            deny_warnings,
        } => check::run(&paths, format, deny_warnings),
        Command::Signature(args) => signature::main(args),
        #[cfg(feature = "proxy")]
        Command::Keygen {
            output,
            state: true,
            force,
            ..
        } => keys::state_keygen(&output, force),
        #[cfg(not(feature = "proxy"))]
        Command::Keygen { state: true, .. } => not_built("keygen --state", "proxy"),
        Command::Keygen {
            output, alg, force, ..
        } => keys::keygen(&output, alg.into(), force),
        Command::Manifest(args) => manifest::run(&args),
        #[cfg(not(feature = "proxy"))]
        Command::VerifyManifest(_) => not_built("verify-manifest", "proxy"),
        #[cfg(feature = "proxy")]
        Command::VerifyManifest(args) => manifest::verify_main(&args),
        #[cfg(not(feature = "proxy"))]
        Command::Verify { .. } => not_built("verify", "proxy"),
        #[cfg(feature = "proxy")]
        Command::Verify {
            document,
            jws,
            key,
            keys: sets,
        } => keys::verify(&document, jws.as_deref(), &key, &sets),
        Command::Generate {
            paths,
            output,
            lang,
            runtime_path,
        } => generate::run(&paths, output.as_deref(), lang, runtime_path),
        Command::Resolve(args) => resolve::main(&args),
        Command::Fmt {
            paths,
            check,
            write,
        } => fmt::run(&paths, check, write),
        Command::Convert {
            input,
            output,
            to,
            force,
        } => fmt::convert(&input, output.as_deref(), to, force),
        Command::Diff(args) => diff::main(&args),
        #[cfg(not(feature = "proxy"))]
        Command::Import(_) => not_built("import", "proxy"),
        #[cfg(feature = "proxy")]
        Command::Import(args) => import::main(args),
        #[cfg(not(feature = "proxy"))]
        Command::Proxy(_) => not_built("proxy", "proxy"),
        #[cfg(feature = "proxy")]
        Command::Proxy(args) => proxy::main(*args),
        #[cfg(feature = "policy")]
        Command::Policy(command) => policy::main(command),
        #[cfg(not(feature = "policy"))]
        Command::Policy(_) => not_built("policy", "policy"),
        #[cfg(feature = "lsp")]
        Command::Lsp => match mcp_resolve_lsp::stdio() {
            Ok(()) => OK,
            Err(e) => {
                eprintln!("error: mcp-resolve lsp: {e}");
                FAILURE
            }
        },
        #[cfg(not(feature = "lsp"))]
        Command::Lsp => not_built("lsp", "lsp"),
        #[cfg(feature = "policy")]
        Command::Schema {
            output,
            policy: true,
        } => write_output(output.as_deref(), &mcp_resolve_policy::policy_schema()),
        #[cfg(not(feature = "policy"))]
        Command::Schema { policy: true, .. } => not_built("schema --policy", "policy"),
        Command::Schema { output, .. } => write_output(
            output.as_deref(),
            &mcp_resolve::rules_schema::rules_schema(),
        ),
        Command::Explain(args) => explain::run(args),
        Command::Completions { shell } => completions(shell),
    }
}

/// The completion script of `shell`.
fn completions(shell: clap_complete::Shell) -> u8 {
    let mut text = Vec::new();
    clap_complete::generate(shell, &mut Cli::command(), "mcp-resolve", &mut text);
    let mut text = String::from_utf8_lossy(&text).into_owned();
    if shell == clap_complete::Shell::Bash {
        // clap_complete's bash script names a subcommand's state
        // `mcp__resolve__subcmd__X` where it sets it and
        // `mcp__subcmd__resolve__subcmd__X` where it reads it (its
        // hyphen escaping, clap-rs/clap#6421), so nothing after a
        // subcommand would complete. Spell both alike.
        text = text.replace("mcp__subcmd__resolve__", "mcp__resolve__");
    }
    out(&text);
    OK
}

/// A command this build leaves out (built with `--no-default-features`):
/// which feature brings it, and exit 2.
#[cfg(not(all(feature = "proxy", feature = "policy", feature = "lsp")))]
fn not_built(command: &str, feature: &str) -> u8 {
    progress::finish();
    eprintln!(
        "error: `mcp-resolve {command}` is not in this build: it was built without the `{feature}` feature\n  \
         help: the default features build every command: `cargo install mcp-resolve-cli`, \
         or `cargo install --path .` in a checkout"
    );
    USAGE
}

/// Whether to colour what goes to `stream`: `--color`, else a terminal
/// without `NO_COLOR` (set and not empty, as no-color.org defines it).
pub(crate) fn color_for(stream: &impl IsTerminal) -> bool {
    match COLOR.get().copied().unwrap_or(ColorWhen::Auto) {
        ColorWhen::Always => true,
        ColorWhen::Never => false,
        ColorWhen::Auto => {
            stream.is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty())
        }
    }
}

/// The limits of this process's command line (`--max-file-bytes`,
/// `--analysis-*`).
pub(crate) fn load_options() -> LoadOptions {
    LOAD_OPTIONS.get().copied().unwrap_or_default()
}

pub(crate) fn load(paths: &[PathBuf]) -> Result<Project, u8> {
    mcp_resolve::load_with(paths, &load_options()).map_err(|e| {
        progress::finish();
        eprintln!("error: {e}");
        USAGE
    })
}

/// Loads rules that have no errors and declare one server, and runs `f` on
/// it; prints the diagnostics (or why there is not one server) otherwise.
pub(crate) fn with_server(paths: &[PathBuf], f: impl FnOnce(&Project, &Server) -> u8) -> u8 {
    match load_clean(paths) {
        Ok(mut project) => {
            // The commands read the servers, not the decoded files. Freed
            // here, after the analysis rather than after lowering, the files'
            // memory is what the command's own output is then built in: the
            // allocator hands back memory left unused for a second, and
            // fresh memory costs the kernel's zeroing (docs/performance.md).
            drop(std::mem::take(&mut project.files));
            let code = match project.single_server() {
                Ok(server) => f(&project, server),
                Err(message) => {
                    progress::finish();
                    eprintln!("error: {message}");
                    USAGE
                }
            };
            left_to_exit(project);
            code
        }
        Err(code) => code,
    }
}

/// Leaves `value` (a loaded project, a signature document) to the end of
/// the process instead of freeing it: the command is done with it and the
/// process exits next, which hands its memory back at once, while freeing
/// 10,000 tools' structures one allocation at a time takes a fifth of a
/// second. Only for values that own nothing but memory (no file, process
/// or buffer to flush).
pub(crate) fn left_to_exit<T>(value: T) {
    std::mem::forget(value);
}

fn load_clean(paths: &[PathBuf]) -> Result<Project, u8> {
    let project = load(paths)?;
    if project.has_errors() {
        let errors: Vec<_> = project
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .cloned()
            .collect();
        progress::finish();
        eprint!(
            "{}",
            diagnostic::render_human(&project.sources, &errors, color_for(&std::io::stderr()))
        );
        return Err(FAILURE);
    }
    Ok(project)
}

/// Pretty JSON in the document's own key order, with a trailing newline.
pub(crate) fn pretty_json(value: &Value) -> String {
    let mut s = serde_json::to_string_pretty(value).unwrap_or_default();
    s.push('\n');
    s
}

/// Writes to standard output. A closed pipe (`mcp-resolve … | head`) ends the
/// output quietly instead of panicking as `print!` would; any other write
/// error (a full disk behind `>`) is reported and exits 2, so truncated
/// output never passes for success.
pub(crate) fn out(text: &str) {
    use std::io::Write as _;
    progress::finish();
    let mut stdout = std::io::stdout().lock();
    if let Err(e) = stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        && e.kind() != std::io::ErrorKind::BrokenPipe
    {
        eprintln!("error: cannot write to standard output: {e}");
        std::process::exit(i32::from(USAGE));
    }
}

/// Reads an input file within the size limit; a clear error and
/// [`USAGE`] when it cannot be read.
pub(crate) fn read_input(path: &Path) -> Result<String, u8> {
    mcp_resolve::project::read_within(path, load_options().max_file_bytes).map_err(|e| {
        eprintln!("error: cannot read `{}`: {e}", path.display());
        USAGE
    })
}

/// The document limit this process's command line set.
pub(crate) fn document_limit() -> usize {
    DOCUMENT_LIMIT.get().copied().unwrap_or(DOCUMENT_BYTES)
}

/// Reads a JSON document (a signature, a `tools/list` answer, a JWS or a
/// key) within the document limit (`--max-file-bytes`, else 512 MiB); a
/// clear error and [`USAGE`] when it cannot be read.
pub(crate) fn read_document(path: &Path) -> Result<String, u8> {
    mcp_resolve::project::read_within(path, document_limit()).map_err(|e| {
        eprintln!("error: cannot read `{}`: {e}", path.display());
        USAGE
    })
}

/// Reads a JSON input file; a clear error and [`USAGE`] when it cannot be
/// read or is not JSON.
pub(crate) fn read_json(path: &Path) -> Result<Value, u8> {
    let text = read_document(path)?;
    serde_json::from_str(&text).map_err(|e| {
        eprintln!("error: `{}` is not JSON: {e}", path.display());
        USAGE
    })
}

pub(crate) fn write_output(output: Option<&Path>, text: &str) -> u8 {
    write_output_parts(output, &[text])
}

/// [`write_output`] for a text in parts, written one after the other.
pub(crate) fn write_output_parts<P: AsRef<str>>(output: Option<&Path>, parts: &[P]) -> u8 {
    progress::stage("writing");
    let Some(path) = output else {
        for part in parts {
            out(part.as_ref());
        }
        return OK;
    };
    let parts: Vec<&[u8]> = parts.iter().map(|p| p.as_ref().as_bytes()).collect();
    let written = mcp_resolve::builder::write_parts_if_changed(path, &parts);
    progress::finish();
    match written {
        Ok(()) => OK,
        Err(e) => {
            eprintln!("error: cannot write `{}`: {e}", path.display());
            USAGE
        }
    }
}

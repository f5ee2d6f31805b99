//! Command-line interface: a thin wrapper over the library.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Parser, Subcommand, ValueEnum};
use mcp_resolve::builder::display_source;
use mcp_resolve::codegen;
use mcp_resolve::diagnostic::{self, Severity};
use mcp_resolve::emit::signature::{signature, to_pretty};
use mcp_resolve::format::{FormatError, Syntax, format_file};
use mcp_resolve::{Project, Resolver};
use mcp_resolve_runtime::{Dialect, RpcError};
use serde_json::Value;

/// Compile MCP tool-resolution rules: check them, emit signatures, resolve calls.
#[derive(Parser)]
#[command(name = "mcp-resolve", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Check rules files and report diagnostics.
    Check {
        /// Rules files, or directories of them.
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = Format::Human)]
        format: Format,
        /// Exit 1 on warnings too.
        #[arg(long)]
        deny_warnings: bool,
    },
    /// Emit the signature document of one server.
    Signature {
        /// Rules files, or directories of them (one server).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Print only the fingerprint.
        #[arg(long)]
        fingerprint_only: bool,
        /// Write the fingerprint into this registry `server.json`, under
        /// `_meta["io.modelcontextprotocol.registry/publisher-provided"]`,
        /// keeping the rest of it; refused (file untouched) over 4096 bytes.
        #[arg(long, value_name = "FILE")]
        server_json: Option<PathBuf>,
        /// With `--server-json`: where the full signature document is published.
        #[arg(long, value_name = "URL", requires = "server_json")]
        signature_url: Option<String>,
    },
    /// Generate the Rust resolver of one server (the file the build.rs
    /// `Builder` writes).
    Generate {
        /// Rules files, or directories of them (one server).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Write to this file (only when its content changes) instead of
        /// standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// The path generated code names the runtime crate by.
        #[arg(long, default_value = "::mcp_resolve_runtime")]
        runtime_path: String,
    },
    /// Resolve one call, printing the JSON-RPC result (or error) object.
    Resolve {
        /// Rules files, or directories of them (one server).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The tool name.
        #[arg(long)]
        tool: String,
        /// The arguments, a JSON object; `-` reads them from standard input,
        /// `@FILE` from a file.
        #[arg(long)]
        args: String,
        /// The response shape.
        #[arg(long, default_value = "extension", value_parser = parse_dialect)]
        dialect: Dialect,
        /// Say on standard error which variant matched and why.
        #[arg(long)]
        explain: bool,
    },
    /// Print rules files in canonical form (either syntax), or check or
    /// rewrite them in place.
    Fmt {
        /// Rules files, or directories of them (`.yaml`, `.yml`, `.rules`).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Exit 1 if any file is not in canonical form; change nothing.
        #[arg(long, conflicts_with = "write")]
        check: bool,
        /// Rewrite files in place (a file with errors is never touched).
        #[arg(long)]
        write: bool,
    },
    /// Convert a rules file between YAML and the `.rules` syntax.
    Convert {
        /// The rules file to convert.
        input: PathBuf,
        /// Write here; the syntax follows its extension. Refuses to replace
        /// an existing file unless `--force`.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// The syntax to print (default: from `-o`, else the other one).
        #[arg(long, value_enum)]
        to: Option<SyntaxArg>,
        /// Replace an existing output file.
        #[arg(long)]
        force: bool,
    },
    /// Classify every change between two signatures as widening or narrowing.
    ///
    /// Each side is a signature document (`.json`) or rules (a file or a
    /// directory). Every widening comes with a witness argument object. Exits
    /// 1 on widening unless `--allow-widening`.
    Diff {
        /// The old signature document (`.json`), or rules.
        old: PathBuf,
        /// The new signature document (`.json`), or rules.
        new: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
        format: DiffFormat,
        /// Exit 0 even when a change widens.
        #[arg(long)]
        allow_widening: bool,
    },
    /// Print the JSON Schema of the rules format (for editors).
    Schema {
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    /// Snippets with carets.
    Human,
    /// One JSON document.
    Json,
    /// GitHub Actions workflow annotations.
    Github,
    /// A SARIF 2.1.0 log, for code scanning.
    Sarif,
}

#[derive(Clone, Copy, ValueEnum)]
enum DiffFormat {
    /// One line per change, with its witness.
    Human,
    /// One JSON document.
    Json,
}

#[derive(Clone, Copy, ValueEnum)]
enum SyntaxArg {
    /// YAML.
    Yaml,
    /// The `.rules` syntax.
    Rules,
}

fn parse_dialect(s: &str) -> Result<Dialect, String> {
    s.parse()
        .map_err(|e: mcp_resolve_runtime::UnknownDialect| e.to_string())
}

const OK: u8 = 0;
const FAILURE: u8 = 1;
const USAGE: u8 = 2;

/// Runs the command line; returns the process exit code.
pub fn main() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => {
            let _ = e.print();
            return ExitCode::from(if e.use_stderr() { USAGE } else { OK });
        }
    };
    ExitCode::from(match cli.command {
        Command::Check {
            paths,
            format,
            deny_warnings,
        } => check(&paths, format, deny_warnings),
        Command::Signature {
            paths,
            output,
            fingerprint_only,
            server_json,
            signature_url,
        } => match server_json {
            Some(file) => {
                server_json_cmd(&paths, output.as_deref(), &file, signature_url.as_deref())
            }
            None => signature_cmd(&paths, output.as_deref(), fingerprint_only),
        },
        Command::Generate {
            paths,
            output,
            runtime_path,
        } => generate_cmd(&paths, output.as_deref(), runtime_path),
        Command::Resolve {
            paths,
            tool,
            args,
            dialect,
            explain,
        } => resolve(&paths, &tool, &args, dialect, explain),
        Command::Fmt {
            paths,
            check,
            write,
        } => fmt_cmd(&paths, check, write),
        Command::Convert {
            input,
            output,
            to,
            force,
        } => convert_cmd(&input, output.as_deref(), to, force),
        Command::Diff {
            old,
            new,
            format,
            allow_widening,
        } => diff_cmd(&old, &new, format, allow_widening),
        Command::Schema { output } => write_output(
            output.as_deref(),
            &mcp_resolve::rules_schema::rules_schema(),
        ),
    })
}

fn fmt_cmd(paths: &[PathBuf], check: bool, write: bool) -> u8 {
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
        let text = match mcp_resolve::project::read_limited(path) {
            Ok(t) => t,
            Err(e) => {
                eprintln!("error: cannot read `{}`: {e}", path.display());
                status = USAGE;
                continue;
            }
        };
        let formatted = match format_file(path, &text, Syntax::of(path)) {
            Ok(f) => f,
            Err(e) => {
                report_format_error(path, &e);
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

fn report_format_error(path: &Path, e: &FormatError) {
    match e {
        FormatError::Invalid(rendered) => {
            eprint!("{rendered}");
            eprintln!(
                "error: `{}` has errors; it was not formatted",
                path.display()
            );
        }
        FormatError::Internal(message) => {
            eprintln!(
                "error: internal error formatting `{}`: {message}",
                path.display()
            );
        }
    }
}

fn convert_cmd(input: &Path, output: Option<&Path>, to: Option<SyntaxArg>, force: bool) -> u8 {
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
    let text = match mcp_resolve::project::read_limited(input) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read `{}`: {e}", input.display());
            return USAGE;
        }
    };
    match format_file(input, &text, target) {
        Ok(out) => write_output(output, &out),
        Err(e) => {
            report_format_error(input, &e);
            FAILURE
        }
    }
}

fn color_for(stream: &impl IsTerminal) -> bool {
    stream.is_terminal() && std::env::var_os("NO_COLOR").is_none()
}

fn load(paths: &[PathBuf]) -> Result<Project, u8> {
    mcp_resolve::load(paths).map_err(|e| {
        eprintln!("error: {e}");
        USAGE
    })
}

fn check(paths: &[PathBuf], format: Format, deny_warnings: bool) -> u8 {
    let project = match load(paths) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let diags = &project.diagnostics;
    let text = match format {
        Format::Human => {
            diagnostic::render_human(&project.sources, diags, color_for(&std::io::stdout()))
        }
        Format::Json => pretty_json(&diagnostic::to_json(&project.sources, diags)),
        Format::Github => diagnostic::render_github(&project.sources, diags),
        Format::Sarif => pretty_json(&diagnostic::to_sarif(&project.sources, diags)),
    };
    out(&text);
    let failing = diags.iter().any(|d| {
        d.severity == Severity::Error || (deny_warnings && d.severity == Severity::Warning)
    });
    if failing { FAILURE } else { OK }
}

/// Loads and requires an error-free single server; prints diagnostics to stderr otherwise.
fn load_clean(paths: &[PathBuf]) -> Result<Project, u8> {
    let project = load(paths)?;
    if project.has_errors() {
        let errors: Vec<_> = project
            .diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .cloned()
            .collect();
        eprint!(
            "{}",
            diagnostic::render_human(&project.sources, &errors, color_for(&std::io::stderr()))
        );
        return Err(FAILURE);
    }
    if let Err(message) = project.single_server() {
        eprintln!("error: {message}");
        return Err(USAGE);
    }
    Ok(project)
}

fn signature_cmd(paths: &[PathBuf], output: Option<&Path>, fingerprint_only: bool) -> u8 {
    let project = match load_clean(paths) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let Ok(server) = project.single_server() else {
        return USAGE;
    };
    let mut diags = Vec::new();
    let doc = signature(server, &mut diags);
    if !diags.is_empty() {
        eprint!(
            "{}",
            diagnostic::render_human(&project.sources, &diags, color_for(&std::io::stderr()))
        );
        return FAILURE;
    }
    let text = if fingerprint_only {
        format!(
            "{}\n",
            doc.get("fingerprint")
                .and_then(Value::as_str)
                .unwrap_or_default()
        )
    } else {
        to_pretty(&doc)
    };
    write_output(output, &text)
}

/// `signature --server-json`: the fingerprint into a registry `server.json`
/// (and the document to `-o`, if given).
fn server_json_cmd(paths: &[PathBuf], output: Option<&Path>, file: &Path, url: Option<&str>) -> u8 {
    let doc = match load_signature_of_paths(paths) {
        Ok(d) => d,
        Err(code) => return code,
    };
    let fingerprint = doc
        .get("fingerprint")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let text = match mcp_resolve::project::read_limited(file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: cannot read `{}`: {e}", file.display());
            return USAGE;
        }
    };
    let updated = match mcp_resolve::registry::with_fingerprint(&text, &fingerprint, url) {
        Ok(u) => u,
        Err(e) => {
            eprintln!("error: `{}` left unchanged: {e}", file.display());
            return FAILURE;
        }
    };
    if let Some(out) = output {
        let code = write_output(Some(out), &to_pretty(&doc));
        if code != OK {
            return code;
        }
    }
    let code = write_output(Some(file), &updated);
    if code == OK {
        eprintln!(
            "{}: {fingerprint} ({} bytes)",
            file.display(),
            updated.len()
        );
    }
    code
}

fn load_signature_of_paths(paths: &[PathBuf]) -> Result<Value, u8> {
    let project = load_clean(paths)?;
    let server = project.single_server().map_err(|_| USAGE)?;
    let mut diags = Vec::new();
    let doc = signature(server, &mut diags);
    if !diags.is_empty() {
        eprint!(
            "{}",
            diagnostic::render_human(&project.sources, &diags, color_for(&std::io::stderr()))
        );
        return Err(FAILURE);
    }
    Ok(doc)
}

fn generate_cmd(paths: &[PathBuf], output: Option<&Path>, runtime_path: String) -> u8 {
    let project = match load_clean(paths) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let Ok(server) = project.single_server() else {
        return USAGE;
    };
    let options = codegen::Options {
        runtime_path,
        sources: project.inputs.iter().map(|p| display_source(p)).collect(),
    };
    match codegen::generate(server, &options) {
        Ok(code) => write_output(output, &code),
        Err(e) => {
            eprintln!("error: {e}");
            FAILURE
        }
    }
}

fn resolve(paths: &[PathBuf], tool: &str, args: &str, dialect: Dialect, explain: bool) -> u8 {
    let project = match load_clean(paths) {
        Ok(p) => p,
        Err(code) => return code,
    };
    let Ok(server) = project.single_server() else {
        return USAGE;
    };
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
    let arguments: Result<Value, RpcError> = serde_json::from_str(&text)
        .map_err(|e| RpcError::invalid_params(format!("arguments are not valid JSON: {e}")));
    let result = arguments.and_then(|a| {
        if explain {
            explain_steps(&resolver, tool, &a);
        }
        resolver.resolve_result(tool, &a, dialect)
    });
    let (value, code) = match result {
        Ok(v) => (v, OK),
        Err(e) => (e.to_json(), FAILURE),
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
        mcp_resolve::project::read_limited(Path::new(path))
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

/// Writes to a file (through a temporary file and a rename, so a failed
/// write never leaves a half-written file) or to standard output.
/// A signature document from a `.json` file (its fingerprint checked), or
/// the signature of a rules file or directory.
fn load_signature(path: &Path) -> Result<Value, u8> {
    let is_json = path.extension().is_some_and(|e| e == "json");
    if !is_json {
        return load_signature_of_paths(&[path.to_path_buf()]);
    }
    let text = mcp_resolve::project::read_limited(path).map_err(|e| {
        eprintln!("error: cannot read `{}`: {e}", path.display());
        USAGE
    })?;
    let doc: Value = serde_json::from_str(&text).map_err(|e| {
        eprintln!("error: `{}` is not JSON: {e}", path.display());
        USAGE
    })?;
    if let Some(claimed) = doc.get("fingerprint").and_then(Value::as_str) {
        let actual = mcp_resolve::emit::signature::fingerprint(&doc);
        if claimed != actual {
            eprintln!(
                "error: the fingerprint of `{}` does not verify (claims {claimed}, content hashes to {actual}): the document was changed after it was signed",
                path.display()
            );
            return Err(USAGE);
        }
    }
    Ok(doc)
}

fn diff_cmd(old: &Path, new: &Path, format: DiffFormat, allow_widening: bool) -> u8 {
    let (old_doc, new_doc) = match (load_signature(old), load_signature(new)) {
        (Ok(o), Ok(n)) => (o, n),
        (Err(code), _) | (_, Err(code)) => return code,
    };
    let diff = match mcp_resolve::diff::diff(&old_doc, &new_doc) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return USAGE;
        }
    };
    match format {
        DiffFormat::Human => out(&diff.to_human()),
        DiffFormat::Json => out(&to_pretty(&diff.to_json())),
    }
    if diff.has_widening() && !allow_widening {
        FAILURE
    } else {
        OK
    }
}

/// Pretty JSON in the document's own key order, with a trailing newline.
fn pretty_json(value: &Value) -> String {
    let mut s = serde_json::to_string_pretty(value).unwrap_or_default();
    s.push('\n');
    s
}

/// Writes to standard output. A closed pipe (`mcp-resolve … | head`) ends the
/// output quietly instead of panicking as `print!` would; any other write
/// error (a full disk behind `>`) is reported and exits 2, so truncated
/// output never passes for success.
fn out(text: &str) {
    use std::io::Write as _;
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

fn write_output(output: Option<&Path>, text: &str) -> u8 {
    let Some(path) = output else {
        out(text);
        return OK;
    };
    let written = mcp_resolve::builder::write_if_changed(path, text);
    match written {
        Ok(()) => OK,
        Err(e) => {
            eprintln!("error: cannot write `{}`: {e}", path.display());
            USAGE
        }
    }
}

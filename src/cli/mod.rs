//! Command-line interface: a thin wrapper over the library, one file per
//! subcommand; this file holds the argument grammar, the exit codes and the
//! helpers every subcommand shares.

use std::ffi::OsString;
use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};
use mcp_resolve::diagnostic::{self, Severity};
use mcp_resolve::ir::Server;
use mcp_resolve::{LoadOptions, Project};
use mcp_resolve_runtime::Dialect;
use serde_json::Value;

mod check;
mod diff;
mod fmt;
mod generate;
mod import;
mod keys;
mod progress;
mod proxy;
mod resolve;
mod signature;

/// Compile MCP tool-resolution rules: check them, emit signatures, resolve calls.
#[derive(Parser)]
#[command(name = "mcp-resolve", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    #[command(flatten)]
    limits: LimitArgs,
    /// When to colour diagnostics: `auto` colours a terminal unless `NO_COLOR` is set; `always` even a pipe
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    color: ColorWhen,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum ColorWhen {
    // On a terminal, unless `NO_COLOR` is set (and not empty). (Plain
    // comments: doc comments here would turn `--help` into the long form.)
    Auto,
    // Always, even into a pipe or a file.
    Always,
    Never,
}

/// This process's `--color`.
static COLOR: std::sync::OnceLock<ColorWhen> = std::sync::OnceLock::new();

/// What reading rules may spend (every command that reads rules files).
#[derive(clap::Args)]
struct LimitArgs {
    /// The largest file read, in bytes [default: 8388608 for rules and schema files, 536870912 for JSON documents such as signatures]
    #[arg(long, global = true, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    max_file_bytes: Option<u64>,
    /// Pattern analysis: regions one argument may split into [default: 4096]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    analysis_regions: Option<u64>,
    /// Pattern analysis: rows (alternatives) one `when` may expand to [default: 2048]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    analysis_rows: Option<u64>,
    /// Pattern analysis: automaton states the string search of one argument may visit [default: 50000]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    analysis_string_states: Option<u64>,
    /// Pattern analysis: search steps per tool [default: 1000000]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    analysis_steps: Option<u64>,
    /// Pattern analysis: work units for the whole run [default: 200000000]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    analysis_work: Option<u64>,
    /// Threads for per-file and per-tool work; output never depends on it [default: every core]
    #[arg(long, short = 'j', global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    jobs: Option<u64>,
}

/// A count from the command line as a `usize` (saturating).
fn size(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

impl LimitArgs {
    /// The limit on JSON documents: `--max-file-bytes`, else 512 MiB.
    fn document_limit(&self) -> usize {
        self.max_file_bytes.map_or(DOCUMENT_BYTES, size)
    }

    fn options(&self) -> LoadOptions {
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

/// The limits the command line set, for every load of this process.
static LOAD_OPTIONS: std::sync::OnceLock<LoadOptions> = std::sync::OnceLock::new();

/// The largest JSON document (a signature, a `tools/list` answer, a key)
/// read without `--max-file-bytes`: a server's signature is about eight
/// times the size of its rules (10,000 tools × 8 variants: about 90 MB).
const DOCUMENT_BYTES: usize = 512 * 1024 * 1024;

/// The document limit this process's command line set.
static DOCUMENT_LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

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
        /// Sign the document with this private key (PKCS#8 PEM, from
        /// `keygen`): a detached JWS goes to `OUTPUT.jws`, one line per
        /// signer. Repeat for several signers.
        #[arg(long, value_name = "KEY.pem", requires = "output")]
        sign: Vec<PathBuf>,
    },
    /// Make a signing key: NAME.pem (private, mode 0600) and NAME.jwk
    /// (public, with its RFC 7638 thumbprint as `kid`).
    Keygen {
        /// The files' name, without extension.
        #[arg(short, long, value_name = "NAME")]
        output: PathBuf,
        /// The algorithm.
        #[arg(long, value_enum, default_value_t = KeyAlgorithm::Ed25519)]
        alg: KeyAlgorithm,
        /// Overwrite NAME.pem and NAME.jwk if they exist.
        #[arg(long)]
        force: bool,
    },
    /// Verify a signature document: its fingerprint, and a publisher's
    /// signature from one of the keys given.
    Verify {
        /// The signature document.
        document: PathBuf,
        /// The detached JWS file (default: DOCUMENT.jws).
        #[arg(long, value_name = "FILE")]
        jws: Option<PathBuf>,
        /// A publisher's public key (a JWK); repeat for several.
        #[arg(long, value_name = "JWK", required_unless_present = "keys")]
        key: Vec<PathBuf>,
        /// A set of publishers' public keys (a JWKS).
        #[arg(long, value_name = "JWKS")]
        keys: Vec<PathBuf>,
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
    /// 1 on widening unless `--allow-widening`, and on a change the search
    /// could not decide unless `--allow-undecided`.
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
        /// Exit 0 even when a change could not be decided ("undecided": the
        /// search found no call that tells the documents apart, but cannot
        /// show that none exists).
        #[arg(long)]
        allow_undecided: bool,
    },
    /// Write a rules file from the tools a server lists.
    ///
    /// The tools come from a JSON file (INPUT: a `tools/list` result, a
    /// JSON-RPC response with one, or an array of tools), from a live server
    /// started as `-- COMMAND ARGS…` (stdio), or from a streamable HTTP
    /// endpoint (`--url`): initialize, every page of `tools/list`, then a
    /// clean shutdown. Every tool is written as published; a tool with a
    /// discriminating string enum (`method`, `action`, …) gets one variant
    /// per value with the tool's own annotations and a suggestion by verb.
    /// The output's extension picks the syntax (`.yaml` or `.rules`); an
    /// existing file is kept unless `--force`.
    Import {
        /// The `tools/list` JSON file.
        input: Option<PathBuf>,
        /// The rules file to write.
        #[arg(short, long)]
        output: PathBuf,
        /// Ask the streamable HTTP endpoint at this URL.
        #[arg(long, value_name = "URL")]
        url: Option<String>,
        /// The server's name (default: its `serverInfo`, else the output's stem).
        #[arg(long)]
        name: Option<String>,
        /// The server's version (default: its `serverInfo`, else 0.0.0).
        #[arg(long)]
        server_version: Option<String>,
        /// Also write the tools as listed (`{"tools": […]}`, JSON) to this
        /// file: a snapshot to commit, diff or import again later.
        #[arg(long, value_name = "FILE")]
        save_list: Option<PathBuf>,
        /// Seconds to wait for each answer of a live server.
        #[arg(long, default_value_t = 30, value_name = "SECONDS")]
        timeout: u64,
        /// Overwrite the output file if it exists.
        #[arg(long)]
        force: bool,
        /// The server to start and ask over stdio.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<OsString>,
    },
    /// Answer tools/resolve from rules in front of any MCP server: start
    /// the server (`-- COMMAND ARGS…`) as a child over stdio and speak MCP
    /// to the host on this process's stdio, passing everything through
    /// except what the rules add (capabilities, annotations and resolvable
    /// markers in tools/list, tools/resolve and signature).
    Proxy {
        /// Rules files, or directories of them (one server).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The resolve dialect served.
        #[arg(long, default_value = "extension", value_parser = parse_dialect)]
        dialect: Dialect,
        /// Seconds a request may wait for the server's answer before the
        /// host gets an error (0: no limit).
        #[arg(long, default_value_t = 300, value_name = "SECONDS")]
        timeout: u64,
        /// The largest message read from the host or the server, in bytes.
        #[arg(long, default_value_t = mcp_resolve_proxy::upstream::MAX_MESSAGE_BYTES, value_name = "BYTES")]
        max_message_bytes: usize,
        /// Do not compare the rules with the server's tools/list at start
        /// (which starts the server once more, briefly).
        #[arg(long)]
        no_probe: bool,
        /// Connect to a server over streamable HTTP at this URL instead of
        /// starting one.
        #[arg(long, value_name = "URL", conflicts_with = "command")]
        upstream: Option<String>,
        /// Serve hosts over streamable HTTP at http://ADDR/mcp instead of
        /// stdio (a port alone binds 127.0.0.1).
        #[arg(long, value_name = "ADDR", value_parser = parse_listen)]
        listen: Option<std::net::SocketAddr>,
        /// With --listen: a Host header value to accept besides loopback
        /// names and the bound address (NAME or NAME:PORT; repeatable).
        #[arg(long, value_name = "HOST", requires = "listen")]
        allow_host: Vec<String>,
        /// With --listen: a browser Origin to accept besides loopback
        /// origins (SCHEME://HOST[:PORT]; repeatable).
        #[arg(long, value_name = "ORIGIN", requires = "listen")]
        allow_origin: Vec<String>,
        /// With --listen: the most host sessions open at once (each has a
        /// server of its own).
        #[arg(long, default_value_t = 64, value_name = "N", requires = "listen")]
        max_sessions: usize,
        /// With --listen: end a session (and stop its server) after this
        /// many seconds without a request or an open stream (0: never).
        #[arg(
            long,
            default_value_t = 1800,
            value_name = "SECONDS",
            requires = "listen"
        )]
        session_idle: u64,
        /// Pin this signature document: its fingerprint must verify and be
        /// the rules' own; tools the server lists that it does not allow,
        /// or that change during a session, are withheld from the host.
        #[arg(long, value_name = "SIGNATURE.json")]
        pin: Option<PathBuf>,
        /// Pin a publisher: the --pin document must carry a signature
        /// (SIGNATURE.json.jws) from this key (a JWK or a JWKS).
        #[arg(long, value_name = "JWK", requires = "pin")]
        pin_key: Option<PathBuf>,
        /// With --pin-key: the document reviewed before; the --pin document
        /// may differ from it only by narrowing (as `diff` finds it).
        #[arg(long, value_name = "SIGNATURE.json", requires = "pin_key")]
        pin_baseline: Option<PathBuf>,
        /// Decide every tools/call by this policy (allow, deny, or ask the
        /// user) over its resolved annotations, variant, tool and scopes.
        #[arg(long, value_name = "FILE")]
        policy: Option<PathBuf>,
        /// How long a call the policy asks about waits for the user's
        /// answer before it is refused.
        #[arg(
            long,
            default_value_t = mcp_resolve_proxy::guard::DEFAULT_ASK_TIMEOUT_SECS,
            value_name = "SECONDS",
            value_parser = clap::value_parser!(u64).range(1..)
        )]
        ask_timeout: u64,
        /// Write one JSON line per tools/call and per resolution to FILE
        /// (appended; `-` for stderr).
        #[arg(long, value_name = "FILE")]
        audit: Option<PathBuf>,
        /// With --audit: include the calls' arguments.
        #[arg(long, requires = "audit")]
        audit_arguments: bool,
        /// The server to start.
        #[arg(last = true, value_name = "COMMAND")]
        command: Vec<OsString>,
    },
    /// Print the JSON Schema of the rules format (for editors).
    Schema {
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// The schema of `proxy --policy` files instead.
        #[arg(long)]
        policy: bool,
    },
    /// The reviewer's view of a server: per tool, its static annotations and
    /// its variants in match order as a decision table (the condition in
    /// words, yes/no per hint, scopes, reachability), which calls fall
    /// through to the static annotations (with an example call), and a
    /// summary of the whole server.
    Explain {
        /// Rules files, or directories of them (one server).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Only this tool.
        #[arg(long, value_name = "NAME")]
        tool: Option<String>,
        /// Output format (`html`: one self-contained page).
        #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
        format: ExplainFormat,
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Print a completion script for SHELL.
    ///
    /// bash: `mcp-resolve completions bash > ~/.local/share/bash-completion/completions/mcp-resolve`;
    /// zsh: into a directory of `$fpath` as `_mcp-resolve`; fish:
    /// `~/.config/fish/completions/mcp-resolve.fish`; PowerShell: dot-source
    /// the output from `$PROFILE`; elvish: `eval (mcp-resolve completions elvish | slurp)`.
    Completions {
        /// The shell.
        shell: clap_complete::Shell,
    },
}

/// A signing key's algorithm.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
enum KeyAlgorithm {
    /// Ed25519.
    #[value(name = "Ed25519", alias = "ed25519", alias = "EdDSA", alias = "eddsa")]
    Ed25519,
    /// ECDSA on P-256.
    #[value(name = "ES256", alias = "es256")]
    ES256,
}

impl From<KeyAlgorithm> for mcp_resolve_host::jws::Algorithm {
    fn from(alg: KeyAlgorithm) -> Self {
        match alg {
            KeyAlgorithm::Ed25519 => Self::Ed25519,
            KeyAlgorithm::ES256 => Self::ES256,
        }
    }
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum Format {
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
pub(crate) enum DiffFormat {
    /// One line per change, with its witness.
    Human,
    /// One JSON document.
    Json,
    /// Markdown for a pull-request comment: a table per direction, with
    /// witnesses.
    Markdown,
}

#[derive(Clone, Copy, ValueEnum)]
enum ExplainFormat {
    /// Plain text.
    Text,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// One self-contained HTML page.
    Html,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SyntaxArg {
    /// YAML.
    Yaml,
    /// The `.rules` syntax.
    Rules,
}

fn parse_dialect(s: &str) -> Result<Dialect, String> {
    s.parse()
        .map_err(|e: mcp_resolve_runtime::UnknownDialect| e.to_string())
}

/// `--listen`'s address: `HOST:PORT`, or a port alone (loopback).
fn parse_listen(s: &str) -> Result<std::net::SocketAddr, String> {
    if let Ok(port) = s.parse::<u16>() {
        return Ok(std::net::SocketAddr::from(([127, 0, 0, 1], port)));
    }
    s.parse().map_err(|_| {
        format!("`{s}` is not an address: give IP:PORT (127.0.0.1:8080, [::1]:8080) or a port")
    })
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
        Command::Signature {
            paths,
            output,
            fingerprint_only,
            server_json,
            signature_url,
            sign,
        } => match (server_json, output) {
            (server_json, Some(output)) if !sign.is_empty() => signature::sign(
                &paths,
                &output,
                &sign,
                server_json
                    .as_deref()
                    .map(|f| (f, signature_url.as_deref())),
            ),
            (Some(file), output) => {
                signature::server_json(&paths, output.as_deref(), &file, signature_url.as_deref())
            }
            (None, output) => signature::run(&paths, output.as_deref(), fingerprint_only),
        },
        Command::Keygen { output, alg, force } => keys::keygen(&output, alg.into(), force),
        Command::Verify {
            document,
            jws,
            key,
            keys: sets,
        } => keys::verify(&document, jws.as_deref(), &key, &sets),
        Command::Generate {
            paths,
            output,
            runtime_path,
        } => generate::run(&paths, output.as_deref(), runtime_path),
        Command::Resolve {
            paths,
            tool,
            args,
            dialect,
            explain,
        } => resolve::run(&paths, &tool, &args, dialect, explain),
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
        Command::Diff {
            old,
            new,
            format,
            allow_widening,
            allow_undecided,
        } => diff::run(&old, &new, format, allow_widening, allow_undecided),
        Command::Import {
            input,
            output,
            url,
            name,
            server_version,
            save_list,
            timeout,
            force,
            command,
        } => match import::source(input, url, command) {
            Ok(source) => import::run(
                source,
                import::Options {
                    output,
                    name,
                    version: server_version,
                    save_list,
                    force,
                    timeout: std::time::Duration::from_secs(timeout.max(1)),
                },
            ),
            Err(code) => code,
        },
        Command::Proxy {
            paths,
            dialect,
            timeout,
            max_message_bytes,
            no_probe,
            upstream,
            listen,
            allow_host,
            allow_origin,
            max_sessions,
            session_idle,
            pin,
            pin_key,
            pin_baseline,
            policy,
            ask_timeout,
            audit,
            audit_arguments,
            command,
        } => proxy::main(proxy::Args {
            pin,
            pin_key,
            pin_baseline,
            policy,
            ask_timeout: Duration::from_secs(ask_timeout),
            audit,
            audit_arguments,
            paths,
            dialect,
            timeout,
            max_message_bytes: max_message_bytes.max(1024),
            probe: !no_probe,
            upstream,
            listen: listen.map(|addr| mcp_resolve_proxy::listen::ListenOptions {
                addr,
                allowed_hosts: allow_host,
                allowed_origins: allow_origin,
                max_sessions: max_sessions.max(1),
                session_idle: (session_idle > 0).then(|| Duration::from_secs(session_idle)),
            }),
            command,
        }),
        Command::Schema { output, policy } => write_output(
            output.as_deref(),
            &if policy {
                mcp_resolve_proxy::policy::policy_schema()
            } else {
                mcp_resolve::rules_schema::rules_schema()
            },
        ),
        Command::Explain {
            paths,
            tool,
            format,
            output,
        } => with_server(&paths, |project, server| {
            let mut explanation = mcp_resolve::explain::explain(project, server);
            if let Some(name) = tool {
                explanation = match explanation.only_tool(&name) {
                    Ok(e) => e,
                    Err(e) => {
                        progress::finish();
                        eprintln!("error: {e}");
                        return USAGE;
                    }
                };
            }
            let text = match format {
                ExplainFormat::Text => explanation.to_text(),
                ExplainFormat::Markdown => explanation.to_markdown(),
                ExplainFormat::Html => explanation.to_html(),
            };
            write_output(output.as_deref(), &text)
        }),
        Command::Completions { shell } => {
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
    }
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

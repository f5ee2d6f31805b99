//! The command line's grammar: the clap definition of every subcommand and
//! its options (what `--help` and `completions` print), and the value
//! parsers. Dispatch is the parent module's.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::{Parser, Subcommand, ValueEnum};
use mcp_resolve_runtime::Dialect;

mod proxy;
pub(crate) use self::proxy::*;

/// Compile MCP tool-resolution rules: check them, emit signatures, resolve calls.
#[derive(Parser)]
#[command(name = "mcp-resolve", version, about, long_about = None)]
pub(crate) struct Cli {
    #[command(subcommand)]
    pub(crate) command: Command,
    #[command(flatten)]
    pub(crate) limits: LimitArgs,
    /// When to colour diagnostics: `auto` colours a terminal unless `NO_COLOR` is set; `always` even a pipe
    #[arg(long, global = true, value_enum, default_value_t = ColorWhen::Auto, value_name = "WHEN")]
    pub(crate) color: ColorWhen,
}

/// `--color`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub(crate) enum ColorWhen {
    // On a terminal, unless `NO_COLOR` is set (and not empty). (Plain
    // comments: doc comments here would turn `--help` into the long form.)
    Auto,
    // Always, even into a pipe or a file.
    Always,
    Never,
}

/// What reading rules may spend (every command that reads rules files).
#[derive(clap::Args)]
pub(crate) struct LimitArgs {
    /// The largest file read, in bytes [default: 8388608 for rules and schema files, 536870912 for JSON documents such as signatures]
    #[arg(long, global = true, value_name = "BYTES", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) max_file_bytes: Option<u64>,
    /// Pattern analysis: regions one argument may split into [default: 4096]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) analysis_regions: Option<u64>,
    /// Pattern analysis: rows (alternatives) one `when` may expand to [default: 2048]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) analysis_rows: Option<u64>,
    /// Pattern analysis: automaton states the string search of one argument may visit [default: 50000]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) analysis_string_states: Option<u64>,
    /// Pattern analysis: search steps per tool [default: 1000000]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) analysis_steps: Option<u64>,
    /// Pattern analysis: work units for the whole run [default: 200000000]
    #[arg(long, global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) analysis_work: Option<u64>,
    /// Threads for per-file and per-tool work; output never depends on it [default: every core]
    #[arg(long, short = 'j', global = true, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub(crate) jobs: Option<u64>,
}

/// A count from the command line as a `usize` (saturating).
pub(crate) fn size(n: u64) -> usize {
    usize::try_from(n).unwrap_or(usize::MAX)
}

#[derive(Subcommand)]
pub(crate) enum Command {
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
    Signature(SignatureArgs),
    /// Make a signing key: NAME.pem (private, mode 0600) and NAME.jwk
    /// (public, with its RFC 7638 thumbprint as `kid`); with `--state`, a
    /// request-state key instead.
    Keygen {
        /// The files' name, without extension.
        #[arg(short, long, value_name = "NAME")]
        output: PathBuf,
        /// The algorithm.
        #[arg(long, value_enum, default_value_t = KeyAlgorithm::Ed25519)]
        alg: KeyAlgorithm,
        /// Make a request-state key instead: NAME.key (32 random bytes as
        /// hex, mode 0600), for `proxy --state-key-file` on every instance.
        #[arg(long, conflicts_with = "alg")]
        state: bool,
        /// Overwrite NAME.pem and NAME.jwk if they exist.
        #[arg(long)]
        force: bool,
    },
    /// Write a SEP-3140 signed capability manifest of one server's tools
    /// (`{manifest, signature}`, what `declarations/manifest` answers) and,
    /// with `--declarations`, the tools as the server must list them (each
    /// with `trust`, `version` and `contentHash`).
    Manifest(ManifestArgs),
    /// Verify a SEP-3140 signed capability manifest: its signature by
    /// `kid` with the keys given, its audience, its validity window, and
    /// (with `--declarations`) every listed tool's `contentHash`.
    VerifyManifest(VerifyManifestArgs),
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
    /// Generate the resolver of one server: Rust (the file the build.rs
    /// `Builder` writes) or TypeScript.
    Generate {
        /// Rules files, or directories of them (one server).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Write to this file (only when its content changes) instead of
        /// standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// The language of the resolver.
        #[arg(long, value_enum, default_value = "rust")]
        lang: LangArg,
        /// What generated code names the runtime by: a Rust module path
        /// (default `::mcp_resolve_runtime`), for TypeScript a module
        /// specifier (default `@mcp-resolve/runtime`), for Python a module
        /// name (default `mcp_resolve_runtime`).
        #[arg(long)]
        runtime_path: Option<String>,
    },
    /// Resolve one call, printing the JSON-RPC result (or error) object.
    Resolve(ResolveArgs),
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
    Diff(DiffArgs),
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
    Import(ImportArgs),
    /// Answer tools/resolve from rules in front of any MCP server: start
    /// the server (`-- COMMAND ARGS…`) as a child over stdio and speak MCP
    /// to the host on this process's stdio, passing everything through
    /// except what the rules add (capabilities, annotations and resolvable
    /// markers in tools/list, tools/resolve and signature). Without rules
    /// it adds nothing and still guards, authorizes, traces and listens.
    Proxy(Box<ProxyArgs>),
    /// Cedar policies over resolved calls: the schema of a server's rules,
    /// and policies checked, explained variant by variant, and compared.
    #[command(subcommand)]
    Policy(PolicyCommand),
    /// The language server of rules files, on stdio: check's diagnostics as
    /// you type, for any editor with an LSP client (docs/editor.md).
    Lsp,
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
    Explain(ExplainArgs),
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
pub(crate) enum KeyAlgorithm {
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
pub(crate) enum ExplainFormat {
    /// Plain text.
    Text,
    /// GitHub-flavoured Markdown.
    Markdown,
    /// One self-contained HTML page.
    Html,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum LangArg {
    /// Rust (the `mcp-resolve-runtime` crate).
    Rust,
    /// TypeScript (the `@mcp-resolve/runtime` package, Ajv for schemas).
    Typescript,
    /// Python (the `mcp_resolve_runtime` package, jsonschema-rs for schemas).
    Python,
}

#[derive(Clone, Copy, ValueEnum)]
pub(crate) enum SyntaxArg {
    /// YAML.
    Yaml,
    /// The `.rules` syntax.
    Rules,
}

pub(crate) fn parse_dialect(s: &str) -> Result<Dialect, String> {
    s.parse()
        .map_err(|e: mcp_resolve_runtime::UnknownDialect| e.to_string())
}

/// `manifest`'s arguments.
#[derive(clap::Args)]
pub(crate) struct ManifestArgs {
    /// Rules files, or directories of them (one server).
    #[arg(required = true)]
    pub(crate) paths: Vec<PathBuf>,
    /// The server's canonical URI (RFC 8707): the manifest's audience.
    #[arg(long, value_name = "URI")]
    pub(crate) server: String,
    /// The publisher document's URL.
    #[arg(long, value_name = "URL")]
    pub(crate) publisher: Option<String>,
    /// The manifest written last time: a tool keeps its version while
    /// it is unchanged, and gets the next one when it changed.
    #[arg(long, value_name = "FILE")]
    pub(crate) previous: Option<PathBuf>,
    /// How long the manifest is valid: a number and `s`, `m`, `h` or `d`.
    #[arg(long, value_name = "DURATION", default_value = "30d", value_parser = parse_duration)]
    pub(crate) expires: u64,
    /// The private key that signs (PKCS#8 PEM, from `keygen`).
    #[arg(long, value_name = "KEY.pem")]
    pub(crate) sign: PathBuf,
    /// How the JWS header names the algorithm: for Ed25519, `EdDSA` (as
    /// SEP-3140's examples write it; the default) or `Ed25519` (RFC 9864).
    #[arg(long, value_name = "NAME")]
    pub(crate) jws_alg: Option<String>,
    /// Write the manifest to this file instead of standard output.
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// Write the declarations (a `tools/list` result) to this file.
    #[arg(long, value_name = "FILE")]
    pub(crate) declarations: Option<PathBuf>,
    /// The dialect whose `tools/list` form the declarations take.
    #[arg(long, default_value = "extension", value_parser = parse_dialect)]
    pub(crate) dialect: Dialect,
    /// The form listed to a host that declares the tool-resolution
    /// extension: resolvable markers, each variant's labels with them.
    #[arg(long)]
    pub(crate) marked: bool,
}

/// A duration: a whole number and `s`, `m`, `h` or `d`; in seconds.
pub(crate) fn parse_duration(s: &str) -> Result<u64, String> {
    let unit = match s.chars().last() {
        Some('s') => 1,
        Some('m') => 60,
        Some('h') => 3_600,
        Some('d') => 86_400,
        _ => {
            return Err(format!(
                "`{s}` is not a duration: a number and s, m, h or d (30d)"
            ));
        }
    };
    let number: u64 = s[..s.len() - 1]
        .parse()
        .map_err(|_| format!("`{s}` is not a duration: a number and s, m, h or d (30d)"))?;
    match number.checked_mul(unit) {
        Some(0) => Err("a manifest valid for no time at all is expired at once".into()),
        Some(seconds) => Ok(seconds),
        None => Err(format!("`{s}` is too long")),
    }
}

/// `mcp-resolve policy …`.
#[derive(Subcommand)]
pub(crate) enum PolicyCommand {
    /// Write the Cedar schema of a server's rules: cedar-for-agents'
    /// conventions (one action per tool, `context.input` typed from its
    /// inputSchema) and mcp-resolve's `context.resolution` and
    /// `context.session`.
    Schema {
        /// Rules files, or directories of them (one server).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// Validate policies against the schema of a server's rules, as the
    /// proxy does at start (for CI): exit 1 with Cedar's diagnostics.
    Check {
        /// A `.cedar` file, a directory of them, or a YAML policy.
        policy: PathBuf,
        /// Rules files, or directories of them (one server).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// The principal of calls without a token, as `proxy --principal`.
        #[arg(long, value_name = "TYPE::\"ID\"")]
        principal: Option<String>,
    },
    /// Print the decision of every tool and variant, with the deciding
    /// policies ("depends on arguments" where a policy reads them).
    Explain {
        /// A `.cedar` file, a directory of them, or a YAML policy.
        policy: PathBuf,
        /// Rules files, or directories of them (one server).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output format.
        #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
        format: ExplainFormat,
        /// Write to this file instead of standard output.
        #[arg(short, long)]
        output: Option<PathBuf>,
    },
    /// List the variants whose decision differs between two policies.
    Diff {
        /// The policy before.
        old: PathBuf,
        /// The policy after.
        new: PathBuf,
        /// Rules files, or directories of them (one server).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Output format (text or markdown).
        #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
        format: ExplainFormat,
    },
    /// Print the Cedar translation of a YAML policy (what the proxy decides
    /// it with).
    Translate {
        /// The YAML policy.
        policy: PathBuf,
        /// Rules files, or directories of them (one server).
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
}

/// `signature`'s arguments.
#[derive(clap::Args)]
pub(crate) struct SignatureArgs {
    /// Rules files, or directories of them (one server).
    #[arg(required = true)]
    pub(crate) paths: Vec<PathBuf>,
    /// Write to this file instead of standard output.
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// Print only the fingerprint.
    #[arg(long)]
    pub(crate) fingerprint_only: bool,
    /// Write the document in its canonical form (RFC 8785, one line,
    /// fingerprint included): what generated code holds as
    /// `SIGNATURE_JSON`.
    #[arg(long, conflicts_with_all = ["fingerprint_only", "server_json", "sign"])]
    pub(crate) canonical: bool,
    /// Write the fingerprint into this registry `server.json`, under
    /// `_meta["io.modelcontextprotocol.registry/publisher-provided"]`,
    /// keeping the rest of it; refused (file untouched) over 4096 bytes.
    #[arg(long, value_name = "FILE")]
    pub(crate) server_json: Option<PathBuf>,
    /// With `--server-json`: where the full signature document is published.
    #[arg(long, value_name = "URL", requires = "server_json")]
    pub(crate) signature_url: Option<String>,
    /// Sign the document with this private key (PKCS#8 PEM, from
    /// `keygen`): a detached JWS goes to `OUTPUT.jws`, one line per
    /// signer. Repeat for several signers.
    #[arg(long, value_name = "KEY.pem", requires = "output")]
    pub(crate) sign: Vec<PathBuf>,
}

/// `import`'s arguments.
#[derive(clap::Args)]
pub(crate) struct ImportArgs {
    /// The `tools/list` JSON file.
    pub(crate) input: Option<PathBuf>,
    /// The rules file to write.
    #[arg(short, long)]
    pub(crate) output: PathBuf,
    /// Ask the streamable HTTP endpoint at this URL.
    #[arg(long, value_name = "URL")]
    pub(crate) url: Option<String>,
    /// The server's name (default: its `serverInfo`, else the output's stem).
    #[arg(long)]
    pub(crate) name: Option<String>,
    /// The server's version (default: its `serverInfo`, else 0.0.0).
    #[arg(long)]
    pub(crate) server_version: Option<String>,
    /// Also write the tools as listed (`{"tools": […]}`, JSON) to this
    /// file: a snapshot to commit, diff or import again later.
    #[arg(long, value_name = "FILE")]
    pub(crate) save_list: Option<PathBuf>,
    /// Seconds to wait for each answer of a live server.
    #[arg(long, default_value_t = 30, value_name = "SECONDS")]
    pub(crate) timeout: u64,
    /// The client capabilities declared to a live server (JSON). By
    /// default a full host's (sampling, elicitation, roots), so a server
    /// that lists tools by capability lists them all; `{}` for none.
    #[arg(long, value_name = "JSON")]
    pub(crate) client_capabilities: Option<String>,
    /// Overwrite the output file if it exists.
    #[arg(long)]
    pub(crate) force: bool,
    /// The server to start and ask over stdio.
    #[arg(last = true, value_name = "COMMAND")]
    pub(crate) command: Vec<OsString>,
}

/// `explain`'s arguments.
#[derive(clap::Args)]
pub(crate) struct ExplainArgs {
    /// Rules files, or directories of them (one server).
    #[arg(required = true)]
    pub(crate) paths: Vec<PathBuf>,
    /// Only this tool.
    #[arg(long, value_name = "NAME")]
    pub(crate) tool: Option<String>,
    /// Output format (`html`: one self-contained page).
    #[arg(long, value_enum, default_value_t = ExplainFormat::Text)]
    pub(crate) format: ExplainFormat,
    /// Write to this file instead of standard output.
    #[arg(short, long)]
    pub(crate) output: Option<PathBuf>,
    /// Add this policy's decision for every tool and variant (a
    /// `.cedar` file, a directory of them, or a YAML policy).
    #[arg(long, value_name = "POLICY")]
    pub(crate) policy: Option<PathBuf>,
}

/// `verify-manifest`'s arguments.
#[derive(clap::Args)]
pub(crate) struct VerifyManifestArgs {
    /// The manifest document (`{manifest, signature}`).
    pub(crate) manifest: PathBuf,
    /// The publisher's keys: a JWK or a JWKS file, or an `https` URL of
    /// one (private and link-local addresses refused); repeat for
    /// several. Without it, the keys are discovered through the
    /// server's Protected Resource Metadata (`mcp_signing_jwks_uri`).
    #[arg(long, value_name = "JWKS")]
    pub(crate) jwks: Vec<PathBuf>,
    /// Let a JWKS URL be on a loopback address (and plain `http`
    /// there): for tests and local development.
    #[arg(long)]
    pub(crate) allow_loopback_jwks: bool,
    /// The server's canonical URI the manifest must be for.
    #[arg(long, value_name = "URI")]
    pub(crate) server: String,
    /// The tools as the server lists them (a `tools/list` result, or a
    /// JSON-RPC response holding one), checked against the manifest.
    #[arg(long, value_name = "FILE")]
    pub(crate) declarations: Option<PathBuf>,
}

/// `diff`'s arguments.
#[derive(clap::Args)]
pub(crate) struct DiffArgs {
    /// The old signature document (`.json`), or rules.
    pub(crate) old: PathBuf,
    /// The new signature document (`.json`), or rules.
    pub(crate) new: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = DiffFormat::Human)]
    pub(crate) format: DiffFormat,
    /// Exit 0 even when a change widens.
    #[arg(long)]
    pub(crate) allow_widening: bool,
    /// Exit 0 even when a change could not be decided ("undecided": the
    /// search found no call that tells the documents apart, but cannot
    /// show that none exists).
    #[arg(long)]
    pub(crate) allow_undecided: bool,
}

/// `resolve`'s arguments.
#[derive(clap::Args)]
pub(crate) struct ResolveArgs {
    /// Rules files, or directories of them (one server).
    #[arg(required = true)]
    pub(crate) paths: Vec<PathBuf>,
    /// The tool name.
    #[arg(long)]
    pub(crate) tool: String,
    /// The arguments, a JSON object; `-` reads them from standard input,
    /// `@FILE` from a file.
    #[arg(long)]
    pub(crate) args: String,
    /// The response shape.
    #[arg(long, default_value = "extension", value_parser = parse_dialect)]
    pub(crate) dialect: Dialect,
    /// Say on standard error which variant matched and why.
    #[arg(long)]
    pub(crate) explain: bool,
}

//! The real components some suites need, shared by the command's suite and
//! the compiler's (which includes this file alone).

use std::path::PathBuf;

/// The real components some suites need, each named by the variable that
/// points at it, and what installs it: README's test command
/// (`scripts/test.sh`) installs them all under `target/` and sets the
/// variables.
pub const COMPONENTS: &[(&str, &str)] = &[
    (
        "MCP_RESOLVE_MCP_PYTHON",
        "the Python MCP SDK (end-to-end, conformance and signing cross-checks)",
    ),
    (
        "MCP_RESOLVE_CEL_PYTHON",
        "cel-python (the CEL differential test)",
    ),
    (
        "MCP_RESOLVE_TS_CLIENT",
        "the TypeScript SDK (the second real client) and Cedar's engine, cedar-wasm (validates and authorizes what the proxy decides)",
    ),
    (
        "MCP_RESOLVE_TS_RUNTIME",
        "the runtime package of generated TypeScript resolvers, built with Ajv and TypeScript's compiler (generated TypeScript type-checked and run)",
    ),
    (
        "MCP_RESOLVE_TS_EXAMPLE",
        "the TypeScript example server (examples/file-server-ts) on the TypeScript SDK v2 and v1, built against the runtime package (its conformance and clients)",
    ),
    (
        "MCP_RESOLVE_TS_HOST",
        "the TypeScript host library (packages/host), built against the runtime package (its agreement with the Rust host and its decisions against real servers)",
    ),
    (
        "MCP_RESOLVE_PY_RUNTIME",
        "the runtime package of generated Python resolvers with jsonschema-rs and mypy, in a virtual environment (generated Python type-checked and run)",
    ),
    (
        "MCP_RESOLVE_PYPI_WHEEL",
        "the command as a wheel, built by maturin from this build (scripts/pypi-wheel.sh; the PyPI test installs it)",
    ),
    (
        "MCP_RESOLVE_OFFICIAL_CONFORMANCE",
        "the official MCP conformance suite and Node 22 (the proxy scored against a direct connection)",
    ),
    (
        "MCP_RESOLVE_AUTH_SERVER",
        "a real OAuth authorization server, oidc-provider, and Node 22 (the OAuth flow with step-up)",
    ),
    (
        "MCP_RESOLVE_REAL_SERVERS",
        "the real MCP servers from npm and PyPI (live import)",
    ),
    (
        "MCP_RESOLVE_HOSTS",
        "Claude Code, Codex CLI and Gemini CLI from npm (the proxy inside real hosts)",
    ),
    (
        "MCP_RESOLVE_SARIF_SCHEMA",
        "the SARIF 2.1.0 schema (SARIF output validation)",
    ),
    (
        "MCP_RESOLVE_REDIS",
        "redis-server from Debian's packages (several proxy instances sharing a store)",
    ),
    (
        "MCP_RESOLVE_HAPROXY",
        "HAProxy from Debian's packages (three proxy instances behind a load balancer)",
    ),
    (
        "MCP_RESOLVE_TMUX",
        "tmux from Debian's packages (the hosts' terminal interfaces, driven as a user would)",
    ),
    (
        "MCP_RESOLVE_NVIM",
        "Neovim from Debian's packages (its own LSP client attached to mcp-resolve lsp)",
    ),
    (
        "MCP_RESOLVE_CHROMEDRIVER",
        "Chromium and ChromeDriver (the explain page in a real browser)",
    ),
];

/// The component `var` names (see [`COMPONENTS`]). Without it: a failure
/// under CI, and elsewhere `None` with a note written straight to the
/// terminal (not to the test harness's captured output), so a plain
/// `cargo test` says which suites it skipped.
pub fn component(var: &str, test: &str) -> Option<PathBuf> {
    if let Some(value) = std::env::var_os(var).filter(|v| !v.is_empty()) {
        return Some(PathBuf::from(value));
    }
    let what = COMPONENTS
        .iter()
        .find(|(v, _)| *v == var)
        .map_or("it", |(_, what)| what);
    assert!(
        std::env::var_os("CI").is_none(),
        "CI must set {var}: scripts/test.sh installs {what}"
    );
    note_skipped(&format!(
        "skipped {test}: {var} is not set; scripts/test.sh installs it: {what}"
    ));
    None
}

/// Writes `line` to the terminal past libtest's output capture.
pub fn note_skipped(line: &str) {
    use std::io::Write as _;
    let _ = std::io::stderr().write_all(format!("\nnote: {line}\n").as_bytes());
}

//! The crates' layering, as `cargo tree` sees it: what a `build.rs` compiles
//! (this crate) has no command line, async runtime or HTTP stack in its
//! tree; the runtime that generated code depends on knows nothing of the
//! compiler, the host side or the proxy; the host side nothing of the
//! compiler or the proxy (docs/architecture.md, "The crates").

use std::collections::BTreeSet;
use std::process::Command;

/// The names of the packages in `package`'s normal dependency tree (its own
/// name included), with `args` added to `cargo tree`.
fn tree(package: &str, args: &[&str]) -> BTreeSet<String> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let output = Command::new(cargo)
        .args([
            "tree",
            "--offline",
            "--locked",
            "-e",
            "normal",
            "--prefix",
            "none",
        ])
        .args(["--format", "{p}", "-p", package])
        .args(args)
        .current_dir(crate::repo())
        .output()
        .unwrap();
    assert!(
        output.status.success(),
        "cargo tree -p {package}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .filter_map(|line| line.split_whitespace().next())
        .map(str::to_string)
        .collect()
}

fn assert_none_of(package: &str, tree: &BTreeSet<String>, forbidden: &[&str]) {
    let found: Vec<&&str> = forbidden.iter().filter(|f| tree.contains(**f)).collect();
    assert!(
        found.is_empty(),
        "{package} depends on {found:?}; its whole tree: {tree:?}"
    );
    assert!(tree.contains(package), "{tree:?}");
}

#[test]
fn a_build_script_compiles_no_cli_runtime_or_http_stack() {
    for args in [&[][..], &["--no-default-features"][..]] {
        let compiler = tree("mcp-resolve", args);
        assert_none_of(
            "mcp-resolve",
            &compiler,
            &[
                "clap",
                "clap_complete",
                "tokio",
                "reqwest",
                "axum",
                "hyper",
                "indicatif",
                "mimalloc",
                "mcp-resolve-proxy",
                "mcp-resolve-cli",
                "rmcp",
                // Signing is the CLI's: a build script fingerprints, never signs.
                "ed25519-dalek",
                "p256",
            ],
        );
        assert!(compiler.contains("mcp-resolve-runtime"), "{compiler:?}");
        assert!(compiler.contains("mcp-resolve-host"), "{compiler:?}");
    }
}

#[test]
fn the_runtime_knows_nothing_of_the_compiler_host_or_proxy() {
    let runtime = tree("mcp-resolve-runtime", &[]);
    assert_none_of(
        "mcp-resolve-runtime",
        &runtime,
        &[
            "mcp-resolve",
            "mcp-resolve-host",
            "mcp-resolve-proxy",
            "mcp-resolve-cli",
            "tokio",
            "sha2",
            "pest",
            "prettyplease",
        ],
    );
}

#[test]
fn the_host_side_knows_nothing_of_the_compiler_or_proxy() {
    let host = tree("mcp-resolve-host", &[]);
    assert_none_of(
        "mcp-resolve-host",
        &host,
        &[
            "mcp-resolve",
            "mcp-resolve-proxy",
            "mcp-resolve-cli",
            "tokio",
            "pest",
            "prettyplease",
        ],
    );
}

#[test]
fn only_the_command_knows_clap() {
    let proxy = tree("mcp-resolve-proxy", &[]);
    assert_none_of(
        "mcp-resolve-proxy",
        &proxy,
        &["clap", "mcp-resolve-cli", "indicatif"],
    );
}

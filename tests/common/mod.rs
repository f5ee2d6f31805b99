//! Helpers shared by the integration tests.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]
#![allow(dead_code)]

use std::path::{Path, PathBuf};

/// Whether expected files should be rewritten (`MCP_RESOLVE_BLESS=1`).
pub fn bless() -> bool {
    std::env::var_os("MCP_RESOLVE_BLESS").is_some_and(|v| v != "0")
}

/// Compares `actual` with the file at `path`; rewrites it when blessing.
pub fn expect_file(path: &Path, actual: &str) {
    if bless() {
        std::fs::write(path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(path)
        .unwrap_or_else(|_| panic!("missing {}; run with MCP_RESOLVE_BLESS=1", path.display()));
    if expected != actual {
        panic!(
            "{} is stale (run with MCP_RESOLVE_BLESS=1 to update)\n--- expected\n{expected}\n--- actual\n{actual}",
            path.display()
        );
    }
}

/// An empty directory `group/name` under cargo's scratch space for
/// integration tests (removed and made again on every call).
pub fn scratch(group: &str, name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(group)
        .join(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Files with extension `ext` in `dir`, sorted.
pub fn files(dir: &str, ext: &str) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == ext))
        .collect();
    out.sort();
    out
}

/// The compiled `mcp-resolve` binary.
pub fn bin() -> std::process::Command {
    std::process::Command::new(env!("CARGO_BIN_EXE_mcp-resolve"))
}

/// The Python with the MCP SDK (and the JOSE library) that `.ci/run`
/// installs; `None` (the test skips, saying so) outside CI without it.
pub fn mcp_python(what: &str) -> Option<String> {
    match std::env::var("MCP_RESOLVE_MCP_PYTHON") {
        Ok(python) => Some(python),
        Err(_) => {
            assert!(
                std::env::var_os("CI").is_none(),
                "CI must set MCP_RESOLVE_MCP_PYTHON (see .ci/run)"
            );
            eprintln!(
                "skipped {what}: MCP_RESOLVE_MCP_PYTHON is not set (.ci/run installs the SDK)"
            );
            None
        }
    }
}

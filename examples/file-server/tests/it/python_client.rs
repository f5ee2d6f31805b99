//! Runs `tests/e2e_client.py`: the Python `mcp` package from PyPI drives the
//! built `file-server` over stdio and streamable HTTP and checks tools/list,
//! tools/resolve against the signature, errors, tools/call and the dialects.
//!
//! The interpreter comes from `MCP_RESOLVE_MCP_PYTHON` (`.ci/run` installs
//! `mcp`, `rfc8785` and `jsonschema` into `target/mcp-venv`). Without it the
//! test is skipped locally and fails under CI.

use crate::common;

use std::path::Path;
use std::process::Command;

#[test]
fn python_mcp_client_resolves_every_variant_and_calls_tools() {
    let Some(python) = common::python("the Python SDK end-to-end test") else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/e2e_client.py");
    let requests = std::env::var("MCP_RESOLVE_E2E_REQUESTS").unwrap_or_else(|_| "1000".into());
    let output = Command::new(&python)
        .arg(&script)
        .args(["--server", env!("CARGO_BIN_EXE_file-server")])
        .args(["--requests", &requests])
        .output()
        .expect("run the Python client");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    // The transcript and the latency figures, visible with `--nocapture`.
    println!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("all checks passed"),
        "the Python client failed ({}):\n{stdout}\n{stderr}",
        output.status
    );
    for check in [
        "ok signature",
        "ok manage_files: 4/4 variants",
        "ok copy_file: 2/2 variants",
        "ok errors",
        "ok resolve applies the call's checks",
        "ok tools/call",
        "ok missing client capability -> -32021",
        "ok non-empty extension settings -> -32021",
        "ok legacy session",
        "ok dialect sep1862",
        "ok dialect annotations",
        "ok streamable HTTP",
        "latency tools/resolve",
    ] {
        assert!(stdout.contains(check), "missing `{check}` in:\n{stdout}");
    }
}

//! Runs `tests/ts_client.mjs`: the official TypeScript SDK v2
//! (`@modelcontextprotocol/client` 2.4.0) drives the built `file-server` over
//! stdio and streamable HTTP, in the 2026-07-28 era and in a legacy session.
//!
//! The SDK comes from `MCP_RESOLVE_TS_CLIENT`, a directory whose
//! `node_modules` has it (`.ci/run` runs `scripts/install-ts-client.sh`,
//! which installs it under `target/ts-client`). Without it the test is
//! skipped locally and fails under CI.

use crate::common;

use std::path::Path;
use std::process::Command;

#[test]
fn typescript_sdk_client_resolves_every_variant_over_stdio_and_http() {
    let Some(dir) =
        common::ts_client("typescript_sdk_client_resolves_every_variant_over_stdio_and_http")
    else {
        return;
    };
    // Node resolves a script's imports from the directories above it: a
    // copy in a scratch directory whose `node_modules` links to the SDK's
    // (the installation is shared: nothing is written into it).
    let scratch = common::sandbox("ts-client-script");
    std::os::unix::fs::symlink(dir.join("node_modules"), scratch.join("node_modules"))
        .expect("link the SDK's node_modules");
    let script = scratch.join("ts_client.mjs");
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ts_client.mjs"),
        &script,
    )
    .expect("copy the client beside the SDK's node_modules");
    let root = common::sandbox("ts-client");
    let output = Command::new("node")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_file-server"))
        .arg(&root)
        .output()
        .expect("run node");
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("all checks passed"),
        "the TypeScript client failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    for transport in ["stdio", "http"] {
        for check in [
            "resolutions equal to the signature",
            "errors -32602",
            "strips resultType",
            "-32021 without the extension",
        ] {
            assert!(
                stdout
                    .lines()
                    .any(|l| l.starts_with(&format!("ok {transport}: ")) && l.contains(check)),
                "missing `ok {transport}: … {check}` in:\n{stdout}"
            );
        }
    }
}

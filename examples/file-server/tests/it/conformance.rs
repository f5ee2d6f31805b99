//! Runs the repository's conformance suite for the tool-resolution extension
//! (`tests/conformance/suite.py`: raw JSON-RPC, no SDK) against the built
//! server, over stdio and over streamable HTTP. Every case must pass.

use crate::common;

use std::path::{Path, PathBuf};
use std::process::Command;

/// The cases of the suite; each must report `ok`.
const CASES: [&str; 12] = [
    "discover",
    "signature",
    "list-marker",
    "resolve-results",
    "negotiated-meta",
    "capability-missing",
    "capability-settings",
    "invalid-params",
    "unknown-method",
    "framing",
    "early-notification",
    "legacy-session",
];

fn suite() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance/suite.py")
}

fn run(python: &str, transport: &[&str]) {
    let output = Command::new(python)
        .arg(suite())
        .args(transport)
        .output()
        .expect("run the conformance suite");
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success(),
        "the conformance suite failed ({}):\n{stdout}\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    for case in CASES {
        assert!(
            stdout
                .lines()
                .any(|l| l.starts_with(&format!("ok {case} "))),
            "case `{case}` did not pass:\n{stdout}"
        );
    }
}

#[test]
fn the_server_passes_the_conformance_suite_over_stdio() {
    let Some(python) = common::python("conformance (stdio)") else {
        return;
    };
    let root = common::sandbox("conformance-stdio");
    let server = env!("CARGO_BIN_EXE_file-server");
    run(
        &python,
        &["--stdio", "--", server, "--root", root.to_str().unwrap()],
    );
}

#[test]
fn the_server_passes_the_conformance_suite_over_http() {
    let Some(python) = common::python("conformance (http)") else {
        return;
    };
    let root = common::sandbox("conformance-http");
    let server = common::HttpServer::start(&root, &[]);
    run(&python, &["--http", &server.url]);
}

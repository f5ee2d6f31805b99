//! The conformance suite and the SDKs as hosts, through the proxy on stdio.

use super::*;

/// Runs the conformance suite against `proxy RULES -- SERVER…`, a fresh
/// proxy and server per session.
fn conformance(python: &str, mode: &[&str], rules: &str, server: &[&str]) {
    let mut target = vec![
        "--stdio",
        "--",
        env!("CARGO_BIN_EXE_mcp-resolve"),
        "proxy",
        rules,
        "--no-probe",
        "--",
    ];
    target.extend_from_slice(server);
    suite(python, mode, &target);
}

#[test]
fn the_conformance_suite_passes_through_the_proxy_in_front_of_a_python_sdk_server() {
    let Some(python) = common::mcp_python("the conformance suite through the proxy") else {
        return;
    };
    let root = common::scratch("proxy", "notes-conformance");
    let server = [
        python.as_str(),
        &fixture("notes_server.py"),
        root.to_str().unwrap(),
    ];
    let rules = fixture("notes.yaml");
    // The Python SDK speaks both styles: per-request capabilities
    // (2026-07-28) and `initialize` sessions.
    conformance(&python, &[], &rules, &server);
    conformance(&python, &["--legacy"], &rules, &server);
}

#[test]
fn the_conformance_suite_passes_through_the_proxy_in_front_of_server_filesystem() {
    let (Some(python), Some(dir)) = (
        common::mcp_python("the conformance suite through the proxy"),
        common::real_servers("the conformance suite through the proxy"),
    ) else {
        return;
    };
    let root = common::scratch("proxy", "filesystem-conformance");
    let server = dir.join("node/node_modules/.bin/mcp-server-filesystem");
    // server-filesystem (TypeScript SDK v1) speaks only `initialize`
    // sessions, so the suite runs in that style.
    conformance(
        &python,
        &["--legacy"],
        "rules/real-server-filesystem.yaml",
        &[server.to_str().unwrap(), root.to_str().unwrap()],
    );
}

#[test]
fn the_python_sdk_as_a_host_through_the_proxy() {
    let Some(python) = common::mcp_python("the Python SDK through the proxy") else {
        return;
    };
    let output = std::process::Command::new(&python)
        .arg(fixture("sdk_client.py"))
        .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("ok calls answer as without the proxy"),
        "the Python SDK client failed through the proxy:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    for mode in ["ok auto (2026-07-28)", "ok legacy (2025-11-25)"] {
        assert!(stdout.contains(mode), "{mode} missing:\n{stdout}");
    }
}

#[test]
fn the_typescript_sdk_as_a_host_through_the_proxy() {
    let (Some(python), Some(servers)) = (
        common::mcp_python("the TypeScript SDK through the proxy"),
        common::real_servers("the TypeScript SDK through the proxy"),
    ) else {
        return;
    };
    let Some(script) = ts_script("sdk_client.mjs") else {
        return;
    };
    let notes = common::scratch("proxy", "notes-ts");
    let everything =
        servers.join("node/node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let output = std::process::Command::new("node")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
        .arg(&python)
        .arg(&notes)
        .arg(&everything)
        .arg(fixture(""))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("all checks passed"),
        "the TypeScript SDK client failed through the proxy:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// The TypeScript SDK v1 (`@modelcontextprotocol/sdk`, what most desktop hosts
/// run) as a plain host and as one that declares the extension, directly and
/// through the proxy side by side, in front
/// of two real servers: `initialize`, every list, prompts, resources,
/// completion, logging, ping, calls, progress, cancellation, the server's
/// own requests (sampling, elicitation, roots) and its stderr are the same,
/// but for the documented additions (the proxy's capabilities, and the one
/// hint `rules/real-server-everything.yaml` writes differently).
#[test]
fn the_typescript_sdk_v1_host_sees_what_it_sees_directly() {
    let Some(servers) = common::real_servers("the TypeScript SDK v1 side by side") else {
        return;
    };
    let Some(script) = ts_script("sdk_v1_host.mjs") else {
        return;
    };
    let sdk = script
        .parent()
        .unwrap()
        .join("node_modules/@modelcontextprotocol/sdk");
    assert!(
        sdk.is_dir(),
        "{} is missing (scripts/install-ts-client.sh)",
        sdk.display()
    );
    let root = common::scratch("proxy", "v1-host-root");
    std::fs::write(root.join("notes.txt"), "first line\n").unwrap();
    let bin = |name: &str| {
        servers
            .join("node/node_modules/.bin")
            .join(name)
            .to_str()
            .unwrap()
            .to_owned()
    };
    let notes = root.join("notes.txt").to_str().unwrap().to_owned();
    let cases = [
        (
            "rules/real-server-everything.yaml",
            r#"{"gzip-file-as-resource": ["destructiveHint"]}"#,
            vec![bin("mcp-server-everything")],
            26,
            "{}".to_string(),
        ),
        (
            "rules/real-server-filesystem.yaml",
            "{}",
            vec![
                bin("mcp-server-filesystem"),
                root.to_str().unwrap().to_owned(),
            ],
            11,
            serde_json::json!({"path": notes, "edits": [], "dryRun": true}).to_string(),
        ),
    ];
    // A plain host, and one that declares the extension.
    for declare in ["0", "1"] {
        for (rules, allowed, server, comparisons, resolve) in &cases {
            let output = std::process::Command::new("node")
                .arg(&script)
                .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
                .arg(rules)
                .arg(allowed)
                .args(server)
                .env("DECLARE_EXTENSION", declare)
                .env("RESOLVE_ARGUMENTS", resolve)
                .output()
                .unwrap();
            let stdout = String::from_utf8_lossy(&output.stdout);
            println!("{stdout}");
            assert!(
                output.status.success()
                    && stdout.contains(&format!("{comparisons} comparisons agree"))
                    && (declare == "0") != stdout.contains("resolvable through the proxy"),
                "{rules} (extension declared: {declare}): the v1 host saw something else through the proxy:\n{stdout}\n{}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
    }
}

// ---------------------------------------------------------------------------
// Streamable HTTP: hosts through `--listen`, servers through `--upstream`.

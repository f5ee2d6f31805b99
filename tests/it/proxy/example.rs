//! The example rmcp server over HTTP, and the TypeScript SDK as a host of pinned tools.

use super::*;

/// The example server's binary, which `cargo test --workspace` builds next
/// to this crate's (a failure in CI without it, a skip elsewhere).
pub(super) fn file_server() -> Option<PathBuf> {
    let binary = Path::new(env!("CARGO_BIN_EXE_mcp-resolve")).with_file_name("file-server");
    if binary.exists() {
        return Some(binary);
    }
    assert!(
        std::env::var_os("CI").is_none(),
        "CI runs `cargo test --workspace`, which builds the example server"
    );
    eprintln!("skipped: the example server is not built (cargo test --workspace builds it)");
    None
}

#[test]
fn the_conformance_suite_passes_through_the_proxy_to_the_example_rmcp_server_over_http() {
    let (Some(python), Some(binary)) = (
        common::mcp_python("the proxy in front of the example server"),
        file_server(),
    ) else {
        return;
    };
    let root = common::scratch("proxy", "file-server-upstream");
    let port = free_port().to_string();
    let addr = format!("127.0.0.1:{port}");
    let mut server = std::process::Command::new(&binary)
        .args(["--root", root.to_str().unwrap(), "--http", &addr])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while std::net::TcpStream::connect(&addr).is_err() {
        assert!(
            server.try_wait().unwrap().is_none(),
            "the example server exited at start"
        );
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "the example server does not listen"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    let upstream = format!("http://{addr}/mcp");
    // rmcp 3.11 requires the SEP-2243 headers and the request's protocol
    // version of 2026-07-28 requests: the proxy sends them.
    let target = [
        "--stdio",
        "--",
        env!("CARGO_BIN_EXE_mcp-resolve"),
        "proxy",
        "examples/file-server/rules/file-server.yaml",
        "--upstream",
        &upstream,
    ];
    suite(&python, &[], &target);
    suite(&python, &["--legacy"], &target);
    let _ = server.kill();
    let _ = server.wait();
}

#[test]
fn the_typescript_sdk_host_is_asked_before_destructive_calls_and_sees_only_pinned_tools() {
    let Some(python) = common::mcp_python("the TypeScript SDK behind the guard") else {
        return;
    };
    let Some(script) = ts_script("sdk_guard.mjs") else {
        return;
    };
    let notes = common::scratch("proxy", "guard-ts");
    let policy = Path::new(env!("CARGO_MANIFEST_DIR")).join("docs/policies/ask-destructive.yaml");
    let output = std::process::Command::new("node")
        .arg(&script)
        .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
        .arg(&python)
        .arg(&notes)
        .arg(fixture(""))
        .arg(&policy)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    println!("{stdout}");
    assert!(
        output.status.success() && stdout.contains("all checks passed"),
        "the TypeScript SDK host failed behind the guard:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

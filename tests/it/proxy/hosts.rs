//! The conformance suite and the SDKs as hosts, through the proxy on stdio.

use super::*;
use common::Listening;

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
    let Some(v1) = V1Host::new("the TypeScript SDK v1 side by side", "v1-host-stdio") else {
        return;
    };
    for declare in [false, true] {
        v1.compare(&v1.everything(), declare, &[], 26);
        v1.compare(&v1.filesystem(), declare, &[], 11);
    }
}

/// The same host over streamable HTTP: server-everything's own HTTP mode
/// directly, against the proxy serving it (`--listen`) as its HTTP upstream
/// and as a child; server-filesystem (stdio only) directly, against the
/// proxy serving it over HTTP. Everything but the server's stderr (which an
/// HTTP host does not see) is compared.
#[test]
fn the_typescript_sdk_v1_host_sees_over_http_what_it_sees_directly() {
    let Some(v1) = V1Host::new(
        "the TypeScript SDK v1 side by side over HTTP",
        "v1-host-http",
    ) else {
        return;
    };
    let everything = v1.everything();
    let bin = Path::new(&everything.server[0]);
    let filesystem = v1.filesystem();
    let args: Vec<&str> = filesystem.server.iter().map(String::as_str).collect();
    for declare in [false, true] {
        // A server of its own for each session: server-everything's HTTP
        // mode sends one session's progress and roots requests to the
        // others it serves.
        for upstream in [true, false] {
            let (_direct_server, direct) = super::official::server_everything_http(bin);
            let (_upstream_server, proxy) = if upstream {
                let (server, url) = super::official::server_everything_http(bin);
                let proxy = Listening::start(&[everything.rules, "--upstream", &url], &[]);
                (Some(server), proxy)
            } else {
                (
                    None,
                    Listening::start(&[everything.rules], &[&everything.server[0]]),
                )
            };
            let env = [
                ("DIRECT_URL", direct.as_str()),
                ("PROXY_URL", proxy.url.as_str()),
            ];
            v1.compare(&everything, declare, &env, 25);
            let (status, stderr) = proxy.stop();
            assert_eq!(status, 0, "{stderr:#?}");
        }
        let behind = Listening::start(&[filesystem.rules], &args);
        v1.compare(
            &filesystem,
            declare,
            &[("PROXY_URL", behind.url.as_str())],
            10,
        );
        let (status, stderr) = behind.stop();
        assert_eq!(status, 0, "{stderr:#?}");
    }
}

/// A real server the v1 host is run in front of.
struct Case {
    rules: &'static str,
    /// The hints the rules write differently from the server, by tool (JSON).
    allowed: &'static str,
    server: Vec<String>,
    /// The arguments of the `tools/resolve` the declaring host sends.
    resolve: String,
}

/// `tests/fixtures/proxy/sdk_v1_host.mjs` and what it runs against.
struct V1Host {
    script: PathBuf,
    servers: PathBuf,
    root: PathBuf,
}

impl V1Host {
    /// `scratch`: the directory server-filesystem serves (made anew).
    fn new(what: &str, scratch: &str) -> Option<V1Host> {
        let servers = common::real_servers(what)?;
        let script = ts_script("sdk_v1_host.mjs")?;
        let sdk = script
            .parent()
            .unwrap()
            .join("node_modules/@modelcontextprotocol/sdk");
        assert!(
            sdk.is_dir(),
            "{} is missing (scripts/install-ts-client.sh)",
            sdk.display()
        );
        let root = common::scratch("proxy", scratch);
        std::fs::write(root.join("notes.txt"), "first line\n").unwrap();
        Some(V1Host {
            script,
            servers,
            root,
        })
    }

    fn bin(&self, name: &str) -> String {
        let path = self.servers.join("node/node_modules/.bin").join(name);
        path.to_str().unwrap().to_owned()
    }

    fn everything(&self) -> Case {
        Case {
            rules: "rules/real-server-everything.yaml",
            allowed: r#"{"gzip-file-as-resource": ["destructiveHint"]}"#,
            server: vec![self.bin("mcp-server-everything")],
            resolve: "{}".into(),
        }
    }

    fn filesystem(&self) -> Case {
        let notes = self.root.join("notes.txt").to_str().unwrap().to_owned();
        Case {
            rules: "rules/real-server-filesystem.yaml",
            allowed: "{}",
            server: vec![
                self.bin("mcp-server-filesystem"),
                self.root.to_str().unwrap().to_owned(),
            ],
            resolve: serde_json::json!({"path": notes, "edits": [], "dryRun": true}).to_string(),
        }
    }

    /// Runs the host in front of `case`, directly and through the proxy;
    /// fails unless exactly `comparisons` agree and nothing differs.
    fn compare(&self, case: &Case, declare: bool, env: &[(&str, &str)], comparisons: usize) {
        let output = std::process::Command::new("node")
            .arg(&self.script)
            .arg(env!("CARGO_BIN_EXE_mcp-resolve"))
            .arg(case.rules)
            .arg(case.allowed)
            .args(&case.server)
            .env("DECLARE_EXTENSION", if declare { "1" } else { "0" })
            .env("HOST_ROOT", &self.root)
            .env("RESOLVE_ARGUMENTS", &case.resolve)
            .envs(env.iter().copied())
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        println!("{stdout}");
        assert!(
            output.status.success()
                && stdout.contains(&format!("{comparisons} comparisons agree"))
                && declare == stdout.contains("resolvable through the proxy"),
            "{} (extension declared: {declare}, {env:?}): the v1 host saw something else through the proxy:\n{stdout}\n{}",
            case.rules,
            String::from_utf8_lossy(&output.stderr)
        );
    }
}

// ---------------------------------------------------------------------------
// Streamable HTTP: hosts through `--listen`, servers through `--upstream`.

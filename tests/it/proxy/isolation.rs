//! Hosts side by side over every HTTP route, directly and through the
//! proxy: the TypeScript SDK v2 as eight hosts at once (each in a process of
//! its own, so their ids and progress tokens collide) in front of a TypeScript
//! SDK v2 server (`tests/fixtures/proxy/v2_server.mjs`), in 2026-07-28 mode
//! and in `initialize` sessions, cancelling calls at random, on every route
//! (stdio with a child server too). No message of
//! one host's request may reach another host, and every cancellation — a
//! closed stream (2026-07-28) or `notifications/cancelled` — must reach the
//! server (`tests/fixtures/proxy/v2_isolation.mjs` checks both).

use super::*;

/// `v2_server.mjs` serving HTTP on a loopback port of its own; stopped
/// (its stdin closed, then killed) when dropped.
pub(super) struct V2Http {
    child: Child,
    pub(super) url: String,
}

impl V2Http {
    pub(super) fn start(server: &Path, log: &Path) -> V2Http {
        let mut child = std::process::Command::new("node")
            .arg(server)
            .arg("http")
            .arg(log)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let port = common::port_line(&mut child);
        V2Http {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        }
    }
}

impl Drop for V2Http {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        if common::wait_for(&mut self.child, Duration::from_secs(5)) == -1 {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Runs a Node script of checks with `args`; fails with what it printed
/// (under `label`) unless every check passed.
fn passes(script: &Path, label: &str, args: &[&str]) {
    let output = std::process::Command::new("node")
        .arg(script)
        .args(args)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("all checks passed"),
        "{label}:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// Runs the hosts (`v2_isolation.mjs MODE LOG SEED HOSTS CALLS TARGET…`).
fn hosts(
    driver: &Path,
    label: &str,
    mode: &str,
    log: &Path,
    seed: u64,
    count: u32,
    target: &[&str],
) {
    let log = log.to_string_lossy();
    let (seed_text, count) = (seed.to_string(), count.to_string());
    let args = [&[mode, &log, &seed_text, &count, "4"], target].concat();
    passes(driver, &format!("{label} ({mode}, seed {seed})"), &args);
}

#[test]
fn hosts_see_only_their_own_messages_and_cancel_upstream_on_every_route() {
    let (Some(driver), Some(server)) = (ts_script("v2_isolation.mjs"), ts_script("v2_server.mjs"))
    else {
        return;
    };
    let rules = fixture("v2_server.yaml");
    let scratch = common::scratch("proxy", "v2-isolation");
    let http_log = scratch.join("http.log");
    let upstream = V2Http::start(&server, &http_log);
    let binary = env!("CARGO_BIN_EXE_mcp-resolve");
    // A new draw each run, printed with any failure to replay it.
    let base = std::env::var("MCP_RESOLVE_ISOLATION_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_secs())
        });
    let server_text = server.to_string_lossy().into_owned();
    for (n, mode) in ["modern", "legacy"].into_iter().enumerate() {
        let seed = base * 10 + n as u64 * 5;
        hosts(
            &driver,
            "direct",
            mode,
            &http_log,
            seed,
            8,
            &["--url", &upstream.url],
        );

        let child_log = scratch.join(format!("child-{mode}.log"));
        let child_text = child_log.to_string_lossy().into_owned();
        let listening: [(&str, Vec<&str>, Vec<&str>, &Path); 2] = [
            (
                "--listen, a child server",
                vec![&rules],
                vec!["node", &server_text, "stdio", &child_text],
                &child_log,
            ),
            (
                "--listen --upstream",
                vec![&rules, "--upstream", &upstream.url],
                vec![],
                &http_log,
            ),
        ];
        for (n, (label, args, server, log)) in listening.into_iter().enumerate() {
            let proxy = common::Listening::start(&args, &server);
            let seed = seed + 1 + n as u64;
            hosts(&driver, label, mode, log, seed, 8, &["--url", &proxy.url]);
            let (status, stderr) = proxy.stop();
            assert_eq!(status, 0, "{stderr:#?}");
        }

        // A stdio host each, its own proxy in front of the HTTP server.
        hosts(
            &driver,
            "a stdio host, --upstream",
            mode,
            &http_log,
            seed + 3,
            3,
            &[
                "--stdio",
                binary,
                "proxy",
                &rules,
                "--no-probe",
                "--upstream",
                &upstream.url,
            ],
        );
        // A stdio host each, its own proxy and its own child server.
        let stdio_log = scratch.join(format!("stdio-{mode}.log"));
        let stdio_text = stdio_log.to_string_lossy().into_owned();
        hosts(
            &driver,
            "stdio, a child server",
            mode,
            &stdio_log,
            seed + 4,
            3,
            &[
                "--stdio",
                binary,
                "proxy",
                &rules,
                "--no-probe",
                "--",
                "node",
                &server_text,
                "stdio",
                &stdio_text,
            ],
        );
    }
}

/// What 2026-07-28 adds passes through every route as it does directly:
/// a `subscriptions/listen` stream (its notifications reach the host that
/// opened it, naming its own request, and no other host) and an argument's
/// `Mcp-Param-*` header (`x-mcp-header`), which the server refuses the call
/// without — sent on by `--listen`, written from the listed schema by a
/// stdio host's proxy (`tests/fixtures/proxy/v2_passthrough.mjs`).
#[test]
fn subscriptions_and_parameter_headers_pass_through_every_route() {
    let (Some(driver), Some(server)) =
        (ts_script("v2_passthrough.mjs"), ts_script("v2_server.mjs"))
    else {
        return;
    };
    let rules = fixture("v2_server.yaml");
    let scratch = common::scratch("proxy", "v2-passthrough");
    let upstream = V2Http::start(&server, &scratch.join("http.log"));
    let run = |label: &str, target: &[&str]| passes(&driver, label, target);
    run("direct", &["--url", &upstream.url]);
    let server_text = server.to_string_lossy().into_owned();
    let child_log = scratch.join("child.log").to_string_lossy().into_owned();
    let child = common::Listening::start(&[&rules], &["node", &server_text, "stdio", &child_log]);
    run("--listen, a child server", &["--url", &child.url]);
    let proxy = common::Listening::start(&[&rules, "--upstream", &upstream.url], &[]);
    run("--listen --upstream", &["--url", &proxy.url]);
    for proxy in [child, proxy] {
        let (status, stderr) = proxy.stop();
        assert_eq!(status, 0, "{stderr:#?}");
    }
    let binary = env!("CARGO_BIN_EXE_mcp-resolve");
    run(
        "a stdio host, --upstream",
        &[
            "--stdio",
            binary,
            "proxy",
            &rules,
            "--no-probe",
            "--upstream",
            &upstream.url,
        ],
    );
}

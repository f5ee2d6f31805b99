//! The command line end to end: exit codes, output formats, resolution.

use crate::common;

use std::process::Output;

use serde_json::{Value, json};

fn run(args: &[&str]) -> Output {
    common::bin().args(args).output().unwrap()
}

/// Runs with `--args -`, the arguments on standard input (for inputs over the
/// OS limit on one command-line argument).
fn run_stdin(args: &[&str], input: &str) -> Output {
    use std::io::Write;
    let mut child = common::bin()
        .args(args)
        .args(["--args", "-"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

fn stdout_json(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&o.stdout)))
}

#[test]
fn check_bundled_rules_exits_zero() {
    let o = run(&["check", "rules/"]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stdout)
    );
    let o = run(&["check", "rules/", "--format", "json"]);
    let out = stdout_json(&o);
    assert_eq!(out["summary"]["errors"], 0);
    assert_eq!(out["summary"]["warnings"], 0);
    // The GitHub example leaves PUT and PATCH to the static annotations on
    // purpose; so do the real servers' `edit_file` and `gzip-file-as-resource`
    // for calls their one variant does not describe.
    let infos: Vec<&str> = out["diagnostics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["code"].as_str().unwrap())
        .collect();
    assert_eq!(infos, vec!["non-exhaustive"; 3]);
}

#[test]
fn example_server_rules_check_clean_and_exhaustive() {
    // The rules `examples/file-server/build.rs` compiles: no diagnostic at all,
    // so every resolvable tool is proven exhaustive and every variant reachable.
    let o = run(&[
        "check",
        "examples/file-server/rules/",
        "--deny-warnings",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let out = stdout_json(&o);
    assert_eq!(out["diagnostics"], serde_json::json!([]), "{out}");
}

#[test]
fn read_only_static_with_a_deleting_variant_is_a_worst_case_error() {
    let o = run(&[
        "check",
        "tests/fixtures/invalid/worst-case.yaml",
        "--format",
        "json",
    ]);
    assert_eq!(o.status.code(), Some(1));
    let doc = stdout_json(&o);
    let d = &doc["diagnostics"][0];
    assert_eq!(d["code"], "worst-case");
    assert_eq!(d["severity"], "error");
    assert_eq!(d["variant"], "delete");
    assert_eq!(d["tool"], "manage_files");
    // `- name: delete` is on line 20; the variant's mapping starts at column 9.
    assert_eq!(
        (d["line"].as_u64(), d["column"].as_u64()),
        (Some(20), Some(9))
    );
    assert_eq!(d["file"], "tests/fixtures/invalid/worst-case.yaml");
    for key in ["message", "endLine", "endColumn", "help"] {
        assert!(d.get(key).is_some(), "missing {key}");
    }
    assert_eq!(
        doc["summary"],
        json!({"errors": 1, "warnings": 0, "infos": 0})
    );
}

#[test]
fn warnings_fail_only_with_deny_warnings() {
    let f = "tests/fixtures/invalid/invalid-tool-name.yaml";
    assert_eq!(run(&["check", f]).status.code(), Some(0));
    assert_eq!(run(&["check", f, "--deny-warnings"]).status.code(), Some(1));
}

#[test]
fn github_format_emits_workflow_annotations() {
    let o = run(&[
        "check",
        "tests/fixtures/invalid/unknown-argument.yaml",
        "--format",
        "github",
    ]);
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        text.lines().next().unwrap(),
        "::error file=tests/fixtures/invalid/unknown-argument.yaml,line=18,col=17,endLine=18,endColumn=22,title=unknown-argument::tool `a` has no argument `acton`%0Ahelp: did you mean `action`?"
    );
}

/// `mcp-resolve check … | head`: a reader that goes away ends the output
/// quietly, with check's own exit code, not a panic.
#[test]
fn closed_stdout_is_not_a_panic() {
    let fixtures = common::files("tests/fixtures/invalid", "yaml");
    let mut child = common::bin()
        .arg("check")
        .args(&fixtures)
        .args(["--format", "sarif"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // Over 64 KiB of output: the write fails once the pipe is closed,
    // however the two processes are scheduled.
    drop(child.stdout.take());
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!stderr.contains("panicked"), "{stderr}");
    assert_eq!(out.status.code(), Some(1), "{stderr}");
}

/// A write that fails for another reason (a full disk) is an error, exit 2,
/// never a silent success with truncated output.
#[cfg(target_os = "linux")]
#[test]
fn a_failed_write_to_stdout_exits_two() {
    let out = common::bin()
        .args(["check", "rules/", "--format", "json"])
        .stdout(std::fs::File::create("/dev/full").unwrap())
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(
        stderr.contains("cannot write to standard output"),
        "{stderr}"
    );
}

#[test]
fn usage_and_io_errors_exit_two() {
    assert_eq!(run(&["check", "no/such/file.yaml"]).status.code(), Some(2));
    assert_eq!(run(&["check"]).status.code(), Some(2));
    assert_eq!(run(&["frobnicate"]).status.code(), Some(2));
    let o = run(&[
        "resolve",
        "rules/",
        "--tool",
        "manage_files",
        "--args",
        "{}",
    ]);
    assert_eq!(o.status.code(), Some(2), "several servers: ambiguous");
    assert!(String::from_utf8_lossy(&o.stderr).contains("declare 10 servers"));
}

mod commands;
mod resolve;
mod terminal;

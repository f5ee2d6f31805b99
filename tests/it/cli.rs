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

#[test]
fn resolve_prints_the_extension_result() {
    let o = run(&[
        "resolve",
        "rules/file-server.yaml",
        "--tool",
        "manage_files",
        "--args",
        r#"{"path":"a","action":"read"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout_json(&o),
        json!({"resultType": "complete", "name": "manage_files", "annotations": {
            "readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": false}})
    );
}

#[test]
fn resolve_sep1862_returns_the_whole_tool_with_scopes() {
    let o = run(&[
        "resolve",
        "rules/file-server.yaml",
        "--tool",
        "manage_files",
        "--dialect",
        "sep1862",
        "--args",
        r#"{"path":"a","action":"append"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0));
    let doc = stdout_json(&o);
    let tool = &doc["tool"];
    assert_eq!(tool["name"], "manage_files");
    assert_eq!(tool["resolve"], true);
    assert_eq!(tool["annotations"]["destructiveHint"], false);
    assert_eq!(tool["annotations"]["agencyHint"], false);
    assert_eq!(
        tool["securitySchemes"],
        json!([{"type": "oauth2", "scopes": ["files:write"]}])
    );
    assert!(tool["inputSchema"].is_object());

    let o = run(&[
        "resolve",
        "rules/repo-contents.rules",
        "--tool",
        "get_repo_contents",
        "--dialect",
        "sep1862",
        "--args",
        r#"{"owner":"o","repo":"r","visibility":"public"}"#,
    ]);
    assert_eq!(
        stdout_json(&o)["tool"]["securitySchemes"],
        json!([{"type": "noauth"}])
    );
    assert_eq!(stdout_json(&o)["tool"]["annotations"]["privateHint"], false);
}

#[test]
fn resolve_annotations_dialect_and_explain() {
    let o = run(&[
        "resolve",
        "rules/coding-agent.yaml",
        "--tool",
        "start_coding_agent",
        "--dialect",
        "annotations",
        "--explain",
        "--args",
        r#"{"task":"t","mode":"execute"}"#,
    ]);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout_json(&o)["annotations"]["agencyHint"], true);
    let stderr = String::from_utf8(o.stderr).unwrap();
    assert_eq!(
        stderr,
        "variant `dry-run` does not match: dryRun == true\n\
         variant `plan` does not match: mode == \"plan\"\n\
         variant `offline-short` does not match: mode == \"execute\" && maxSteps <= 10 && sandbox.network == false\n\
         variant `execute` matches: mode == \"execute\"\n"
    );
}

#[test]
fn resolve_errors_are_json_rpc_error_objects() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "manage_files",
            r#"{"path":"a","action":"nuke"}"#,
            "invalid arguments",
        ),
        ("manage_files", r#"{"path":"a"}"#, "invalid arguments"),
        ("manage_files", r#"["read"]"#, "must be an object"),
        (
            "manage_files",
            r#"{"path": 1, "action": "read"}"#,
            "invalid arguments",
        ),
        ("manage_files", "{not json", "not valid JSON"),
        ("no_such_tool", "{}", "unknown tool"),
    ];
    for (tool, args, message) in cases {
        let o = run(&[
            "resolve",
            "rules/file-server.yaml",
            "--tool",
            tool,
            "--args",
            args,
        ]);
        assert_eq!(o.status.code(), Some(1), "{tool} {args}");
        let err = stdout_json(&o);
        assert_eq!(err["code"], -32602, "{tool} {args}");
        assert!(err["message"].as_str().unwrap().contains(message), "{err}");
    }
    let o = run(&[
        "resolve",
        "rules/file-server.yaml",
        "--tool",
        "manage_files",
        "--args",
        r#"{"path":"a","action":"nuke"}"#,
    ]);
    assert_eq!(stdout_json(&o)["data"][0]["instancePath"], "/action");
    // A tool without variants is not resolvable.
    let o = run(&[
        "resolve",
        "rules/filesystem.yaml",
        "--tool",
        "stat",
        "--args",
        r#"{"path":"a"}"#,
    ]);
    assert!(
        stdout_json(&o)["message"]
            .as_str()
            .unwrap()
            .contains("not resolvable")
    );
}

#[test]
fn hostile_arguments_give_errors_not_panics() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    let nested = format!(
        "{{\"path\":\"a\",\"action\":\"read\",\"x\":{}1{}}}",
        "{\"a\":".repeat(100),
        "}".repeat(100)
    );
    let huge = format!(
        "{{\"path\":\"{}\",\"action\":\"read\"}}",
        "é".repeat(1 << 20)
    );
    const FILES: [&str; 5] = [
        "resolve",
        "rules/file-server.yaml",
        "--tool",
        "manage_files",
        "--explain",
    ];
    for args in [&deep, &nested] {
        let o = run_stdin(&FILES, args);
        assert_eq!(o.status.code(), Some(1));
        assert_eq!(stdout_json(&o)["code"], -32602);
    }
    // A megabyte string is valid here: it resolves.
    let o = run_stdin(&FILES, &huge);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(stdout_json(&o)["annotations"]["readOnlyHint"], true);
    // A megabyte string against a type error: the message is truncated.
    let wrong = format!(
        "{{\"path\":[\"{}\"],\"action\":\"read\"}}",
        "x".repeat(1 << 20)
    );
    let o = run_stdin(&FILES, &wrong);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.len() < 4096, "error echoes the whole argument");
}

#[test]
fn hostile_rules_files_are_refused_with_a_clear_error() {
    let o = run(&["check", "tests/fixtures/invalid/alias-bomb.yaml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stdout).contains("alias bombs are refused"));

    let dir = std::env::temp_dir().join(format!("mcp-resolve-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.yaml");
    let line = format!("# {}\n", "x".repeat(1000));
    std::fs::write(&big, line.repeat(50 * 1024)).unwrap();
    let o = run(&["check", big.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("over the limit"));
}

#[test]
fn signature_refuses_rules_with_errors_and_writes_output_files() {
    let o = run(&["signature", "tests/fixtures/invalid/worst-case.yaml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("error[worst-case]"));

    let dir = std::env::temp_dir().join(format!("mcp-resolve-out-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("sig.json");
    let o = run(&[
        "signature",
        "rules/file-server.yaml",
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0));
    let written = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(
        written,
        std::fs::read_to_string("generated/file-server.signature.json").unwrap()
    );
}

#[test]
fn schema_command_prints_the_committed_schema_and_it_accepts_the_bundled_rules() {
    let o = run(&["schema"]);
    assert_eq!(o.status.code(), Some(0));
    let committed = std::fs::read_to_string("generated/rules.schema.json").unwrap();
    assert_eq!(String::from_utf8(o.stdout).unwrap(), committed);
    let schema: Value = serde_json::from_str(&committed).unwrap();
    let validator = jsonschema::validator_for(&schema).unwrap();
    let as_json = |path: &std::path::Path| -> Value {
        let text = std::fs::read_to_string(path).unwrap();
        mcp_resolve::internals::parse::yaml::parse(&text)
            .unwrap()
            .to_json()
    };
    let mut valid = common::files("rules", "yaml");
    valid.extend(common::files("tests/fixtures/valid", "yaml"));
    for path in valid {
        let doc = as_json(&path);
        let errors: Vec<String> = validator.iter_errors(&doc).map(|e| e.to_string()).collect();
        assert!(errors.is_empty(), "{}: {errors:?}", path.display());
    }
    for bad in [
        "unknown-field",
        "unknown-keyword",
        "invalid-value",
        "unsupported-version",
        "unknown-hint",
    ] {
        let doc =
            as_json(&std::path::Path::new("tests/fixtures/invalid").join(format!("{bad}.yaml")));
        // `unknown-hint` is a hint name, which the schema leaves open (hints
        // are declared per file); the rest the schema rejects like the compiler.
        assert_eq!(validator.is_valid(&doc), bad == "unknown-hint", "{bad}");
    }
}

#[test]
fn help_lists_the_commands() {
    let o = run(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    common::expect_file(
        std::path::Path::new("tests/cli/help.txt"),
        &String::from_utf8(o.stdout).unwrap(),
    );
}

#[test]
fn signature_server_json_writes_the_fingerprint_and_keeps_the_rest() {
    let dir = std::env::temp_dir().join(format!("mcp-resolve-server-json-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("server.json");
    let original = std::fs::read_to_string("tests/fixtures/registry/server.json").unwrap();
    std::fs::write(&file, &original).unwrap();
    let f = file.to_str().unwrap();
    let url = "https://files.example.com/signature.json";

    let o = run(&[
        "signature",
        "rules/file-server.yaml",
        "--server-json",
        f,
        "--signature-url",
        url,
    ]);
    assert_eq!(
        o.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let fp = run(&["signature", "rules/file-server.yaml", "--fingerprint-only"]);
    let fingerprint = String::from_utf8_lossy(&fp.stdout).trim().to_string();
    let updated = std::fs::read_to_string(&file).unwrap();
    assert!(updated.len() <= 4096);
    let doc: Value = serde_json::from_str(&updated).unwrap();
    let before: Value = serde_json::from_str(&original).unwrap();
    // Everything else as it was, in the same key order.
    let keys = |v: &Value| v.as_object().unwrap().keys().cloned().collect::<Vec<_>>();
    assert_eq!(keys(&doc), keys(&before));
    for k in keys(&before).iter().filter(|k| *k != "_meta") {
        assert_eq!(doc[k], before[k], "{k}");
    }
    let provided = &doc["_meta"]["io.modelcontextprotocol.registry/publisher-provided"];
    assert_eq!(provided["tool"], "release-pipeline");
    assert_eq!(provided["buildInfo"]["commit"], "0123abcd");
    assert_eq!(
        provided["io.github.mcp-resolve/signature"],
        serde_json::json!({"fingerprint": fingerprint, "url": url})
    );
    // Running it again changes nothing.
    assert_eq!(
        run(&["signature", "rules/file-server.yaml", "--server-json", f])
            .status
            .code(),
        Some(0)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), updated);

    // Over 4096 bytes: refused, the file untouched.
    let mut big = before.clone();
    big["description"] = Value::String("x".repeat(3500));
    let big_text = serde_json::to_string_pretty(&big).unwrap();
    std::fs::write(&file, &big_text).unwrap();
    let o = run(&["signature", "rules/file-server.yaml", "--server-json", f]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("left unchanged") && err.contains("4096 bytes"),
        "{err}"
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), big_text);

    // Not JSON: refused, untouched. Missing: a usage error.
    std::fs::write(&file, "{ nope").unwrap();
    assert_eq!(
        run(&["signature", "rules/file-server.yaml", "--server-json", f])
            .status
            .code(),
        Some(1)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ nope");
    let missing = dir.join("missing.json");
    let o = run(&[
        "signature",
        "rules/file-server.yaml",
        "--server-json",
        missing.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(!missing.exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// Every `mcp-resolve` command of the sample workflow in docs/ runs as
/// written (flags exist, outputs parse) on a checkout with the example
/// server's rules and their committed signature.
#[test]
fn sample_workflow_commands_run_as_written() {
    let text = std::fs::read_to_string("docs/examples/mcp-resolve.yml").unwrap();
    let workflow: Value = serde_saphyr::from_str(&text).unwrap();
    let mut commands = Vec::new();
    for job in workflow["jobs"].as_object().unwrap().values() {
        for step in job["steps"].as_array().unwrap() {
            for line in step["run"].as_str().unwrap_or_default().lines() {
                let line = line.trim();
                if line.starts_with("mcp-resolve ") && !line.starts_with("mcp-resolve --") {
                    commands.push(line.to_string());
                }
            }
        }
    }
    assert!(commands.len() >= 4, "{commands:?}");

    let dir = std::env::temp_dir().join(format!("mcp-resolve-workflow-{}", std::process::id()));
    let tmp = dir.join("tmp");
    std::fs::create_dir_all(dir.join("rules")).unwrap();
    std::fs::create_dir_all(&tmp).unwrap();
    std::fs::copy(
        "examples/file-server/rules/file-server.yaml",
        dir.join("rules/file-server.yaml"),
    )
    .unwrap();
    let signature = run(&["signature", "examples/file-server/rules/file-server.yaml"]);
    std::fs::write(dir.join("signature.json"), &signature.stdout).unwrap();
    std::fs::write(tmp.join("base.signature.json"), &signature.stdout).unwrap();

    let bin_dir = std::path::Path::new(env!("CARGO_BIN_EXE_mcp-resolve"))
        .parent()
        .unwrap()
        .to_path_buf();
    let path = std::env::join_paths(
        std::iter::once(bin_dir).chain(std::env::split_paths(&std::env::var_os("PATH").unwrap())),
    )
    .unwrap();
    for command in &commands {
        let command = command.replace("/tmp/", &format!("{}/", tmp.display()));
        let out = std::process::Command::new("bash")
            .args(["-c", &command])
            .current_dir(&dir)
            .env("PATH", &path)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{command}\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // The outputs the later steps read.
    let written = std::fs::read_to_string(tmp.join("signature.json")).unwrap();
    assert_eq!(written.as_bytes(), signature.stdout.as_slice());
    let diff = std::fs::read_to_string(tmp.join("diff.md")).unwrap();
    assert!(
        diff.starts_with(mcp_resolve::diff::MARKDOWN_MARKER) && diff.contains("No change"),
        "{diff}"
    );
    // The step that posts the comment finds it by that marker.
    assert!(text.contains(&format!(
        "startswith(\"{}\")",
        mcp_resolve::diff::MARKDOWN_MARKER
    )));
    let sarif: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("mcp-resolve.sarif")).unwrap())
            .unwrap();
    assert_eq!(sarif["version"], "2.1.0");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The file-size limit and the analysis budgets are options (issue 22,
/// item 4): a refused file says which option raises the limit, a raised
/// limit reads the file (and `fmt` of it), and an analysis budget too small
/// makes the tool inconclusive with help naming the options.
#[test]
fn limits_are_options_and_a_refusal_names_the_option() {
    let dir = common::scratch("cli", "limits");
    let big = dir.join("big.yaml");
    let rules = std::fs::read_to_string("rules/file-server.yaml").unwrap();
    // Over the 8 MiB default, in a comment: cheap to check once allowed.
    std::fs::write(&big, format!("{rules}# {}\n", "x".repeat(9 << 20))).unwrap();
    let big = big.to_str().unwrap();

    let refused = run(&["check", big]);
    assert_eq!(refused.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(
        stderr.contains("over the limit of 8388608 bytes"),
        "{stderr}"
    );
    assert!(stderr.contains("--max-file-bytes"), "{stderr}");

    let allowed = run(&["check", big, "--max-file-bytes", "20000000"]);
    assert_eq!(allowed.status.code(), Some(0), "{allowed:?}");
    let formatted = run(&["fmt", "--max-file-bytes", "20000000", big]);
    assert_eq!(formatted.status.code(), Some(0), "{formatted:?}");
    assert!(formatted.stdout.len() > 9 << 20);
    assert!(formatted.stdout.ends_with(b"xxx\n"));

    let small = run(&[
        "signature",
        "--max-file-bytes",
        "100",
        "rules/file-server.yaml",
    ]);
    assert_eq!(small.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&small.stderr).contains("over the limit of 100 bytes"));
    let zero = run(&["check", "--max-file-bytes", "0", "rules/"]);
    assert_eq!(zero.status.code(), Some(2), "a limit of 0 is a usage error");

    // JSON documents (signatures) are read up to 512 MiB by default — a
    // large server's signature is far bigger than its rules — and follow
    // `--max-file-bytes` when it is given.
    let mut doc: Value = serde_json::from_str(
        &std::fs::read_to_string("generated/file-server.signature.json").unwrap(),
    )
    .unwrap();
    doc.as_object_mut().unwrap().remove("fingerprint");
    doc["tools"][0]["description"] = json!("x".repeat(9 << 20));
    let large = dir.join("large.signature.json");
    std::fs::write(&large, doc.to_string()).unwrap();
    let large = large.to_str().unwrap();
    let same = run(&["diff", large, large]);
    assert_eq!(same.status.code(), Some(0), "{same:?}");
    let capped = run(&["diff", "--max-file-bytes", "1000000", large, large]);
    assert_eq!(capped.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&capped.stderr).contains("over the limit of 1000000 bytes"));

    let starved = run(&[
        "check",
        "--format",
        "json",
        "--analysis-steps",
        "1",
        "rules/file-server.yaml",
    ]);
    let text = String::from_utf8_lossy(&starved.stdout);
    assert!(text.contains("analysis-inconclusive"), "{text}");
    assert!(text.contains("--analysis-steps"), "{text}");
    let normal = run(&["check", "--format", "json", "rules/file-server.yaml"]);
    assert!(!String::from_utf8_lossy(&normal.stdout).contains("analysis-inconclusive"));
}

/// Per-file and per-tool work runs on several threads; every output is
/// byte-identical to a run on one, diagnostics in the same order.
#[test]
fn output_does_not_depend_on_the_number_of_threads() {
    let dir = common::scratch("cli", "threads");
    for file in 0..4 {
        let mut text = String::from("version: 1\nserver: { name: big, version: 1.0.0 }\ntools:\n");
        for i in 0..25 {
            let n = file * 25 + i;
            // Tools that differ in what the analysis finds: exhaustive or
            // not, a variant shadowed by an earlier one, a hint that means
            // nothing, a pattern of their own.
            text.push_str(&format!(
                "  - name: tool_{n}\n    inputSchema:\n      type: object\n      properties:\n        action: {{ type: string, enum: [read, write, drop] }}\n        path: {{ type: string }}\n      required: [action]\n    annotations: {{ readOnlyHint: false, destructiveHint: true }}\n    variants:\n      - {{ name: read, when: {{ action: read, path: {{ pattern: \"^/d{}/\" }} }}, annotations: {{ readOnlyHint: true{} }} }}\n      - {{ name: write, when: {{ action: write }}, annotations: {{ destructiveHint: false }} }}\n{}",
                n % 7,
                if n % 5 == 0 { ", destructiveHint: true" } else { "" },
                match n % 3 {
                    0 => "      - { name: drop, when: { action: drop } }\n      - { name: again, when: { action: write } }\n",
                    1 => "      - { name: rest, when: {} }\n",
                    _ => "",
                }
            ));
        }
        std::fs::write(dir.join(format!("part-{file}.yaml")), text).unwrap();
    }
    let d = dir.to_str().unwrap();
    for args in [
        vec!["check", d],
        vec!["check", "--format", "json", d],
        vec!["signature", d],
        vec!["generate", d],
        vec!["check", "rules"],
    ] {
        let one = run(&[args.as_slice(), &["-j", "1"]].concat());
        let many = run(&[args.as_slice(), &["-j", "4"]].concat());
        let default = run(&args);
        assert!(
            !one.stdout.is_empty(),
            "{args:?}: {}",
            String::from_utf8_lossy(&one.stderr)
        );
        assert_eq!(one.status.code(), many.status.code(), "{args:?}");
        assert!(one.stdout == many.stdout, "{args:?}: -j 1 and -j 4 differ");
        assert!(
            one.stdout == default.stdout,
            "{args:?}: -j 1 and the default differ"
        );
        assert_eq!(one.stderr, many.stderr, "{args:?}");
    }
    // The threads had something to differ on.
    let check = String::from_utf8(run(&["check", d]).stdout).unwrap();
    for code in ["unreachable", "meaningless-hint", "non-exhaustive"] {
        assert!(check.contains(code), "no {code} in:\n{check}");
    }
}

/// `completions SHELL` prints a script each shell accepts; the bash one,
/// sourced into a real bash, completes subcommands and their options.
#[test]
fn completion_scripts_complete_commands_in_a_real_shell() {
    for shell in ["bash", "zsh", "fish", "powershell", "elvish"] {
        let o = run(&["completions", shell]);
        assert_eq!(o.status.code(), Some(0), "{shell}");
        let text = String::from_utf8(o.stdout).unwrap();
        for word in ["check", "signature", "diff", "completions"] {
            assert!(text.contains(word), "{shell}: no `{word}`");
        }
    }
    let script =
        std::env::temp_dir().join(format!("mcp-resolve-completion-{}", std::process::id()));
    std::fs::write(&script, run(&["completions", "bash"]).stdout).unwrap();
    let complete = |line: &str| -> Vec<String> {
        let words: Vec<&str> = line.split(' ').collect();
        let program = format!(
            "source {script}; COMP_WORDS=({words}); COMP_CWORD={cword}; COMP_LINE='{line}'; COMP_POINT={point}; \
             _mcp__resolve mcp-resolve \"${{COMP_WORDS[COMP_CWORD]}}\" \"${{COMP_WORDS[COMP_CWORD-1]}}\"; \
             printf '%s\\n' \"${{COMPREPLY[@]}}\"",
            script = script.display(),
            words = words
                .iter()
                .map(|w| format!("'{w}'"))
                .collect::<Vec<_>>()
                .join(" "),
            cword = words.len() - 1,
            point = line.len(),
        );
        let o = std::process::Command::new("bash")
            .args(["--norc", "--noprofile", "-c", &program])
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .map(String::from)
            .collect()
    };
    let commands = complete("mcp-resolve ");
    for c in ["check", "diff", "explain", "completions", "proxy"] {
        assert!(commands.iter().any(|w| w == c), "{c} not in {commands:?}");
    }
    assert_eq!(complete("mcp-resolve dif"), ["diff"]);
    let formats = complete("mcp-resolve diff a.json b.json --format ");
    assert_eq!(formats, ["human", "json", "markdown"]);
    let _ = std::fs::remove_file(&script);
}

/// Diagnostics are coloured on request (`--color always`, even into a pipe),
/// never with `--color never`, and with `auto` not into a pipe.
#[test]
fn color_follows_the_flag_and_the_stream() {
    let bad = "rules: [";
    let dir = std::env::temp_dir().join(format!("mcp-resolve-color-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.yaml");
    std::fs::write(&file, bad).unwrap();
    let f = file.to_str().unwrap();
    let escape = |o: &Output| o.stdout.contains(&0x1b);
    assert!(escape(&run(&["check", f, "--color", "always"])));
    assert!(escape(&run(&["--color", "always", "check", f])));
    assert!(!escape(&run(&["check", f, "--color", "never"])));
    assert!(!escape(&run(&["check", f])));
    let o = run(&["check", f, "--color", "sometimes"]);
    assert_eq!(o.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A long run on a terminal shows which stage it is in on standard error
/// (run under a pseudo-terminal with util-linux's `script`), then clears it;
/// with standard error not a terminal, nothing is written there.
#[test]
fn progress_shows_on_a_terminal_only() {
    let dir = std::env::temp_dir().join(format!("mcp-resolve-progress-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let mut rules = String::from("version: 1\nserver: { name: big, version: 1.0.0 }\ntools:\n");
    for i in 0..600 {
        rules.push_str(&format!(
            "  - name: tool_{i}\n    inputSchema: {{ type: object, properties: {{ action: {{ enum: [a, b, c] }}, path: {{ type: string, pattern: '^[a-z]+/[0-9]{{1,4}}$' }} }} }}\n    annotations: {{ readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false }}\n    variants:\n      - {{ name: a, when: {{ action: a, path: {{ pattern: '^x' }} }}, annotations: {{ readOnlyHint: true }} }}\n      - {{ name: b, when: {{ action: b }}, annotations: {{ destructiveHint: false }} }}\n"
        ));
    }
    let file = dir.join("big.yaml");
    std::fs::write(&file, rules).unwrap();
    let bin = env!("CARGO_BIN_EXE_mcp-resolve");
    // The shell keeps the terminal open a moment after the run: `script`
    // can lose what a child wrote just before the terminal closed.
    let command = format!(
        "{bin} check {} --format json > {}; status=$?; sleep 1; exit $status",
        file.display(),
        dir.join("out.json").display()
    );
    // With no delay the indicator is drawn by the run's own thread, from
    // its first stage: a helper thread could be scheduled too late on a
    // busy machine (an empty capture, seen in CI-like runs).
    let o = std::process::Command::new("script")
        .args(["-qfec", &command, "/dev/null"])
        .env("TERM", "xterm")
        // Shown from the start, so how fast this machine is does not matter.
        .env("MCP_RESOLVE_PROGRESS_DELAY_MS", "0")
        .output()
        .expect("util-linux `script` (a pseudo-terminal for this test)");
    assert!(
        o.status.success(),
        "{}: {}\n{}",
        o.status,
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    );
    let terminal = String::from_utf8_lossy(&o.stdout);
    assert!(
        [
            "parsing 1 file",
            "checking 600 tools",
            "analysing the patterns of 600 tools"
        ]
        .iter()
        .any(|stage| terminal.contains(stage)),
        "{terminal:?}"
    );
    // Cleared at the end: the last thing on the terminal erases the line.
    assert!(
        terminal.trim_end_matches(' ').ends_with("\r\u{1b}[2K") || terminal.ends_with("\u{1b}[2K"),
        "{:?}",
        &terminal[terminal.len().saturating_sub(80)..]
    );
    // The output itself is whole JSON.
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("out.json")).unwrap()).unwrap();
    assert_eq!(report["summary"]["errors"], 0);

    let o = run(&["check", file.to_str().unwrap()]);
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// `MCP_RESOLVE_STAGE_TIMES` prints every stage with its time on standard
/// error, on a pipe too; the output itself is unchanged.
#[test]
fn stage_times_go_to_standard_error_when_asked_for() {
    let plain = run(&["generate", "rules/file-server.yaml"]);
    let o = common::bin()
        .args(["generate", "rules/file-server.yaml"])
        .env("MCP_RESOLVE_STAGE_TIMES", "1")
        .output()
        .unwrap();
    assert!(o.status.success());
    assert_eq!(o.stdout, plain.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    let stages: Vec<&str> = stderr.lines().collect();
    for (line, stage) in stages.iter().zip([
        "parsing 1 file",
        "checking 1 tool",
        "analysing the patterns of 1 tool",
        "generating the resolver of 1 tool",
        "writing",
    ]) {
        assert!(line.starts_with('['), "{line}");
        assert!(line.contains(" s] ") || line.contains(" MiB] "), "{line}");
        assert!(line.ends_with(stage), "{stderr}");
    }
    assert_eq!(stages.len(), 5, "{stderr}");
    // Empty is unset.
    let o = common::bin()
        .args(["generate", "rules/file-server.yaml"])
        .env("MCP_RESOLVE_STAGE_TIMES", "")
        .output()
        .unwrap();
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

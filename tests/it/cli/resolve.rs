//! `mcp-resolve resolve`: each dialect's result, errors as JSON-RPC error objects, hostile input.

use super::*;

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
    // `--args` that is not JSON is a usage error (exit 2), said on stderr.
    let o = run(&[
        "resolve",
        "rules/file-server.yaml",
        "--tool",
        "manage_files",
        "--args",
        "{not json",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(o.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("--args is not valid JSON"), "{stderr}");
    // A misspelt tool gets the error object, and a suggestion on stderr.
    let o = run(&[
        "resolve",
        "rules/file-server.yaml",
        "--tool",
        "manage_filez",
        "--args",
        "{}",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout_json(&o)["code"], -32602);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("did you mean `manage_files`?"), "{stderr}");
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

    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-big-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.yaml");
    let line = format!("# {}\n", "x".repeat(1000));
    std::fs::write(&big, line.repeat(50 * 1024)).unwrap();
    let o = run(&["check", big.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("over the limit"));
}

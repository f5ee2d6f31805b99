//! `signature`, `schema`, help, the sample workflow, limits and threads.

use super::*;

#[test]
fn signature_refuses_rules_with_errors_and_writes_output_files() {
    let o = run(&["signature", "tests/fixtures/invalid/worst-case.yaml"]);
    assert_eq!(o.status.code(), Some(1));
    assert!(o.stdout.is_empty());
    assert!(String::from_utf8_lossy(&o.stderr).contains("error[worst-case]"));

    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-out-{}", std::process::id()));
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
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-server-json-{}", std::process::id()));
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

/// An empty file is told apart from a broken one, with how a file begins in
/// its own syntax.
#[test]
fn empty_rules_files_say_so_in_their_own_syntax() {
    let dir = crate::common::scratch("cli", "empty-files");
    let yaml = dir.join("empty.yaml");
    std::fs::write(&yaml, "").unwrap();
    let o = run(&["check", yaml.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let stderr =
        String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("the rules file is empty") && stderr.contains("`version: 1`"),
        "{stderr}"
    );
    let rules = dir.join("empty.rules");
    std::fs::write(&rules, "").unwrap();
    let o = run(&["check", rules.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    let stderr =
        String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("`version 1`") && stderr.contains("`server NAME version VERSION`"),
        "{stderr}"
    );
}

/// README's rules snippets (the YAML tour and the `.rules` one) check as
/// pasted: whole files, every argument they test declared.
#[test]
fn readme_rules_snippets_check_as_pasted() {
    let readme = std::fs::read_to_string("README.md").unwrap();
    let dir = crate::common::scratch("cli", "readme-snippets");
    let mut checked = 0;
    for (fence, ext) in [("```yaml\n", "yaml"), ("```text\n", "rules")] {
        for block in readme.split(fence).skip(1) {
            let body = block.split("```").next().unwrap();
            // Rules files only (a `text` block may be a diagnostic).
            if !body.starts_with("version") {
                continue;
            }
            let file = dir.join(format!("snippet{checked}.{ext}"));
            std::fs::write(&file, body).unwrap();
            let o = run(&["check", "--deny-warnings", file.to_str().unwrap()]);
            assert!(
                o.status.success(),
                "README's {ext} snippet does not check:\n{body}\n{}",
                String::from_utf8_lossy(&o.stderr)
            );
            checked += 1;
        }
    }
    assert_eq!(checked, 2, "the YAML and the .rules snippet");
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

    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-workflow-{}", std::process::id()));
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

/// The file-size limit and the analysis budgets are options: a refused
/// file says which option raises the limit, a raised
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

    // A large file that is no text is told so, not to raise the limit:
    // a NUL byte, or bytes that are no UTF-8, near its start.
    for (name, head, said) in [
        (
            "binary.yaml",
            &b"\x7fELF\x02\x01\x01\x00"[..],
            "byte 7 is NUL",
        ),
        (
            "latin1.yaml",
            &b"name: caf\xe9 \n"[..],
            "byte 9 begins no UTF-8 character",
        ),
    ] {
        let path = dir.join(name);
        let mut bytes = head.to_vec();
        bytes.resize(9 << 20, b'a');
        std::fs::write(&path, bytes).unwrap();
        let o = run(&["check", path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2));
        let stderr = String::from_utf8_lossy(&o.stderr);
        assert!(
            stderr.contains(&format!("file is not text ({said})")),
            "{stderr}"
        );
        assert!(!stderr.contains("--max-file-bytes"), "{stderr}");
    }

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

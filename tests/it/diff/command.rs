//! `mcp-resolve diff` from the command line: exit codes, reports, rules against signatures, malformed input.

use super::*;

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-resolve"))
        .args(args)
        .output()
        .unwrap()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-diff-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn write_doc(dir: &Path, name: &str, doc: &Value) -> String {
    let path = dir.join(name);
    let mut doc = doc.clone();
    doc["fingerprint"] = json!(mcp_resolve::emit::signature::fingerprint(&doc));
    std::fs::write(&path, serde_json::to_string_pretty(&doc).unwrap()).unwrap();
    path.to_string_lossy().into_owned()
}

/// The file server's signature, and a copy whose `overwrite` entries (replace
/// and delete) are no longer destructive: a widening with witnesses.
fn overwrite_made_safe() -> (Value, Value) {
    let old: Value = serde_json::from_str(
        &std::fs::read_to_string("generated/file-server.signature.json").unwrap(),
    )
    .unwrap();
    let mut new = old.clone();
    new["tools"][0]["resolvedVariants"][1]["annotations"]["destructiveHint"] = json!(false);
    new["tools"][0]["resolvedVariants"][2]["annotations"]["destructiveHint"] = json!(false);
    (old, new)
}

#[test]
fn cli_exits_one_on_widening_unless_allowed_and_reports_json() {
    let dir = scratch("cli");
    let (old, new) = overwrite_made_safe();
    let (o, n) = (
        write_doc(&dir, "old.json", &old),
        write_doc(&dir, "new.json", &new),
    );

    let out = run(&["diff", &o, &n]);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("widening  manage_files: calls resolve to `destructiveHint: false` (was true): variant `overwrite` → variant `overwrite`"), "{text}");
    assert!(
        text.contains("e.g. arguments {\"action\":\"replace\"")
            || text.contains("e.g. arguments {\"action\":\"delete\""),
        "{text}"
    );

    assert_eq!(
        run(&["diff", &o, &n, "--allow-widening"]).status.code(),
        Some(0)
    );
    // Every report says, in its last line, what the directions mean (a
    // hint moving toward the worst case narrows).
    assert!(
        text.trim_end()
            .ends_with("narrowing: the opposite, e.g. readOnlyHint true → false)"),
        "{text}"
    );
    let back_text = run(&["diff", &n, &o]);
    let back_text = String::from_utf8_lossy(&back_text.stdout);
    assert!(back_text.contains("narrowing manage_files"), "{back_text}");
    assert!(
        back_text
            .contains("(widening: a host that pinned the old signature would let through more"),
        "{back_text}"
    );
    // Back again: narrowing only, exit 0.
    let back = run(&["diff", &n, &o, "--format", "json"]);
    assert_eq!(back.status.code(), Some(0));
    let report: Value = serde_json::from_slice(&back.stdout).unwrap();
    assert_eq!(report["summary"]["widening"], 0);
    assert!(report["summary"]["narrowing"].as_u64().unwrap() >= 1);
    let c = &report["changes"][0];
    assert_eq!(
        (c["kind"].as_str(), c["direction"].as_str()),
        (Some("resolved-annotation"), Some("narrowing"))
    );
    assert_eq!(c["hint"], "destructiveHint");
    assert_eq!(
        (c["old"].clone(), c["new"].clone()),
        (json!(false), json!(true))
    );
    assert_eq!(c["oldVariant"], "overwrite");

    // A change the search cannot decide: exit 1 unless allowed, never "no effect".
    let mut undecided = old.clone();
    undecided["tools"][0]["inputSchema"]["propertyNames"] = json!({"maxLength": 30});
    let u = write_doc(&dir, "undecided.json", &undecided);
    let out = run(&["diff", &o, &u, "--format", "json"]);
    assert_eq!(out.status.code(), Some(1));
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(report["summary"]["undecided"], 1, "{report}");
    assert_eq!(report["summary"]["noEffect"], 0, "{report}");
    assert_eq!(report["changes"][0]["direction"], "undecided");
    assert_eq!(
        run(&["diff", &o, &u, "--allow-undecided"]).status.code(),
        Some(0)
    );
    assert_eq!(
        run(&["diff", &o, &u, "--allow-widening"]).status.code(),
        Some(1)
    );
}

/// `--format markdown` is a pull-request comment: the marker a workflow
/// finds it by, the counts, a table per direction with widening first, each
/// row with its witness as a code span, and the same exit codes as the
/// other formats. A tool name with Markdown's own characters stays in its
/// cell.
#[test]
fn markdown_report_is_a_table_per_direction_with_witnesses() {
    let dir = scratch("markdown");
    // Widening: `overwrite` calls become non-destructive.
    let (old, mut new) = overwrite_made_safe();
    // Narrowing: a tool removed. Widening: one added, named to break a table.
    let removed = new["tools"].as_array().unwrap().len() > 1;
    if removed {
        new["tools"].as_array_mut().unwrap().pop();
    }
    let mut odd = old["tools"][0].clone();
    odd["name"] = json!("a|b`c");
    new["tools"].as_array_mut().unwrap().push(odd);
    let (o, n) = (
        write_doc(&dir, "old.json", &old),
        write_doc(&dir, "new.json", &new),
    );

    let out = run(&["diff", &o, &n, "--format", "markdown"]);
    assert_eq!(out.status.code(), Some(1));
    let md = String::from_utf8(out.stdout).unwrap();
    assert!(md.starts_with("<!-- mcp-resolve diff -->\n"), "{md}");
    let widening = md.find("#### Widening").expect("a widening section");
    if removed {
        let narrowing = md.find("#### Narrowing").expect("a narrowing section");
        assert!(widening < narrowing, "{md}");
    }
    // Every table row has exactly four cells (escaped pipes do not count).
    let rows: Vec<&str> = md.lines().filter(|l| l.starts_with("| ")).collect();
    assert!(rows.len() >= 3, "{md}");
    for row in &rows {
        let cells = row.replace("\\|", "").matches('|').count();
        assert_eq!(cells, 5, "{row}");
    }
    assert!(md.contains("| ``a\\|b`c`` | tool-added |"), "{md}");
    let row = rows
        .iter()
        .find(|r| r.contains("`manage_files`") && r.contains("destructiveHint"))
        .expect("the resolved-annotation row");
    assert!(row.contains("`{\"action\":"), "{row}");
    // The report's counts agree with the JSON report's.
    let json: Value =
        serde_json::from_slice(&run(&["diff", &o, &n, "--format", "json"]).stdout).unwrap();
    let w = json["summary"]["widening"].as_u64().unwrap();
    assert!(md.contains(&format!("**{w} widening**")), "{md}");

    // No change: a short comment, exit 0.
    let same = run(&["diff", &o, &o, "--format", "markdown"]);
    assert_eq!(same.status.code(), Some(0));
    let md = String::from_utf8(same.stdout).unwrap();
    assert!(md.contains("No change"), "{md}");
    assert!(!md.contains("| tool |"), "{md}");
}

#[test]
fn cli_compares_rules_with_signatures_and_refuses_tampered_documents() {
    let dir = scratch("rules");
    // Rules against their own signature: nothing changed.
    let out = run(&[
        "diff",
        "rules/github-api.yaml",
        "generated/github-api.signature.json",
    ]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(String::from_utf8_lossy(&out.stdout).starts_with("0 widening, 0 narrowing"));

    let mut doc: Value = serde_json::from_str(
        &std::fs::read_to_string("generated/filesystem.signature.json").unwrap(),
    )
    .unwrap();
    doc["tools"][0]["annotations"]["destructiveHint"] = json!(false); // fingerprint left stale
    let path = dir.join("tampered.json");
    std::fs::write(&path, serde_json::to_string(&doc).unwrap()).unwrap();
    let out = run(&[
        "diff",
        "generated/filesystem.signature.json",
        path.to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("does not verify"));

    std::fs::write(dir.join("broken.json"), "{ nope").unwrap();
    let out = run(&[
        "diff",
        "generated/filesystem.signature.json",
        dir.join("broken.json").to_str().unwrap(),
    ]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("is not JSON"));

    let out = run(&[
        "diff",
        "generated/filesystem.signature.json",
        "no/such/rules.yaml",
    ]);
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn document_changes_without_effect_are_not_widening() {
    let old: Value = serde_json::from_str(
        &std::fs::read_to_string("generated/file-server.signature.json").unwrap(),
    )
    .unwrap();
    let mut new = old.clone();
    // The same pattern written another way, and a renamed variant.
    new["tools"][0]["resolvedVariants"][0]["when"]["argumentPatterns"]["action"] =
        json!({"enum": ["read"]});
    new["tools"][0]["resolvedVariants"][1]["name"] = json!("add");
    new["tools"][0]["description"] = json!("changed words");
    let d = diff(&old, &new).unwrap();
    assert!(!d.has_widening(), "{:?}", d.changes);
    assert_eq!(d.count(Direction::Narrowing), 0, "{:?}", d.changes);
    assert_eq!(d.changes.len(), 1, "{:?}", d.changes);
    assert_eq!(d.changes[0].kind, "variants");
    // Proved: the same patterns in the same order, only a name apart.
    assert_eq!(
        d.changes[0].direction,
        Direction::Neutral,
        "{:?}",
        d.changes
    );

    // Descriptive keywords inside the inputSchema are proved without effect;
    // a change the search cannot tell apart is undecided, never no effect.
    let mut described = old.clone();
    described["tools"][0]["inputSchema"]["properties"]["path"]["description"] = json!("where");
    let d = diff(&old, &described).unwrap();
    assert_eq!(d.changes.len(), 1, "{:?}", d.changes);
    assert_eq!(
        d.changes[0].direction,
        Direction::Neutral,
        "{:?}",
        d.changes
    );
    let mut rewritten = old.clone();
    rewritten["tools"][0]["inputSchema"]["properties"]["path"]["not"] =
        json!({"pattern": "^(?:a|b)(?:c|d)(?:e|f)(?:g|h)(?:i|j)$"});
    let d = diff(&old, &rewritten).unwrap();
    assert!(
        d.changes.iter().all(|c| c.direction != Direction::Neutral),
        "{:?}",
        d.changes
    );
}

#[test]
fn unknown_hints_that_change_count_as_widening() {
    let old = json!({"tools": [{"name": "t", "inputSchema": {"type": "object"},
        "annotations": {"readOnlyHint": false, "privateHint": true}, "requiredScopes": []}]});
    let mut new = old.clone();
    new["tools"][0]["annotations"]["privateHint"] = json!(false);
    let d = diff(&old, &new).unwrap();
    assert!(d.has_widening());
    assert_eq!(d.changes[0].kind, "static-annotation");
    assert_eq!(d.changes[0].witness, Some(json!({})));
}

#[test]
fn malformed_documents_are_errors_not_panics() {
    let ok = json!({"tools": []});
    for bad in [
        json!({}),
        json!({"tools": [{}]}),
        json!({"tools": [{"name": "a"}, {"name": "a"}]}),
        json!({"tools": [{"name": "a", "inputSchema": {"type": 7}}]}),
        json!({"tools": [{"name": "a", "resolvedVariants": [{"name": "v", "when": {"argumentPatterns": {"x": {"pattern": "("}}}}]}]}),
    ] {
        assert!(
            diff(&ok, &bad).is_err() || diff(&bad, &ok).is_err(),
            "{bad}"
        );
    }
}

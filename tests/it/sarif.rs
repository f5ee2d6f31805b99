//! `check --format sarif`: a SARIF 2.1.0 log that validates against the
//! OASIS schema and says what `--format json` says.
//!
//! The schema comes from `scripts/fetch-sarif-schema.sh` (pinned SHA-256),
//! through `MCP_RESOLVE_SARIF_SCHEMA`; `.ci/run` always provides it. Without
//! it the schema half of the test is skipped locally and fails under CI; the
//! agreement with the JSON output is checked either way.

use crate::common;

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

fn check(paths: &[&Path], format: &str) -> (Value, i32) {
    let out = common::bin()
        .arg("check")
        .args(paths)
        .args(["--format", format])
        .output()
        .unwrap();
    let value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stdout)));
    (value, out.status.code().unwrap())
}

fn schema_validator() -> Option<jsonschema::Validator> {
    let path = common::component("MCP_RESOLVE_SARIF_SCHEMA", "SARIF schema validation")?;
    let schema: Value = serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap();
    assert_eq!(
        schema["title"],
        "Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema"
    );
    // Formats are asserted (`uri`, `uri-reference`, …). The schema's own
    // `language` pattern has a lone `]`, which ECMA-262 reads as a literal
    // and Rust's regex syntax refuses, so the meta-schema check (`format:
    // regex`) would refuse the schema itself: escape it, same meaning.
    let mut schema = schema;
    assert!(escape_lone_bracket(&mut schema) > 0);
    Some(
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft7)
            .should_validate_formats(true)
            .build(&schema)
            .unwrap(),
    )
}

/// Rewrites every `language` pattern `…]?$` to `…\\]?$`; returns how many.
fn escape_lone_bracket(schema: &mut Value) -> usize {
    const ECMA: &str = "^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}]?$";
    match schema {
        Value::Object(map) => {
            let mut n = 0;
            for (key, value) in map.iter_mut() {
                if key == "pattern" && value == ECMA {
                    *value = json!("^[a-zA-Z]{2}|^[a-zA-Z]{2}-[a-zA-Z]{2}\\]?$");
                    n += 1;
                } else {
                    n += escape_lone_bracket(value);
                }
            }
            n
        }
        Value::Array(items) => items.iter_mut().map(escape_lone_bracket).sum(),
        _ => 0,
    }
}

fn assert_valid(validator: &jsonschema::Validator, log: &Value, what: &str) {
    let errors: Vec<String> = validator
        .iter_errors(log)
        .map(|e| format!("{} at {}", e, e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{what}: SARIF schema errors:\n{}",
        errors.join("\n")
    );
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).unwrap()
}

/// Every SARIF result says what the JSON diagnostic in the same place says.
fn assert_agrees_with_json(sarif: &Value, json: &Value, what: &str) {
    assert_eq!(sarif["version"], "2.1.0");
    let run = &sarif["runs"][0];
    assert_eq!(run["tool"]["driver"]["name"], "mcp-resolve");
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    let rules = run["tool"]["driver"]["rules"].as_array().unwrap();
    let results = run["results"].as_array().unwrap();
    let diagnostics = json["diagnostics"].as_array().unwrap();
    assert_eq!(results.len(), diagnostics.len(), "{what}");
    for (r, d) in results.iter().zip(diagnostics) {
        assert_eq!(r["ruleId"], d["code"], "{what}");
        let rule = &rules[r["ruleIndex"].as_u64().unwrap() as usize];
        assert_eq!(rule["id"], d["code"], "{what}: ruleIndex");
        let level = match d["severity"].as_str().unwrap() {
            "error" => "error",
            "warning" => "warning",
            "info" => "note",
            other => panic!("severity {other}"),
        };
        assert_eq!(r["level"], level, "{what}");
        let text = r["message"]["text"].as_str().unwrap();
        let mut expected = d["message"].as_str().unwrap().to_string();
        if let Some(help) = d["help"].as_str() {
            expected.push_str("\nhelp: ");
            expected.push_str(help);
        }
        assert_eq!(text, expected, "{what}");
        let physical = &r["locations"][0]["physicalLocation"];
        if d["file"].is_null() {
            assert!(physical.is_null(), "{what}: {r}");
            continue;
        }
        let uri = physical["artifactLocation"]["uri"].as_str().unwrap();
        let path = uri.strip_prefix("file://").unwrap_or(uri);
        assert_eq!(percent_decode(path), d["file"].as_str().unwrap(), "{what}");
        let region = &physical["region"];
        for (sarif_key, json_key) in [
            ("startLine", "line"),
            ("startColumn", "column"),
            ("endLine", "endLine"),
            ("endColumn", "endColumn"),
        ] {
            assert_eq!(region[sarif_key], d[json_key], "{what}: {sarif_key}");
        }
        let logical = &r["locations"][0]["logicalLocations"][0];
        match (d["tool"].as_str(), d["variant"].as_str()) {
            (Some(tool), Some(variant)) => {
                assert_eq!(logical["fullyQualifiedName"], format!("{tool}/{variant}"));
            }
            (Some(tool), None) => assert_eq!(logical["fullyQualifiedName"], tool),
            (None, _) => assert!(logical.is_null(), "{what}"),
        }
    }
}

fn fixture_sets() -> Vec<Vec<PathBuf>> {
    let mut sets = vec![vec![PathBuf::from("rules")]];
    for dir in ["tests/fixtures/invalid", "tests/fixtures/analysis"] {
        for ext in ["yaml", "rules"] {
            sets.extend(common::files(dir, ext).into_iter().map(|p| vec![p]));
        }
    }
    sets
}

#[test]
fn sarif_validates_and_agrees_with_json_on_every_fixture() {
    let validator = schema_validator();
    let mut levels = std::collections::BTreeSet::new();
    let mut related = 0;
    for set in fixture_sets() {
        let paths: Vec<&Path> = set.iter().map(PathBuf::as_path).collect();
        let what = format!("{paths:?}");
        let (sarif, sarif_code) = check(&paths, "sarif");
        let (json, json_code) = check(&paths, "json");
        assert_eq!(sarif_code, json_code, "{what}: exit code");
        if let Some(v) = &validator {
            assert_valid(v, &sarif, &what);
        }
        assert_agrees_with_json(&sarif, &json, &what);
        for r in sarif["runs"][0]["results"].as_array().unwrap() {
            levels.insert(r["level"].as_str().unwrap().to_string());
            related += r["relatedLocations"].as_array().map_or(0, Vec::len);
        }
    }
    // The fixtures exercise every level and related locations.
    assert_eq!(
        levels.into_iter().collect::<Vec<_>>(),
        ["error", "note", "warning"]
    );
    assert!(related > 0);
}

#[test]
fn sarif_lists_every_code_as_a_rule_and_exits_like_check() {
    let (sarif, code) = check(&[Path::new("rules/filesystem.yaml")], "sarif");
    let rules = sarif["runs"][0]["tool"]["driver"]["rules"]
        .as_array()
        .unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert!(ids.contains(&"worst-case") && ids.contains(&"non-exhaustive"));
    let worst = rules.iter().find(|r| r["id"] == "worst-case").unwrap();
    assert_eq!(worst["defaultConfiguration"]["level"], "error");
    assert_eq!(
        worst["shortDescription"]["text"],
        "A variant's annotations are outside the static conservative bound."
    );
    assert_eq!(code, 0);
    assert_eq!(
        sarif["runs"][0]["invocations"][0]["executionSuccessful"],
        true
    );
}

#[test]
fn sarif_paths_with_spaces_and_non_ascii_are_encoded() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("mcp-resolve-sarif-{}", std::process::id()));
    let sub = dir.join("règles v2");
    std::fs::create_dir_all(&sub).unwrap();
    let file = sub.join("a#b.yaml");
    std::fs::write(
        &file,
        "version: 1\nserver: s\ntools:\n  - name: t\n    inputSchema: {type: object}\n    bogus: 1\n",
    )
    .unwrap();
    let (sarif, code) = check(&[&file], "sarif");
    let (json, _) = check(&[&file], "json");
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 1);
    let uri = sarif["runs"][0]["results"][0]["locations"][0]["physicalLocation"]
        ["artifactLocation"]["uri"]
        .as_str()
        .unwrap();
    assert!(uri.starts_with("file:///"), "{uri}");
    assert!(uri.ends_with("/r%C3%A8gles%20v2/a%23b.yaml"), "{uri}");
    if let Some(v) = schema_validator() {
        assert_valid(&v, &sarif, "temp file");
    }
    assert_agrees_with_json(&sarif, &json, "temp file");
}

/// The validator is not vacuous: logs that break the schema are refused.
#[test]
fn schema_refuses_broken_logs() {
    let Some(v) = schema_validator() else { return };
    let (good, _) = check(
        &[Path::new("tests/fixtures/invalid/worst-case.yaml")],
        "sarif",
    );
    assert_valid(&v, &good, "worst-case");
    let mut broken = Vec::new();
    let mut b = good.clone();
    b["version"] = json!("2.0.0");
    broken.push(b);
    let mut b = good.clone();
    b["runs"][0]["results"][0]["level"] = json!("fatal");
    broken.push(b);
    let mut b = good.clone();
    b["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["region"]["startLine"] =
        json!(0);
    broken.push(b);
    let mut b = good.clone();
    b["runs"][0]["results"][0]["message"] = json!("no text object");
    broken.push(b);
    let mut b = good.clone();
    b["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] =
        json!("rules/a b.yaml");
    broken.push(b);
    let mut b = good;
    b["runs"][0]["tool"]["driver"]
        .as_object_mut()
        .unwrap()
        .remove("name");
    broken.push(b);
    for b in &broken {
        assert!(!v.is_valid(b), "accepted: {b}");
    }
}

//! `mcp-resolve diff`: the mutation test over every bundled signature, witness
//! checks with an independent evaluation of the host recipe, and the CLI.

use std::path::Path;
use std::process::Command;

use mcp_resolve::diff::{Direction, diff, worst_value};
use serde_json::{Value, json};

const HINTS: [&str; 5] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
    "agencyHint",
];

fn bundled() -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir("generated").unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if name.ends_with(".signature.json") {
            let doc: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            out.push((name, doc));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    assert!(out.len() >= 5);
    out
}

/// The host recipe of docs/signature.md, written again here: the annotations
/// a call resolves to, `None` when the arguments are refused.
fn recipe(tool: &Value, args: &Value) -> Option<(Value, Value)> {
    let valid = |schema: &Value| jsonschema::validator_for(schema).unwrap().is_valid(args);
    if !valid(&tool["inputSchema"]) {
        return None;
    }
    for v in tool["resolvedVariants"].as_array().into_iter().flatten() {
        let p = v["when"]["argumentPatterns"].as_object().unwrap();
        let required: Vec<&String> = p
            .iter()
            .filter(|(_, s)| **s != json!(false))
            .map(|(k, _)| k)
            .collect();
        if valid(&json!({"type": "object", "properties": p, "required": required})) {
            return Some((v["annotations"].clone(), v["requiredScopes"].clone()));
        }
    }
    Some((tool["annotations"].clone(), tool["requiredScopes"].clone()))
}

fn tool<'a>(doc: &'a Value, name: &str) -> Option<&'a Value> {
    doc["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
}

/// Every witness of every widening shows what its change says.
fn check_witnesses(old: &Value, new: &Value, label: &str) {
    let d = diff(old, new).unwrap();
    for c in &d.changes {
        if c.direction != Direction::Widening {
            continue;
        }
        // A change to the static set is the listing's whatever the call;
        // it has a witness when some call falls through to it and resolves
        // differently.
        let Some(w) = c.witness.as_ref() else {
            assert!(
                c.kind.starts_with("static-"),
                "{label}: widening without witness: {c:?}"
            );
            continue;
        };
        let n = tool(new, &c.tool).unwrap();
        let now = recipe(n, w)
            .unwrap_or_else(|| panic!("{label}: witness refused by the new document: {c:?}"));
        match c.kind {
            "input-schema" => assert!(
                recipe(tool(old, &c.tool).unwrap(), w).is_none(),
                "{label}: {c:?}"
            ),
            "resolved-annotation" => {
                let before = recipe(tool(old, &c.tool).unwrap(), w).unwrap();
                let hint = c.details["hint"].as_str().unwrap();
                assert_eq!(before.0[hint], c.details["old"], "{label}: {c:?}");
                assert_eq!(now.0[hint], c.details["new"], "{label}: {c:?}");
            }
            "resolved-scope" => {
                let before = recipe(tool(old, &c.tool).unwrap(), w).unwrap();
                let scope = &c.details["scope"];
                assert!(now.1.as_array().unwrap().contains(scope), "{label}: {c:?}");
                assert!(
                    !before.1.as_array().unwrap().contains(scope),
                    "{label}: {c:?}"
                );
            }
            "static-scope" | "static-annotation" => {
                // The witness falls through to the static set and the old
                // document refuses it or resolves it otherwise.
                let n = tool(new, &c.tool).unwrap();
                assert_eq!(now.1, n["requiredScopes"], "{label}: {c:?}");
                if let Some(scope) = c.details.get("scope") {
                    assert!(now.1.as_array().unwrap().contains(scope), "{label}: {c:?}");
                }
                let before = recipe(tool(old, &c.tool).unwrap(), w);
                assert_ne!(before, Some(now), "{label}: {c:?}");
            }
            _ => {}
        }
    }
}

struct Mutant {
    label: String,
    doc: Value,
    widening: bool,
}

fn mutate(doc: &Value, label: String, widening: bool, f: impl FnOnce(&mut Value)) -> Mutant {
    let mut doc = doc.clone();
    f(&mut doc);
    Mutant {
        label,
        doc,
        widening,
    }
}

/// Whether `a` is strictly less conservative than `b` in some hint and more
/// conservative in none.
fn strictly_looser(a: &Value, b: &Value) -> bool {
    let ro = |x: &Value| x["readOnlyHint"] == json!(true);
    let mut looser = false;
    for h in HINTS {
        if matches!(h, "destructiveHint" | "idempotentHint") && (ro(a) || ro(b)) {
            continue;
        }
        let worst = json!(worst_value(h).unwrap());
        match (a[h] == worst, b[h] == worst) {
            (false, true) => looser = true,
            (true, false) => return false,
            _ => {}
        }
    }
    looser
}

fn mutants(doc: &Value) -> Vec<Mutant> {
    let mut out = Vec::new();
    let tools = doc["tools"].as_array().unwrap().clone();
    for (ti, t) in tools.iter().enumerate() {
        let name = t["name"].as_str().unwrap().to_string();
        // Annotation sets: the static one and each variant's.
        let mut sets: Vec<(String, String)> = vec![(format!("/tools/{ti}"), "static".into())];
        for (vi, v) in t["resolvedVariants"]
            .as_array()
            .into_iter()
            .flatten()
            .enumerate()
        {
            sets.push((
                format!("/tools/{ti}/resolvedVariants/{vi}"),
                format!("variant {}", v["name"].as_str().unwrap()),
            ));
        }
        for (ptr, what) in &sets {
            let set = doc.pointer(ptr).unwrap();
            let ro = set["annotations"]["readOnlyHint"] == json!(true);
            for h in HINTS {
                if matches!(h, "destructiveHint" | "idempotentHint") && ro {
                    continue; // meaningless on a read-only set
                }
                let worst = worst_value(h).unwrap();
                let current = set["annotations"][h].as_bool().unwrap();
                let ptr = ptr.clone();
                out.push(mutate(
                    doc,
                    format!("{name} {what}: {h} {current} -> {}", !current),
                    current == worst,
                    move |d| d.pointer_mut(&ptr).unwrap()["annotations"][h] = json!(!current),
                ));
            }
            let p = ptr.clone();
            out.push(mutate(
                doc,
                format!("{name} {what}: add scope"),
                true,
                move |d| {
                    let s = &mut d.pointer_mut(&p).unwrap()["requiredScopes"];
                    s.as_array_mut().unwrap().push(json!("mutant:scope"));
                },
            ));
            if !set["requiredScopes"].as_array().unwrap().is_empty() {
                let p = ptr.clone();
                out.push(mutate(
                    doc,
                    format!("{name} {what}: remove scope"),
                    false,
                    move |d| {
                        let s = &mut d.pointer_mut(&p).unwrap()["requiredScopes"];
                        s.as_array_mut().unwrap().remove(0);
                    },
                ));
            }
        }
        // inputSchema enums and patterns of the top-level arguments.
        for (arg, schema) in t["inputSchema"]["properties"]
            .as_object()
            .into_iter()
            .flatten()
        {
            let base = format!("/tools/{ti}/inputSchema/properties/{arg}");
            if let Some(values) = schema["enum"].as_array() {
                let extra = if values.iter().all(Value::is_string) {
                    json!("mutant-value")
                } else {
                    json!(987_654_321)
                };
                let p = base.clone();
                out.push(mutate(
                    doc,
                    format!("{name} inputSchema {arg}: widen enum"),
                    true,
                    move |d| {
                        d.pointer_mut(&p).unwrap()["enum"]
                            .as_array_mut()
                            .unwrap()
                            .push(extra);
                    },
                ));
                if values.len() >= 2 {
                    let p = base.clone();
                    out.push(mutate(
                        doc,
                        format!("{name} inputSchema {arg}: narrow enum"),
                        false,
                        move |d| {
                            d.pointer_mut(&p).unwrap()["enum"]
                                .as_array_mut()
                                .unwrap()
                                .pop();
                        },
                    ));
                }
            }
            if let Some(re) = schema["pattern"].as_str() {
                let (wide, narrow) = (format!("(?:{re})|^mutant"), format!("(?:{re}).*mutant"));
                let p = base.clone();
                out.push(mutate(
                    doc,
                    format!("{name} inputSchema {arg}: widen pattern"),
                    true,
                    move |d| {
                        d.pointer_mut(&p).unwrap()["pattern"] = json!(wide);
                    },
                ));
                let p = base.clone();
                out.push(mutate(
                    doc,
                    format!("{name} inputSchema {arg}: narrow pattern"),
                    false,
                    move |d| {
                        d.pointer_mut(&p).unwrap()["pattern"] = json!(narrow);
                    },
                ));
            }
        }
        // argumentPatterns of a variant looser than everything after it:
        // widening its `const`/`enum` draws in calls that resolved more
        // conservatively; making it match nothing sends its calls there.
        let variants = t["resolvedVariants"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        for (vi, v) in variants.iter().enumerate() {
            let later_all_tighter = variants[vi + 1..]
                .iter()
                .chain([t])
                .all(|o| strictly_looser(&v["annotations"], &o["annotations"]));
            if !later_all_tighter {
                continue;
            }
            let scopes = |x: &Value| -> Vec<Value> {
                x["requiredScopes"].as_array().cloned().unwrap_or_default()
            };
            // Its calls fall to later variants needing no scope it lacks.
            let later_scopes_within = variants[vi + 1..]
                .iter()
                .chain([t])
                .all(|o| scopes(o).iter().all(|s| scopes(v).contains(s)));
            let earlier = &variants[..vi];
            for (arg, pat) in v["when"]["argumentPatterns"].as_object().unwrap() {
                let Some(c) = pat.get("const") else { continue };
                let Some(values) = t["inputSchema"]["properties"][arg]["enum"].as_array() else {
                    continue;
                };
                // A value no earlier variant takes on this argument (and no
                // earlier variant is a catch-all), so some calls move to `v`.
                let taken = |x: &Value| {
                    earlier.iter().any(|e| {
                        let p = &e["when"]["argumentPatterns"];
                        p.as_object().is_none_or(|m| m.is_empty())
                            || p.get(arg)
                                .is_some_and(|s| jsonschema::validator_for(s).unwrap().is_valid(x))
                    })
                };
                let Some(other) = values.iter().find(|x| *x != c && !taken(x)).cloned() else {
                    continue;
                };
                let p = format!("/tools/{ti}/resolvedVariants/{vi}/when/argumentPatterns");
                let (c2, a2) = (c.clone(), arg.clone());
                out.push(mutate(
                    doc,
                    format!("{name} variant {} pattern {arg}: widen", v["name"]),
                    true,
                    move |d| {
                        d.pointer_mut(&p).unwrap()[&a2] = json!({"enum": [c2, other]});
                    },
                ));
                if !later_scopes_within {
                    continue;
                }
                let p = format!("/tools/{ti}/resolvedVariants/{vi}/when/argumentPatterns");
                let a2 = arg.clone();
                out.push(mutate(
                    doc,
                    format!("{name} variant {} pattern {arg}: match nothing", v["name"]),
                    false,
                    move |d| {
                        let m = d.pointer_mut(&p).unwrap();
                        let old = m[&a2].clone();
                        m[&a2] = json!({"allOf": [old, {"const": "mutant: no such value"}]});
                    },
                ));
            }
        }
        // The tool added (as a copy under a new name) and removed.
        let copy = t.clone();
        out.push(mutate(doc, format!("{name}: add a tool"), true, move |d| {
            let mut c = copy;
            c["name"] = json!("mutant_tool");
            d["tools"].as_array_mut().unwrap().push(c);
        }));
        out.push(mutate(
            doc,
            format!("{name}: remove the tool"),
            false,
            move |d| {
                d["tools"].as_array_mut().unwrap().remove(ti);
            },
        ));
    }
    out
}

#[test]
fn every_widening_mutation_of_every_bundled_signature_is_caught() {
    let (mut widening, mut caught_w, mut narrowing, mut caught_n) = (0, 0, 0, 0);
    let mut missed = Vec::new();
    for (file, doc) in bundled() {
        assert!(
            diff(&doc, &doc).unwrap().changes.is_empty(),
            "{file}: diff with itself"
        );
        for m in mutants(&doc) {
            let d = diff(&doc, &m.doc).unwrap();
            let label = format!("{file}: {}", m.label);
            if m.widening {
                widening += 1;
                if d.has_widening() {
                    caught_w += 1;
                } else {
                    missed.push(format!(
                        "{label}: not reported as widening: {:?}",
                        d.changes
                    ));
                }
                check_witnesses(&doc, &m.doc, &label);
            } else {
                narrowing += 1;
                let some_narrowing = d
                    .changes
                    .iter()
                    .any(|c| c.direction == Direction::Narrowing);
                if !d.has_widening() && some_narrowing {
                    caught_n += 1;
                } else {
                    missed.push(format!("{label}: narrowing misreported: {:?}", d.changes));
                }
            }
        }
    }
    println!(
        "mutation score: {caught_w}/{widening} widening mutations reported as widening, \
         {caught_n}/{narrowing} narrowing mutations reported as narrowing only"
    );
    assert!(widening >= 100, "too few mutants: {widening}");
    assert!(
        missed.is_empty(),
        "{} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
}

fn run(args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_mcp-resolve"))
        .args(args)
        .output()
        .unwrap()
}

fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("mcp-resolve-diff-{name}-{}", std::process::id()));
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

/// Schema mutations at every depth of every subschema: each with the
/// direction it must be reported in.
fn schema_mutants(doc: &Value) -> Vec<Mutant> {
    let mut out = Vec::new();
    for (ti, t) in doc["tools"].as_array().unwrap().iter().enumerate() {
        let name = t["name"].as_str().unwrap().to_string();
        walk_schema(
            doc,
            &format!("/tools/{ti}/inputSchema"),
            &t["inputSchema"],
            &name,
            &mut out,
        );
    }
    out
}

fn walk_schema(doc: &Value, ptr: &str, schema: &Value, tool: &str, out: &mut Vec<Mutant>) {
    let Some(s) = schema.as_object() else { return };
    let mut push = |what: String, widening: bool, f: Box<dyn FnOnce(&mut Value)>| {
        out.push(mutate(doc, format!("{tool} {ptr}: {what}"), widening, f))
    };
    let at = |p: &str| p.to_string();
    if let Some(values) = s.get("enum").and_then(Value::as_array)
        && !values.iter().any(Value::is_boolean)
    {
        let extra = if values.iter().all(Value::is_string) {
            json!("mutant-value")
        } else {
            json!(987_654_321)
        };
        let p = at(ptr);
        push(
            "enum gains a value".into(),
            true,
            Box::new(move |d| {
                d.pointer_mut(&p).unwrap()["enum"]
                    .as_array_mut()
                    .unwrap()
                    .push(extra)
            }),
        );
        if values.len() >= 2 {
            let p = at(ptr);
            push(
                "enum loses a value".into(),
                false,
                Box::new(move |d| {
                    d.pointer_mut(&p).unwrap()["enum"]
                        .as_array_mut()
                        .unwrap()
                        .pop();
                }),
            );
        }
    }
    if let Some(values) = s.get("enum").and_then(Value::as_array)
        && values == &[json!(true)]
    {
        let p = at(ptr);
        push(
            "enum [true] dropped".into(),
            true,
            Box::new(move |d| {
                d.pointer_mut(&p)
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .remove("enum");
            }),
        );
    }
    if let Some(c) = s.get("const").and_then(Value::as_str) {
        let c = c.to_string();
        let p = at(ptr);
        push(
            "const becomes an enum of two".into(),
            true,
            Box::new(move |d| {
                let m = d.pointer_mut(&p).unwrap().as_object_mut().unwrap();
                m.remove("const");
                m.insert("enum".into(), json!([c, "mutant-value"]));
            }),
        );
    }
    if s.get("type") == Some(&json!("string")) && !s.contains_key("enum") {
        let p = at(ptr);
        push(
            "type string becomes integer".into(),
            true,
            Box::new(move |d| d.pointer_mut(&p).unwrap()["type"] = json!("integer")),
        );
    }
    if let Some(re) = s.get("pattern").and_then(Value::as_str) {
        let (wide, narrow) = (format!("(?:{re})|^mutant"), format!("(?:{re}).*mutant"));
        let p = at(ptr);
        push(
            "pattern widened".into(),
            true,
            Box::new(move |d| d.pointer_mut(&p).unwrap()["pattern"] = json!(wide)),
        );
        let p = at(ptr);
        push(
            "pattern narrowed".into(),
            false,
            Box::new(move |d| d.pointer_mut(&p).unwrap()["pattern"] = json!(narrow)),
        );
    }
    // Lower bounds widen when lowered, upper bounds when raised.
    for (key, lower) in [
        ("minimum", true),
        ("exclusiveMinimum", true),
        ("maximum", false),
        ("exclusiveMaximum", false),
        ("minLength", true),
        ("maxLength", false),
        ("minItems", true),
        ("maxItems", false),
    ] {
        let Some(n) = s.get(key).and_then(Value::as_i64) else {
            continue;
        };
        let counts = key.ends_with("Length") || key.ends_with("Items");
        for (delta, widening) in [(-1i64, lower), (1, !lower)] {
            if counts && n + delta < 0 {
                continue;
            }
            let p = at(ptr);
            push(
                format!("{key} {n} -> {}", n + delta),
                widening,
                Box::new(move |d| d.pointer_mut(&p).unwrap()[key] = json!(n + delta)),
            );
        }
    }
    if let Some(required) = s.get("required").and_then(Value::as_array)
        && !required.is_empty()
    {
        let p = at(ptr);
        push(
            "required loses its last name".into(),
            true,
            Box::new(move |d| {
                d.pointer_mut(&p).unwrap()["required"]
                    .as_array_mut()
                    .unwrap()
                    .pop();
            }),
        );
        let optional = s
            .get("properties")
            .and_then(Value::as_object)
            .and_then(|props| {
                props
                    .keys()
                    .find(|k| !required.contains(&json!(k)))
                    .cloned()
            });
        if let Some(optional) = optional {
            let p = at(ptr);
            push(
                format!("`{optional}` becomes required"),
                false,
                Box::new(move |d| {
                    d.pointer_mut(&p).unwrap()["required"]
                        .as_array_mut()
                        .unwrap()
                        .push(json!(optional));
                }),
            );
        }
    }
    if s.get("additionalProperties") == Some(&json!(false)) {
        let p = at(ptr);
        push(
            "additionalProperties: false dropped".into(),
            true,
            Box::new(move |d| {
                d.pointer_mut(&p)
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .remove("additionalProperties");
            }),
        );
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(branches) = s.get(key).and_then(Value::as_array)
            && branches.len() >= 2
        {
            let p = at(ptr);
            push(
                format!("{key} loses its last branch"),
                false,
                Box::new(move |d| {
                    d.pointer_mut(&p).unwrap()[key]
                        .as_array_mut()
                        .unwrap()
                        .pop();
                }),
            );
        }
    }
    // Deeper.
    if let Some(props) = s.get("properties").and_then(Value::as_object) {
        for (k, sub) in props {
            let token = k.replace('~', "~0").replace('/', "~1");
            walk_schema(doc, &format!("{ptr}/properties/{token}"), sub, tool, out);
        }
    }
    for key in ["items", "additionalProperties"] {
        if let Some(sub) = s.get(key).filter(|v| v.is_object()) {
            walk_schema(doc, &format!("{ptr}/{key}"), sub, tool, out);
        }
    }
    for key in ["anyOf", "oneOf", "allOf"] {
        for (i, sub) in s
            .get(key)
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            walk_schema(doc, &format!("{ptr}/{key}/{i}"), sub, tool, out);
        }
    }
}

/// The documents the schema mutation test runs on: every bundled signature
/// and the schema zoo.
fn schema_documents() -> Vec<(String, Value)> {
    let mut docs = bundled();
    let path = std::path::PathBuf::from("tests/fixtures/diff/zoo.yaml");
    let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
    assert!(!project.has_errors());
    let server = project.single_server().unwrap();
    docs.push((
        "zoo".into(),
        mcp_resolve::emit::signature::signature(server),
    ));
    docs
}

#[test]
fn every_schema_mutation_at_every_depth_is_reported_and_never_as_no_effect() {
    let (mut total, mut caught) = (0, 0);
    let mut missed = Vec::new();
    for (file, doc) in schema_documents() {
        for m in schema_mutants(&doc) {
            total += 1;
            let d = diff(&doc, &m.doc).unwrap();
            let label = format!("{file}: {}", m.label);
            if d.changes.iter().any(|c| c.direction == Direction::Neutral) {
                missed.push(format!("{label}: reported as no effect: {:?}", d.changes));
                continue;
            }
            let ok = if m.widening {
                d.has_widening()
            } else {
                !d.has_widening()
                    && d.changes
                        .iter()
                        .any(|c| c.direction == Direction::Narrowing)
            };
            if ok {
                caught += 1;
            } else {
                missed.push(format!("{label}: {:?}", d.changes));
            }
            if m.widening {
                check_witnesses(&doc, &m.doc, &label);
            }
        }
    }
    println!("schema mutation score: {caught}/{total}");
    assert!(total >= 60, "too few schema mutants: {total}");
    assert!(
        missed.is_empty(),
        "{} of {total} missed:\n{}",
        missed.len(),
        missed.join("\n")
    );
}

#[test]
fn a_static_scope_change_has_a_witness_that_falls_through_to_the_static_set() {
    // Found by the diff_witnesses fuzz target: the witness was the first
    // call admitted, which a variant caught (it resolves alike under both).
    let rules = |scopes: &str| {
        format!(
            "version: 1\nserver: {{ name: s, version: \"1\" }}\ntools:\n  - name: t\n    inputSchema:\n      type: object\n      properties: {{ action: {{ type: string, enum: [read, write] }} }}\n      required: [action]\n    annotations: {{ readOnlyHint: false }}\n    requiredScopes: [{scopes}]\n    variants:\n      - name: reading\n        when: {{ action: read }}\n        annotations: {{ readOnlyHint: true }}\n        requiredScopes: [files.read]\n"
        )
    };
    let doc = |scopes: &str| {
        let project = mcp_resolve::load_str("t.yaml", &rules(scopes));
        assert!(!project.has_errors(), "{:?}", project.diagnostics);
        mcp_resolve::emit::signature::signature(&project.servers[0])
    };
    let (old, new) = (
        doc("files.read, files.write"),
        doc("files.read, files.write, admin"),
    );
    let d = diff(&old, &new).unwrap();
    let change = d
        .changes
        .iter()
        .find(|c| c.kind == "static-scope")
        .expect("the added scope is reported");
    assert_eq!(change.direction, Direction::Widening);
    assert_eq!(
        change.witness,
        Some(json!({"action": "write"})),
        "{change:?}"
    );
    check_witnesses(&old, &new, "static scope");
}

#[test]
fn a_static_change_no_call_feels_differently_has_no_witness_that_claims_one() {
    // Found by the diff_witnesses fuzz target: the new document drops the
    // variant `admin` and adds its scope to the static set, so the one
    // call that now falls through (`{"action": "purge"}`) resolves as
    // before. A witness must be a call the two documents treat differently;
    // where none falls through to the static set, the change is the
    // listing's alone and has none.
    let tool = |scopes: serde_json::Value, variants: serde_json::Value| {
        json!({"tools": [{"name": "t",
            "inputSchema": {"type": "object",
                "properties": {"action": {"enum": ["read", "purge", "list"]}},
                "required": ["action"]},
            "annotations": {"readOnlyHint": false, "destructiveHint": true},
            "requiredScopes": scopes,
            "resolvedVariants": variants}]})
    };
    let reading = json!({"name": "reading", "annotations": {"readOnlyHint": true},
        "requiredScopes": ["files.read"],
        "when": {"argumentPatterns": {"action": {"enum": ["read", "list"]}}}});
    let admin = json!({"name": "admin",
        "annotations": {"readOnlyHint": false, "destructiveHint": true},
        "requiredScopes": ["files.read", "admin"],
        "when": {"argumentPatterns": {"action": {"const": "purge"}}}});
    let static_scope_change = |old: &Value, new: &Value| {
        diff(old, new)
            .unwrap()
            .changes
            .into_iter()
            .find(|c| c.kind == "static-scope")
            .expect("the added scope is reported")
    };
    let old = tool(json!(["files.read"]), json!([reading, admin]));
    let new = tool(json!(["admin", "files.read"]), json!([reading]));
    let change = static_scope_change(&old, &new);
    assert_eq!(change.direction, Direction::Widening);
    assert_eq!(change.witness, None, "{change:?}");

    // With a call that falls through and resolves differently, that call
    // is the witness: here `list` leaves the variant and needs `admin`.
    let reading_only = json!({"name": "reading", "annotations": {"readOnlyHint": true},
        "requiredScopes": ["files.read"],
        "when": {"argumentPatterns": {"action": {"const": "read"}}}});
    let new = tool(json!(["admin", "files.read"]), json!([reading_only]));
    let change = static_scope_change(&old, &new);
    assert_eq!(
        change.witness,
        Some(json!({"action": "list"})),
        "{change:?}"
    );
    check_witnesses(&old, &new, "static scope, list");
}

/// Tools are compared on several threads and only where they differ: the
/// report is the same for any number of threads, a tool both documents
/// declare alike is not compiled (its schema is not looked at), and a tool
/// that changed and does not compile is an error that says where.
#[test]
fn tools_compare_in_parallel_and_only_where_they_differ() {
    use mcp_resolve::diff::diff_with_jobs;
    for (name, doc) in bundled() {
        for m in mutants(&doc).into_iter().take(12) {
            let one = diff_with_jobs(&doc, &m.doc, 1).unwrap().to_json();
            for jobs in [2, 5] {
                assert_eq!(
                    diff_with_jobs(&doc, &m.doc, jobs).unwrap().to_json(),
                    one,
                    "{name} {}: {jobs} threads",
                    m.label
                );
            }
        }
    }
    let worst = json!({"readOnlyHint": false, "destructiveHint": true,
                       "idempotentHint": false, "openWorldHint": true});
    let broken = json!({"name": "b", "inputSchema": {"type": 7}, "annotations": worst});
    let good = json!({"name": "a", "inputSchema": {"type": "object"}, "annotations": worst});
    let old = json!({"tools": [good, broken]});
    let mut new = old.clone();
    new["tools"][0]["annotations"]["readOnlyHint"] = json!(true);
    let d = diff(&old, &new).unwrap();
    assert!(d.changes.iter().all(|c| c.tool == "a"), "{:?}", d.changes);
    assert!(d.has_widening());
    new["tools"][1]["description"] = json!("changed, but not for calls");
    assert_eq!(diff(&old, &new).unwrap().to_json(), d.to_json());
    new["tools"][1]["inputSchema"]["minProperties"] = json!(1);
    let e = diff(&old, &new).unwrap_err().to_string();
    assert!(e.starts_with("the old document: tools[1]: tool `b`"), "{e}");
    assert!(e.contains("inputSchema"), "{e}");
}

/// `diff_texts` (the CLI's path for two `.json` signatures: each read tool by
/// tool from its text) gives exactly `diff`'s result on every bundled
/// signature against each of its mutants, and leaves every document that is
/// not a valid signature, or whose fingerprint does not verify, to `diff`
/// (which says what is wrong).
#[test]
fn diffs_of_texts_read_tool_by_tool_are_the_documents_diffs() {
    use mcp_resolve::diff::diff_texts;
    let text = |doc: &Value| serde_json::to_string_pretty(doc).unwrap();
    let mut compared = 0;
    for (file, doc) in bundled() {
        for m in mutants(&doc).into_iter().take(12) {
            // Mutants carry the original's fingerprint, which no longer
            // verifies: without it both readings compare them.
            let mut mutant = m.doc.clone();
            mutant.as_object_mut().unwrap().remove("fingerprint");
            let want = diff(&doc, &mutant).unwrap();
            let got = diff_texts(&text(&doc), &text(&mutant), 0)
                .unwrap_or_else(|| panic!("{file}: {}: not read from text", m.label))
                .unwrap();
            assert_eq!(got.to_json(), want.to_json(), "{file}: {}", m.label);
            compared += 1;
            // With the original's fingerprint the mutant is refused.
            assert!(diff_texts(&text(&doc), &text(&m.doc), 0).is_none() || m.doc == doc);
        }
    }
    assert!(compared > 50, "{compared}");

    let ok = text(&json!({"tools": []}));
    for bad in [
        "not json".to_string(),
        "[]".into(),
        text(&json!({})),
        text(&json!({"tools": {}})),
        text(&json!({"tools": [{}]})),
        text(&json!({"tools": [{"name": "a"}, {"name": "a"}]})),
        text(&json!({"tools": [{"name": "a", "inputSchema": {"type": 7}}]})),
        text(&json!({"tools": [], "fingerprint": 7})),
        text(&json!({"tools": [], "fingerprint": "sha256:00"})),
        text(&json!({"tools": [], "serverInfo": 7})),
        format!("{ok} trailing"),
    ] {
        assert!(diff_texts(&ok, &bad, 0).is_none(), "{bad}");
        assert!(diff_texts(&bad, &ok, 0).is_none(), "{bad}");
    }
    // A tool nested past what is read tool by tool is left to the whole reading.
    let mut deep = json!("x");
    for _ in 0..110 {
        deep = json!([deep]);
    }
    let deep = text(
        &json!({"tools": [{"name": "a", "description": "d", "inputSchema": {"type": "object", "default": deep}}]}),
    );
    assert!(diff_texts(&ok, &deep, 0).is_none());
}

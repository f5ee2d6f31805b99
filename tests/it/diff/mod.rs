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

mod command;
mod schemas;

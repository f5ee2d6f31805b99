//! What the agreement tests of generated resolvers in other languages
//! share (`tests/typescript.rs`, `tests/python.rs`): the rules files they
//! run on, the calls they make, and the library resolver's answers in the
//! harnesses' line format.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use mcp_resolve::Resolver;
use mcp_resolve_runtime::Dialect;
use serde_json::{Value, json};

use crate::calls;
use crate::random_rules::Rng;

/// Calls per rule set, shared among its resolvable tools (at least 8 and at
/// most 1,500 each).
pub const PER_SET: usize = 1_900;

pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// Every rules file of `rules/` and `tests/fixtures/` that loads as one
/// server without errors.
pub fn rules_files() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        paths.sort();
        for path in paths {
            if path.is_dir() {
                walk(&path, out);
            } else if path
                .extension()
                .is_some_and(|e| e == "yaml" || e == "yml" || e == "rules")
            {
                out.push(path);
            }
        }
    }
    let mut found = Vec::new();
    walk(&repo().join("rules"), &mut found);
    walk(&repo().join("tests/fixtures"), &mut found);
    found
        .into_iter()
        .filter(|path| {
            mcp_resolve::load(std::slice::from_ref(path)).is_ok_and(|p| {
                !p.has_errors()
                    && p.single_server()
                        .is_ok_and(|s| s.tools.iter().any(|t| t.resolvable))
            })
        })
        .collect()
}

/// What the library resolver answers, in the harness's line format: its
/// resolution, and each dialect's result as `Resolver::resolve_result`
/// builds it (from the tool's entries, made once per tool here).
pub fn expected(
    resolver: &Resolver<'_>,
    entries: &std::collections::HashMap<String, [Value; 3]>,
    name: &str,
    args: &Value,
) -> Value {
    match resolver.resolve(name, args) {
        Ok(resolution) => {
            let texts: Vec<Value> = Dialect::ALL
                .into_iter()
                .enumerate()
                .map(|(i, d)| {
                    let result = d.result(&entries[name][i], &resolution);
                    Value::String(serde_json::to_string(&result).unwrap())
                })
                .collect();
            json!({"ok": [
                resolution.variant,
                resolution.annotations,
                resolution.required_scopes,
                texts[0], texts[1], texts[2],
            ]})
        }
        Err(e) => json!({"error": e.to_json()}),
    }
}

/// Each tool's `tools/list` entry in every dialect, by name: what
/// [`expected`] builds the result texts from.
pub fn entries(server: &mcp_resolve::ir::Server) -> std::collections::HashMap<String, [Value; 3]> {
    server
        .tools
        .iter()
        .map(|t| {
            let model = t.to_model(&server.hints);
            (t.name.clone(), Dialect::ALL.map(|d| model.list_entry(d)))
        })
        .collect()
}

/// The calls the agreement tests make of a server: per resolvable tool a
/// share of `PER_SET`, per other tool (and an unknown one) `others`; the
/// first three arguments of each are `null`, an array and an object with
/// prototype keys, the rest generated from the tool's schema. Calls whose
/// arguments `keep` refuses are left out, and counted.
pub fn sample_calls(
    server: &mcp_resolve::ir::Server,
    rng: &mut Rng,
    others: usize,
    keep: impl Fn(&Value) -> bool,
) -> (Vec<(String, Value)>, usize) {
    let mut tools: Vec<(String, Value, bool)> = server
        .tools
        .iter()
        .map(|t| (t.name.clone(), t.input_schema.clone(), t.resolvable))
        .collect();
    tools.push(("unknown".into(), json!({}), false));
    let resolvable_tools = tools.iter().filter(|t| t.2).count().max(1);
    let per_resolvable = (PER_SET / resolvable_tools).clamp(8, 1_500);
    let (mut calls, mut inexact) = (Vec::new(), 0);
    for (name, schema, resolvable) in &tools {
        let per_tool = if *resolvable { per_resolvable } else { others };
        for i in 0..per_tool {
            let args = match i {
                0 => json!(null),
                1 => json!([1]),
                2 => json!({"__proto__": {"polluted": true}, "constructor": 1}),
                _ => calls::arguments(rng, schema),
            };
            if keep(&args) {
                calls.push((name.clone(), args));
            } else {
                inexact += 1;
            }
        }
    }
    (calls, inexact)
}

/// What the Rust host library answers for one call, resolved locally from
/// the signature document (`Signature::expect`), in the harness's format.
pub fn host_expected(signature: &mcp_resolve_host::Signature, name: &str, args: &Value) -> String {
    let line = match signature.expect(name, args) {
        Ok(expected) => {
            let annotations: Vec<Value> = expected
                .annotations()
                .iter()
                .map(|(hint, value)| json!([hint, value]))
                .collect();
            let resolution = mcp_resolve_runtime::Resolution {
                tool: name.to_string(),
                variant: expected.variant().map(|v| v.name().to_string()),
                annotations: expected.annotations().clone(),
                required_scopes: expected.required_scopes().to_vec(),
            };
            let extension = Dialect::Extension.result(&Value::Null, &resolution);
            json!({"ok": [
                resolution.variant,
                annotations,
                resolution.required_scopes,
                serde_json::to_string(&extension).unwrap(),
            ]})
        }
        Err(violation) => {
            json!({"error": {"kind": violation.kind.as_str(), "message": violation.message}})
        }
    };
    serde_json::to_string(&line).unwrap()
}

//! Signatures: committed outputs in sync, byte-identical runs, the fingerprint
//! recomputed with a second JCS implementation, and host-side evaluation of
//! `argumentPatterns` with an off-the-shelf JSON Schema validator agreeing with
//! the resolver.

use crate::common;

use std::path::Path;

use mcp_resolve::Resolver;
use mcp_resolve::emit::signature::{signature, to_pretty};
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

fn bundled() -> Vec<std::path::PathBuf> {
    common::bundled_rules()
}

fn signature_text(path: &Path) -> String {
    let project = mcp_resolve::load(&[path.to_path_buf()]).unwrap();
    assert!(!project.has_errors());
    let doc = signature(project.single_server().unwrap());
    to_pretty(&doc)
}

#[test]
fn committed_signatures_and_schema_are_up_to_date() {
    for path in bundled() {
        let stem = path.file_stem().unwrap().to_str().unwrap();
        common::expect_file(
            &Path::new("generated").join(format!("{stem}.signature.json")),
            &signature_text(&path),
        );
    }
    common::expect_file(
        Path::new("generated/rules.schema.json"),
        &mcp_resolve::rules_schema::rules_schema(),
    );
}

#[test]
fn signature_is_byte_identical_across_processes() {
    for path in bundled() {
        let run = || common::bin().arg("signature").arg(&path).output().unwrap();
        let (a, b) = (run(), run());
        assert!(a.status.success());
        assert_eq!(a.stdout, b.stdout);
        assert_eq!(String::from_utf8(a.stdout).unwrap(), signature_text(&path));
    }
}

#[test]
fn fingerprint_matches_an_independent_jcs_implementation() {
    for path in bundled() {
        let mut doc: Value = serde_json::from_str(&signature_text(&path)).unwrap();
        let claimed = doc["fingerprint"].as_str().unwrap().to_string();
        doc.as_object_mut().unwrap().remove("fingerprint");
        let canonical = serde_jcs::to_string(&doc).unwrap();
        let hex: String = Sha256::digest(canonical.as_bytes())
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        assert_eq!(claimed, format!("sha256:{hex}"), "{}", path.display());

        let out = common::bin()
            .args(["signature", "--fingerprint-only"])
            .arg(&path)
            .output()
            .unwrap();
        assert_eq!(String::from_utf8(out.stdout).unwrap().trim(), claimed);
    }
}

#[test]
fn fingerprint_covers_annotation_values() {
    let path = Path::new("rules/file-server.yaml");
    let text = std::fs::read_to_string(path).unwrap();
    let fp = |t: &str| {
        let p = mcp_resolve::load_str("x.yaml", t);
        signature(&p.servers[0])["fingerprint"].clone()
    };
    let changed = text.replacen(
        "annotations: { destructiveHint: false }",
        "annotations: { destructiveHint: true }",
        1,
    );
    assert_ne!(text, changed);
    assert_ne!(fp(&text), fp(&changed));
    // Formatting and comments are not part of the meaning.
    let reformatted = format!(
        "# a comment\n{}",
        text.replace("{ action: read }", "{action: read}")
    );
    assert_eq!(fp(&text), fp(&reformatted));
}

/// The host-side recipe of docs/signature.md: validate the arguments against
/// the tool's inputSchema; then the first `resolvedVariants` entry whose
/// patterns all hold wins (a `false` pattern: the argument is absent; any
/// other: present and valid); no entry: the static annotations.
fn host_resolve(tool: &Value, arguments: &Value) -> Option<(Option<String>, Value)> {
    // `format` is an annotation, as for the resolver (docs/signature.md).
    let validator = jsonschema::options()
        .should_validate_formats(false)
        .build(&tool["inputSchema"])
        .unwrap();
    if !validator.is_valid(arguments) {
        return None;
    }
    for entry in tool["resolvedVariants"].as_array().unwrap() {
        let patterns = entry["when"]["argumentPatterns"].as_object().unwrap();
        let required: Vec<&String> = patterns
            .iter()
            .filter(|(_, s)| **s != json!(false))
            .map(|(k, _)| k)
            .collect();
        let schema = json!({ "type": "object", "properties": patterns, "required": required });
        if jsonschema::validator_for(&schema)
            .unwrap()
            .is_valid(arguments)
        {
            return Some((
                Some(entry["name"].as_str().unwrap().to_string()),
                entry["annotations"].clone(),
            ));
        }
    }
    Some((None, tool["annotations"].clone()))
}

/// Argument objects built from a schema: enum values, boundary numbers,
/// strings shaped for the bundled patterns, absent optional properties.
fn candidates(schema: &Value, depth: usize) -> Vec<Value> {
    let mut out = Vec::new();
    if let Some(e) = schema.get("enum").and_then(Value::as_array) {
        out.extend(e.iter().cloned());
        out.push(json!("not-in-enum"));
        return out;
    }
    match schema.get("type").and_then(Value::as_str) {
        Some("string") => out.extend(
            [
                "",
                "/repos/o/r",
                "/repos/o/r/issues",
                "/repos/o/r/issues/7/comments",
                "/repos/o/r/pulls/1/comments",
                "/user",
                "notes.md",
                "x",
            ]
            .map(Value::from),
        ),
        Some("boolean") => out.extend([json!(true), json!(false)]),
        Some("integer") => out.extend([json!(0), json!(1), json!(10), json!(11), json!(200)]),
        Some("number") => out.extend([json!(0), json!(6), json!(6.5), json!(9)]),
        Some("object") if depth < 2 => {
            let props = schema
                .get("properties")
                .and_then(Value::as_object)
                .cloned()
                .unwrap_or_default();
            let mut objects = vec![Map::new()];
            for (name, sub) in props {
                let mut next = Vec::new();
                for o in &objects {
                    next.push(o.clone());
                    for c in candidates(&sub, depth + 1) {
                        let mut o = o.clone();
                        o.insert(name.clone(), c);
                        next.push(o);
                    }
                }
                // Keep the product bounded but deterministic.
                next.truncate(4000);
                objects = next;
            }
            out.extend(objects.into_iter().map(Value::Object));
        }
        Some("object") => out.push(json!({})),
        _ => out.extend([json!("s"), json!(1)]),
    }
    out
}

#[test]
fn host_evaluation_of_argument_patterns_agrees_with_the_resolver() {
    let mut compared = 0;
    let mut seen_variants = std::collections::BTreeSet::new();
    for path in bundled() {
        let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
        let server = project.single_server().unwrap();
        let resolver = Resolver::new(server).unwrap();
        let doc = signature(server);
        for tool in doc["tools"].as_array().unwrap() {
            if tool.get("resolvedVariants").is_none() {
                continue;
            }
            let name = tool["name"].as_str().unwrap();
            for args in candidates(&tool["inputSchema"], 0) {
                let host = host_resolve(tool, &args);
                let ours = resolver.resolve(name, &args);
                match (host, ours) {
                    (None, Err(e)) => assert_eq!(e.code, -32602),
                    (Some((variant, annotations)), Ok(r)) => {
                        assert_eq!(variant, r.variant, "{name} {args}");
                        assert_eq!(annotations, r.annotations.complete_json(), "{name} {args}");
                        seen_variants.insert(format!("{name}/{variant:?}"));
                        compared += 1;
                    }
                    (h, o) => panic!("{name} {args}: host {h:?}, resolver {o:?}"),
                }
            }
        }
    }
    assert!(compared > 500, "only {compared} valid argument objects");
    // Every bundled variant, and the static fallback somewhere, was exercised.
    for expected in [
        "manage_files/Some(\"overwrite\")",
        "github_api/Some(\"comment\")",
        "github_api/None",
        "filesystem/Some(\"delete-tree\")",
        "filesystem/Some(\"empty-append\")",
        "start_coding_agent/Some(\"offline-short\")",
        "get_repo_contents/Some(\"public\")",
    ] {
        assert!(
            seen_variants.contains(expected),
            "never resolved {expected}: {seen_variants:?}"
        );
    }
}

/// The tool-by-tool writer (`signature_text`, what `signature` and
/// `generate` use) gives the bytes and the fingerprint of the whole-document
/// path, pretty and canonical, for every bundled server, every valid fixture, names that spell
/// the frame's own `"tools":[]`, a server without tools, and any number of
/// threads.
#[test]
fn tool_by_tool_writer_matches_the_whole_document() {
    use mcp_resolve::emit::signature::{Layout, signature_text};
    let mut files = bundled();
    files.extend(common::files("tests/fixtures/valid", "yaml"));
    let mut projects: Vec<(String, mcp_resolve::Project)> = files
        .iter()
        .map(|p| {
            (
                p.display().to_string(),
                mcp_resolve::load(std::slice::from_ref(p)).unwrap(),
            )
        })
        .collect();
    let odd = "version: 1\nserver: { name: '\"tools\":[]', version: '\"tools\": []' }\ntools:\n  - name: 't\"tools\":[]'\n    description: \"\\n  \\\"tools\\\": []\\n\"\n    inputSchema: { type: object, properties: { '\"tools\":[]': { enum: [1e21, 0.1, -0, 100] } } }\n    annotations: { readOnlyHint: true }\n  - name: u\n    inputSchema: { type: object }\n";
    projects.push(("odd".into(), mcp_resolve::load_str("odd.yaml", odd)));
    projects.push((
        "empty".into(),
        mcp_resolve::load_str(
            "empty.yaml",
            "version: 1\nserver: { name: e, version: 1.0.0 }\ntools: []\n",
        ),
    ));
    for (name, project) in &projects {
        assert!(!project.has_errors(), "{name}: {:?}", project.diagnostics);
        for server in &project.servers {
            let doc = signature(server);
            let whole = to_pretty(&doc);
            let canonical = mcp_resolve_host::jcs::canonical(&doc);
            for jobs in [1, 3, 0] {
                let text = signature_text(server, jobs, Layout::Canonical);
                assert_eq!(text.text(), canonical, "{name}, {jobs} threads");
                let text = signature_text(server, jobs, Layout::Pretty);
                assert_eq!(text.text(), whole, "{name}, {jobs} threads");
                assert_eq!(
                    Some(text.fingerprint.as_str()),
                    doc["fingerprint"].as_str(),
                    "{name}"
                );
            }
        }
    }
}

/// The fingerprint hashed tool by tool on several threads
/// (`fingerprint_with_jobs`, what `diff` checks large documents with) is the
/// runtime's whole-document fingerprint: for every bundled signature, an
/// MCP envelope around one, a frame that spells `"tools":[]` in another
/// member (hashed whole), no tools, and documents that are not signatures.
#[test]
fn fingerprint_in_parts_is_the_whole_documents() {
    use mcp_resolve::emit::signature::{check_fingerprint_with_jobs, fingerprint_with_jobs};
    use mcp_resolve_host::signature::check_fingerprint;
    let mut docs: Vec<Value> = common::files("generated", "json")
        .iter()
        .map(|p| serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap())
        .collect();
    let mut envelope = docs[0].clone();
    envelope["resultType"] = json!("complete");
    envelope["_meta"] = json!({"tools": []});
    docs.push(envelope);
    docs.push(
        json!({"serverInfo": {"name": "\"tools\":[]", "tools": []}, "tools": [{"name": "a"}]}),
    );
    docs.push(json!({"a": {"tools": []}, "tools": [1, "\"tools\":[]", {"tools": []}]}));
    docs.push(json!({"tools": []}));
    docs.push(json!({"tools": {"not": "an array"}}));
    docs.push(json!({}));
    docs.push(json!([1, 2]));
    assert!(docs.len() > 10);
    for doc in &docs {
        let whole = mcp_resolve::emit::signature::fingerprint(doc);
        for jobs in [1, 3, 0] {
            assert_eq!(
                fingerprint_with_jobs(doc, jobs),
                whole,
                "{jobs} threads: {doc}"
            );
        }
        if !doc.is_object() {
            continue;
        }
        let signed = |fp: Option<&str>| {
            let mut d = doc.clone();
            let map = d.as_object_mut().unwrap();
            map.remove("fingerprint");
            if let Some(fp) = fp {
                map.insert("fingerprint".into(), json!(fp));
            }
            d
        };
        let right = signed(Some(&whole));
        assert_eq!(
            check_fingerprint_with_jobs(&right, 2).ok(),
            Some(whole.as_str())
        );
        for wrong in [signed(Some("sha256:00")), signed(None)] {
            assert_eq!(
                check_fingerprint_with_jobs(&wrong, 2)
                    .unwrap_err()
                    .to_string(),
                check_fingerprint(&wrong).unwrap_err().to_string()
            );
        }
    }
}

/// The runtime's one-walk RFC 8785 writer (`jcs`, what fingerprints and
/// every signature's text go through) against `serde_json_canonicalizer`
/// (the canonical text) and serde_json's pretty printer over that text read
/// back (the written form), on values with the names and numbers where the
/// two could part: UTF-16 versus UTF-8 member order, escapes, integers past
/// 2^53, fractions, exponents, negative zero.
mod jcs_differential {
    use mcp_resolve_host::jcs;
    use proptest::prelude::*;
    use serde_json::{Map, Number, Value};

    fn name() -> impl Strategy<Value = String> {
        let unit = prop_oneof![
            Just("a".to_string()),
            Just("B".to_string()),
            Just("\u{7f}".to_string()),
            Just("\u{1}".to_string()),
            Just("\n".to_string()),
            Just("\"".to_string()),
            Just("\\".to_string()),
            Just("é".to_string()),
            Just("\u{e000}".to_string()),
            Just("\u{ffff}".to_string()),
            Just("\u{1f600}".to_string()),
            Just("\u{10000}".to_string()),
        ];
        prop::collection::vec(unit, 0..4).prop_map(|units| units.concat())
    }

    fn number() -> impl Strategy<Value = Number> {
        prop_oneof![
            any::<i64>().prop_map(Number::from),
            any::<u64>().prop_map(Number::from),
            (-(1i64 << 54)..(1i64 << 54)).prop_map(Number::from),
            any::<f64>().prop_filter_map("finite", Number::from_f64),
            prop_oneof![
                Just(0.0),
                Just(-0.0),
                Just(1e21),
                Just(1e-7),
                Just(5e-324),
                Just(1.7976931348623157e308),
                Just(9007199254740993.0),
                Just(0.1),
                Just(100.0),
            ]
            .prop_filter_map("finite", Number::from_f64),
        ]
    }

    fn value() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            number().prop_map(Value::Number),
            name().prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 48, 6, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((name(), inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect::<Map<_, _>>())),
            ]
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

        #[test]
        fn canonical_and_pretty_text_agree_with_the_references(v in value()) {
            let reference = serde_json_canonicalizer::to_string(&v).unwrap();
            prop_assert_eq!(jcs::canonical(&v), reference.clone());
            // serde_json keeps members in the order read (`preserve_order`,
            // on in this crate's default features), so this is the pretty
            // text in canonical order.
            let read: Value = serde_json::from_str(&reference).unwrap();
            prop_assert_eq!(jcs::pretty(&v), serde_json::to_string_pretty(&read).unwrap());
        }
    }
}

/// A resolvable tool with a `_meta` of its own (MCP Apps' `ui`, a vendor's
/// key): its answer in every dialect — SEP-1862's whole tool included —
/// keeps that `_meta` and verifies against the signature, from the library
/// resolver and from the matcher the proxy compiles.
#[test]
fn an_answer_for_a_tool_with_its_own_meta_verifies_in_every_dialect() {
    let rules = "version: 1\nserver: { name: s, version: 1.0.0 }\ntools:\n  - name: t\n    inputSchema: { type: object, properties: { a: { type: string } } }\n    _meta: { example.com/ui: x }\n    variants:\n      - { name: v, when: { a: x }, annotations: { readOnlyHint: true } }\n";
    let dir = common::scratch("signature", "own-meta");
    let path = dir.join("rules.yaml");
    std::fs::write(&path, rules).unwrap();
    let project = mcp_resolve::load(std::slice::from_ref(&path)).unwrap();
    assert!(!project.has_errors());
    let server = project.single_server().unwrap();
    let host = mcp_resolve_host::Signature::from_value(signature(server)).unwrap();
    let resolver = Resolver::new(server).unwrap();
    for arguments in [json!({"a": "x"}), json!({"a": "y"}), json!({})] {
        for dialect in mcp_resolve_runtime::Dialect::ALL {
            let library = resolver.resolve_result("t", &arguments, dialect).unwrap();
            let matcher = mcp_resolve::matcher::compile(server, dialect).unwrap();
            let compiled: Value =
                serde_json::from_str(matcher.resolve("t", &arguments).unwrap().result_json(false))
                    .unwrap();
            assert_eq!(compiled, library, "{dialect} {arguments}");
            if let Err(violations) = host.verify_resolution("t", &arguments, &library) {
                panic!("{dialect} {arguments}: {violations}\n{library}");
            }
            if dialect == mcp_resolve_runtime::Dialect::Sep1862 {
                assert_eq!(library["tool"]["_meta"], json!({"example.com/ui": "x"}));
            }
        }
    }
}
